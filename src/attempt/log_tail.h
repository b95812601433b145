// The log reader: the tail of one component's scheduler log in an attempt's logs/ folder
// (stdout → logs/<pool>.out, stderr → logs/<pool>.err, as slurm/submit_body.cc names them).
//
// Limits: at most kLogTailMaxBytes (64 KiB) of returned text and at most kLogTailMaxLines
// (2,000) lines. The file is read from its end with one fstat and one pread of at most
// 64 KiB + 4 bytes (logTailWindow), so the cost does not depend on the log's size.
//
// The text is cut so that it starts at the beginning of a line (a line ends with '\n'; a
// CRLF pair stays whole) and never inside a UTF-8 character. If even the last line is longer
// than the byte limit, its last bytes are returned, starting at a character boundary.
// Invalid UTF-8 is replaced: each maximal ill-formed subsequence becomes U+FFFD (Unicode's
// recommended practice, ICU's U8_NEXT), so `text` is always valid UTF-8 and the API can
// return it as a JSON string. An incomplete character at the very end of the file is left
// out: the job is probably still writing it, and the next read shows it whole.
//
// Safety: the job owns what is inside logs/, and may plant a symlink (logs/<pool>.out →
// /etc/shadow) or replace logs/ itself by one. The attempt dir and logs/ are opened with
// O_DIRECTORY|O_NOFOLLOW and the file relative to them (openat) with O_NOFOLLOW|O_NONBLOCK;
// a symlink, a FIFO, a device or a file with more than one hard link is refused with an
// error, never followed, and nothing ever blocks on a FIFO. Errors and reasons name the file
// inside the attempt ("logs/main.out"), never the attempt's path: the API hands them to
// clients, who are not told the server's paths.
//
// Thread-safety: free functions without shared state; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace tuneplane::attempt {

inline constexpr std::size_t kLogTailMaxBytes = 64 * 1024;
inline constexpr std::size_t kLogTailMaxLines = 2000;

enum class LogStream {
  kStdout,  // logs/<pool>.out
  kStderr,  // logs/<pool>.err
};

// What the caller knows of the job that writes the log. Slurm opens logs/<pool>.out and
// .err as the job user before the batch script runs, and fails the job if it cannot; so a
// log that is still missing after a job Slurm started has ended was never written, and the
// likely cause is the job user's permissions on logs/ (issue 11), not the user's command.
enum class JobState {
  kMayStillWrite,  // not started, running, or not known: a missing log is "not (yet)"
  kRanAndEnded,    // Slurm started the job (it has a start time) and it has ended
};

// The reason given for a log missing after the job ran and ended.
inline constexpr std::string_view kLogNeverWrittenReason =
    "the job could not write its log in logs/; check that the job user can write there";

struct LogTailLimits {
  std::size_t max_bytes = kLogTailMaxBytes;  // of the returned text (after replacement); >= 4
  std::size_t max_lines = kLogTailMaxLines;  // >= 1
};

struct LogTail {
  std::string text;              // valid UTF-8; whole lines unless a single line is too long
  bool truncated = false;        // the file has bytes before `text` that were left out
  bool missing = false;          // there is no such log (yet): text is empty, see `reason`
  std::string reason;            // why it is missing, for people; empty otherwise
  std::uint64_t file_bytes = 0;  // the file's size when it was read
  std::size_t lines = 0;         // lines in `text` (a last line without '\n' counts)
  std::size_t replaced = 0;      // ill-formed UTF-8 sequences replaced by U+FFFD
};

// "<pool>.out" or "<pool>.err". The pool must be a DNS label (what the spec allows), so the
// name cannot traverse ("..", "/"). Errors: "logs.invalid_pool" (field "pool").
Result<std::string> logFileName(std::string_view pool, LogStream stream);

// The tail of <attempt_dir>/logs/<pool>.{out,err}.
// A missing attempt dir, logs/ folder or file is not an error: `missing` with a reason; for
// a missing file of a job in JobState::kRanAndEnded, the reason is kLogNeverWrittenReason.
// Errors: "logs.invalid_attempt_dir" (not a clean absolute path), "logs.invalid_pool",
// "logs.symlink" (the attempt dir, logs/ or the file is a symlink), "logs.not_regular_file"
// (a FIFO, device, directory… or a file with several hard links), "logs.io" (open/read).
Result<LogTail> readLogTail(const std::string& attempt_dir, std::string_view pool, LogStream stream,
                            JobState job = JobState::kMayStillWrite,
                            const LogTailLimits& limits = {});

// How many bytes from a log's end readLogTail reads: max_bytes, one more to know whether
// the first line in reach starts a line, and 3 more for an incomplete character at the end,
// which is left out (without them, a log ending in one showed less than it could).
std::size_t logTailWindow(const LogTailLimits& limits);

// The pure cut behind readLogTail. `window` is the end of a file; `starts_file` says whether
// it begins at the file's first byte. If not, a line starts only after a '\n' inside the
// window, so a caller reads logTailWindow(limits) bytes. The result is the same as for the
// whole file. Fills text, truncated, lines and replaced. REQUIRES: window.size() < 2^31.
LogTail cutLogTail(std::string_view window, bool starts_file, const LogTailLimits& limits = {});

}  // namespace tuneplane::attempt
