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

  auto first = decideRetry(policy, 1, EndCause::kInfrastructure, ended);
  EXPECT_TRUE(first.retry);
  EXPECT_EQ(first.not_before_ms, ended + 30'000);
  EXPECT_NE(first.reason.find("attempt 2 of 3"), std::string::npos) << first.reason;

  EXPECT_TRUE(decideRetry(policy, 2, EndCause::kInfrastructure, ended).retry);
  auto last = decideRetry(policy, 3, EndCause::kInfrastructure, ended);
  EXPECT_FALSE(last.retry);
  EXPECT_NE(last.reason.find("max_attempts"), std::string::npos) << last.reason;

  auto user = decideRetry(policy, 1, EndCause::kUser, ended);
  EXPECT_FALSE(user.retry);
  EXPECT_NE(user.reason.find("retry.on is infrastructure"), std::string::npos) << user.reason;
}

TEST(RetryPolicy, DefaultSpecNeverRetries) {
  EXPECT_FALSE(decideRetry(spec::RetryPolicy{}, 1, EndCause::kInfrastructure, 0).retry);
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
