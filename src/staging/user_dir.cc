// makeUserDir: root's one-time step of slurm.identity per_user (see user_dir.h).
#include "staging/user_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "staging/error_codes.h"
#include "staging/staging_paths.h"

namespace tuneplane::staging {
namespace {

constexpr mode_t kUsersParentMode = 0755;

tl::unexpected<Error> userDirError(const std::string& what, const std::string& path, int err) {
  return fail(codes::kIo, path, what + " '" + path + "' failed: " + std::strerror(err));
}

// mkdir that takes an existing directory (not a symlink) as done.
Status ensureDirectory(const std::string& path, mode_t mode) {
  if (::mkdir(path.c_str(), mode) == 0) return ok();
  if (errno != EEXIST) return userDirError("mkdir", path, errno);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return userDirError("lstat", path, errno);
  if (!S_ISDIR(st.st_mode)) {
    return fail(codes::kIo, path, "'" + path + "' exists and is not a directory");
  }
  return ok();
}

}  // namespace

Status makeUserDir(const JobAccess& access, const std::string& staging_root) {
  auto dir = userDir(staging_root, access.run_as);
  if (!dir) return fail(dir.error());
  const std::string users = parentDir(*dir);
  // users/ itself: made when missing, exactly 0755 whatever root's umask.
  struct stat st {};
  if (::lstat(users.c_str(), &st) != 0) {
    if (errno != ENOENT) return userDirError("lstat", users, errno);
    if (auto made = ensureDirectory(users, kUsersParentMode); !made) return made;
    if (::chmod(users.c_str(), kUsersParentMode) != 0) {
      return userDirError("chmod", users, errno);
    }
  }
  // Private until it is given away: nobody but root can enter it before the chmod below.
  if (auto made = ensureDirectory(*dir, 0700); !made) return made;
  const gid_t group = access.group ? access.group->gid : access.job_user.gid;
  // lchown: the path was just checked to be a directory, never a link to follow.
  if (::lchown(dir->c_str(), access.process_user.uid, group) != 0) {
    return userDirError("chown", *dir, errno);
  }
  if (::chmod(dir->c_str(), kUserDirMode) != 0) return userDirError("chmod", *dir, errno);
  if (::lstat(dir->c_str(), &st) != 0) return userDirError("lstat", *dir, errno);
  if (!S_ISDIR(st.st_mode) || st.st_uid != access.process_user.uid || st.st_gid != group ||
      (st.st_mode & 07777) != kUserDirMode) {
    return fail(codes::kIo, *dir,
                "'" + *dir + "' did not take owner uid " + std::to_string(access.process_user.uid) +
                    ", gid " + std::to_string(group) + " and mode 2750");
  }
  return ok();
}

}  // namespace tuneplane::staging
