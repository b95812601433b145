// PosixStagingFs: the real filesystem calls behind the staging seam.
#include "staging/staging_fs.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/unique_fd.h"
#include "staging/error_codes.h"
#include "staging/staging_paths.h"

namespace tuneplane::staging {
namespace {

tl::unexpected<Error> ioError(const std::string& what, const std::string& path, int err) {
  return fail(codes::kIo, path, what + " '" + path + "' failed: " + std::strerror(err));
}

// Gives this thread a umask of its own (threads share one by default): unshare(CLONE_FS)
// once per thread. False when the kernel refused (a seccomp filter): the process's umask
// then applies, and makeInheritingDir's check reports a mode it filtered.
bool ownUmask() {
  thread_local const bool own = ::unshare(CLONE_FS) == 0;
  return own;
}

// mkdir(path, mode & 0777) with this thread's umask set aside; errno as mkdir left it.
int mkdirUnmasked(const std::string& path, mode_t mode) {
  if (!ownUmask()) return ::mkdir(path.c_str(), mode & 0777);
  const mode_t before = ::umask(0);
  const int rc = ::mkdir(path.c_str(), mode & 0777);
  const int err = errno;
  ::umask(before);
  errno = err;
  return rc;
}

std::string modeText(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The check after an inheriting mkdir: exactly `mode`, setgid included.
Status checkInherited(const std::string& path, mode_t mode) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ioError("stat", path, errno);
  const mode_t got = st.st_mode & 07777;
  if (got == mode) return ok();
  std::string message =
      "mkdir '" + path + "' gave mode " + modeText(got) + ", not " + modeText(mode);
  if ((mode & S_ISGID) != 0 && (got & S_ISGID) == 0) {
    message += ": its parent is not setgid (the per-user directory must be 02750)";
  } else {
    message += ": this process's umask took bits away and could not be set aside";
  }
  return fail(codes::kIo, path, message);
}

}  // namespace

Status PosixStagingFs::makeInheritingDir(const std::string& path, mode_t mode) {
  if (mkdirUnmasked(path, mode) != 0) return ioError("mkdir", path, errno);
  return checkInherited(path, mode);
}

Status PosixStagingFs::makeInheritingDirs(const std::string& path, mode_t mode) {
  // As makeDirs: from the leaf up, a directory made beside us meanwhile is fine.
  if (mkdirUnmasked(path, mode) == 0) return checkInherited(path, mode);
  if (errno == ENOENT) {
    const std::string parent = parentDir(path);
    if (parent.empty() || parent == path) return ioError("mkdir", path, ENOENT);
    if (auto made = makeInheritingDirs(parent, mode); !made) return made;
    if (mkdirUnmasked(path, mode) == 0) return checkInherited(path, mode);
    if (errno != EEXIST) return ioError("mkdir", path, errno);
  } else if (errno != EEXIST) {
    return ioError("mkdir", path, errno);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ioError("stat", path, errno);
  if (!S_ISDIR(st.st_mode)) return fail(codes::kIo, path, "'" + path + "' is not a directory");
  return ok();
}

Status PosixStagingFs::makeDirs(const std::string& path, mode_t mode) {
  // From the leaf up: every attempt of a job asks for the same parent, which exists after the
  // first, so one mkdir usually answers (walking down from the root cost one per component).
  // Each directory created gets `mode` exactly: mkdir's mode is filtered by the umask, and a
  // job user must be able to pass through.
  if (::mkdir(path.c_str(), mode) == 0) return changeMode(path, mode);
  if (errno == ENOENT) {
    const std::string parent = parentDir(path);
    if (parent.empty() || parent == path) return ioError("mkdir", path, ENOENT);
    if (auto made = makeDirs(parent, mode); !made) return made;
    if (::mkdir(path.c_str(), mode) == 0) return changeMode(path, mode);
    if (errno != EEXIST) return ioError("mkdir", path, errno);  // EEXIST: made beside us
  } else if (errno != EEXIST) {
    return ioError("mkdir", path, errno);
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ioError("stat", path, errno);
  if (!S_ISDIR(st.st_mode)) return fail(codes::kIo, path, "'" + path + "' is not a directory");
  return ok();
}

Result<std::string> PosixStagingFs::makeTempDir(const std::string& prefix) {
  std::vector<char> buf(prefix.begin(), prefix.end());
  for (char c : std::string_view("XXXXXX")) buf.push_back(c);
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) return ioError("mkdtemp", prefix + "XXXXXX", errno);
  return std::string(buf.data());
}

Status PosixStagingFs::makeDir(const std::string& path, mode_t mode) {
  if (::mkdir(path.c_str(), mode) != 0) return ioError("mkdir", path, errno);
  // mkdir's mode is filtered by the umask; the layout's modes are part of its contract.
  return changeMode(path, mode);
}

Status PosixStagingFs::writeFile(const std::string& path, const std::string& content, mode_t mode) {
  const int raw = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (raw < 0) return ioError("create", path, errno);
  UniqueFd closer(raw);
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(raw, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ioError("write", path, errno);
    }
    written += static_cast<std::size_t>(n);
  }
  // open's mode is filtered by the umask, never widened: the layout's modes are its contract.
  if (::fchmod(raw, mode) != 0) return ioError("chmod", path, errno);
  if (::close(closer.release()) != 0) return ioError("close", path, errno);
  return ok();
}

Status PosixStagingFs::syncFile(const std::string& path) {
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) return ioError("open", path, errno);
  UniqueFd closer(raw);
  if (::fsync(raw) != 0) return ioError("fsync", path, errno);
  return ok();
}

