// Replicas on one PostgreSQL database (leader_lease.h), at the store's boundary with two
// PostgresJobStore instances as two replicas: one leader at a time; a standby serves the
// API's writes but its reconciler writes are refused and it sees no active jobs; a paused
// leader (its lease thread frozen, as SIGSTOP freezes a process) is replaced once its lease
// expires, and every write it then makes is refused by the epoch; a leader that closes is
// replaced at once. Every wait is a bounded poll.
#include <gtest/gtest.h>

#include <chrono>

#include <libpq-fe.h>

#include "store/error_codes.h"
#include "store/pg_connection.h"
#include "store/postgres_job_store.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;
using namespace std::chrono_literals;

constexpr auto kTakeoverLimit = 30s;  // a bound on a hang, far above the 1 s lease

bool takenOver(const std::function<bool()>& probe) {
  return tuneplane::test::waitUntil(probe, kTakeoverLimit, 20ms);
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

// Issue 37, defect 2: the fence checks the epoch under which the state was read, and the row's
// version. A leader reads, stalls, loses the lease, takes it back at a newer epoch: what it
// built from its old read changes nothing, even though it leads again.
TEST_F(LeaderLeaseTest, AWriteBuiltFromAReadBeforeTheLeaseMovedIsRefusedAfterItIsRetaken) {
  const JobRecord job = sampleJob("lease-00000004");
  ASSERT_TRUE(a_->createJob(job, created(job)));
  const int64_t read_epoch = a_->fenceEpoch();
  const JobRecord read = a_->getJob(job.id).value()->job;  // A's read

  a_->lease()->freeze();  // A stalls mid-tick
  ASSERT_TRUE(takenOver([&] { return b_->lease()->isLeader(); }));
  Change b_wrote = running(b_->getJob(job.id).value()->job);  // B decides from its own read
  b_wrote.read_epoch = b_->fenceEpoch();
  ASSERT_TRUE(b_->commit(b_wrote));
  b_.reset();           // B goes; A comes back and takes the lease again, at a newer epoch
  a_->lease()->step();  // renew fails: steps down
  ASSERT_TRUE(takenOver([&] {
    a_->lease()->step();
    return a_->lease()->isLeader();
  }));
  ASSERT_GT(a_->fenceEpoch(), read_epoch);

  Change stale = running(read);
  stale.job->reason = "from A's read before it lost the lease";
  stale.read_epoch = read_epoch;
  auto fenced = a_->commit(stale);
  ASSERT_FALSE(fenced);
  EXPECT_EQ(fenced.error().code, codes::kFenced) << fenced.error().describe();
  // Even stamped with the new epoch, a change built from the old row is refused by version.
  stale.read_epoch = a_->fenceEpoch();
  auto refused = a_->commit(stale);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, codes::kStale) << refused.error().describe();
  EXPECT_NE(a_->getJob(job.id).value()->job.reason, stale.job->reason);  // B's write stands
  // In a batch, the stale change is left out and the rest is written.
  const JobRecord other = sampleJob("lease-00000005");
  ASSERT_TRUE(a_->createJob(other, created(other)));
  Change fresh = running(a_->getJob(other.id).value()->job);
  fresh.read_epoch = a_->fenceEpoch();
  std::vector<std::size_t> skipped;
  ASSERT_TRUE(a_->commitAll({stale, fresh}, &skipped));
  EXPECT_EQ(skipped, std::vector<std::size_t>{0});
  EXPECT_EQ(a_->getJob(other.id).value()->job.phase, JobPhase::kRunning);
}

