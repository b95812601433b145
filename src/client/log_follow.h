// `logs -f`: follows one attempt's log until that attempt ends.
//
// The logs route returns only the log's tail window (at most 64 KiB and 2,000 lines) and
// the file's size (`bytes`). Following is therefore arithmetic on file offsets: the window
// of a poll starts at `bytes - size(content)`, and LogWindow prints only what lies past the
// offset already shown. If more than the window was written between two polls, the bytes
// in between were never returned by the server: LogWindow says how many were skipped (the
// CLI prints that on stderr, with where the full file is) and prints the window. A log that
// got shorter was replaced or truncated: it is shown anew, and said so.
// Limits of the arithmetic (the window's start is derived, not sent): where the server
// replaced invalid UTF-8 by U+FFFD, or left out a character still being written at the end
// of the file, a few bytes around it may be shown twice or not at all.
//
// followLogs polls GET /v1/jobs/{id} and then the logs route; it stops after the first
// log poll that followed a job poll in which the attempt was already terminal, so the
// attempt's last output is always shown. Without --attempt it pins the attempt that is
// the job's latest at the first poll (a retry does not switch the stream mid-way).
// Thread-safety: LogWindow and the loop belong to one caller.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "client/api_client.h"
#include "client/api_objects.h"
#include "client/poll.h"

namespace tuneplane::client {

struct LogChunk {
  std::string text;            // new content, to print as it is
  uint64_t earlier_bytes = 0;  // first window only: bytes before it that are not shown
  uint64_t skipped_bytes = 0;  // written between two polls but never in a window
  bool restarted = false;      // the log got shorter: `text` is the new window, whole
};

// Pure: turns successive tail windows of one log into what has not been shown yet.
class LogWindow {
 public:
  LogChunk next(const LogsView& window);
  // The file offset up to which content has been shown; nullopt before the first window.
  std::optional<uint64_t> shownUpTo() const { return shown_up_to_; }

 private:
  std::optional<uint64_t> shown_up_to_;
};

struct LogFollowCallbacks {
  // New log content (possibly empty text with a skip notice) of the followed attempt.
  std::function<void(const LogChunk&, const LogsView&, const AttemptView&)> on_chunk;
  // Why nothing can be shown yet ("the job has no attempt yet", the server's
  // missing_reason); called when the reason changes.
  std::function<void(const std::string&)> on_waiting;
  std::function<void(const ApiError&)> on_retry;
};

struct LogFollow {
  PollEnd end = PollEnd::kFailed;
  std::optional<int> attempt;     // the followed attempt, once known
  std::optional<JobView> job;     // the last job seen
  std::optional<ApiError> error;  // when end is kFailed
};

LogFollow followLogs(ApiClient& client, std::string_view id, const LogsQuery& query,
                     const PollOptions& options, const Clock& clock, Sleeper& sleeper,
                     const LogFollowCallbacks& callbacks = {});

}  // namespace tuneplane::client
