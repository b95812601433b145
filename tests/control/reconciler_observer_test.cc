// What the reconciler and the job service report to their ControlObserver: every stored
// transition exactly once and in order (the store's event log is the reference), and the
// submit latency of each receipt on the reconciler's clock.
#include "reconciler_fixture.h"
#include "recording_observer.h"

namespace tuneplane::control::testing {
namespace {

using phase::JobPhase;

// The time the fake clock is moved on while a submit is in flight: the latency to expect.
constexpr std::chrono::milliseconds kSubmitTakes{1500};

class ReconcilerObserverTest : public ReconcilerFixture {
 protected:
  void SetUp() override {
    ReconcilerFixture::SetUp();
    if (HasFatalFailure()) return;
    service_ = std::make_unique<JobService>(store(), *launcher_, clock_, &observer_);
  }
  ReconcilerOptions options() override {
    ReconcilerOptions o = ReconcilerFixture::options();
    o.observer = &observer_;
    o.step_hook = [this](SubmitStep step, const std::string&, int) {
      if (step == SubmitStep::kSubmittingDurable) clock_.advance(kSubmitTakes);
    };
    return o;
  }

  RecordingObserver observer_;
};

std::vector<std::string> describe(const std::vector<store::EventRecord>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    out.push_back(e.job_id + "/" + std::to_string(e.attempt) + ":" + e.from + "→" + e.to + " " +
                  e.reason + " by " + e.actor + " at " + std::to_string(e.time_ms));
  }
  return out;
}

TEST_F(ReconcilerObserverTest, EveryStoredTransitionIsReportedOnceInOrder) {
  const std::string id = submit(cpuSpec("echo observed"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  // The store assigns seq; the observer sees the events as committed (seq 0).
  std::vector<store::EventRecord> stored = events(id);
  for (auto& e : stored) e.seq = 0;
  EXPECT_EQ(describe(observer_.transitions()), describe(stored));
  ASSERT_FALSE(observer_.transitions().empty());
  EXPECT_EQ(observer_.transitions().front().from, "");  // the creation, from the service
  EXPECT_EQ(observer_.transitions().front().actor, "ann");
  EXPECT_EQ(observer_.transitions().back().to, "Succeeded");
}

TEST_F(ReconcilerObserverTest, EachReceiptReportsItsSubmitLatency) {
  const std::string id = submit(cpuSpec("echo observed"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  const auto submits = observer_.submits();
  ASSERT_EQ(submits.size(), 1u);
  EXPECT_EQ(submits[0].first.job_id, id);
  EXPECT_EQ(submits[0].first.number, 1);
  EXPECT_NE(submits[0].first.slurm_job_id, 0u);  // reported once the receipt is stored
  EXPECT_DOUBLE_EQ(submits[0].second, kSubmitTakes.count() / 1000.0);
}

TEST_F(ReconcilerObserverTest, ARefusedSubmitReportsNoLatency) {
  // The POST is the first request of the first tick: Slurm refuses it (422).
  const std::string id = submit(cpuSpec("echo x"));
  ASSERT_FALSE(id.empty());
  sim_->failNextRequests(1, 422);
  ASSERT_TRUE(
      tickUntil(id, [](const store::JobView& v) { return phase::isTerminal(v.job.phase); }));
  ASSERT_EQ(view(id).attempts.size(), 1u);
  EXPECT_EQ(view(id).attempts[0].cause, phase::EndCause::kRejected);
  EXPECT_TRUE(observer_.submits().empty());
  EXPECT_EQ(observer_.transitions().back().to, phase::toString(view(id).job.phase));
}

}  // namespace
}  // namespace tuneplane::control::testing
