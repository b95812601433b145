// What the benchmarks read about themselves and the machine: the load average (printed with
// every figure, since a shared machine skews them), the calling thread's CPU time, and fields
// of /proc/self/status (peak and current RSS). Thread-safety: every function may be called
// from any thread.
#pragma once

#include <stdlib.h>
#include <time.h>

#include <fstream>
#include <string>

namespace tuneplane::bench {

// The 1-minute load average; -1 when unknown.
inline double loadAverage() {
  double avg[1] = {-1};
  return ::getloadavg(avg, 1) == 1 ? avg[0] : -1;
}

// CPU time of the calling thread, in seconds.
inline double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// A field of /proc/self/status in KiB (VmHWM, VmRSS); -1 when unreadable.
inline long statusKiB(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return std::stol(line.substr(prefix.size()));
  }
  return -1;
}

}  // namespace tuneplane::bench
