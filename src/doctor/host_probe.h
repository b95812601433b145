// The host as doctor's staging and credential checks see it, behind a small interface: stat of
// the root, a probe file created and removed there, statfs(2), a file's owner, mode,
// filesystem and real path, and this host's name. (Users and groups are asked through
// staging's own OsUsers seam, with the rest of the job-access rule.) PosixHostProbe is the
// real one; tests of the gathering layer swap in a fake — which is how a test puts a file on
// "NFS" without one.
// Thread-safety: PosixHostProbe holds no state.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "doctor/facts.h"

namespace tuneplane::doctor {

class HostProbe {
 public:
  virtual ~HostProbe() = default;

  virtual PathInfo inspect(const std::string& path) = 0;
  // Creates a new file in `dir` exclusively (O_CREAT|O_EXCL, as the stager creates its
  // files), writes and fsyncs a line, closes and removes it. Errors name the failing step.
  virtual Status probeWrite(const std::string& dir) = 0;
  // statfs(2) f_type of the filesystem holding `path`.
  virtual Result<uint64_t> filesystemType(const std::string& path) = 0;
  // stat(2) of `path` (following symlinks) and its realpath(3).
  virtual FileInfo fileInfo(const std::string& path) = 0;
  // This host's name (gethostname), the short form a Slurm node name would take.
  virtual std::string hostName() = 0;
};

class PosixHostProbe final : public HostProbe {
 public:
  // HostProbe:
  PathInfo inspect(const std::string& path) override;
  Status probeWrite(const std::string& dir) override;
  Result<uint64_t> filesystemType(const std::string& path) override;
  FileInfo fileInfo(const std::string& path) override;
  std::string hostName() override;
};

}  // namespace tuneplane::doctor
