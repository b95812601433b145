#include "client/job_wait.h"

namespace tuneplane::client {

JobWait waitForJob(ApiClient& client, std::string_view id, const PollOptions& options,
                   const Clock& clock, Sleeper& sleeper, const JobWaitCallbacks& callbacks) {
  JobWait wait;
  std::optional<std::pair<std::string, std::string>> last;  // phase, reason
  auto poll = [&]() -> tl::expected<bool, ApiError> {
    auto job = client.getJob(id);
    if (!job) return tl::unexpected(std::move(job.error()));
    auto view = jobFromJson(*job);
    if (!view) return tl::unexpected(ApiError{FailureKind::kBadResponse, 200, {view.error()}});
    wait.job = std::move(*job);
    if (!last || last->first != view->phase || last->second != view->reason) {
      last.emplace(view->phase, view->reason);
      if (callbacks.on_change) callbacks.on_change(*view);
    }
    return view->terminal();
  };
  PollOutcome outcome = pollUntil(options, clock, sleeper, poll, callbacks.on_retry);
  wait.end = outcome.end;
  wait.error = std::move(outcome.error);
  return wait;
}

}  // namespace tuneplane::client
