// What GET /v1/jobs/{id}/logs returns for one component's stream: the tail of its
// scheduler log in the attempt's logs/ folder, at most kMaxLogBytes and kMaxLogLines, cut
// to start at a line, with `truncated` when earlier bytes were left out. The file is read
// through control::readLogWindow (safe opening; cost independent of the log's size).
// Interim: when the log reader (control/log_tail.h, branch `logs`) is merged, readLog()
// becomes a call to control::readLogTail and LogSnapshot its LogTail. The seam (LogReader)
// lets route tests inject logs. Thread-safety: free functions, no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tuneplane::api {

inline constexpr std::size_t kMaxLogBytes = 64 * 1024;
inline constexpr std::size_t kMaxLogLines = 2000;

enum class LogStream { kStdout, kStderr };

struct LogSnapshot {
  std::string text;
  bool truncated = false;
  bool missing = false;  // no such log (yet); see reason
  std::string reason;    // why it is missing
  std::uint64_t file_bytes = 0;
  std::size_t lines = 0;
};

// logs/<pool>.out or .err of the attempt. Errors: "logs.invalid_pool", "control.unsafe_log",
// "control.log_io".
Result<LogSnapshot> readLog(const std::string& attempt_dir, std::string_view pool,
                            LogStream stream);

// The pure cut: the last kMaxLogLines lines of `window`, starting at a line unless
// `starts_file`; sets text, truncated and lines.
LogSnapshot cutLog(std::string_view window, bool starts_file, std::size_t max_lines = kMaxLogLines);

using LogReader = std::function<Result<LogSnapshot>(const std::string& attempt_dir,
                                                    std::string_view pool, LogStream stream)>;

}  // namespace tuneplane::api
