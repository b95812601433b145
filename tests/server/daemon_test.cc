// End to end through the HTTP API: the Daemon (what `tuneplane serve` runs: reconciler on
// its loop, API server, readiness probe) against the in-process slurmrestd simulator, with
// SQLite in memory. Jobs run for real in the simulator, so every wait is a bounded poll.
#include <filesystem>
#include <future>

#include "daemon_fixture.h"

namespace tuneplane::server::testing {
namespace {

using namespace std::chrono_literals;

class DaemonTest : public DaemonFixture {
 protected:
  void SetUp() override {
    DaemonFixture::SetUp();
    if (HasFatalFailure()) return;
    DaemonOptions options;
    options.tokens = {{.user = "alice", .token_sha256 = sha256Hex(kAliceToken), .admin = false},
                      {.user = "bob", .token_sha256 = sha256Hex(kBobToken), .admin = false},
                      {.user = "root", .token_sha256 = sha256Hex(kRootToken), .admin = true}};
    startDaemon(std::move(options));
  }
};

TEST_F(DaemonTest, SubmitRunsToSucceededWithItsLogs) {
  const std::string id = submit(cpuSpec("echo hello from the job; echo to-stderr >&2"));
  ASSERT_FALSE(id.empty());
  ASSERT_TRUE(waitForPhase(id, "Succeeded"));
  const json job = getJson("/v1/jobs/" + id);
  ASSERT_EQ(job["attempts"].size(), 1u);
  const json attempt = job["attempts"][0];
  EXPECT_EQ(attempt["phase"], "Succeeded");
  EXPECT_TRUE(attempt["job_id"].is_number());
  ASSERT_EQ(attempt["components"].size(), 1u);
  EXPECT_FALSE(attempt["components"][0]["sluid"].get<std::string>().empty());
  EXPECT_EQ(attempt["components"][0]["exit_code"], 0);
  const json out = getJson("/v1/jobs/" + id + "/logs");
  EXPECT_NE(out.value("content", "").find("hello from the job"), std::string::npos) << out.dump();
  EXPECT_TRUE(out["missing_reason"].is_null());
  const json err = getJson("/v1/jobs/" + id + "/logs?stream=stderr");
  EXPECT_NE(err.value("content", "").find("to-stderr"), std::string::npos) << err.dump();
  // Every transition is an event, ending in Succeeded.
  const json events = getJson("/v1/jobs/" + id + "/events")["items"];
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back()["to"], "Succeeded");
  // The token never reached anything staged.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(site_->stagingRoot())) {
    if (!entry.is_regular_file()) continue;
    EXPECT_EQ(pipeline::testing::readFile(entry.path()).find(kAliceToken), std::string::npos);
  }
}

TEST_F(DaemonTest, CancelEndsARunningJob) {
  const std::string id = submit(cpuSpec("sleep 60"));
  ASSERT_TRUE(waitForPhase(id, "Running"));
  auto res =
      api_->Post(("/v1/jobs/" + id + "/cancel").c_str(), as(kAliceToken), "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 202);
  ASSERT_TRUE(waitForPhase(id, "Cancelled"));
  EXPECT_EQ(getJson("/v1/jobs/" + id)["cancel_requested_by"], "alice");
}

TEST_F(DaemonTest, AuthAndScopingHoldEndToEnd) {
  const std::string id = submit(cpuSpec("echo x"));
  EXPECT_EQ(api_->Get(("/v1/jobs/" + id).c_str())->status, 401);
  EXPECT_EQ(api_->Get(("/v1/jobs/" + id).c_str(), as("forged"))->status, 401);
  EXPECT_EQ(api_->Get(("/v1/jobs/" + id).c_str(), as(kBobToken))->status, 404);
  EXPECT_EQ(api_->Post(("/v1/jobs/" + id + "/attempts/1/abandon").c_str(), as(kAliceToken),
                       R"({"reason":"x"})", "application/json")
                ->status,
            403);
}

TEST_F(DaemonTest, ABadSpecIs422AndNothingIsStaged) {
  std::string bad = cpuSpec("echo x", "  data:\n    volumes:\n      - name: ds\n");
  auto res = api_->Post("/v1/jobs", as(kAliceToken), bad, "application/yaml");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 422);
  // Give the loop a few ticks: nothing may appear.
  const int64_t ticks = daemon_->loop().ticks();
  ASSERT_TRUE(
      tuneplane::test::waitUntil([&] { return daemon_->loop().ticks() >= ticks + 2; }, 10s));
  EXPECT_TRUE(std::filesystem::is_empty(site_->stagingRoot()));
  EXPECT_EQ(getJson("/v1/jobs")["items"].size(), 0u);
  EXPECT_EQ(sim_->jobCount(), 0u);
}

TEST_F(DaemonTest, ReadinessAndMetricsSeeTheSimulator) {
  auto ready = api_->Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200) << ready->body;
  const std::string id = submit(cpuSpec("echo x"));
  ASSERT_TRUE(waitForPhase(id, "Succeeded"));
  const std::string metrics = api_->Get("/metrics")->body;
  EXPECT_NE(metrics.find("tuneplane_slurm_requests_total{operation=\"submit\",outcome=\"ok\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("tuneplane_jobs{phase=\"Succeeded\"} 1"), std::string::npos);
  EXPECT_NE(metrics.find("tuneplane_control_ticks_total"), std::string::npos);
}

TEST_F(DaemonTest, DoctorRouteRunsTheChecksAgainstTheSiteForAnAdmin) {
  auto refused = api_->Get("/v1/doctor", as(kAliceToken));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  auto res = api_->Get("/v1/doctor", as(kRootToken));
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json report = json::parse(res->body, nullptr, false);
  EXPECT_EQ(report["version"], 1);
  std::map<std::string, std::string> status;
  for (const auto& c : report["checks"]) status[c["name"]] = c["status"];
  // The simulator answers, so the checks that ask slurmrestd pass.
  EXPECT_EQ(status["slurmrestd"], "ok") << res->body;
  EXPECT_EQ(status["api_version"], "ok") << res->body;
  EXPECT_EQ(status["token"], "ok") << res->body;
  EXPECT_TRUE(status.contains("staging/root")) << res->body;
  EXPECT_EQ(report["summary"]["fail"].get<int>() + report["summary"]["ok"].get<int>() +
                report["summary"]["warn"].get<int>() + report["summary"]["skip"].get<int>(),
            static_cast<int>(report["checks"].size()));
}

TEST_F(DaemonTest, StopReturnsPromptlyAndLeavesSlurmJobsRunning) {
  const std::string id = submit(cpuSpec("sleep 60"));
  ASSERT_TRUE(waitForPhase(id, "Running"));
  auto stopped = std::async(std::launch::async, [this] { daemon_->stop(); });
  ASSERT_EQ(stopped.wait_for(20s), std::future_status::ready);
  // The job still runs in Slurm; the store still says Running for the next start.
  auto view = store_->getJob(id);
  ASSERT_TRUE(view && *view);
  EXPECT_EQ((*view)->job.phase, phase::JobPhase::kRunning);
  EXPECT_EQ(sim_->jobCount(), 1u);
}

}  // namespace
}  // namespace tuneplane::server::testing
