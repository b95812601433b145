// `submit --wait`: polls GET /v1/jobs/{id} until the job reaches a terminal phase
// (Succeeded, Failed, Cancelled), the timeout passes, or Ctrl-C. Waiting never changes the
// job: a timeout or an interrupt leaves it running.
// Thread-safety: runs on the caller's thread; the callbacks are called from it.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "client/api_client.h"
#include "client/api_objects.h"
#include "client/poll.h"

namespace tuneplane::client {

struct JobWaitCallbacks {
  // The first poll's job, then each one whose phase or reason differs from the last.
  std::function<void(const JobView&)> on_change;
  // A transient failure that the wait rides over (the server away or restarting).
  std::function<void(const ApiError&)> on_retry;
};

struct JobWait {
  PollEnd end = PollEnd::kFailed;
  std::optional<Json> job;        // the last job the server sent, if any
  std::optional<ApiError> error;  // when end is kFailed
};

JobWait waitForJob(ApiClient& client, std::string_view id, const PollOptions& options,
                   const Clock& clock, Sleeper& sleeper, const JobWaitCallbacks& callbacks = {});

}  // namespace tuneplane::client
