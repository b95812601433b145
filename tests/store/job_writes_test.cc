// The write rules at the store's boundary: a Change is all or nothing, the store refuses
// records it cannot keep, and the operator requests (cancel, abandon) are narrow updates that
// a commit of a JobRecord / AttemptRecord read before them cannot undo.
#include "store/job_writes.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

#include "store/error_codes.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

class JobWritesTest : public StoreTest {
 protected:
  // A job with one attempt in `phase`, committed; returns its view.
  JobView jobWithAttempt(const std::string& id, AttemptPhase phase) {
    JobRecord job = sampleJob(id);
    create(job);
    AttemptRecord attempt = sampleAttempt(id, 1);
    attempt.phase = phase;
    commitOk(Change{job, {attempt}, {}});
    return viewOf(id);
  }
};
INSTANTIATE_TEST_SUITE_P(Db, JobWritesTest, kAllBackends, backendName);

// ---- atomicity ----

TEST_P(JobWritesTest, AChangeThatFailsInItsLastStatementLeavesNothing) {
  const JobView before = jobWithAttempt("atom-00000001", AttemptPhase::kRunning);
  const auto events_before = *store_->events(before.job.id);

  JobRecord job = before.job;
  job.phase = JobPhase::kRetrying;
  AttemptRecord ended = before.attempts[0];
  ended.phase = AttemptPhase::kFailed;
  ended.components.clear();
  AttemptRecord next = sampleAttempt(job.id, 2);
  // The last statement refers to a job that does not exist: a foreign-key violation.
  const Change change{
      job,
      {ended, next},
      {event(job.id, 1, "Running", "Failed"), event("ghost-00000000", 0, "Running", "Retrying")}};
  auto done = store_->commit(change);
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, "store.constraint") << done.error().describe();

  EXPECT_EQ(viewOf(job.id), before);
  EXPECT_EQ(*store_->events(job.id), events_before);
  // The store still works after the rollback.
  commitOk(Change{job, {ended, next}, {event(job.id, 1, "Running", "Failed")}});
  EXPECT_EQ(viewOf(job.id).attempts.size(), 2u);
}

TEST_P(JobWritesTest, ADuplicateSubmitTokenFailsTheWholeChange) {
  const JobView other = jobWithAttempt("tok-00000001", AttemptPhase::kQueued);
  const JobView before = jobWithAttempt("tok-00000002", AttemptPhase::kFailed);

  JobRecord job = before.job;
  job.phase = JobPhase::kStaging;
  AttemptRecord stolen = sampleAttempt(job.id, 2);
  stolen.submit_token = other.attempts[0].submit_token;  // UNIQUE: the lost-receipt key
  auto done = store_->commit(Change{job, {stolen}, {event(job.id, 2, "", "Staging")}});
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, "store.constraint");
  EXPECT_NE(done.error().message.find("submit_token"), std::string::npos) << done.error().message;
  EXPECT_EQ(viewOf(job.id), before);
  EXPECT_EQ(store_->events(job.id)->size(), 1u);
}

TEST_P(JobWritesTest, AnAttemptOfAnUnknownJobIsRefused) {
  auto done = store_->commit(Change{std::nullopt, {sampleAttempt("ghost-00000000", 1)}, {}});
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, "store.constraint");
}

TEST_P(JobWritesTest, RecordsTheStoreCannotKeepAreRefusedWithTheirField) {
  const JobRecord job = sampleJob("inv-00000001");
  create(job);
  struct Row {
    const char* name;
    Change change;
    const char* field;
  };
  auto attempt = [&](auto edit) {
    AttemptRecord a = sampleAttempt(job.id, 1);
    edit(a);
    return a;
  };
  JobRecord no_id = job;
  no_id.id = "";
  const std::vector<Row> rows = {
      {"job without id", Change{no_id, {}, {}}, "job.id"},
      {"attempt 0", Change{std::nullopt, {attempt([](auto& a) { a.number = 0; })}, {}},
       "attempts[0].number"},
      {"no token", Change{std::nullopt, {attempt([](auto& a) { a.submit_token = ""; })}, {}},
       "attempts[0].submit_token"},
      {"no job id",
       Change{
           std::nullopt, {sampleAttempt(job.id, 1), attempt([](auto& a) { a.job_id = ""; })}, {}},
       "attempts[1].job_id"},
      {"same index twice",
       Change{std::nullopt, {attempt([](auto& a) { a.components[1].index = 0; })}, {}},
       "attempts[0].components[1].index"},
      {"negative index",
       Change{std::nullopt, {attempt([](auto& a) { a.components[0].index = -1; })}, {}},
       "attempts[0].components[0].index"},
      {"event without job", Change{std::nullopt, {}, {event("", 0, "", "x")}}, "events[0].job_id"},
  };
  for (const Row& row : rows) {
    auto done = store_->commit(row.change);
    ASSERT_FALSE(done) << row.name;
    EXPECT_EQ(done.error().code, "store.invalid") << row.name;
    EXPECT_EQ(done.error().field, row.field) << row.name;
  }
  EXPECT_TRUE(viewOf(job.id).attempts.empty());
}

