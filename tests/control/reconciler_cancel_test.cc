// Cancel in every phase: before submission the job just ends; afterwards every component
// gets a DELETE by SLUID and the job is Cancelling until Slurm reports the end; a lost
// receipt is cancelled as soon as it is found; a job in backoff just ends.
#include <filesystem>

#include "reconciler_fixture.h"

namespace tuneplane::control::testing {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using phase::JobPhase;
namespace fs = std::filesystem;

struct CancelCrash {};

class ReconcilerCancelTest : public ReconcilerFixture {
 protected:
  // Runs one tick that "dies" right after `step`.
  void dieAfter(SubmitStep step) {
    ReconcilerOptions o = options();
    o.step_hook = [step](SubmitStep at, const std::string&, int) {
      if (at == step) throw CancelCrash{};
    };
    Reconciler dying(store(), *client_, *launcher_, clock_, o);
    EXPECT_THROW(dying.tick(), CancelCrash);
  }
  void cancel(const std::string& id) { ASSERT_TRUE(service_->cancel(id, "carol")); }
  bool cancelledBy(const std::string& id, const std::string& who) {
    for (const auto& e : events(id)) {
      if (e.to == "Cancelled" && e.attempt == 0) return e.actor == who;
    }
    return false;
  }
};

TEST_F(ReconcilerCancelTest, PendingJustEnds) {
  const std::string id = submit(cpuSpec());
  cancel(id);
  reconciler_->tick();
  const store::JobView v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kCancelled);
  EXPECT_TRUE(v.attempts.empty());
  EXPECT_TRUE(cancelledBy(id, "carol"));
  EXPECT_EQ(sim_->jobCount(), 0u);
}

TEST_F(ReconcilerCancelTest, StagingJustEnds) {
  const std::string id = submit(cpuSpec());
  dieAfter(SubmitStep::kStaged);
  cancel(id);
  reconciler_->tick();
  const store::JobView v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kCancelled);
  EXPECT_EQ(v.attempts[0].phase, AttemptPhase::kCancelled);
  EXPECT_EQ(sim_->jobCount(), 0u);
  EXPECT_TRUE(fs::exists(v.attempts[0].staging_dir + "/job.sh"));  // files stay
}

TEST_F(ReconcilerCancelTest, QueuedIsDeletedBySluidAndEndsWhenSlurmSaysSo) {
  sim_->pauseScheduling(true);
  const std::string id = submit(cpuSpec());
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kQueued));
  cancel(id);
  EXPECT_EQ(reconciler_->tick().cancels, 1);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kCancelled));
  const store::JobView v = view(id);
  EXPECT_EQ(v.attempts[0].phase, AttemptPhase::kCancelled);
  EXPECT_EQ(v.attempts[0].cause, EndCause::kCancelled);
  EXPECT_EQ(v.attempts[0].components[0].state[0], "CANCELLED");
  EXPECT_TRUE(hasStep(trail(id), "a1:Queued→Cancelling"));
  EXPECT_TRUE(cancelledBy(id, "carol"));
}

TEST_F(ReconcilerCancelTest, RunningIsKilledAndLeavesOnlyAStartSentinel) {
  const std::string id = submit(cpuSpec("sleep 60", retryBlock(3, 0, "any")));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning));
  const std::string dir = view(id).attempts[0].staging_dir;
  ASSERT_TRUE(waitFor([&] { return fs::exists(dir + "/logs/start-main.json"); }));
  cancel(id);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kCancelled));
  const store::JobView v = view(id);
  EXPECT_EQ(v.attempts.size(), 1u);  // no retry after a cancel
  EXPECT_EQ(v.attempts[0].phase, AttemptPhase::kCancelled);
  EXPECT_FALSE(fs::exists(dir + "/logs/exit-main.json"));  // killed: it did not end by itself
  EXPECT_TRUE(hasStep(trail(id), "Running→Cancelling") ||
              hasStep(trail(id), "Releasing→Cancelling"));
}

TEST_F(ReconcilerCancelTest, SubmittedBeforeItsSluidIsResolvedThenCancelled) {
  sim_->pauseScheduling(true);
  const std::string id = submit(cpuSpec());
  dieAfter(SubmitStep::kReceiptDurable);
  ASSERT_EQ(view(id).attempts[0].phase, AttemptPhase::kSubmitted);
  cancel(id);
  reconciler_ = makeReconciler();
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kCancelled));
  EXPECT_EQ(slurmJobsWithToken(view(id).attempts[0].submit_token), 1);
}

TEST_F(ReconcilerCancelTest, ALostReceiptIsCancelledAsSoonAsItIsFound) {
  sim_->pauseScheduling(true);
  sim_->dropNextSubmitResponses(1);
  const std::string id = submit(cpuSpec());
  reconciler_->tick();
  ASSERT_EQ(view(id).job.phase, JobPhase::kSubmitUnknown);
  cancel(id);
  const TickReport found = reconciler_->tick();
  EXPECT_EQ(found.listings, 1);
  EXPECT_EQ(found.cancels, 1);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kCancelled));
  const store::JobView v = view(id);
  EXPECT_EQ(v.attempts[0].phase, AttemptPhase::kCancelled);
  EXPECT_EQ(slurmJobsWithToken(v.attempts[0].submit_token), 1);
}

TEST_F(ReconcilerCancelTest, RetryingJustEnds) {
  const std::string id = submit(cpuSpec("exit 1", retryBlock(2, 3600, "any")));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRetrying));
  cancel(id);
  reconciler_->tick();
  const store::JobView v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kCancelled);
  EXPECT_EQ(v.attempts.size(), 1u);
  EXPECT_TRUE(hasStep(trail(id), "Retrying→Cancelled"));
}

class ReconcilerCancelEpilogTest : public ReconcilerCancelTest {
 protected:
  void tune(sim::SimulatorOptions& o) override { o.epilog = 1500ms; }
};

TEST_F(ReconcilerCancelEpilogTest, ReleasingEndsCancelledWithoutRetryOrDelete) {
  const std::string id = submit(cpuSpec("exit 1", retryBlock(2, 0, "any")));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kReleasing));
  cancel(id);
  EXPECT_EQ(reconciler_->tick().cancels, 0);  // nothing left to stop
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kCancelled));
  const store::JobView v = view(id);
  EXPECT_EQ(v.attempts.size(), 1u);
  EXPECT_EQ(v.attempts[0].phase, AttemptPhase::kFailed);  // it failed before the cancel
}

TEST_F(ReconcilerCancelTest, CancelAfterTheEndIsRefused) {
  const std::string id = submit(cpuSpec());
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  auto late = service_->cancel(id, "carol");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, "store.already_terminal");
}

}  // namespace
}  // namespace tuneplane::control::testing
