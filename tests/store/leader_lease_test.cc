// Replicas on one PostgreSQL database (leader_lease.h), at the store's boundary with two
// PostgresJobStore instances as two replicas: one leader at a time; a standby serves the
// API's writes but its reconciler writes are refused and it sees no active jobs; a paused
// leader (its lease thread frozen, as SIGSTOP freezes a process) is replaced once its lease
// expires, and every write it then makes is refused by the epoch; a leader that closes is
// replaced at once. Every wait is a bounded poll.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "store/error_codes.h"
#include "store/postgres_job_store.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;
using namespace std::chrono_literals;

constexpr auto kTakeoverLimit = 30s;  // a bound on a hang, far above the 1 s lease

bool takenOver(const std::function<bool()>& probe) {
  return eventually(probe, kTakeoverLimit, 20ms);
}

class LeaderLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.setUp(Backend::kPostgres);
    if (IsSkipped() || HasFatalFailure()) return;
    a_ = replica("a");
    ASSERT_NE(a_, nullptr);
    b_ = replica("b");
    ASSERT_NE(b_, nullptr);
    ASSERT_TRUE(a_->lease()->isLeader());  // the first to start takes the lease
    ASSERT_FALSE(b_->lease()->isLeader());
  }

  std::unique_ptr<PostgresJobStore> replica(const std::string& name) {
    auto store = PostgresJobStore::open(db_.location(), {.reader_connections = 1});
    EXPECT_TRUE(store) << store.error().describe();
    if (!store) return nullptr;
    auto enabled = (*store)->enableLeadership(
        {.lease_seconds = 1,
         .holder = name,
         .on_change = [this, name](bool leader, int64_t e, const std::string&) {
           std::lock_guard lock(mu_);
           log_.push_back(name + (leader ? " took " : " lost ") + std::to_string(e));
         }});
    EXPECT_TRUE(enabled) << enabled.error().describe();
    return std::move(*store);
  }

  // A change the reconciler might make to `job`.
  static Change running(JobRecord job) {
    job.phase = JobPhase::kRunning;
    return Change{job, {sampleAttempt(job.id, 1)}, {event(job.id, 0, "Pending", "Running")}};
  }

  BackendDatabase db_;
  std::mutex mu_;
  std::vector<std::string> log_;
  std::unique_ptr<PostgresJobStore> a_;
  std::unique_ptr<PostgresJobStore> b_;
};

TEST_F(LeaderLeaseTest, OnlyTheLeaderCommitsWhileEveryReplicaTakesApiWrites) {
  const JobRecord job = sampleJob("lease-00000001");
  ASSERT_TRUE(b_->createJob(job, created(job)));  // through the standby
  ASSERT_TRUE(b_->requestCancel(job.id, "bob", kT0));

  auto refused = b_->commit(running(job));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, codes::kFenced);
  EXPECT_FALSE(b_->commitAll({running(job)}));
  EXPECT_EQ(b_->lease()->fencedWrites(), 2);
  EXPECT_TRUE(b_->activeJobs()->empty());  // a standby's reconciler has nothing to do

  ASSERT_TRUE(a_->commit(running(job)));
  ASSERT_EQ(a_->activeJobs()->size(), 1u);
  EXPECT_EQ(b_->getJob(job.id).value()->job.phase, JobPhase::kRunning);  // reads anywhere
  EXPECT_TRUE(b_->getJob(job.id).value()->job.cancel_requested);
  EXPECT_EQ(a_->lease()->fencedWrites(), 0);
}

TEST_F(LeaderLeaseTest, APausedLeaderIsReplacedAndItsWritesAreRefusedByTheEpoch) {
  const JobRecord job = sampleJob("lease-00000002");
  ASSERT_TRUE(a_->createJob(job, created(job)));
  const int64_t first = a_->lease()->epoch();
  ASSERT_GT(first, 0);

  a_->lease()->freeze();  // a SIGSTOP: it neither renews nor gives anything up
  ASSERT_TRUE(takenOver([&] { return b_->lease()->isLeader(); })) << "no takeover";
  EXPECT_GT(b_->lease()->epoch(), first);

  // The old leader still believes it leads; the database no longer does.
  EXPECT_TRUE(a_->lease()->isLeader());
  auto refused = a_->commit(running(job));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, codes::kFenced);
  EXPECT_EQ(a_->lease()->fencedWrites(), 1);
  EXPECT_EQ(a_->getJob(job.id).value()->job.phase, JobPhase::kPending);  // nothing changed

  ASSERT_TRUE(b_->commit(running(job)));
  // Resumed, the old leader finds out on its next round and steps down.
  a_->lease()->step();
  EXPECT_FALSE(a_->lease()->isLeader());
  std::lock_guard lock(mu_);
  EXPECT_EQ(log_.front(), "a took " + std::to_string(first));
  EXPECT_NE(std::find(log_.begin(), log_.end(), "b took " + std::to_string(first + 1)), log_.end());
  EXPECT_EQ(log_.back(), "a lost " + std::to_string(first));
}

TEST_F(LeaderLeaseTest, ALeaderThatGoesIsReplacedWithoutWaitingForItsLease) {
  const int64_t first = a_->lease()->epoch();
  a_.reset();  // its session ends, and its lock with it
  ASSERT_TRUE(takenOver([&] { return b_->lease()->isLeader(); }));
  EXPECT_EQ(b_->lease()->epoch(), first + 1);
  const JobRecord job = sampleJob("lease-00000003");
  ASSERT_TRUE(b_->createJob(job, created(job)));
  EXPECT_TRUE(b_->commit(running(job)));
}

}  // namespace
}  // namespace tuneplane::store
