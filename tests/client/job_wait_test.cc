// waitForJob (`submit --wait`) against a fake server with a fake clock: it ends on a
// terminal phase, on the timeout, on Ctrl-C, rides over a server that is briefly away, and
// gives up on one that stays away or refuses. Waiting never sends anything but GETs.
#include "client/job_wait.h"

#include <gtest/gtest.h>

#include "support/fake_api_server.h"
#include "support/fake_sleeper.h"

namespace tuneplane::client {
namespace {

using tuneplane::testing::FakeApiServer;
using tuneplane::testing::FakeSleeper;

std::string job(const std::string& phase, const std::string& reason = "") {
  return nlohmann::json{{"id", "j-1"}, {"phase", phase}, {"reason", reason}}.dump();
}

class JobWaitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClientConfig config;
    config.server = server_.url();
    config.token = "t";
    auto client = ApiClient::connect(config);
    ASSERT_TRUE(client.has_value());
    client_ = std::move(*client);
  }
  JobWait wait(const PollOptions& options, std::vector<std::string>* phases = nullptr) {
    JobWaitCallbacks callbacks;
    callbacks.on_change = [phases](const JobView& view) {
      if (phases != nullptr) phases->push_back(view.phase);
    };
    return waitForJob(*client_, "j-1", options, clock_, sleeper_, callbacks);
  }
  void expectOnlyGets() {
    for (const auto& r : server_.requests()) EXPECT_EQ(r.method, "GET") << r.path;
  }

  FakeApiServer server_;
  std::unique_ptr<ApiClient> client_;
  FakeClock clock_;
  FakeSleeper sleeper_{clock_};
};

TEST_F(JobWaitTest, EndsOnATerminalPhaseAndReportsEachChangeOnce) {
  for (const char* phase : {"Pending", "Pending", "Running", "Running", "Succeeded"}) {
    server_.on("GET", "/v1/jobs/j-1", 200, job(phase));
  }
  std::vector<std::string> phases;
  const JobWait result = wait(PollOptions{}, &phases);
  EXPECT_EQ(result.end, PollEnd::kDone);
  EXPECT_EQ(phases, (std::vector<std::string>{"Pending", "Running", "Succeeded"}));
  EXPECT_EQ((*result.job)["phase"], "Succeeded");
  EXPECT_EQ(sleeper_.sleeps().size(), 4u);
  EXPECT_EQ(sleeper_.sleeps().front(), kDefaultPollInterval);
}

TEST_F(JobWaitTest, TheTimeoutIsBoundedAndLeavesTheJobAlone) {
  server_.on("GET", "/v1/jobs/j-1", 200, job("Running"));
  PollOptions options;
  options.timeout = std::chrono::seconds(5);
  const JobWait result = wait(options);
  EXPECT_EQ(result.end, PollEnd::kTimedOut);
  // 2 s, 2 s, then the 1 s left: never past the deadline.
  EXPECT_EQ(sleeper_.sleeps(),
            (std::vector<std::chrono::milliseconds>{
                std::chrono::seconds(2), std::chrono::seconds(2), std::chrono::seconds(1)}));
  expectOnlyGets();
}

TEST_F(JobWaitTest, CtrlCStopsTheWait) {
  server_.on("GET", "/v1/jobs/j-1", 200, job("Running"));
  sleeper_.interruptAt(3);
  const JobWait result = wait(PollOptions{});
  EXPECT_EQ(result.end, PollEnd::kInterrupted);
  EXPECT_EQ(server_.requests().size(), 3u);
  expectOnlyGets();
}

TEST_F(JobWaitTest, RidesOverABriefOutageButNotARefusal) {
  server_.on("GET", "/v1/jobs/j-1", 503, "");
  server_.on("GET", "/v1/jobs/j-1", 503, "");
  server_.on("GET", "/v1/jobs/j-1", 200, job("Failed", "exit 1"));
  const JobWait result = wait(PollOptions{});
  EXPECT_EQ(result.end, PollEnd::kDone);
  EXPECT_EQ((*result.job)["phase"], "Failed");

  server_.on("GET", "/v1/jobs/j-2", 403,
             R"({"errors":[{"code":"auth.forbidden","field":"","message":"no"}]})");
  const JobWait refused = waitForJob(*client_, "j-2", PollOptions{}, clock_, sleeper_);
  EXPECT_EQ(refused.end, PollEnd::kFailed);
  EXPECT_EQ(refused.error->http_status, 403);
}

TEST_F(JobWaitTest, GivesUpOnAServerThatStaysAway) {
  server_.on("GET", "/v1/jobs/j-1", 502, "");
  PollOptions options;
  options.unreachable_grace = std::chrono::seconds(10);
  const JobWait result = wait(options);
  EXPECT_EQ(result.end, PollEnd::kFailed);
  EXPECT_EQ(result.error->http_status, 502);
  EXPECT_EQ(server_.requests().size(), 6u);  // at 0, 2, 4, 6, 8 s still within grace, 10 s not
}

}  // namespace
}  // namespace tuneplane::client
