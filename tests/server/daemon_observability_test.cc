// What `tuneplane serve` tells its operator, end to end through the Daemon against the
// in-process simulator: /metrics gains attempts by outcome, the cycle duration and the submit
// latency, and they move; the structured log has one JSON object per line with a record per
// transition and per slurmrestd error; no token ever reaches a log.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <sstream>

#include "../api/prometheus_text.h"
#include "api/json_views.h"
#include "daemon_fixture.h"

namespace tuneplane::server::testing {
namespace {

using namespace std::chrono_literals;

// A token the server knows but nothing may ever print.
constexpr const char* kWatchedToken = "WATCHED-token-9f3e1c-must-not-be-logged";

class DaemonObservabilityTest : public DaemonFixture {
 protected:
  void SetUp() override {
    DaemonFixture::SetUp();
    if (HasFatalFailure()) return;
    // Everything the libraries log through spdlog, captured too.
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(spdlog_out_)));
    caller_ = kWatchedToken;
    DaemonOptions options;
    options.tokens = {{.user = "alice", .token_sha256 = sha256Hex(kWatchedToken), .admin = false}};
    options.access_log = [this](const std::string& line) { keep(access_, line); };
    options.event_log = [this](const LogRecord& record) { keep(records_, dumpRecord(record)); };
    startDaemon(std::move(options));
  }
  void TearDown() override {
    DaemonFixture::TearDown();
    if (previous_) spdlog::set_default_logger(previous_);
  }

  void keep(std::vector<std::string>& lines, const std::string& line) {
    std::lock_guard<std::mutex> lock(mu_);
    lines.push_back(line);
  }
  std::vector<std::string> records() {
    std::lock_guard<std::mutex> lock(mu_);
    return records_;
  }
  std::vector<json> parsedRecords() {
    std::vector<json> out;
    for (const auto& line : records()) out.push_back(json::parse(line, nullptr, false));
    return out;
  }
  // Every line anything logged: structured records, access lines, spdlog messages.
  std::string everything() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string all = spdlog_out_.str();
    for (const auto& l : records_) all += l + "\n";
    for (const auto& l : access_) all += l + "\n";
    return all;
  }

  std::string metrics() {
    auto res = api_->Get("/metrics");
    return res ? res->body : "";
  }
  double value(const std::string& text, const std::string& series) {
    return sampleValue(text, series).value_or(-1);
  }

  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream spdlog_out_;
  std::mutex mu_;
  std::vector<std::string> access_;
  std::vector<std::string> records_;
};

TEST_F(DaemonObservabilityTest, MetricsMoveAfterASuccessAFailureAndPollCycles) {
  const std::string before = metrics();
  EXPECT_EQ(expositionProblems(before), std::vector<std::string>{}) << before;
  EXPECT_NE(before.find("# TYPE tuneplane_attempts_total counter\n"), std::string::npos);
  EXPECT_NE(before.find("# TYPE tuneplane_control_cycle_duration_seconds histogram\n"),
            std::string::npos);
  EXPECT_NE(before.find("# TYPE tuneplane_submit_latency_seconds histogram\n"), std::string::npos);
  EXPECT_EQ(value(before, "tuneplane_submit_latency_seconds_count"), 0);

  const std::string good = submit(cpuSpec("echo fine"));
  const std::string bad = submit(cpuSpec("echo failing; exit 3", "", "broken"));
  ASSERT_TRUE(waitForPhase(good, "Succeeded"));
  ASSERT_TRUE(waitForPhase(bad, "Failed"));

  const std::string after = metrics();
  EXPECT_EQ(expositionProblems(after), std::vector<std::string>{}) << after;
  EXPECT_EQ(value(after, "tuneplane_attempts_total{outcome=\"succeeded\",cause=\"none\"}"), 1)
      << after;
  EXPECT_EQ(value(after, "tuneplane_attempts_total{outcome=\"failed\",cause=\"user\"}"), 1)
      << after;
  EXPECT_EQ(value(after, "tuneplane_submit_latency_seconds_count"), 2) << after;
  EXPECT_EQ(value(after, "tuneplane_submit_latency_seconds_bucket{le=\"+Inf\"}"), 2);
  const double cycles = value(after, "tuneplane_control_cycle_duration_seconds_count");
  EXPECT_GE(cycles, 1) << after;
  EXPECT_GT(value(after, "tuneplane_control_cycle_duration_seconds_sum"), 0) << after;
  // The loop keeps cycling: the count moves on.
  const int64_t ticks = daemon_->loop().ticks();
  ASSERT_TRUE(
      tuneplane::test::waitUntil([&] { return daemon_->loop().ticks() >= ticks + 2; }, 10s));
  EXPECT_GT(value(metrics(), "tuneplane_control_cycle_duration_seconds_count"), cycles);
}

