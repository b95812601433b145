// The reconciler with many attempts in flight on its launch stage (launch_stage.h), against
// the in-process simulator: each attempt still goes through every step of the submit
// protocol in order, exactly one Slurm job per attempt, never more attempts in flight than
// connections, and one tick launches every job it may (the loop is not held a poll interval
// per batch).
#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "control/control_loop.h"
#include "control/retry_policy.h"
#include "reconciler_fixture.h"
#include "support/wait.h"

namespace tuneplane::control::testing {
namespace {

using phase::JobPhase;

constexpr int kConnections = 4;

class ReconcilerConcurrentTest : public ReconcilerFixture {
 protected:
  ReconcilerOptions options() override {
    ReconcilerOptions o = ReconcilerFixture::options();
    if (launch_clients_.empty()) {
      for (int i = 0; i < kConnections; ++i) {
        auto client = slurm::SlurmRestClient::fromSite(context_.site.slurm);
        EXPECT_TRUE(client) << client.error().describe();
        if (client) {
          EXPECT_TRUE((*client)->negotiate());  // as serve does at start
        }
        if (client) launch_clients_.push_back(std::move(*client));
      }
    }
    for (auto& c : launch_clients_) o.launch_clients.push_back(c.get());
    o.max_submits_per_tick = budget_;
    o.step_hook = [this](SubmitStep step, const std::string& job_id, int) {
      std::lock_guard<std::mutex> lock(steps_mu_);
      steps_[job_id].push_back(step);
    };
    return o;
  }
  void TearDown() override {
    reconciler_.reset();
    launch_clients_.clear();
    ReconcilerFixture::TearDown();
  }

  std::vector<std::unique_ptr<slurm::SlurmRestClient>> launch_clients_;
  int budget_ = 256;
  std::mutex steps_mu_;
  std::map<std::string, std::vector<SubmitStep>> steps_;
};

TEST_F(ReconcilerConcurrentTest, EveryAttemptFollowsTheProtocolInOrderWithManyInFlight) {
  constexpr int kJobs = 12;
  ASSERT_EQ(sim_->jobCount(), 0u);
  std::vector<std::string> ids;
  for (int i = 0; i < kJobs; ++i) ids.push_back(submit(cpuSpec("echo concurrent")));
  const TickReport report = reconciler_->tick();
  EXPECT_EQ(report.submits, kJobs);
  EXPECT_EQ(report.relaunch_in_ms, -1);  // nothing left to launch
  EXPECT_LE(reconciler_->launchStage().maxInFlight(), kConnections);
  EXPECT_GE(reconciler_->launchStage().maxInFlight(), 1);
  const std::vector<SubmitStep> protocol = {
      SubmitStep::kAttemptDurable, SubmitStep::kStaged,         SubmitStep::kSubmittingDurable,
      SubmitStep::kSubmitAnswered, SubmitStep::kReceiptDurable, SubmitStep::kSluidsDurable};
  for (const auto& id : ids) {
    SCOPED_TRACE(id);
    {
      std::lock_guard<std::mutex> lock(steps_mu_);
      EXPECT_EQ(steps_[id], protocol);
    }
    const store::JobView v = view(id);
    ASSERT_EQ(v.attempts.size(), 1u);
    EXPECT_NE(v.attempts[0].slurm_job_id, 0u);
    EXPECT_FALSE(v.attempts[0].components.front().sluid.empty());
    EXPECT_EQ(slurmJobsWithToken(v.attempts[0].submit_token), 1);
  }
  EXPECT_EQ(sim_->jobCount(), static_cast<size_t>(kJobs));
}

TEST_F(ReconcilerConcurrentTest, ATickPastItsBudgetAsksForTheNextAtOnce) {
  budget_ = 3;
  reconciler_ = makeReconciler();
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) ids.push_back(submit(cpuSpec("echo budget")));
  TickReport report = reconciler_->tick();
  EXPECT_EQ(report.submits, 3);
  EXPECT_EQ(report.relaunch_in_ms, 0);
  report = reconciler_->tick();
  EXPECT_EQ(report.submits, 3);
  EXPECT_EQ(report.relaunch_in_ms, 0);
  report = reconciler_->tick();
  EXPECT_EQ(report.submits, 1);
  EXPECT_EQ(report.relaunch_in_ms, -1);
  for (const auto& id : ids) EXPECT_EQ(view(id).attempts.size(), 1u) << id;
}

TEST_F(ReconcilerConcurrentTest, TheLoopDoesNotHoldLeftLaunchesForAPollInterval) {
  budget_ = 2;
  reconciler_ = makeReconciler();
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) ids.push_back(submit(cpuSpec("echo loop")));
  // An hour between polls: only the tick's own request for more can launch them all.
  ControlLoop loop(*reconciler_, std::chrono::hours(1));
  loop.start();
  auto allSubmitted = [&] {
    for (const auto& id : ids) {
      const store::JobView v = view(id);
      if (v.attempts.empty() || v.attempts[0].slurm_job_id == 0) return false;
    }
    return true;
  };
  const bool submitted = tuneplane::test::waitUntil(allSubmitted, 20s);  // a bound on a hang
  loop.stop();
  EXPECT_TRUE(submitted && allSubmitted());
  EXPECT_GE(loop.ticks(), 4);  // 2 per tick
}

TEST_F(ReconcilerConcurrentTest, AnOverloadedSlurmPausesEveryLaunchThenTheyResume) {
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(submit(cpuSpec("echo overload")));
  // Every request answers 503 for a while: the first submits are lost receipts (a 5xx proves
  // nothing), and the stage pauses every launch.
  sim_->failNextRequests(1000, 503);
  TickReport report = reconciler_->tick();
  EXPECT_GE(report.submits, 1);
  EXPECT_LT(report.submits, 6) << "the stage did not back off";
  EXPECT_GT(report.relaunch_in_ms, 0);
  EXPECT_GE(reconciler_->launchStage().overloads(), 1);
  const int sent = report.submits;
  // Still paused (the clock has not moved): nothing is submitted.
  report = reconciler_->tick();
  EXPECT_EQ(report.submits, 0);
  sim_->failNextRequests(0, 503);
  clock_.advance(std::chrono::milliseconds(kResendMaxDelay));
  report = reconciler_->tick();
  EXPECT_EQ(report.submits, 6 - sent);
  int unknown = 0;
  for (const auto& id : ids) {
    const store::JobView v = view(id);
    ASSERT_EQ(v.attempts.size(), 1u) << id;
    if (v.job.phase == JobPhase::kSubmitUnknown) ++unknown;
  }
  EXPECT_EQ(unknown, sent);  // the 503'd ones look for their token; none was sent twice
}

}  // namespace
}  // namespace tuneplane::control::testing