TEST_P(JobWritesTest, CommitAllAppliesEveryChangeOrNone) {
  const JobView a = jobWithAttempt("all-0000000a", AttemptPhase::kRunning);
  const JobView b = jobWithAttempt("all-0000000b", AttemptPhase::kQueued);
  auto moved = [](JobView view, JobPhase phase) {
    view.job.phase = phase;
    return Change{view.job, view.attempts, {event(view.job.id, 1, "x", "y")}};
  };
  // The second change refers to a job that does not exist: neither is applied.
  Change ghost = moved(b, JobPhase::kRunning);
  ghost.attempts[0].job_id = "ghost-00000000";
  auto failed = store_->commitAll({moved(a, JobPhase::kReleasing), ghost});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, "store.constraint");
  EXPECT_EQ(viewOf(a.job.id), a);
  EXPECT_EQ(viewOf(b.job.id), b);

  Change invalid = moved(b, JobPhase::kRunning);
  invalid.attempts[0].number = 0;
  auto refused = store_->commitAll({moved(a, JobPhase::kReleasing), invalid});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "store.invalid");
  EXPECT_EQ(refused.error().field, "changes[1].attempts[0].number");

  ASSERT_TRUE(store_->commitAll({}));
  ASSERT_TRUE(store_->commitAll({moved(a, JobPhase::kReleasing), moved(b, JobPhase::kRunning)}));
  EXPECT_EQ(viewOf(a.job.id).job.phase, JobPhase::kReleasing);
  EXPECT_EQ(viewOf(b.job.id).job.phase, JobPhase::kRunning);
  EXPECT_EQ(store_->events(b.job.id)->size(), 2u);
}

// ---- requestCancel ----

TEST_P(JobWritesTest, CancelMarksTheJobOnceWithAnEventNamingWhoAsked) {
  const JobView view = jobWithAttempt("can-00000001", AttemptPhase::kRunning);
  ASSERT_TRUE(store_->requestCancel(view.job.id, "bob", kT0 + 100));
  ASSERT_TRUE(store_->requestCancel(view.job.id, "carol", kT0 + 200));  // idempotent

  const JobView got = viewOf(view.job.id);
  EXPECT_TRUE(got.job.cancel_requested);
  EXPECT_EQ(got.job.cancel_requested_by, "bob");
  EXPECT_EQ(got.job.phase, view.job.phase);  // the reconciler moves the phase, not the store
  const auto events = *store_->events(view.job.id);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].actor, "bob");
  EXPECT_EQ(events[1].time_ms, kT0 + 100);
  EXPECT_EQ(events[1].attempt, 0);
  EXPECT_EQ(events[1].from, "Pending");
  EXPECT_EQ(events[1].to, "Pending");
  EXPECT_NE(events[1].reason.find("cancel"), std::string::npos);
}

TEST_P(JobWritesTest, CancelOfAnUnknownOrEndedJobIsRefused) {
  auto unknown = store_->requestCancel("nope-00000000", "bob", kT0);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, "store.not_found");
  for (JobPhase phase : {JobPhase::kSucceeded, JobPhase::kFailed, JobPhase::kCancelled}) {
    JobRecord job = sampleJob("end-" + std::string(toString(phase)) + "-00000001");
    job.phase = phase;
    commitOk(Change{job, {}, {}});
    auto done = store_->requestCancel(job.id, "bob", kT0);
    ASSERT_FALSE(done);
    EXPECT_EQ(done.error().code, "store.already_terminal");
    EXPECT_FALSE(viewOf(job.id).job.cancel_requested);
    EXPECT_TRUE(store_->events(job.id)->empty());
  }
}

TEST_P(JobWritesTest, ACommitOfAStaleJobRecordDoesNotUndoACancel) {
  const JobView stale = jobWithAttempt("stale-00000001", AttemptPhase::kQueued);
  ASSERT_TRUE(store_->requestCancel(stale.job.id, "bob", kT0));
  JobRecord job = stale.job;  // read before the request: cancel_requested == false
  job.phase = JobPhase::kRunning;
  commitOk(Change{job, stale.attempts, {event(job.id, 1, "Queued", "Running")}});

  const JobView got = viewOf(job.id);
  EXPECT_EQ(got.job.phase, JobPhase::kRunning);
  EXPECT_TRUE(got.job.cancel_requested);
  EXPECT_EQ(got.job.cancel_requested_by, "bob");
}