// A session of PostgreSQL's own (not a store's), named as replica `holder`'s sessions are,
// that takes the writers' lock inside a transaction and then stops, as a SIGSTOPped or
// partitioned writer does; `idle_ms` is its idle_in_transaction_session_timeout (0: none).
class StuckWriter {
 public:
  StuckWriter(const std::string& uri, const std::string& holder, int idle_ms) {
    const std::string name = sessionName(holder);
    const char* keys[] = {"application_name", "dbname", nullptr};
    const char* values[] = {name.c_str(), uri.c_str(), nullptr};
    conn_ = PQconnectdbParams(keys, values, 1);
    ok_ = PQstatus(conn_) == CONNECTION_OK &&
          exec("SET idle_in_transaction_session_timeout = " + std::to_string(idle_ms)) &&
          exec("BEGIN") &&
          exec("SELECT pg_advisory_xact_lock(" + std::to_string(kWriteLockKey) + ")");
  }
  ~StuckWriter() { PQfinish(conn_); }
  bool ok() const { return ok_; }
  // Whether the server has ended this session (a query on it fails).
  bool ended() { return !exec("SELECT 1"); }

 private:
  bool exec(const std::string& sql) {
    PGresult* r = PQexec(conn_, sql.c_str());
    const bool done = PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return done;
  }
  PGconn* conn_ = nullptr;
  bool ok_ = false;
};

// Issue 37, defect 3: one stuck session stalls no replica. Writes that cannot have the
// writers' lock fail "store.busy" within lock_timeout instead of hanging; the lease's renewal
// is never behind the writers' lock; and a replica taking over ends the stuck session of the
// one it replaces, so writes resume at once.
TEST_F(LeaderLeaseTest, AWriterStuckInsideItsTransactionStallsNoReplica) {
  // The rounds are driven by hand (a sanitizer build is slow enough for a 1 s lease to expire
  // between two rounds of a thread).
  b_->lease()->freeze();
  auto c = PostgresJobStore::open(
      db_.location(),
      {.reader_connections = 1, .application_name = sessionName("c"), .lock_timeout_ms = 300});
  ASSERT_TRUE(c) << c.error().describe();
  const JobRecord job = sampleJob("lease-00000006");
  {
    StuckWriter stuck(db_.location(), "someone", /*idle_ms=*/0);
    ASSERT_TRUE(stuck.ok());
    auto busy = (*c)->createJob(job, created(job));  // an API write on any replica
    ASSERT_FALSE(busy);
    EXPECT_EQ(busy.error().code, codes::kBusy) << busy.error().describe();
    // The leader keeps its lease although no write can be made: renewed every 400 ms through
    // 1.2 s of real time, longer than its 1 s lease lasts in PostgreSQL unrenewed.
    ASSERT_TRUE(tuneplane::test::holdsThroughout(
        [&] {
          a_->lease()->step();
          return a_->lease()->isLeader();
        },
        1200ms, 400ms))
        << "the renewal waited behind the stuck writer";
  }
  // One of A's own sessions stuck, then A stops altogether (its lease thread frozen): B takes
  // over and ends that session, so writes resume at once.
  StuckWriter stuck(db_.location(), "a", /*idle_ms=*/0);
  ASSERT_TRUE(stuck.ok());
  a_->lease()->freeze();
  ASSERT_TRUE(takenOver([&] {
    b_->lease()->step();
    return b_->lease()->isLeader();
  }));
  EXPECT_TRUE(stuck.ended());
  ASSERT_TRUE((*c)->createJob(job, created(job)));
  Change change = running(b_->getJob(job.id).value()->job);
  change.read_epoch = b_->fenceEpoch();
  EXPECT_TRUE(b_->commit(change));
}

// A stuck session that is no replica's, with the idle timeout TunePlane's own sessions set:
// the server ends it, and writes resume within that timeout.
TEST_F(LeaderLeaseTest, AStuckSessionIsEndedByTheServersIdleTimeout) {
  StuckWriter stuck(db_.location(), "someone-else", /*idle_ms=*/800);
  ASSERT_TRUE(stuck.ok());
  const JobRecord job = sampleJob("lease-00000007");
  ASSERT_TRUE(tuneplane::test::waitUntil(
      [&] {
        auto made = a_->createJob(job, created(job));
        return made || made.error().code == codes::kJobExists;
      },
      kTakeoverLimit, 50ms));
  EXPECT_TRUE(stuck.ended());
}

}  // namespace
}  // namespace tuneplane::store