Status PosixStagingFs::changeMode(const std::string& path, mode_t mode) {
  if (::chmod(path.c_str(), mode) != 0) return ioError("chmod", path, errno);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ioError("stat", path, errno);
  if ((st.st_mode & 07777) != mode) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "mode %04o did not take (it is %04o)", mode,
                  static_cast<unsigned>(st.st_mode & 07777));
    return fail(codes::kIo, path, "chmod '" + path + "': " + buf);
  }
  return ok();
}

Status PosixStagingFs::changeGroup(const std::string& path, gid_t group) {
  if (::chown(path.c_str(), static_cast<uid_t>(-1), group) != 0) {
    return ioError("chown to gid " + std::to_string(group) + " of", path, errno);
  }
  return ok();
}

Result<std::optional<PathInfo>> PosixStagingFs::statPath(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<PathInfo>();
    return ioError("stat", path, errno);
  }
  return std::optional<PathInfo>(
      PathInfo{st.st_uid, st.st_gid, static_cast<mode_t>(st.st_mode & 07777), S_ISDIR(st.st_mode)});
}

Status PosixStagingFs::syncDir(const std::string& path) {
  const int raw = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (raw < 0) return ioError("open", path, errno);
  UniqueFd closer(raw);
  if (::fsync(raw) != 0) return ioError("fsync", path, errno);
  return ok();
}

Status PosixStagingFs::renameNoReplace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) {
    return ok();
  }
  int err = errno;
  if (err == EINVAL || err == ENOSYS) {
    // The filesystem has no RENAME_NOREPLACE (some NFS servers). rename(2) of a directory
    // still refuses a non-empty target (ENOTEMPTY/EEXIST), and a staged attempt is never
    // empty; the check below narrows the window for an empty directory put there by hand.
    if (exists(to)) return fail("staging.attempt_exists", to, "'" + to + "' already exists");
    if (::rename(from.c_str(), to.c_str()) == 0) return ok();
    err = errno;
  }
  if (err == EEXIST || err == ENOTEMPTY) {
    return fail("staging.attempt_exists", to,
                "attempt directory '" + to + "' already exists; it is never overwritten");
  }
  return ioError("rename to", to, err);
}

bool PosixStagingFs::exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void PosixStagingFs::removeTree(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // A non-root user cannot delete entries of a 0555 directory: restore write access first.
  if (fs::is_directory(fs::symlink_status(path, ec))) {
    ::chmod(path.c_str(), 0700);
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
    }
  }
  fs::remove_all(path, ec);
}

void PosixStagingFs::removeTempDirs(const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path pattern(prefix);
  const std::string stem = pattern.filename().string();
  std::error_code ec;
  std::vector<std::string> found;
  for (auto it = fs::directory_iterator(pattern.parent_path(), ec);
       !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // mkdtemp's six characters after the prefix, and nothing else.
    if (name.size() == stem.size() + 6 && name.starts_with(stem)) found.push_back(it->path());
  }
  for (const std::string& path : found) removeTree(path);
}

}  // namespace tuneplane::staging
