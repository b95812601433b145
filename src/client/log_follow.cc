#include "client/log_follow.h"

#include <fmt/format.h>

namespace tuneplane::client {

LogChunk LogWindow::next(const LogsView& window) {
  const uint64_t size = window.content.size();
  // A server that reports fewer bytes than it sent is taken at its content's word.
  const uint64_t start = window.bytes >= size ? window.bytes - size : 0;
  const uint64_t end = start + size;
  LogChunk chunk;
  if (!shown_up_to_) {
    chunk.text = window.content;
    chunk.earlier_bytes = start;
  } else if (end < *shown_up_to_) {
    chunk.text = window.content;
    chunk.restarted = true;
  } else if (*shown_up_to_ < start) {
    chunk.text = window.content;
    chunk.skipped_bytes = start - *shown_up_to_;
  } else {
    chunk.text = window.content.substr(static_cast<size_t>(*shown_up_to_ - start));
  }
  shown_up_to_ = end;
  return chunk;
}

LogFollow followLogs(ApiClient& client, std::string_view id, const LogsQuery& query,
                     const PollOptions& options, const Clock& clock, Sleeper& sleeper,
                     const LogFollowCallbacks& callbacks) {
  LogFollow follow;
  follow.attempt = query.attempt;
  LogWindow window;
  std::string last_waiting;
  auto waiting = [&](const std::string& why) {
    if (why == last_waiting) return;
    last_waiting = why;
    if (callbacks.on_waiting) callbacks.on_waiting(why);
  };
  // One poll: the job, then (when there is an attempt) its log. true: the attempt has ended.
  auto poll = [&]() -> tl::expected<bool, ApiError> {
    auto job_json = client.getJob(id);
    if (!job_json) return tl::unexpected(job_json.error());
    auto job = jobFromJson(*job_json);
    if (!job) return tl::unexpected(ApiError{FailureKind::kBadResponse, 200, {job.error()}});
    follow.job = *job;
    if (!follow.attempt) {
      if (!job->current_attempt) {
        if (job->terminal()) return true;  // ended before any attempt was made
        waiting(fmt::format("the job has no attempt yet (phase {})", job->phase));
        return false;
      }
      follow.attempt = job->current_attempt->number;
    }
    const AttemptView* attempt = job->attempt(*follow.attempt);
    AttemptView unknown;
    unknown.number = *follow.attempt;
    // Read before the log: if the attempt had ended here, this log read is its last word.
    const bool ended = attempt != nullptr ? attempt->terminal() : job->terminal();
    LogsQuery pinned = query;
    pinned.attempt = follow.attempt;
    auto logs_json = client.jobLogs(id, pinned);
    if (!logs_json) return tl::unexpected(logs_json.error());
    auto logs = logsFromJson(*logs_json);
    if (!logs) return tl::unexpected(ApiError{FailureKind::kBadResponse, 200, {logs.error()}});
    if (logs->missing_reason) {
      waiting(*logs->missing_reason);
    } else if (callbacks.on_chunk) {
      callbacks.on_chunk(window.next(*logs), *logs, attempt != nullptr ? *attempt : unknown);
    } else {
      window.next(*logs);
    }
    return ended;
  };
  PollOutcome outcome = pollUntil(options, clock, sleeper, poll, callbacks.on_retry);
  follow.end = outcome.end;
  follow.error = std::move(outcome.error);
  return follow;
}

}  // namespace tuneplane::client
