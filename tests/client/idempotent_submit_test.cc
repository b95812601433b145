// submitIdempotently (`tuneplane submit`) against a fake server with a fake clock: a lost
// answer is asked for again under the same Idempotency-Key, waiting 0.5 s, 1 s, 2 s, … up
// to the most, until an answer settles it or the budget runs out (then: no answer, so the
// caller says the job may exist); before any answer was lost, a failure is final.
#include "client/idempotent_submit.h"

#include <gtest/gtest.h>

#include "common/idempotency_key.h"
#include "support/fake_api_server.h"
#include "support/fake_sleeper.h"

namespace tuneplane::client {
namespace {

using namespace std::chrono_literals;
using tuneplane::testing::CannedReply;
using tuneplane::testing::FakeApiServer;
using tuneplane::testing::FakeSleeper;

constexpr const char* kSubmitKey = "0123456789abcdef0123456789abcdef";
const std::string kSubmittedJob = R"({"id":"hello-1a2b3c4d","phase":"Pending"})";
// No answer: the fake holds it past the client's request timeout.
const CannedReply kLostAnswer{201, kSubmittedJob, "application/json", /*hold=*/true};

class SubmitRetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClientConfig config;
    config.server = server_.url();
    config.token = "t";
    // A short request timeout: a held answer counts as lost at once.
    auto client = ApiClient::connect(config, {.connect = 1000ms, .request = 300ms});
    ASSERT_TRUE(client.has_value());
    client_ = std::move(*client);
  }
  ApiResult<Json> submit(const SubmitRetryOptions& options = {}) {
    return submitIdempotently(
        *client_, "spec: x\n", kSubmitKey, clock_, sleeper_,
        [this](const ApiError&, std::chrono::milliseconds wait) { notices_.push_back(wait); },
        options);
  }
  std::vector<tuneplane::testing::RecordedRequest> posts() const {
    return server_.requests("POST", "/v1/jobs");
  }

  FakeApiServer server_;
  std::unique_ptr<ApiClient> client_;
  FakeClock clock_;
  FakeSleeper sleeper_{clock_};
  std::vector<std::chrono::milliseconds> notices_;
};

TEST_F(SubmitRetryTest, ALostAnswerIsAskedForAgainUnderTheSameKey) {
  server_.on("POST", "/v1/jobs", kLostAnswer);
  server_.on("POST", "/v1/jobs",
             CannedReply{
                 200, kSubmittedJob, "application/json", false, {{"Idempotent-Replayed", "true"}}});
  auto job = submit();
  ASSERT_TRUE(job) << job.error().errors.front().message;
  EXPECT_EQ((*job)["id"], "hello-1a2b3c4d");
  const auto sent = posts();
  ASSERT_EQ(sent.size(), 2u);
  for (const auto& request : sent) {
    EXPECT_EQ(request.header(kIdempotencyKeyHeader), kSubmitKey);
    EXPECT_EQ(request.body, "spec: x\n");
  }
  EXPECT_EQ(sleeper_.sleeps(), std::vector<std::chrono::milliseconds>{kSubmitRetryFirstWait});
  EXPECT_EQ(notices_, sleeper_.sleeps());
}

TEST_F(SubmitRetryTest, TheWaitsDoubleUpToTheMostAndEndWithinTheBudgetAsNoAnswer) {
  server_.on("POST", "/v1/jobs", kLostAnswer);
  server_.on("POST", "/v1/jobs", 503, R"({"errors":[{"code":"api.overloaded","message":"x"}]})");
  auto job = submit({.first_wait = 500ms, .max_wait = 2000ms, .budget = 6000ms});
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().kind, FailureKind::kNoAnswer) << "the job may exist: exit 6";
  const std::vector<std::chrono::milliseconds> want = {500ms, 1000ms, 2000ms, 2000ms};
  EXPECT_EQ(sleeper_.sleeps(), want);
  EXPECT_EQ(posts().size(), 5u);
}

TEST_F(SubmitRetryTest, AServerThatGoesAwayAfterALostAnswerIsRetriedUntilItAnswers) {
  server_.on("POST", "/v1/jobs", kLostAnswer);
  server_.on("POST", "/v1/jobs", 502, "bad gateway");
  server_.on("POST", "/v1/jobs", 429, R"({"errors":[{"code":"api.overloaded","message":"x"}]})");
  server_.on("POST", "/v1/jobs", 201, kSubmittedJob);
  auto job = submit();
  ASSERT_TRUE(job);
  EXPECT_EQ(posts().size(), 4u);
  const std::vector<std::chrono::milliseconds> want = {500ms, 1000ms, 2000ms};
  EXPECT_EQ(sleeper_.sleeps(), want);
}

TEST_F(SubmitRetryTest, BeforeAnyLostAnswerAFailureIsFinal) {
  server_.on("POST", "/v1/jobs", 503, R"({"errors":[{"code":"store.busy","message":"x"}]})");
  auto busy = submit();
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error().kind, FailureKind::kHttp);
  EXPECT_EQ(busy.error().http_status, 503);
  EXPECT_EQ(posts().size(), 1u);
  EXPECT_TRUE(sleeper_.sleeps().empty());
}

TEST_F(SubmitRetryTest, ARefusalAfterALostAnswerIsFinal) {
  server_.on("POST", "/v1/jobs", kLostAnswer);
  server_.on("POST", "/v1/jobs", 409,
             R"({"errors":[{"code":"control.idempotency_key_reused","message":"x"}]})");
  auto job = submit();
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().kind, FailureKind::kHttp);
  EXPECT_EQ(job.error().http_status, 409);
  EXPECT_EQ(posts().size(), 2u);
}

TEST_F(SubmitRetryTest, AnInterruptedWaitEndsAsNoAnswer) {
  server_.on("POST", "/v1/jobs", kLostAnswer);
  sleeper_.interruptAt(1);
  auto job = submit();
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().kind, FailureKind::kNoAnswer);
  EXPECT_EQ(posts().size(), 1u);
}

TEST(UnreachableSubmitTest, AServerNeverReachedIsNotRetried) {
  int port = 0;
  {
    FakeApiServer gone;
    port = gone.port();
  }
  ClientConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(port);
  auto client = ApiClient::connect(config);
  ASSERT_TRUE(client.has_value());
  FakeClock clock;
  FakeSleeper sleeper{clock};
  auto job = submitIdempotently(**client, "spec: x\n", kSubmitKey, clock, sleeper);
  ASSERT_FALSE(job);
  EXPECT_EQ(job.error().kind, FailureKind::kNotSent) << "nothing happened: exit 5";
  EXPECT_TRUE(sleeper.sleeps().empty());
}

}  // namespace
}  // namespace tuneplane::client
