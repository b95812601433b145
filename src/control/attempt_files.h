// What the control loop reads from an attempt's logs/ folder: the start and exit sentinels
// the batch script writes (slurm/script_renderer.h) and whether a component's scheduler log
// exists. The job owns logs/ and can plant anything there, so every file is opened with
// O_NOFOLLOW, relative to descriptors of the attempt dir and of logs/ (opened O_NOFOLLOW
// too), must be a regular file, and is read only up to kMaxSentinelBytes. Parsing is pure.
// Thread-safety: free functions.
//
//   <attempt_dir>/logs/
//   ├── start-<pool>.json   {"version":1,"node":N,"time":T}
//   ├── exit-<pool>.json    {"version":1,"node":N,"exit_code":C,"start_time":T0,"end_time":T1}
//   └── <pool>.out, <pool>.err   Slurm's stdout/stderr of the component
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tuneplane::control {

inline constexpr std::size_t kMaxSentinelBytes = 4096;

struct StartSentinel {
  std::string node;
  int64_t time = 0;  // Unix seconds
  bool operator==(const StartSentinel&) const = default;
};

struct ExitSentinel {
  std::string node;
  int exit_code = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  bool operator==(const ExitSentinel&) const = default;
};

// The sentinels found for an attempt, by pool. A file that is missing is simply absent; one
// that is unsafe or unreadable is absent too, and named in `problems`.
struct AttemptSentinels {
  std::map<std::string, StartSentinel> start;
  std::map<std::string, ExitSentinel> exit;
  std::vector<std::string> problems;

  bool any() const { return !start.empty() || !exit.empty(); }
};

// Errors: "control.bad_sentinel" naming what is wrong.
Result<StartSentinel> parseStartSentinel(std::string_view text);
Result<ExitSentinel> parseExitSentinel(std::string_view text);

// REQUIRES: attempt_dir is a clean absolute path; pools are the attempt's pool names.
AttemptSentinels readSentinels(const std::string& attempt_dir,
                               const std::vector<std::string>& pools);

// The last `max_bytes` (at most) of logs/<file_name>, a scheduler log, opened like the
// sentinels (O_NOFOLLOW from the attempt dir, regular files only, never blocking on a FIFO)
// with one fstat and one pread, so the cost does not grow with the log. nullopt when the
// attempt dir, logs/ or the file does not exist (yet). The API's logs route uses it until
// the log reader with its line and UTF-8 rules (control/log_tail.h) is merged.
// Errors: "control.unsafe_log" (a bad name, a symlink, not a regular file), "control.log_io".
struct LogWindow {
  std::string bytes;        // the end of the file
  bool starts_file = true;  // `bytes` begins at the file's first byte
  uint64_t file_bytes = 0;  // the file's size when read
};
Result<std::optional<LogWindow>> readLogWindow(const std::string& attempt_dir,
                                               const std::string& file_name, std::size_t max_bytes);

// True when logs/<pool>.out exists as a regular file (a symlink does not count).
bool schedulerLogExists(const std::string& attempt_dir, const std::string& pool);

}  // namespace tuneplane::control
