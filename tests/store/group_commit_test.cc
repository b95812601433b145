// Group commit (store/group_commit.h) at the store's boundary, on every backend (PostgreSQL
// takes the same path with groups of one, postgres_job_store.cc): writes from
// many threads at once are all durable (read back through a store opened anew), a write that
// fails in a group fails alone with its own error and leaves nothing behind while the
// others commit, and one thread's writes keep their order. Every wait is bounded.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/error_codes.h"
#include "store/pg_connection.h"
#include "store/sql_job_store.h"
#include "store/sqlite_connection.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

// Far above what the waits here take.
bool soon(const std::function<bool()>& done) {
  return tuneplane::test::waitUntil(done, std::chrono::seconds(20), std::chrono::milliseconds(1));
}

std::string jobId(const std::string& name, int i) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", i);
  return name + "-" + hex;
}

// One protocol step of an attempt, as the launch stage commits it: the job, the attempt in
// `phase` and the event of the change; `version` is the job's as the step read it (its
// writes before, since no one else writes it).
Change step(const JobRecord& job, AttemptPhase phase, const std::string& to, int64_t version = 0) {
  AttemptRecord attempt = sampleAttempt(job.id, 1, 1);
  attempt.phase = phase;
  attempt.reason = to;
  JobRecord updated = job;
  updated.version = version;
  updated.phase = JobPhase::kRunning;
  updated.reason = to;
  return Change{updated, {attempt}, {event(job.id, 1, "x", to)}};
}

class GroupCommitTest : public StoreTest {
 protected:
  SqlJobStore& sql() { return dynamic_cast<SqlJobStore&>(*store_); }

  // The store as a restarted process finds it (the same one for ":memory:", which a second
  // store would not see).
  JobStore& reopened() {
    if (db_.backend() == Backend::kSqliteMemory) return *store_;
    store_.reset();
    store_ = db_.open();
    EXPECT_NE(store_, nullptr);
    return *store_;
  }
};
INSTANTIATE_TEST_SUITE_P(Db, GroupCommitTest, kAllBackends, backendName);

TEST_P(GroupCommitTest, ConcurrentWritersAreAllDurable) {
  constexpr int kThreads = 8;
  constexpr int kJobsEach = 6;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kJobsEach; ++i) {
        const JobRecord job = sampleJob(jobId("burst", t * 100 + i));
        if (!store_->createJob(job, created(job))) ++failures[t];
        if (!store_->commit(step(job, AttemptPhase::kStaging, "staging"))) ++failures[t];
        if (!store_->commit(step(job, AttemptPhase::kSubmitting, "submitting", 1))) ++failures[t];
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  const GroupCommitStats stats = sql().writeStats();
  EXPECT_EQ(stats.writes, int64_t{kThreads} * kJobsEach * 3);
  EXPECT_LE(stats.transactions, stats.writes);

  JobStore& store = reopened();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kJobsEach; ++i) {
      const std::string id = jobId("burst", t * 100 + i);
      auto view = store.getJob(id);
      ASSERT_TRUE(view && view->has_value()) << id;
      EXPECT_EQ((*view)->job.reason, "submitting") << id;
      ASSERT_EQ((*view)->attempts.size(), 1u) << id;
      EXPECT_EQ((*view)->attempts[0].phase, AttemptPhase::kSubmitting) << id;
      auto events = store.events(id);
      ASSERT_TRUE(events.has_value()) << id;
      ASSERT_EQ(events->size(), 3u) << id;
      EXPECT_EQ((*events)[1].to, "staging") << id;
      EXPECT_EQ((*events)[2].to, "submitting") << id;
    }
  }
}

