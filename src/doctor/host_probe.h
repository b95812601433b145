// The staging root as doctor's staging checks see it, behind a small interface: stat of the
// root, a probe file created and removed there, and statfs(2). (Users and groups are asked
// through staging's own OsUsers seam, with the rest of the job-access rule.) PosixHostProbe
// is the real one; tests of the gathering layer swap in a fake.
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
};

class PosixHostProbe final : public HostProbe {
 public:
  // HostProbe:
  PathInfo inspect(const std::string& path) override;
  Status probeWrite(const std::string& dir) override;
  Result<uint64_t> filesystemType(const std::string& path) override;
};

}  // namespace tuneplane::doctor
