#include "doctor/host_probe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tuneplane::doctor {
namespace {

constexpr const char* kProbeCode = "doctor.probe_failed";

tl::unexpected<Error> probeError(const std::string& step, const std::string& path, int err) {
  return fail(kProbeCode, path, step + " " + path + ": " + std::strerror(err));
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

FileInfo PosixHostProbe::fileInfo(const std::string& path) {
  FileInfo info;
  info.canonical = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) info.error = std::strerror(errno);
    return info;
  }
  info.exists = true;
  info.uid = st.st_uid;
  info.gid = st.st_gid;
  info.mode = st.st_mode & 07777;
  info.device = static_cast<uint64_t>(st.st_dev);
  if (char* real = ::realpath(path.c_str(), nullptr)) {
    info.canonical = real;
    std::free(real);
  }
  return info;
}

std::string PosixHostProbe::hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  std::string host(name);
  return host.substr(0, host.find('.'));
}

}  // namespace tuneplane::doctor
