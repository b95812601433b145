// See idempotent_submit.h.
#include "client/idempotent_submit.h"

#include <algorithm>

namespace tuneplane::client {

ApiResult<Json> submitIdempotently(ApiClient& api, std::string_view spec_text,
                                   const std::string& idempotency_key, const Clock& clock,
                                   Sleeper& sleeper, const SubmitRetryNotice& on_retry,
                                   const SubmitRetryOptions& options) {
  const int64_t start_ms = clock.steadyMs();
  std::chrono::milliseconds wait = options.first_wait;
  bool answer_lost = false;
  for (;;) {
    auto sent = api.submitJob(spec_text, idempotency_key);
    if (sent) return sent;
    ApiError& error = sent.error();
    answer_lost = answer_lost || error.kind == FailureKind::kNoAnswer;
    // Before any answer was lost, every failure says what happened (nothing, or a refusal);
    // after, sending again settles it while the server is away (refused, no answer) or
    // passing through a restart (429, 502, 503, 504).
    if (!answer_lost || !error.transient()) return sent;
    const bool in_budget = clock.steadyMs() - start_ms + wait.count() <= options.budget.count();
    if (in_budget && on_retry) on_retry(error, wait);
    if (!in_budget || !sleeper.sleepFor(wait)) {
      error.kind = FailureKind::kNoAnswer;  // it may have been created: the caller says so
      error.http_status = 0;
      return sent;
    }
    wait = std::min(wait * 2, options.max_wait);
  }
}

}  // namespace tuneplane::client