TEST_P(GroupCommitTest, OneWritersWritesKeepTheirOrderAmongOthers) {
  constexpr int kSteps = 40;
  constexpr int kOthers = 4;
  const JobRecord ordered = sampleJob(jobId("ordered", 1));
  create(ordered);
  std::vector<JobRecord> others;
  for (int t = 0; t < kOthers; ++t) {
    others.push_back(sampleJob(jobId("other", t)));
    create(others.back());
  }
  std::vector<std::thread> threads;
  std::vector<int> failures(kOthers + 1, 0);
  threads.emplace_back([&] {
    for (int s = 1; s <= kSteps; ++s) {
      if (!store_->commit(step(ordered, AttemptPhase::kRunning, std::to_string(s), s - 1))) {
        ++failures[0];
      }
    }
  });
  for (int t = 0; t < kOthers; ++t) {
    threads.emplace_back([&, t] {
      for (int s = 1; s <= kSteps; ++s) {
        if (!store_->commit(
                step(others[t], AttemptPhase::kRunning, "o" + std::to_string(s), s - 1))) {
          ++failures[t + 1];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int f : failures) EXPECT_EQ(f, 0);

  JobStore& store = reopened();
  auto events = store.events(ordered.id);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), static_cast<std::size_t>(kSteps + 1));
  for (int s = 1; s <= kSteps; ++s) EXPECT_EQ((*events)[s].to, std::to_string(s));
  EXPECT_EQ(store.getJob(ordered.id).value()->job.reason, std::to_string(kSteps));
}

TEST_P(GroupCommitTest, AnUnsyncedCommitIsSeenAtOnceAndKeptByTheSyncedOneAfterIt) {
  const JobRecord job = sampleJob(jobId("unsynced", 1));
  create(job);
  const GroupCommitStats before = sql().writeStats();
  Change receipt = step(job, AttemptPhase::kSubmitted, "receipt");
  receipt.synced = false;
  ASSERT_TRUE(store_->commit(receipt));
  EXPECT_EQ(sql().writeStats().unsynced, before.unsynced + 1);
  EXPECT_EQ(store_->getJob(job.id).value()->job.reason, "receipt");  // no sync to wait for

  ASSERT_TRUE(store_->commit(step(job, AttemptPhase::kQueued, "queued", 1)));
  EXPECT_EQ(sql().writeStats().unsynced, before.unsynced + 1);  // this one was synced
  JobStore& store = reopened();
  auto events = store.events(job.id);
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[1].to, "receipt");
  EXPECT_EQ((*events)[2].to, "queued");
}

TEST_P(GroupCommitTest, ABatchIsSyncedUnlessNoneOfItsChangesAsksForIt) {
  const JobRecord a = sampleJob(jobId("batch", 1));
  const JobRecord b = sampleJob(jobId("batch", 2));
  create(a);
  create(b);
  Change first = step(a, AttemptPhase::kQueued, "a");
  Change second = step(b, AttemptPhase::kQueued, "b");
  first.synced = second.synced = false;
  const GroupCommitStats before = sql().writeStats();
  ASSERT_TRUE(store_->commitAll({first, second}));
  EXPECT_EQ(sql().writeStats().unsynced, before.unsynced + 1);
  second.synced = true;
  first.job->version = second.job->version = 1;
  ASSERT_TRUE(store_->commitAll({first, second}));
  EXPECT_EQ(sql().writeStats().unsynced, before.unsynced + 1);
  EXPECT_EQ(sql().writeStats().transactions, before.transactions + 2);
}

// The connection's side of it: what the database is told for each kind of write transaction.
class SyncSettingTest : public GroupCommitTest {};
INSTANTIATE_TEST_SUITE_P(Db, SyncSettingTest,
                         ::testing::Values(Backend::kSqliteFile, Backend::kPostgres), backendName);

TEST_P(SyncSettingTest, AWriteTransactionTellsTheDatabaseWhetherItsCommitWaitsForTheLog) {
  std::unique_ptr<Connection> connection;
  if (db_.backend() == Backend::kPostgres) {
    auto opened = PgConnection::open(db_.location(), {});
    ASSERT_TRUE(opened.has_value()) << opened.error().describe();
    connection = std::move(*opened);
  } else {
    auto opened = SqliteConnection::open(db_.location(), SQLITE_OPEN_READWRITE, 1000);
    ASSERT_TRUE(opened.has_value()) << opened.error().describe();
    connection = std::move(*opened);
  }
  const auto setting = [&]() -> std::string {
    if (db_.backend() == Backend::kPostgres) {
      return connection->queryText("SHOW synchronous_commit").value_or("?");
    }
    return std::to_string(connection->queryInteger("PRAGMA synchronous").value_or(-1));
  };
  if (db_.backend() == Backend::kPostgres) {
    // The site's own setting stays in force for a synced write (the test cluster turns it off
    // for speed; a site may ask for more, e.g. remote_apply): this session's is "on".
    ASSERT_TRUE(connection->exec("SET synchronous_commit TO on"));
  }
  const std::string synced = db_.backend() == Backend::kPostgres ? "on" : "2";     // FULL
  const std::string unsynced = db_.backend() == Backend::kPostgres ? "off" : "1";  // NORMAL
  for (auto kind : {TransactionKind::kWrite, TransactionKind::kWriteUnsynced,
                    TransactionKind::kWriteUnsynced, TransactionKind::kWrite}) {
    auto transaction = Transaction::begin(*connection, kind);
    ASSERT_TRUE(transaction.has_value()) << transaction.error().describe();
    EXPECT_EQ(setting(), kind == TransactionKind::kWrite ? synced : unsynced);
  }  // each rolled back as it ends
  // PostgreSQL's setting was the transaction's own (SET LOCAL): the session's is untouched.
  if (db_.backend() == Backend::kPostgres) {
    EXPECT_EQ(setting(), "on");
  }
}

// Holds the database's write serialization from outside the store (as another process
// would), so the store's writers queue up behind it: SQLite's write lock, PostgreSQL's
// writers' advisory lock (pg_connection.h).
class OutsideWriter {
 public:
  static std::unique_ptr<OutsideWriter> hold(const BackendDatabase& db) {
    auto outside = std::unique_ptr<OutsideWriter>(new OutsideWriter);
    if (db.backend() == Backend::kPostgres) {
      auto connection = PgConnection::open(db.location(), {});
      EXPECT_TRUE(connection.has_value());
      if (!connection) return nullptr;
      outside->connection_ = std::move(*connection);
      outside->release_ = "SELECT pg_advisory_unlock(" + std::to_string(kWriteLockKey) + ")";
      EXPECT_TRUE(outside->connection_->exec("SELECT pg_advisory_lock(" +
                                             std::to_string(kWriteLockKey) + ")"));
    } else {
      auto connection = SqliteConnection::open(db.location(), SQLITE_OPEN_READWRITE, 1000);
      EXPECT_TRUE(connection.has_value());
      if (!connection) return nullptr;
      outside->connection_ = std::move(*connection);
      outside->release_ = "ROLLBACK";
      EXPECT_TRUE(outside->connection_->exec("BEGIN IMMEDIATE"));
    }
    return outside;
  }
  void release() {
    if (connection_ && !release_.empty()) {
      EXPECT_TRUE(connection_->exec(release_));
    }
    release_.clear();
  }
  ~OutsideWriter() { release(); }

 private:
  OutsideWriter() = default;
  std::unique_ptr<Connection> connection_;
  std::string release_;
};

// The backends with a database another connection can lock (":memory:" is one private
// connection), which is what makes a group queue at a known moment.
class GroupCommitQueueTest : public GroupCommitTest {};
INSTANTIATE_TEST_SUITE_P(Db, GroupCommitQueueTest,
                         ::testing::Values(Backend::kSqliteFile, Backend::kPostgres), backendName);

TEST_P(GroupCommitQueueTest, OneBadWriteInAGroupFailsAloneAndLeavesNothing) {
  // A patient store: its first writer waits behind the outside lock while the group queues.
  if (db_.backend() == Backend::kSqliteFile) {
    store_.reset();
    store_ = openOrDie(db_.location(), {.busy_timeout_ms = 60'000});
    ASSERT_NE(store_, nullptr);
  }
  const JobRecord base = sampleJob(jobId("base", 1));
  create(base);
  const GroupCommitStats before = sql().writeStats();

  auto outside = OutsideWriter::hold(db_);
  ASSERT_NE(outside, nullptr);
  // The first writer leads a group of its own and waits for the lock inside it.
  const JobRecord first = sampleJob(jobId("first", 1));
  Status first_done = ok();
  std::thread leader([&] { first_done = store_->createJob(first, created(first)); });
  ASSERT_TRUE(soon([&] {
    const auto now = sql().writeStats();
    return now.transactions == before.transactions + 1 && now.waiting == 0;
  }));

  // Six writers queue behind it; the next leader takes them all as one group.
  const JobRecord a = sampleJob(jobId("good", 1));
  const JobRecord b = sampleJob(jobId("good", 2));
  JobRecord ghost = sampleJob(jobId("ghost", 1));  // written, then undone with its change
  const Change dangling{ghost, {sampleAttempt(jobId("nosuch", 1), 1)}, {}};
  std::vector<std::function<Status()>> writes = {
      [&] { return store_->createJob(a, created(a)); },
      [&] { return store_->commit(dangling); },  // its attempt's job does not exist
      [&] { return store_->commit(step(base, AttemptPhase::kStaging, "staging")); },
      [&] { return store_->createJob(base, created(base)); },  // exists already
      [&] { return store_->requestCancel(base.id, "bob", kT0 + 5); },
      [&] { return store_->createJob(b, created(b)); },
  };
  std::vector<Status> results(writes.size(), ok());
  std::vector<std::thread> writers;
  for (std::size_t i = 0; i < writes.size(); ++i) {
    writers.emplace_back([&, i] { results[i] = writes[i](); });
  }
  const bool queued =
      soon([&] { return sql().writeStats().waiting == static_cast<int>(writes.size()); });
  outside->release();
  leader.join();
  for (auto& w : writers) w.join();
  ASSERT_TRUE(queued);

  const GroupCommitStats after = sql().writeStats();
  // SQLite: the leader's transaction, then one for the whole group. PostgreSQL does not group
  // (postgres_job_store.cc): one each, in the order the writers queued.
  const int64_t grouped =
      db_.backend() == Backend::kPostgres ? 1 + static_cast<int64_t>(writes.size()) : 2;
  EXPECT_EQ(after.transactions, before.transactions + grouped);
  EXPECT_EQ(after.writes, before.writes + 1 + static_cast<int64_t>(writes.size()));
  EXPECT_TRUE(first_done) << first_done.error().describe();
  EXPECT_TRUE(results[0]) << results[0].error().describe();
  ASSERT_FALSE(results[1]);
  EXPECT_EQ(results[1].error().code, codes::kConstraint);
  EXPECT_FALSE(results[1].error().message.empty());
  EXPECT_TRUE(results[2]) << results[2].error().describe();
  ASSERT_FALSE(results[3]);
  EXPECT_EQ(results[3].error().code, codes::kJobExists);
  EXPECT_TRUE(results[4]) << results[4].error().describe();
  EXPECT_TRUE(results[5]) << results[5].error().describe();

  JobStore& store = reopened();
  for (const JobRecord* job : {&first, &a, &b}) {
    auto view = store.getJob(job->id);
    ASSERT_TRUE(view.has_value());
    EXPECT_TRUE(view->has_value()) << job->id;
  }
  auto lost = store.getJob(ghost.id);
  ASSERT_TRUE(lost.has_value());
  EXPECT_FALSE(lost->has_value()) << "the failed change's job row was not undone";
  const JobView kept = store.getJob(base.id).value().value();
  EXPECT_EQ(kept.job.reason, "staging");
  EXPECT_TRUE(kept.job.cancel_requested);
  EXPECT_EQ(kept.job.cancel_requested_by, "bob");
  ASSERT_EQ(kept.attempts.size(), 1u);
  EXPECT_EQ(store.events(base.id)->size(), 3u);  // created, staging, cancel requested
}

}  // namespace
}  // namespace tuneplane::store
