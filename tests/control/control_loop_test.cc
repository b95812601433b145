// The loop owner: ticks on its own thread, wakes on demand, and stops promptly — letting
// the store write in flight finish, never leaving half of a decision.
#include "control/control_loop.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <latch>
#include <memory>

#include "../pipeline/site_fixture.h"
#include "../sim/sim_test_support.h"
#include "catalog/artifact_verifier.h"
#include "control/job_service.h"
#include "fake_job_store.h"
#include "launch/attempt_identity.h"
#include "recording_observer.h"
#include "slurm/rest_client.h"
#include "staging/staging_fs.h"

namespace tuneplane::control::testing {

using namespace tuneplane::pipeline::testing;  // SiteDir, the spec builders (site_fixture.h)
namespace {

using namespace std::chrono_literals;

// A store whose commits can be held: the test decides when the write in flight finishes.
class HoldingStore final : public store::JobStore {
 public:
  explicit HoldingStore(FakeJobStore& inner) : inner_(inner) {}
  void holdCommits() { hold_ = true; }
  void release() { released_.count_down(); }
  bool waitForHeldCommit(std::chrono::milliseconds limit) {
    return entered_.wait_for(limit) == std::future_status::ready;
  }

  Status createJob(const store::JobRecord& j, const store::EventRecord& e) override {
    return inner_.createJob(j, e);
  }
  Result<std::optional<store::JobView>> getJob(const std::string& id) override {
    return inner_.getJob(id);
  }
  Result<store::JobPage> listJobs(const store::JobQuery& q) override { return inner_.listJobs(q); }
  Result<std::vector<store::JobView>> activeJobs() override { return inner_.activeJobs(); }
  Result<std::vector<store::EventRecord>> events(const std::string& id) override {
    return inner_.events(id);
  }
  Result<std::map<phase::JobPhase, int64_t>> countJobsByPhase() override {
    return inner_.countJobsByPhase();
  }
  Result<std::map<std::pair<phase::AttemptPhase, phase::EndCause>, int64_t>> countEndedAttempts()
      override {
    return inner_.countEndedAttempts();
  }
  Status commit(const store::Change& change) override {
    if (hold_.exchange(false)) {
      entered_promise_.set_value();
      released_.wait();
    }
    return inner_.commit(change);
  }
  Status requestCancel(const std::string& id, const std::string& actor, int64_t now) override {
    return inner_.requestCancel(id, actor, now);
  }
  Status requestAbandon(const std::string& id, int a, const std::string& actor,
                        const std::string& reason, int64_t now) override {
    return inner_.requestAbandon(id, a, actor, reason, now);
  }

 private:
  FakeJobStore& inner_;
  std::atomic<bool> hold_{false};
  std::promise<void> entered_promise_;
  std::future<void> entered_ = entered_promise_.get_future();
  std::latch released_{1};
};

class ControlLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // slurmrestd is unreachable: every submit is "not sent" and comes back to Staging.
    auto client = slurm::SlurmRestClient::fromSite(context_.site.slurm);
    ASSERT_TRUE(client);
    client_ = std::move(*client);
    reconciler_ = std::make_unique<Reconciler>(holding_, *client_, launcher_, clock_);
  }

  SiteDir site_;
  pipeline::SiteContext context_ = site_.context();
  catalog::ArtifactVerifier verifier_;
  launch::OpenSslRandomSource random_;
  staging::PosixStagingFs fs_;
  FakeClock clock_;
  FakeJobStore store_;
  HoldingStore holding_{store_};
  pipeline::AttemptLauncher launcher_{context_, verifier_, random_, fs_};
  JobService service_{store_, launcher_, clock_};
  std::unique_ptr<slurm::SlurmRestClient> client_;
  std::unique_ptr<Reconciler> reconciler_;
};

// Bounded: a hung stop() fails the test instead of hanging it.
bool stopsWithin(ControlLoop& loop, std::chrono::milliseconds limit) {
  auto done = std::async(std::launch::async, [&loop] { loop.stop(); });
  return done.wait_for(limit) == std::future_status::ready;
}

TEST_F(ControlLoopTest, TicksOnItsOwnThreadAndWakesOnDemand) {
  ControlLoop loop(*reconciler_, 1h);
  loop.start();
  EXPECT_TRUE(loop.running());
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return loop.ticks() >= 1; }, 10s));
  const int64_t before = loop.ticks();
  loop.wake();  // without it, the next tick is an hour away
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return loop.ticks() > before; }, 10s));
  EXPECT_TRUE(stopsWithin(loop, 10s));
  EXPECT_FALSE(loop.running());
  loop.stop();  // idempotent
}

TEST_F(ControlLoopTest, ReportsEveryCycleWithItsReportAndDuration) {
  auto job = service_.submit(cpuSpec(), "ann");
  ASSERT_TRUE(job) << job.error().front().describe();
  RecordingObserver observer;
  ControlLoop loop(*reconciler_, 1h, &observer);
  loop.start();
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return loop.ticks() >= 1; }, 10s));
  loop.wake();
  ASSERT_TRUE(tuneplane::test::waitUntil([&] { return loop.ticks() >= 2; }, 10s));
  EXPECT_TRUE(stopsWithin(loop, 10s));
  const auto cycles = observer.cycles();
  ASSERT_EQ(static_cast<int64_t>(cycles.size()), loop.ticks());  // one report per tick
  EXPECT_EQ(cycles[0].first.jobs, 1);                            // the report of that very tick
  for (const auto& [report, seconds] : cycles) EXPECT_GE(seconds, 0.0);
}

TEST_F(ControlLoopTest, StopFinishesTheStoreWriteInFlightAndTicksNoMore) {
  auto job = service_.submit(cpuSpec(), "ann");
  ASSERT_TRUE(job) << job.error().front().describe();
  holding_.holdCommits();
  ControlLoop loop(*reconciler_, 10ms);
  loop.start();
  ASSERT_TRUE(holding_.waitForHeldCommit(10s));  // the first decision is being written
  auto stopping = std::async(std::launch::async, [&loop] { loop.stop(); });
  // stop() waits for the write: it has not returned while the commit is held.
  EXPECT_EQ(stopping.wait_for(100ms), std::future_status::timeout);
  holding_.release();
  ASSERT_EQ(stopping.wait_for(10s), std::future_status::ready);
  // The write in flight was kept whole (the attempt and the job's move together), and the
  // tick stopped at the next safe point: nothing was staged or submitted after it.
  auto stored = store_.getJob(job->id);
  ASSERT_TRUE(stored && *stored);
  EXPECT_EQ((*stored)->job.phase, phase::JobPhase::kStaging);
  ASSERT_EQ((*stored)->attempts.size(), 1u);
  EXPECT_EQ(loop.lastReport().submits, 0);
  // stop() returned: the loop's thread is joined, so no tick can follow (no wait needed to
  // see it: a running thread would show here).
  EXPECT_FALSE(loop.running());
  const int64_t ticks = loop.ticks();
  loop.stop();  // idempotent
  EXPECT_EQ(loop.ticks(), ticks);
}

}  // namespace
}  // namespace tuneplane::control::testing