TEST_F(DaemonObservabilityTest, EveryLogLineIsJsonWithATransitionPerMove) {
  const std::string reason_job = submit(cpuSpec("echo \"quoted\"; echo two"));
  ASSERT_TRUE(waitForPhase(reason_job, "Succeeded"));
  // A move is logged after its commit, which the API may already have shown: wait (bounded)
  // until the log has caught up with the store.
  const auto logged = [&] {
    std::size_t count = 0;
    for (const auto& record : parsedRecords()) {
      count += record.is_object() && record.value("event", "") == "transition" &&
               record.value("job", "") == reason_job;
    }
    return count;
  };
  ASSERT_TRUE(tuneplane::test::waitUntil(
      [&] {
        const auto stored = store_->events(reason_job);
        return stored && logged() >= stored->size();
      },
      10s));
  const std::vector<std::string> lines = records();
  ASSERT_FALSE(lines.empty());
  std::vector<json> moves;
  for (const auto& line : lines) {
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    const json record = json::parse(line, nullptr, false);
    ASSERT_FALSE(record.is_discarded()) << "not JSON: " << line;
    ASSERT_TRUE(record.is_object()) << line;
    EXPECT_TRUE(record.contains("time") && record.contains("level") && record.contains("event"))
        << line;
    if (record["event"] == "transition" && record["job"] == reason_job) moves.push_back(record);
  }
  // The log tells the same story as the stored events, in order, with every field.
  auto stored = store_->events(reason_job);
  ASSERT_TRUE(stored);
  ASSERT_EQ(moves.size(), stored->size());
  for (std::size_t i = 0; i < moves.size(); ++i) {
    const auto& e = (*stored)[i];
    EXPECT_EQ(moves[i]["to"], e.to) << i;
    EXPECT_EQ(moves[i]["from"], e.from.empty() ? json() : json(e.from)) << i;
    EXPECT_EQ(moves[i]["attempt"], e.attempt ? json(e.attempt) : json()) << i;
    EXPECT_EQ(moves[i]["reason"], e.reason) << i;
    EXPECT_EQ(moves[i]["actor"], e.actor) << i;
    EXPECT_EQ(moves[i]["time"], api::timeJson(e.time_ms)) << i;
  }
  EXPECT_EQ(moves.front()["actor"], "alice");  // the creation, by its submitter
  EXPECT_EQ(moves.back()["to"], "Succeeded");
  bool attempt_succeeded = false;
  for (const auto& m : moves) attempt_succeeded |= m["attempt"] == 1 && m["to"] == "Succeeded";
  EXPECT_TRUE(attempt_succeeded);
}

TEST_F(DaemonObservabilityTest, AFailedSlurmCallIsOneErrorRecord) {
  // No job yet, so the loop sends nothing: the next request is this job's POST.
  sim_->failNextRequests(1, 500);
  const std::string id = submit(cpuSpec("echo x"));
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return phase(id) == "SubmitUnknown"; }, 30s))
      << phase(id);
  std::vector<json> errors;
  for (const auto& record : parsedRecords()) {
    if (record.value("event", "") == "slurm_error") errors.push_back(record);
  }
  ASSERT_EQ(errors.size(), 1u) << everything();
  EXPECT_EQ(errors[0]["operation"], "submit");
  EXPECT_EQ(errors[0]["http_status"], 500);
  EXPECT_EQ(errors[0]["code"], "slurm.server_error");
  EXPECT_EQ(errors[0]["attempts"], 1);  // a submit is never retried
  EXPECT_EQ(errors[0]["level"], "warning");
  EXPECT_TRUE(errors[0].contains("slurm_error_code"));
  EXPECT_EQ(
      value(metrics(), "tuneplane_slurm_requests_total{operation=\"submit\",outcome=\"error\"}"),
      1);
}

TEST_F(DaemonObservabilityTest, NoTokenEverReachesALog) {
  // The server's token on every request (and a wrong one, and one in a query), the site's
  // JWT key minting slurmrestd tokens, and a submit slurmrestd refuses.
  const std::string id = submit(cpuSpec("echo x"));
  ASSERT_TRUE(waitForPhase(id, "Succeeded"));
  api_->Get(("/v1/jobs/" + id).c_str(), as(caller_));
  api_->Get("/v1/jobs", {{"Authorization", "Bearer WATCHED-wrong-token-1234"}});
  api_->Get((std::string("/v1/jobs?token=") + kWatchedToken).c_str(), as(caller_));
  sim_->failNextRequests(1, 422);
  const std::string refused = submit(cpuSpec("echo y", "", "refused"));
  ASSERT_TRUE(waitForPhase(refused, "Failed"));
  ASSERT_TRUE(tuneplane::test::waitUntil(
      [&] {
        std::lock_guard<std::mutex> lock(mu_);
        return access_.size() >= 6;
      },
      10s));

  const std::string all = everything();
  ASSERT_NE(all.find("transition"), std::string::npos);  // something was captured
  ASSERT_NE(all.find("slurm_error"), std::string::npos);
  ASSERT_NE(all.find("control loop: started"), std::string::npos);  // spdlog's, captured too
  EXPECT_EQ(all.find("WATCHED"), std::string::npos) << all;
  EXPECT_EQ(all.find(pipeline::testing::kJwtKey), std::string::npos);
  // Every JWT starts with the base64 of '{"': none was written anywhere.
  EXPECT_EQ(all.find("eyJ"), std::string::npos) << all;
  EXPECT_EQ(all.find("Bearer"), std::string::npos);
  EXPECT_EQ(all.find("X-SLURM-USER-TOKEN"), std::string::npos);
}

}  // namespace
}  // namespace tuneplane::server::testing