TEST_P(JobWritesTest, CancelRacingStaleCommitsIsNeverLost) {
  const JobView stale = jobWithAttempt("race-00000001", AttemptPhase::kRunning);
  std::atomic<bool> go{false};
  std::thread reconciler([&] {
    while (!go.load()) std::this_thread::yield();
    JobRecord job = stale.job;  // read before the request, as the reconciler reads
    for (int i = 0; i < 50; ++i) {
      job.updated_ms = kT0 + i;
      EXPECT_TRUE(store_->commit(Change{job, stale.attempts, {}}));
      ++job.version;  // what it committed is what it holds next (a request moves no version)
    }
  });
  go = true;
  EXPECT_TRUE(store_->requestCancel(stale.job.id, "bob", kT0));
  reconciler.join();
  EXPECT_TRUE(viewOf(stale.job.id).job.cancel_requested);
}

// ---- the fence by the read (issue 37, defect 2) ----

TEST_P(JobWritesTest, ACommitBuiltFromAStaleReadIsRefusedAndChangesNothing) {
  const JobView read = jobWithAttempt("ver-00000001", AttemptPhase::kQueued);
  JobRecord first = read.job;
  first.phase = JobPhase::kRunning;
  commitOk(Change{first, read.attempts, {event(read.job.id, 0, "Queued", "Running")}});
  EXPECT_EQ(viewOf(read.job.id).job.version, read.job.version + 1);

  JobRecord second = read.job;  // built from the same, now stale, read
  second.phase = JobPhase::kFailed;
  AttemptRecord ended = read.attempts[0];
  ended.phase = AttemptPhase::kFailed;
  auto refused =
      store_->commit(Change{second, {ended}, {event(read.job.id, 0, "Queued", "Failed")}});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, codes::kStale) << refused.error().describe();
  const JobView after = viewOf(read.job.id);
  EXPECT_EQ(after.job.phase, JobPhase::kRunning);
  EXPECT_EQ(after.attempts[0].phase, AttemptPhase::kQueued);  // the whole change was refused
  EXPECT_EQ(store_->events(read.job.id)->size(), 2u);         // created, Queued → Running
}

TEST_P(JobWritesTest, TwoConnectionsAStaleWriteOfOneIsRefused) {
  if (db_.backend() == Backend::kSqliteMemory) GTEST_SKIP() << "one connection only";
  auto other = db_.open();  // another process, or another replica
  ASSERT_NE(other, nullptr);
  const JobView read = jobWithAttempt("ver-00000002", AttemptPhase::kQueued);
  const JobView theirs = **other->getJob(read.job.id);
  JobRecord moved = theirs.job;
  moved.phase = JobPhase::kRunning;
  ASSERT_TRUE(other->commit(Change{moved, theirs.attempts, {}}));

  JobRecord mine = read.job;  // read on this connection before the other wrote
  mine.reason = "stale";
  std::vector<std::size_t> stale;
  const JobRecord fresh_job = sampleJob("ver-00000003");
  create(fresh_job);
  ASSERT_TRUE(store_->commitAll(
      {Change{mine, read.attempts, {}}, Change{viewOf(fresh_job.id).job, {}, {}}}, &stale));
  EXPECT_EQ(stale, std::vector<std::size_t>{0});
  EXPECT_EQ(viewOf(read.job.id).job.phase, JobPhase::kRunning);
  EXPECT_EQ(viewOf(fresh_job.id).job.version, 1);
  // Without a place to report it, a stale change fails the whole batch.
  auto all = store_->commitAll({Change{mine, read.attempts, {}}});
  ASSERT_FALSE(all);
  EXPECT_EQ(all.error().code, codes::kStale);
}

TEST_P(JobWritesTest, ACancelMovesTheChangeSequenceButNotTheVersion) {
  const JobView read = jobWithAttempt("seq-00000001", AttemptPhase::kSubmitUnknown);
  ASSERT_TRUE(store_->requestCancel(read.job.id, "bob", kT0));
  const JobView cancelled = viewOf(read.job.id);
  EXPECT_EQ(cancelled.job.version, read.job.version);
  EXPECT_GT(cancelled.job.change_seq, read.job.change_seq);
  // A decision read before the cancel still commits (it wrote a column no commit writes, and
  // the control loop reads it on every cycle).
  JobRecord job = read.job;
  job.reason = "observed";
  commitOk(Change{job, read.attempts, {}});
  EXPECT_TRUE(viewOf(read.job.id).job.cancel_requested);
}

