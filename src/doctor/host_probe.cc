#include "doctor/host_probe.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace tuneplane::doctor {
namespace {

constexpr const char* kProbeCode = "doctor.probe_failed";

tl::unexpected<Error> probeError(const std::string& step, const std::string& path, int err) {
  return fail(kProbeCode, path, step + " " + path + ": " + std::strerror(err));
}

std::vector<uint32_t> groupsOf(const char* user, gid_t primary) {
  int count = 64;
  std::vector<gid_t> gids(static_cast<size_t>(count));
  if (::getgrouplist(user, primary, gids.data(), &count) < 0) {
    gids.resize(static_cast<size_t>(count));
    if (::getgrouplist(user, primary, gids.data(), &count) < 0) count = 0;
  }
  return std::vector<uint32_t>(gids.begin(), gids.begin() + count);
}

// getpw*_r want a caller buffer; ERANGE asks for a larger one.
std::optional<UserInfo> userFrom(uid_t uid, const std::string* name) {
  std::vector<char> buffer(16384);
  for (int tries = 0; tries < 6; ++tries) {
    struct passwd entry {};
    struct passwd* found = nullptr;
    const int rc = name ? ::getpwnam_r(name->c_str(), &entry, buffer.data(), buffer.size(), &found)
                        : ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE) {
      buffer.resize(buffer.size() * 4);
      continue;
    }
    if (rc != 0 || found == nullptr) return std::nullopt;
    UserInfo out;
    out.name = entry.pw_name;
    out.uid = entry.pw_uid;
    out.gid = entry.pw_gid;
    out.groups = groupsOf(entry.pw_name, entry.pw_gid);
    return out;
  }
  return std::nullopt;
}

}  // namespace

PathInfo PosixHostProbe::inspect(const std::string& path) {
  PathInfo info;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) info.error = std::strerror(errno);
    return info;
  }
  info.exists = true;
  info.is_directory = S_ISDIR(st.st_mode);
  return info;
}

Status PosixHostProbe::probeWrite(const std::string& dir) {
  std::string path = dir + "/.tuneplane-doctor-probe-XXXXXX";
  // mkstemp opens with O_CREAT|O_EXCL (mode 0600): a fresh file, never an existing one.
  const int fd = ::mkstemp(path.data());
  if (fd < 0) return probeError("cannot create a file in", dir, errno);
  static constexpr char kLine[] = "tuneplane doctor probe: safe to delete\n";
  Status result = ok();
  if (::write(fd, kLine, sizeof kLine - 1) != static_cast<ssize_t>(sizeof kLine - 1)) {
    result = probeError("cannot write", path, errno);
  } else if (::fsync(fd) != 0) {
    result = probeError("cannot fsync", path, errno);
  }
  if (::close(fd) != 0 && result) result = probeError("cannot close", path, errno);
  if (::unlink(path.c_str()) != 0 && result) result = probeError("cannot remove", path, errno);
  return result;
}

Result<uint64_t> PosixHostProbe::filesystemType(const std::string& path) {
  struct statfs st {};
  if (::statfs(path.c_str(), &st) != 0) return probeError("cannot statfs", path, errno);
  return static_cast<uint64_t>(st.f_type);
}

UserInfo PosixHostProbe::processUser() {
  const uid_t uid = ::geteuid();
  UserInfo out;
  if (auto known = userFrom(uid, nullptr)) out = *known;
  out.uid = uid;
  out.gid = ::getegid();
  // This process's own groups (not the passwd entry's): what its file creation can use.
  const int n = ::getgroups(0, nullptr);
  std::vector<gid_t> gids(static_cast<size_t>(n > 0 ? n : 0));
  const int got = n > 0 ? ::getgroups(n, gids.data()) : 0;
  out.groups.assign(gids.begin(), gids.begin() + (got > 0 ? got : 0));
  out.groups.push_back(out.gid);
  return out;
}

std::optional<UserInfo> PosixHostProbe::findUser(const std::string& name) {
  return userFrom(0, &name);
}

std::optional<GroupInfo> PosixHostProbe::findGroup(const std::string& name) {
  std::vector<char> buffer(16384);
  for (int tries = 0; tries < 6; ++tries) {
    struct group entry {};
    struct group* found = nullptr;
    const int rc = ::getgrnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE) {
      buffer.resize(buffer.size() * 4);
      continue;
    }
    if (rc != 0 || found == nullptr) return std::nullopt;
    return GroupInfo{entry.gr_name, entry.gr_gid};
  }
  return std::nullopt;
}

}  // namespace tuneplane::doctor
