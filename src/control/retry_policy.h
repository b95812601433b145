// When TunePlane tries again, and when it waits. Pure; thread-safe.
//
// Attempts: Slurm's requeue is always off, so TunePlane alone decides whether an ended
// attempt gets a successor — from spec.retry (max_attempts, max_preemptions,
// backoff_seconds, on) and the cause the attempt ended with:
//   cause \ retry.on     infrastructure   any    never
//   infrastructure       retry            retry  final
//   user                 final            retry  final
//   unobserved           final            retry  final   (ran, ended without a word)
//   external_cancel      final            final  final   (a person stopped it on purpose)
//   rejected, abandoned,
//   cancelled            final            final  final
//   preempted            retry            retry  retry   (not a failure: see below)
// A failure is retried while the attempts that count (every one not preempted) are fewer
// than max_attempts. A preemption is not a failure: retry.on does not govern it, it uses
// none of max_attempts, and it is retried while the job's preemptions (this one included)
// are at most max_preemptions — 0 ends the job at its first. A retry starts backoff_seconds
// after the attempt ended, as a new attempt in a new dir.
//
// Waits of the control loop itself are bounded exponential backoffs with the named
// constants below: looking for a lost receipt (never given up: only an operator abandons),
// and re-sending a submit that provably never left (not_sent, or refused before it was read).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "phase/phases.h"
#include "spec/job_spec.h"

namespace tuneplane::control {

struct RetryDecision {
  bool retry = false;
  int64_t not_before_ms = 0;  // when retry: the earliest start of the next attempt
  std::string reason;         // for people: why it retries or why it is final
};

// True when `on` allows retrying an attempt that ended with `cause` (always for kPreempted,
// which max_preemptions bounds instead).
bool retryAllowed(spec::RetryOn on, phase::EndCause cause);

// The job's ended attempts, the one just ended included, as the retry policy counts them.
struct AttemptsEnded {
  int counted = 0;      // not preempted: each used one of retry.max_attempts
  int preemptions = 0;  // preempted: each one of retry.max_preemptions
};

// REQUIRES: `ended` includes the attempt that ended with `cause` (counted or preemptions
// >= 1 accordingly).
RetryDecision decideRetry(const spec::RetryPolicy& policy, AttemptsEnded ended,
                          phase::EndCause cause, int64_t ended_ms);

// Lost-receipt lookups: the first right away (the next cycle), then doubling from
// kLookupInitialDelay up to kLookupMaxDelay.
inline constexpr std::chrono::milliseconds kLookupInitialDelay{5'000};
inline constexpr std::chrono::milliseconds kLookupMaxDelay{300'000};
// `lookups_done`: lookups that did not find the job so far (>= 1).
std::chrono::milliseconds lookupDelay(int lookups_done);

// Re-sending a submit that was not sent: doubling from kResendInitialDelay up to
// kResendMaxDelay, so a slurmrestd that is down is not hammered.
inline constexpr std::chrono::milliseconds kResendInitialDelay{1'000};
inline constexpr std::chrono::milliseconds kResendMaxDelay{60'000};
// `tries_failed`: submits of this attempt that were not sent so far (>= 1).
std::chrono::milliseconds resendDelay(int tries_failed);

}  // namespace tuneplane::control
