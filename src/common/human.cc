#include "common/human.h"

#include <ctime>

#include <fmt/format.h>

namespace tuneplane {

std::string formatDuration(int64_t seconds) {
  if (seconds <= 0) return "0s";
  struct Unit {
    int64_t seconds;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  std::string out;
  int parts = 0;
  for (const Unit& unit : kUnits) {
    const int64_t n = seconds / unit.seconds;
    if (n == 0 && parts == 0) continue;
    if (parts == 1 && n == 0) break;  // "3h", not "3h 0m"
    out += fmt::format("{}{}{}", out.empty() ? "" : " ", n, unit.suffix);
    seconds -= n * unit.seconds;
    if (++parts == 2) break;
  }
  return out;
}

std::string formatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string formatUtc(int64_t unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  if (::gmtime_r(&t, &tm) == nullptr) return fmt::format("@{}", unix_seconds);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace tuneplane
