// What the benchmarks read about themselves and the machine: the load average (printed with
// every figure, since a shared machine skews them), the calling thread's CPU time, a
// process's CPU time, and fields of /proc/self/status (peak and current RSS). Thread-safety: every
// function may be called from any thread.
#pragma once

#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
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

// CPU time (user + system) process `pid` has used so far, in seconds, from /proc/PID/stat
// (utime and stime, the 14th and 15th fields; counted after the ')' that ends the command
// name, which may hold spaces); -1 when unreadable.
inline double processCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  double ticks = 0;
  for (int n = 3; n <= 15 && fields >> field; ++n) {
    if (n >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
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
