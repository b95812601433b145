// LogWindow's offset arithmetic (a table of successive tail windows and what each shows),
// and followLogs against a fake server: it pins the attempt, prints only new output, and
// stops after the log read that followed the attempt's end.
#include "client/log_follow.h"

#include <gtest/gtest.h>

#include "support/fake_api_server.h"
#include "support/fake_sleeper.h"

namespace tuneplane::client {
namespace {

using tuneplane::testing::FakeApiServer;
using tuneplane::testing::FakeSleeper;

LogsView window(std::string content, uint64_t bytes) {
  LogsView logs;
  logs.content = std::move(content);
  logs.bytes = bytes;
  return logs;
}

TEST(LogWindowTest, SuccessiveWindowsShowEachByteOnce) {
  struct Step {
    LogsView window;
    std::string text;
    uint64_t earlier = 0;
    uint64_t skipped = 0;
    bool restarted = false;
  };
  const std::vector<Step> steps = {
      {window("abc", 3), "abc"},
      {window("abc", 3), ""},                 // nothing new
      {window("bcdef", 6), "def"},            // the window slid: only the new part
      {window("xyz", 20), "xyz", 0, 11},      // 11 bytes never seen between two polls
      {window("new", 3), "new", 0, 0, true},  // the file got shorter: shown anew
  };
  LogWindow log;
  for (size_t i = 0; i < steps.size(); ++i) {
    const LogChunk chunk = log.next(steps[i].window);
    EXPECT_EQ(chunk.text, steps[i].text) << "step " << i;
    EXPECT_EQ(chunk.earlier_bytes, steps[i].earlier) << "step " << i;
    EXPECT_EQ(chunk.skipped_bytes, steps[i].skipped) << "step " << i;
    EXPECT_EQ(chunk.restarted, steps[i].restarted) << "step " << i;
  }
  EXPECT_EQ(log.shownUpTo(), 3u);
}

TEST(LogWindowTest, TheFirstWindowOfALongLogSaysWhatIsLeftOut) {
  LogWindow log;
  const LogChunk chunk = log.next(window("tail\n", 70000));
  EXPECT_EQ(chunk.text, "tail\n");
  EXPECT_EQ(chunk.earlier_bytes, 70000u - 5u);
}

std::string jobWithAttempt(const std::string& phase, const std::string& attempt_phase) {
  return R"({"id":"j-1","phase":")" + phase + R"(","attempts":[{"number":1,"phase":")" +
         attempt_phase + R"(","components":[]}]})";
}
std::string logs(const std::string& content, size_t bytes) {
  return nlohmann::json{{"attempt", 1},       {"component", "cpu"}, {"stream", "stdout"},
                        {"content", content}, {"truncated", false}, {"bytes", bytes}}
      .dump();
}

TEST(FollowLogsTest, PrintsNewOutputUntilTheAttemptEnds) {
  FakeApiServer server;
  server.on("GET", "/v1/jobs/j-1", 200, jobWithAttempt("Running", "Running"));
  server.on("GET", "/v1/jobs/j-1", 200, jobWithAttempt("Running", "Running"));
  server.on("GET", "/v1/jobs/j-1", 200, jobWithAttempt("Succeeded", "Succeeded"));
  server.on("GET", "/v1/jobs/j-1/logs", 200, logs("one\n", 4));
  server.on("GET", "/v1/jobs/j-1/logs", 200, logs("one\ntwo\n", 8));
  server.on("GET", "/v1/jobs/j-1/logs", 200, logs("one\ntwo\nend\n", 12));
  ClientConfig config;
  config.server = server.url();
  config.token = "t";
  auto client = ApiClient::connect(config);
  ASSERT_TRUE(client.has_value());
  FakeClock clock;
  FakeSleeper sleeper(clock);
  std::string shown;
  LogFollowCallbacks callbacks;
  callbacks.on_chunk = [&](const LogChunk& chunk, const LogsView&, const AttemptView&) {
    shown += chunk.text;
  };
  const LogFollow follow =
      followLogs(**client, "j-1", LogsQuery{}, PollOptions{}, clock, sleeper, callbacks);
  EXPECT_EQ(follow.end, PollEnd::kDone);
  EXPECT_EQ(shown, "one\ntwo\nend\n");
  EXPECT_EQ(follow.attempt, 1);
  EXPECT_EQ(sleeper.sleeps().size(), 2u);
  // Every log read asked for the pinned attempt.
  for (const auto& r : server.requests("GET", "/v1/jobs/j-1/logs")) {
    EXPECT_EQ(r.param("attempt"), "1");
    EXPECT_EQ(r.param("stream"), "stdout");
  }
}

TEST(FollowLogsTest, ATimeoutEndsTheFollowWithoutTouchingTheJob) {
  FakeApiServer server;
  server.on("GET", "/v1/jobs/j-1", 200, jobWithAttempt("Running", "Running"));
  server.on("GET", "/v1/jobs/j-1/logs", 200, logs("x\n", 2));
  ClientConfig config;
  config.server = server.url();
  auto client = ApiClient::connect(config);
  ASSERT_TRUE(client.has_value());
  FakeClock clock;
  FakeSleeper sleeper(clock);
  PollOptions options;
  options.timeout = std::chrono::seconds(5);
  const LogFollow follow = followLogs(**client, "j-1", LogsQuery{}, options, clock, sleeper);
  EXPECT_EQ(follow.end, PollEnd::kTimedOut);
  for (const auto& r : server.requests()) EXPECT_EQ(r.method, "GET") << r.path;
}

}  // namespace
}  // namespace tuneplane::client
