// Numbers as people read them in doctor's messages and the CLI's progress bar: durations
// ("3h 12m"), byte sizes ("1.5 GiB") and Unix times in UTC ("2026-12-02T15:40:16Z"). Pure.
#pragma once

#include <cstdint>
#include <string>

namespace tuneplane {

// The two largest units, e.g. "45s", "12m 5s", "3h 12m", "2d 4h"; "0s" for zero or less.
std::string formatDuration(int64_t seconds);
// Binary units with one decimal above a KiB: "512 B", "1.5 KiB", "2.0 GiB".
std::string formatBytes(uint64_t bytes);
// ISO 8601 in UTC, seconds precision.
std::string formatUtc(int64_t unix_seconds);

}  // namespace tuneplane
