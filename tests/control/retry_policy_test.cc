// spec.retry × end cause → retry at a time, or final; and the loop's own backoffs.
#include "control/retry_policy.h"

#include <gtest/gtest.h>

namespace tuneplane::control {
namespace {

using phase::EndCause;
using spec::RetryOn;

TEST(RetryPolicy, CauseTableForEveryRetryOn) {
  struct Row {
    EndCause cause;
    bool infrastructure, any, never;
  };
  const std::vector<Row> table = {
      {EndCause::kInfrastructure, true, true, false},
      {EndCause::kUser, false, true, false},
      {EndCause::kUnobserved, false, true, false},
      {EndCause::kExternalCancel, false, false, false},
      {EndCause::kRejected, false, false, false},
      {EndCause::kAbandoned, false, false, false},
      {EndCause::kCancelled, false, false, false},
      {EndCause::kNone, false, false, false},
      // Not a failure: retry.on does not govern it (max_preemptions does), even `never`.
      {EndCause::kPreempted, true, true, true},
  };
  for (const Row& row : table) {
    SCOPED_TRACE(std::string(phase::toString(row.cause)));
    EXPECT_EQ(retryAllowed(RetryOn::kInfrastructure, row.cause), row.infrastructure);
    EXPECT_EQ(retryAllowed(RetryOn::kAny, row.cause), row.any);
    EXPECT_EQ(retryAllowed(RetryOn::kNever, row.cause), row.never);
  }
}

TEST(RetryPolicy, RetriesAfterTheBackoffUntilMaxAttempts) {
  spec::RetryPolicy policy;
  policy.max_attempts = 3;
  policy.backoff_seconds = 30;
  policy.on = RetryOn::kInfrastructure;
  const int64_t ended = 1'000'000;

  auto first = decideRetry(policy, {.counted = 1}, EndCause::kInfrastructure, ended);
  EXPECT_TRUE(first.retry);
  EXPECT_EQ(first.not_before_ms, ended + 30'000);
  EXPECT_NE(first.reason.find("attempt 2 of 3"), std::string::npos) << first.reason;

  EXPECT_TRUE(decideRetry(policy, {.counted = 2}, EndCause::kInfrastructure, ended).retry);
  auto last = decideRetry(policy, {.counted = 3}, EndCause::kInfrastructure, ended);
  EXPECT_FALSE(last.retry);
  EXPECT_NE(last.reason.find("max_attempts"), std::string::npos) << last.reason;

  auto user = decideRetry(policy, {.counted = 1}, EndCause::kUser, ended);
  EXPECT_FALSE(user.retry);
  EXPECT_NE(user.reason.find("retry.on is infrastructure"), std::string::npos) << user.reason;
}

TEST(RetryPolicy, DefaultSpecNeverRetries) {
  EXPECT_FALSE(
      decideRetry(spec::RetryPolicy{}, {.counted = 1}, EndCause::kInfrastructure, 0).retry);
}

// Issue 47: a preemption is retried without using one of max_attempts, up to max_preemptions,
// whatever retry.on says; the failures that follow still have every attempt of max_attempts.
TEST(RetryPolicy, PreemptionsUseNoAttemptUpToMaxPreemptions) {
  spec::RetryPolicy policy;  // max_attempts 1, on infrastructure, max_preemptions 10
  policy.backoff_seconds = 5;
  const int64_t ended = 1'000'000;
  EXPECT_EQ(policy.max_preemptions, 10);

  // max_attempts 1 and already one attempt preempted: still retried.
  auto second = decideRetry(policy, {.counted = 0, .preemptions = 2}, EndCause::kPreempted, ended);
  EXPECT_TRUE(second.retry);
  EXPECT_EQ(second.not_before_ms, ended + 5'000);
  EXPECT_NE(second.reason.find("retrying (preempted, preemption 2 of 10"), std::string::npos)
      << second.reason;
  EXPECT_NE(second.reason.find("no attempt of retry.max_attempts used"), std::string::npos)
      << second.reason;

  // The tenth is retried; the eleventh ends the job.
  EXPECT_TRUE(decideRetry(policy, {.preemptions = 10}, EndCause::kPreempted, ended).retry);
  auto over = decideRetry(policy, {.preemptions = 11}, EndCause::kPreempted, ended);
  EXPECT_FALSE(over.retry);
  EXPECT_NE(over.reason.find("more than retry.max_preemptions (10)"), std::string::npos)
      << over.reason;

  // retry.on: never governs failures only.
  policy.on = RetryOn::kNever;
  EXPECT_TRUE(decideRetry(policy, {.preemptions = 1}, EndCause::kPreempted, ended).retry);
  EXPECT_FALSE(decideRetry(policy, {.counted = 1}, EndCause::kInfrastructure, ended).retry);

  // 0: the first preemption ends the job.
  policy.max_preemptions = 0;
  auto none = decideRetry(policy, {.preemptions = 1}, EndCause::kPreempted, ended);
  EXPECT_FALSE(none.retry);
  EXPECT_NE(none.reason.find("retry.max_preemptions is 0"), std::string::npos) << none.reason;
}

TEST(RetryPolicy, AFailureAfterPreemptionsCountsOnlyAttemptsNotPreempted) {
  spec::RetryPolicy policy;
  policy.max_attempts = 2;
  // Attempts 1 and 2 preempted, attempt 3 failed: the first counted attempt of two.
  auto first = decideRetry(policy, {.counted = 1, .preemptions = 2}, EndCause::kInfrastructure, 0);
  EXPECT_TRUE(first.retry);
  EXPECT_NE(first.reason.find("attempt 2 of 2"), std::string::npos) << first.reason;
  auto last = decideRetry(policy, {.counted = 2, .preemptions = 2}, EndCause::kInfrastructure, 0);
  EXPECT_FALSE(last.retry);
  EXPECT_NE(last.reason.find("preempted attempts not counted"), std::string::npos) << last.reason;
}

TEST(RetryPolicy, LookupAndResendBackoffsDoubleUpToTheirCaps) {
  EXPECT_EQ(lookupDelay(1), kLookupInitialDelay);
  EXPECT_EQ(lookupDelay(2), 2 * kLookupInitialDelay);
  EXPECT_EQ(lookupDelay(3), 4 * kLookupInitialDelay);
  EXPECT_EQ(lookupDelay(1000), kLookupMaxDelay);
  EXPECT_EQ(resendDelay(1), kResendInitialDelay);
  EXPECT_EQ(resendDelay(2), 2 * kResendInitialDelay);
  EXPECT_EQ(resendDelay(1000), kResendMaxDelay);
}

}  // namespace
}  // namespace tuneplane::control
