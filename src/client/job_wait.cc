#include "client/job_wait.h"

namespace tuneplane::client {

JobWait waitForJob(ApiClient& client, std::string_view id, const PollOptions& options,
                   const Clock& clock, Sleeper& sleeper, const JobWaitCallbacks& callbacks) {
  Poller poller(options, clock, sleeper);
  JobWait wait;
  std::optional<std::pair<std::string, std::string>> last;  // phase, reason
  for (;;) {
    auto job = client.getJob(id);
    if (job) {
      poller.succeeded();
      auto view = jobFromJson(*job);
      if (!view) {
        wait.error = ApiError{FailureKind::kBadResponse, 200, {view.error()}};
        return wait;
      }
      wait.job = std::move(*job);
      if (!last || last->first != view->phase || last->second != view->reason) {
        last.emplace(view->phase, view->reason);
        if (callbacks.on_change) callbacks.on_change(*view);
      }
      if (view->terminal()) {
        wait.end = PollEnd::kDone;
        return wait;
      }
    } else if (poller.tolerate(job.error())) {
      if (callbacks.on_retry) callbacks.on_retry(job.error());
    } else {
      wait.error = std::move(job.error());
      return wait;
    }
    if (auto end = poller.pause()) {
      wait.end = *end;
      return wait;
    }
  }
}

}  // namespace tuneplane::client
