// launch/attempt_identity.h (tested here with staging, whose paths depend on its job ids).
#include "launch/attempt_identity.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace tuneplane::launch {
namespace {

// Deterministic bytes 0, 1, 2, … so identities can be asserted exactly.
class CountingRandomSource final : public RandomSource {
 public:
  Status fill(std::span<std::uint8_t> out) override {
    for (auto& b : out) b = next_++;
    return ok();
  }

 private:
  std::uint8_t next_ = 0;
};

class FailingRandomSource final : public RandomSource {
 public:
  Status fill(std::span<std::uint8_t>) override {
    return fail("launch.random_failed", "", "no entropy");
  }
};

TEST(AttemptIdentityTest, IdAndTokenComeFromTheRandomSource) {
  CountingRandomSource random;
  auto identity = newAttemptIdentity("hello", 3, random);
  ASSERT_TRUE(identity) << identity.error().describe();
  EXPECT_EQ(identity->job_id, "hello-00010203");
  EXPECT_EQ(identity->attempt, 3);
  EXPECT_EQ(identity->submit_token, "tp-0405060708090a0b0c0d0e0f10111213");
  EXPECT_TRUE(isValidJobId(identity->job_id));
  EXPECT_TRUE(isValidSubmitToken(identity->submit_token));
}

TEST(AttemptIdentityTest, LongNamesAreTruncatedToAValidLabel) {
  CountingRandomSource random;
  auto identity = newAttemptIdentity(std::string(63, 'a'), 1, random);
  ASSERT_TRUE(identity);
  EXPECT_EQ(identity->job_id.size(), 63u);
  EXPECT_EQ(identity->job_id, std::string(54, 'a') + "-00010203");
  EXPECT_TRUE(isValidJobId(identity->job_id));

  // Truncation that would end the name in '-' drops the dash: no "--" before the suffix.
  CountingRandomSource fresh;
  auto dashed = newAttemptIdentity(std::string(53, 'b') + "-" + std::string(9, 'c'), 1, fresh);
  ASSERT_TRUE(dashed) << dashed.error().describe();
  EXPECT_EQ(dashed->job_id, std::string(53, 'b') + "-00010203");
  EXPECT_TRUE(isValidJobId(dashed->job_id));
}

TEST(AttemptIdentityTest, BadInputsAreRefused) {
  CountingRandomSource random;
  for (const char* name : {"", "Hello", "-x", "x-", "a_b", "a/b", ".."}) {
    auto identity = newAttemptIdentity(name, 1, random);
    ASSERT_FALSE(identity) << name;
    EXPECT_EQ(identity.error().code, "launch.invalid_job_name") << name;
  }
  auto zero = newAttemptIdentity("hello", 0, random);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, "launch.invalid_attempt");
}

TEST(AttemptIdentityTest, RandomFailureIsReported) {
  FailingRandomSource random;
  auto identity = newAttemptIdentity("hello", 1, random);
  ASSERT_FALSE(identity);
  EXPECT_EQ(identity.error().code, "launch.random_failed");
}

TEST(AttemptIdentityTest, OpenSslSourceGivesDistinctWellFormedTokens) {
  OpenSslRandomSource random;
  std::set<std::string> tokens;
  for (int i = 0; i < 64; ++i) {
    auto identity = newAttemptIdentity("hello", 1, random);
    ASSERT_TRUE(identity);
    EXPECT_TRUE(isValidJobId(identity->job_id)) << identity->job_id;
    EXPECT_TRUE(isValidSubmitToken(identity->submit_token)) << identity->submit_token;
    tokens.insert(identity->submit_token);
  }
  EXPECT_EQ(tokens.size(), 64u);
}

TEST(AttemptIdentityTest, SubmitTokenShape) {
  EXPECT_TRUE(isValidSubmitToken("tp-" + std::string(32, 'f')));
  EXPECT_FALSE(isValidSubmitToken("tp-" + std::string(31, 'f')));
  EXPECT_FALSE(isValidSubmitToken("tp-" + std::string(33, 'f')));
  EXPECT_FALSE(isValidSubmitToken("tq-" + std::string(32, 'f')));
  EXPECT_FALSE(isValidSubmitToken("tp-" + std::string(32, 'F')));
  EXPECT_FALSE(isValidSubmitToken("tp-" + std::string(31, 'f') + "'"));
}

}  // namespace
}  // namespace tuneplane::launch