// Issue 45, item 8: an abandon is read only while its attempt is SubmitUnknown. A decision
// read before it that moved the attempt on (adopted, sent again) would have left the
// accepted abandon unread for good; it is refused as stale, and the next read sees the abandon.
TEST_P(JobWritesTest, AnAbandonMakesADecisionReadBeforeItStale) {
  const JobView read = jobWithAttempt("seq-00000002", AttemptPhase::kSubmitUnknown);
  ASSERT_TRUE(store_->requestAbandon(read.job.id, 1, "admin", "gone", kT0));
  const JobView abandoned = viewOf(read.job.id);
  EXPECT_GT(abandoned.job.version, read.job.version);
  EXPECT_GT(abandoned.job.change_seq, read.job.change_seq);
  JobRecord job = read.job;  // read before the abandon
  job.phase = JobPhase::kPending;
  AttemptRecord resent = read.attempts[0];
  resent.phase = AttemptPhase::kSubmitting;
  auto refused =
      store_->commit(Change{job, {resent}, {event(job.id, 1, "SubmitUnknown", "Submitting")}});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, codes::kStale) << refused.error().describe();
  const JobView after = viewOf(read.job.id);
  EXPECT_EQ(after.attempts[0].phase, AttemptPhase::kSubmitUnknown);
  EXPECT_TRUE(after.attempts[0].abandon_requested);
  // A decision read after it commits, and still cannot clear it.
  AttemptRecord looked = after.attempts[0];
  looked.abandon_requested = false;
  looked.lookups += 1;
  commitOk(Change{after.job, {looked}, {}});
  EXPECT_TRUE(viewOf(read.job.id).attempts[0].abandon_requested);
}

// ---- requestAbandon ----

TEST_P(JobWritesTest, AbandonMarksASubmitUnknownAttemptWithWhoAndWhy) {
  const JobView view = jobWithAttempt("ab-00000001", AttemptPhase::kSubmitUnknown);
  ASSERT_TRUE(store_->requestAbandon(view.job.id, 1, "admin", "controller was rebuilt", kT0));
  ASSERT_TRUE(store_->requestAbandon(view.job.id, 1, "other", "second thoughts", kT0 + 1));

  const AttemptRecord got = viewOf(view.job.id).attempts[0];
  EXPECT_TRUE(got.abandon_requested);
  EXPECT_EQ(got.abandoned_by, "admin");
  EXPECT_EQ(got.abandon_reason, "controller was rebuilt");
  EXPECT_EQ(got.phase, AttemptPhase::kSubmitUnknown);
  const auto events = *store_->events(view.job.id);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].attempt, 1);
  EXPECT_EQ(events[1].actor, "admin");
  EXPECT_NE(events[1].reason.find("controller was rebuilt"), std::string::npos);
}

TEST_P(JobWritesTest, AbandonIsRefusedForAnythingButALostReceipt) {
  const JobView view = jobWithAttempt("ab-00000002", AttemptPhase::kQueued);
  auto no_job = store_->requestAbandon("nope-00000000", 1, "admin", "why", kT0);
  ASSERT_FALSE(no_job);
  EXPECT_EQ(no_job.error().code, "store.not_found");
  auto no_attempt = store_->requestAbandon(view.job.id, 2, "admin", "why", kT0);
  ASSERT_FALSE(no_attempt);
  EXPECT_EQ(no_attempt.error().code, "store.not_found");
  auto queued = store_->requestAbandon(view.job.id, 1, "admin", "why", kT0);
  ASSERT_FALSE(queued);
  EXPECT_EQ(queued.error().code, "store.not_submit_unknown");
  EXPECT_NE(queued.error().message.find("Queued"), std::string::npos);
  EXPECT_FALSE(viewOf(view.job.id).attempts[0].abandon_requested);
}

TEST_P(JobWritesTest, ACommitOfAStaleAttemptDoesNotUndoAnAbandon) {
  const JobView stale = jobWithAttempt("ab-00000003", AttemptPhase::kSubmitUnknown);
  ASSERT_TRUE(store_->requestAbandon(stale.job.id, 1, "admin", "gone", kT0));
  AttemptRecord attempt = stale.attempts[0];  // abandon_requested == false
  attempt.lookups += 1;
  // Read before the abandon: refused whole, the abandon stands.
  auto refused = store_->commit(Change{stale.job, {attempt}, {}});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, codes::kStale);

  const AttemptRecord got = viewOf(stale.job.id).attempts[0];
  EXPECT_EQ(got.lookups, stale.attempts[0].lookups);
  EXPECT_TRUE(got.abandon_requested);
  EXPECT_EQ(got.abandoned_by, "admin");
  EXPECT_EQ(got.abandon_reason, "gone");
}

}  // namespace
}  // namespace tuneplane::store
