// Live, issue 19: two `tuneplane serve` replicas on one PostgreSQL against the real Slurm
// cluster (live_serve_fixture.h). A job is submitted through the leader; while it runs in
// Slurm the leader is SIGKILLed; the other replica takes the lease and follows the job to
// Succeeded, as its only attempt, with exactly one Slurm job carrying its submit token.
// The PostgreSQL server is the test binary's own (support/pg_cluster.h: Debian's packages,
// a Unix socket in a temporary directory). Skipped unless TUNEPLANE_LIVE_* is set; without
// PostgreSQL it skips too, unless TUNEPLANE_REQUIRE_POSTGRES=1. Waits are bounded.
#include <signal.h>

#include "live_serve_fixture.h"
#include "support/pg_test_database.h"

namespace tuneplane::live {
namespace {

using namespace std::chrono_literals;

constexpr int kLeaseSeconds = 3;

class LiveServeReplicas : public LiveServe {
 protected:
  void SetUp() override {
    if (!liveConfig()) GTEST_SKIP() << kSkipReason;
    database_.open();
    if (!database_.ready()) return;
    LiveServe::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    standby_ = test::ServeProcess::start(dir_ + "/site.yaml", db(), dir_);
    ASSERT_NE(standby_, nullptr);
  }
  void TearDown() override {
    // The fixture's cancel (of a job the test left running) goes through cli_, which names
    // the standby once the leader is gone: the standby stops after it.
    LiveServe::TearDown();
    if (standby_) {
      EXPECT_EQ(standby_->stop(), 0) << standby_->process().err();
    }
  }  // the database is dropped after
  std::string db() const override { return database_.uri(); }
  std::string serverExtra() const override {
    return "  lease_seconds: " + std::to_string(kLeaseSeconds) + "\n";
  }

  // tuneplane_leader from `url`'s /metrics: 1, 0, or -1 when it did not answer.
  static int leaderGauge(const std::string& url) {
    return static_cast<int>(test::metricValue(url, "tuneplane_leader").value_or(-1));
  }

  test::PgTestDatabase database_;
  std::unique_ptr<test::ServeProcess> standby_;
};

TEST_F(LiveServeReplicas, TheStandbyFollowsAJobToSucceededAfterTheLeaderIsKilled) {
  // serve_ started first and leads; standby_ stands by.
  ASSERT_TRUE(test::waitUntil([&] { return leaderGauge(serve_->url()) == 1; }, kLiveLimit));
  EXPECT_EQ(leaderGauge(standby_->url()), 0);

  // Runs until the test creates `go` in its output folder (at most two minutes).
  const std::string spec = cpuJobSpec(
      "live-replicas",
      "for i in $(seq 600); do [ -e $TUNEPLANE_OUTPUT_DIR/go ] && break; sleep 0.2; done; "
      "echo followed");
  writeFile(dir_ + "/job.yaml", spec,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  const auto submitted = cli_->run({"submit", "-f", dir_ + "/job.yaml", "-o", "json"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err << serve_->process().err();
  id_ = json::parse(submitted.out).value("id", "");
  const json running = cli_->waitJob(
      id_,
      [](const json& job) {
        return !job["attempts"].empty() && job["attempts"][0].value("phase", "") == "Running";
      },
      "ran", kLiveLimit);
  ASSERT_EQ(running["attempts"][0].value("phase", ""), "Running") << running.dump(2);

  serve_->crash();  // SIGKILL: its session ends, the standby takes the lease
  serve_.reset();
  ASSERT_TRUE(test::waitUntil([&] { return leaderGauge(standby_->url()) == 1; }, kLiveLimit));
  const json& attempt = running["attempts"][0];
  writeFile(attempt.value("staging_dir", "") + "/output/go", "");

  cli_ = std::make_unique<test::CliRunner>(standby_->url(), kToken, dir_);
  const json done = cli_->waitJob(
      id_, [](const json& job) { return job.value("phase", "") == "Succeeded"; }, "succeeded",
      kLiveLimit);
  ASSERT_EQ(done.value("phase", ""), "Succeeded") << done.dump(2) << standby_->process().err();
  ASSERT_EQ(done["attempts"].size(), 1u) << done.dump(2);  // not submitted again
  EXPECT_EQ(done["attempts"][0]["submit_token"], attempt["submit_token"]);
  EXPECT_EQ(
      test::slurmJobsWithComment(dir_ + "/site.yaml", attempt.value("submit_token", "")).size(),
      1u);
  const auto logs = cli_->run({"logs", id_});
  EXPECT_EQ(logs.out, "followed\n") << logs.err;
}

}  // namespace
}  // namespace tuneplane::live
