// The switches of the host faults (campaign/fault_shim.cc), the one place that knows their
// layout: a 16-byte file the shim maps, byte 0 "the staging filesystem is full", bytes 8..15
// the wall clock's offset in ms; and the environment that preloads the shim into a process.
// Used by the campaign (for serve) and by the shim's own test. Thread-safety: one owner.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace tuneplane::campaign {

class HostFaults {
 public:
  // Makes (or empties) the control file at `path`: not full, the clock not stepped.
  explicit HostFaults(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0 || ::ftruncate(fd_, 16) != 0) throw std::runtime_error("cannot make " + path);
  }
  ~HostFaults() {
    if (fd_ >= 0) ::close(fd_);
  }
  HostFaults(const HostFaults&) = delete;
  HostFaults& operator=(const HostFaults&) = delete;

  void setFull(bool full) {
    const unsigned char byte = full ? 1 : 0;
    if (::pwrite(fd_, &byte, 1, 0) != 1) throw std::runtime_error("cannot write " + path_);
  }
  // Forward, and it stays there: steps add up.
  void stepClock(std::chrono::minutes by) {
    offset_ms_ += std::chrono::duration_cast<std::chrono::milliseconds>(by).count();
    if (::pwrite(fd_, &offset_ms_, sizeof offset_ms_, 8) != sizeof offset_ms_)
      throw std::runtime_error("cannot write " + path_);
  }
  // Entries for test::environmentWith: the shim preloaded, switched by this file, for the
  // staging root `root`.
  std::vector<std::string> environment(const std::string& root) const {
    std::string asan = std::getenv("ASAN_OPTIONS") ? std::getenv("ASAN_OPTIONS") : "";
    // The shim is loaded before the sanitizers' runtime, which otherwise refuses to start.
    asan += std::string(asan.empty() ? "" : ":") + "verify_asan_link_order=0";
    return {"LD_PRELOAD=" + (test::binaryDir() / "tests/libtp_fault_shim.so").string(),
            "TUNEPLANE_FAULT_SHIM_CONTROL=" + path_, "TUNEPLANE_FAULT_SHIM_ROOT=" + root,
            "ASAN_OPTIONS=" + asan};
  }

 private:
  std::string path_;
  int fd_ = -1;
  int64_t offset_ms_ = 0;
};

}  // namespace tuneplane::campaign
