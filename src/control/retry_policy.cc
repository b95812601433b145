// The retry table and backoffs of retry_policy.h.
#include "control/retry_policy.h"

#include <algorithm>

namespace tuneplane::control {
namespace {

using phase::EndCause;

std::chrono::milliseconds doubling(std::chrono::milliseconds initial, std::chrono::milliseconds max,
                                   int done) {
  std::chrono::milliseconds delay = initial;
  for (int i = 1; i < done && delay < max; ++i) delay *= 2;
  return std::min(delay, max);
}

}  // namespace

bool retryAllowed(spec::RetryOn on, EndCause cause) {
  if (cause == EndCause::kPreempted) return true;  // not a failure: max_preemptions decides
  switch (on) {
    case spec::RetryOn::kNever:
      return false;
    case spec::RetryOn::kInfrastructure:
      return cause == EndCause::kInfrastructure;
    case spec::RetryOn::kAny:
      return cause == EndCause::kInfrastructure || cause == EndCause::kUser ||
             cause == EndCause::kUnobserved;
  }
  return false;
}

RetryDecision decideRetry(const spec::RetryPolicy& policy, AttemptsEnded ended, EndCause cause,
                          int64_t ended_ms) {
  RetryDecision d;
  const std::string cause_text(phase::toString(cause));
  const std::string after = " after " + std::to_string(policy.backoff_seconds) + " s";
  if (cause == EndCause::kPreempted) {
    if (ended.preemptions > policy.max_preemptions) {
      d.reason = policy.max_preemptions == 0
                     ? std::string("not retried: retry.max_preemptions is 0")
                     : "not retried: preempted " + std::to_string(ended.preemptions) +
                           " times, more than retry.max_preemptions (" +
                           std::to_string(policy.max_preemptions) + ")";
      return d;
    }
    d.retry = true;
    d.not_before_ms = ended_ms + int64_t{policy.backoff_seconds} * 1000;
    d.reason = "retrying (preempted, preemption " + std::to_string(ended.preemptions) + " of " +
               std::to_string(policy.max_preemptions) + "; no attempt of retry.max_attempts used)" +
               after;
    return d;
  }
  if (!retryAllowed(policy.on, cause)) {
    d.reason = "not retried: retry.on is " + std::string(spec::toString(policy.on)) +
               " and the cause was " + cause_text;
    return d;
  }
  if (ended.counted >= policy.max_attempts) {
    d.reason = "not retried: all " + std::to_string(policy.max_attempts) +
               " attempt(s) of retry.max_attempts used" +
               (ended.preemptions > 0 ? " (preempted attempts not counted)" : "");
    return d;
  }
  d.retry = true;
  d.not_before_ms = ended_ms + int64_t{policy.backoff_seconds} * 1000;
  d.reason = "retrying (" + cause_text + " failure, attempt " + std::to_string(ended.counted + 1) +
             " of " + std::to_string(policy.max_attempts) + ")" + after;
  return d;
}

std::chrono::milliseconds lookupDelay(int lookups_done) {
  return doubling(kLookupInitialDelay, kLookupMaxDelay, lookups_done);
}

std::chrono::milliseconds resendDelay(int tries_failed) {
  return doubling(kResendInitialDelay, kResendMaxDelay, tries_failed);
}

}  // namespace tuneplane::control
