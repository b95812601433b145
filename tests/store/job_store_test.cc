// The JobStore's reads and writes at its boundary, on every backend: every field
// survives a round trip byte for byte, commits upsert and replace what they should, events
// keep their order, activeJobs and the phase counts see what was written.
#include "store/sqlite_job_store.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

class JobStoreTest : public StoreTest {};
INSTANTIATE_TEST_SUITE_P(Db, JobStoreTest, kAllBackends, backendName);

// Every field set, with values that need care: unicode, quotes, a NUL byte, SQL syntax,
// the largest ids, absent and present optionals, an empty state list, no components.
JobView awkwardView() {
  JobView view;
  view.job = sampleJob("llm-ünï-0000beef");
  view.job.owner = "o'brien \"the\" owner";
  view.job.labels = {{"ключ", "значение 🚀"},
                     {"quote", "it's \"x\""},
                     {"empty", ""},
                     {"sql", "'); DROP TABLE jobs; --"}};
  view.job.spec = std::string("spec: {a: \"b\"}\n# ünïcødé ✓\n") + std::string(1, '\0') + "tail";
  view.job.reason = std::string("nul\0inside", 10);
  view.job.phase = JobPhase::kRetrying;
  view.job.next_attempt_ms = kT0 + 60'000;

  AttemptRecord first = sampleAttempt(view.job.id, 1);
  first.phase = AttemptPhase::kFailed;
  first.cause = EndCause::kInfrastructure;
  first.reason = "NODE_FAIL on gpu2 — «lost»";
  first.slurm_job_id = std::numeric_limits<uint32_t>::max();
  first.components[0].slurm_job_id = std::numeric_limits<uint32_t>::max();
  first.components[0].sluid = "sZZZZZZZZZZZZZ";  // a SLUID above 2^63 as Crockford text
  first.components[0].state = {"NODE_FAIL"};
  first.components[0].exit_code = std::nullopt;
  first.components[0].signal = 9;
  first.components[1].state = {};
  first.components[1].exit_code = -1;
  first.components[1].signal = 0;
  first.components[1].nodes = "";
  first.ended_ms = kT0 + 500;

  AttemptRecord second = sampleAttempt(view.job.id, 2, /*components=*/0);
  second.phase = AttemptPhase::kSubmitUnknown;
  second.slurm_job_id = std::numeric_limits<uint64_t>::max();  // bit for bit in an int64
  second.staging_dir = "/shared/jobs/x y/attempts/2";
  view.attempts = {first, second};
  return view;
}

TEST_P(JobStoreTest, EveryFieldRoundTripsExactly) {
  const JobView want = awkwardView();
  create(want.job);
  commitOk(Change{want.job, want.attempts, {}});

  const JobView got = viewOf(want.job.id);
  EXPECT_EQ(got.job, asStored(want.job, got.job, 1));
  EXPECT_EQ(got.attempts, want.attempts);
  EXPECT_EQ(got.job.reason.size(), 10u);
  EXPECT_EQ(got.attempts[1].slurm_job_id, std::numeric_limits<uint64_t>::max());
}

TEST_P(JobStoreTest, AnUnknownIdIsNotAnError) {
  auto view = store_->getJob("nope-00000000");
  ASSERT_TRUE(view);
  EXPECT_FALSE(view->has_value());
  auto events = store_->events("nope-00000000");
  ASSERT_TRUE(events);
  EXPECT_TRUE(events->empty());
}

TEST_P(JobStoreTest, CreatingAnExistingIdFailsAndKeepsTheFirst) {
  const JobRecord job = sampleJob("dup-00000001");
  create(job);
  JobRecord again = job;
  again.owner = "mallory";
  auto done = store_->createJob(again, created(again));
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().code, "store.job_exists");
  EXPECT_EQ(viewOf(job.id).job.owner, "alice");
  EXPECT_EQ(store_->events(job.id)->size(), 1u);
}

TEST_P(JobStoreTest, CommitUpsertsTheJobAndReplacesComponentsAndLabels) {
  JobRecord job = sampleJob("up-00000002");
  create(job);
  AttemptRecord attempt = sampleAttempt(job.id, 1, 2);
  commitOk(Change{std::nullopt, {attempt}, {}});
  EXPECT_EQ(viewOf(job.id).attempts[0].components.size(), 2u);

  job.phase = JobPhase::kRunning;
  job.reason = "RUNNING";
  job.labels = {{"team", "vision"}};
  attempt.components = {sampleComponent(1)};
  attempt.components[0].state = {"RUNNING"};
  attempt.missing_polls = 0;
  commitOk(Change{job, {attempt}, {}});

  const JobView got = viewOf(job.id);
  EXPECT_EQ(got.job, asStored(job, got.job, 1));  // the attempt alone moved no version
  ASSERT_EQ(got.attempts.size(), 1u);
  EXPECT_EQ(got.attempts[0], attempt);
}

TEST_P(JobStoreTest, CommitCanCreateAJobThatDidNotExist) {
  const JobRecord job = sampleJob("fresh-00000003");
  commitOk(Change{job, {sampleAttempt(job.id, 1)}, {created(job)}});
  const JobView got = viewOf(job.id);
  EXPECT_EQ(got.job, asStored(job, got.job, 0));  // inserted: version 0
  EXPECT_EQ(got.attempts.size(), 1u);
}

TEST_P(JobStoreTest, CommitAndCreateNeverWriteTheRequestColumns) {
  JobRecord job = sampleJob("req-00000004");
  job.cancel_requested = true;
  job.cancel_requested_by = "forged";
  create(job);
  AttemptRecord attempt = sampleAttempt(job.id, 1);
  attempt.abandon_requested = true;
  attempt.abandoned_by = "forged";
  attempt.abandon_reason = "forged";
  commitOk(Change{job, {attempt}, {}});

  const JobView got = viewOf(job.id);
  EXPECT_FALSE(got.job.cancel_requested);
  EXPECT_EQ(got.job.cancel_requested_by, "");
  EXPECT_FALSE(got.attempts[0].abandon_requested);
  EXPECT_EQ(got.attempts[0].abandoned_by, "");
  EXPECT_EQ(got.attempts[0].abandon_reason, "");
}

TEST_P(JobStoreTest, EventsComeBackInCommitOrderWithIncreasingSeq) {
  const JobRecord a = sampleJob("ev-0000000a");
  const JobRecord b = sampleJob("ev-0000000b");
  create(a);
  create(b);
  EventRecord staged = event(a.id, 1, "Pending", "Staging", kT0 + 5);
  staged.seq = 999;  // ignored: the store assigns seq
  commitOk(Change{std::nullopt, {}, {staged, event(a.id, 1, "Staging", "Submitting", kT0 + 5)}});
  commitOk(Change{std::nullopt, {}, {event(b.id, 0, "Pending", "Cancelled", kT0 + 1)}});
  commitOk(Change{std::nullopt, {}, {event(a.id, 1, "Submitting", "Queued", kT0 + 2)}});

  auto events = store_->events(a.id);
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 4u);
  EXPECT_EQ((*events)[0].to, "Pending");
  EXPECT_EQ((*events)[0].actor, "alice");
  EXPECT_EQ((*events)[1].to, "Staging");
  EXPECT_EQ((*events)[2].to, "Submitting");
  EXPECT_EQ((*events)[3].to, "Queued");  // commit order, not time order
  EXPECT_EQ((*events)[3].time_ms, kT0 + 2);
  for (std::size_t i = 1; i < events->size(); ++i) {
    EXPECT_LT((*events)[i - 1].seq, (*events)[i].seq);
  }
  EXPECT_NE((*events)[1].seq, 999);
  EXPECT_EQ((*events)[1], (EventRecord{(*events)[1].seq, a.id, 1, kT0 + 5, "Pending", "Staging",
                                       "because Staging", "reconciler"}));
  EXPECT_EQ(store_->events(b.id)->size(), 2u);
}

TEST_P(JobStoreTest, ActiveJobsAreTheNonTerminalOnesOldestFirstWithEverything) {
  const JobPhase phases[] = {JobPhase::kSucceeded, JobPhase::kPending,    JobPhase::kStaging,
                             JobPhase::kFailed,    JobPhase::kSubmitting, JobPhase::kSubmitUnknown,
                             JobPhase::kQueued,    JobPhase::kRunning,    JobPhase::kCancelled,
                             JobPhase::kReleasing, JobPhase::kRetrying,   JobPhase::kCancelling,
                             JobPhase::kUnknown};
  std::vector<std::string> want;
  int n = 0;
  for (JobPhase phase : phases) {
    // Created newest first, so "oldest first" is not insertion order.
    JobRecord job = sampleJob("act-" + std::to_string(10000000 + n), kT0 - n * 1000);
    job.phase = phase;
    commitOk(Change{job, {sampleAttempt(job.id, 1), sampleAttempt(job.id, 2, 1)}, {}});
    if (!isTerminal(phase)) want.insert(want.begin(), job.id);
    ++n;
  }
  auto active = store_->activeJobs();
  ASSERT_TRUE(active) << active.error().describe();
  std::vector<std::string> got;
  for (const JobView& view : *active) {
    got.push_back(view.job.id);
    EXPECT_FALSE(isTerminal(view.job.phase));
    EXPECT_EQ(view.job.labels.size(), 2u);
    ASSERT_EQ(view.attempts.size(), 2u);
    EXPECT_EQ(view.attempts[0].number, 1);
    EXPECT_EQ(view.attempts[0].components.size(), 2u);
    EXPECT_EQ(view.attempts[1].components.size(), 1u);
    EXPECT_EQ(view, viewOf(view.job.id));
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.size(), 10u);
}

TEST_P(JobStoreTest, CountsJobsByPhase) {
  const JobPhase phases[] = {JobPhase::kRunning, JobPhase::kRunning, JobPhase::kFailed,
                             JobPhase::kSubmitUnknown};
  int n = 0;
  for (JobPhase phase : phases) {
    JobRecord job = sampleJob("cnt-" + std::to_string(10000000 + n++));
    job.phase = phase;
    commitOk(Change{job, {}, {}});
  }
  auto counts = store_->countJobsByPhase();
  ASSERT_TRUE(counts);
  const std::map<JobPhase, int64_t> want = {
      {JobPhase::kRunning, 2}, {JobPhase::kFailed, 1}, {JobPhase::kSubmitUnknown, 1}};
  EXPECT_EQ(*counts, want);
}

TEST_P(JobStoreTest, CountsEndedAttemptsByPhaseAndCause) {
  struct Row {
    AttemptPhase phase;
    EndCause cause;
  };
  const Row rows[] = {{AttemptPhase::kSucceeded, EndCause::kNone},
                      {AttemptPhase::kFailed, EndCause::kInfrastructure},
                      {AttemptPhase::kFailed, EndCause::kInfrastructure},
                      {AttemptPhase::kFailed, EndCause::kUser},
                      {AttemptPhase::kCancelled, EndCause::kCancelled},
                      {AttemptPhase::kAbandoned, EndCause::kAbandoned},
                      {AttemptPhase::kRunning, EndCause::kNone}};  // not ended: not counted
  JobRecord job = sampleJob("ended-10000000");
  std::vector<AttemptRecord> attempts;
  int number = 1;
  for (const Row& row : rows) {
    AttemptRecord a = sampleAttempt(job.id, number++, 1);
    a.phase = row.phase;
    a.cause = row.cause;
    attempts.push_back(a);
  }
  commitOk(Change{job, attempts, {}});
  auto counts = store_->countEndedAttempts();
  ASSERT_TRUE(counts) << counts.error().describe();
  const std::map<std::pair<AttemptPhase, EndCause>, int64_t> want = {
      {{AttemptPhase::kSucceeded, EndCause::kNone}, 1},
      {{AttemptPhase::kFailed, EndCause::kInfrastructure}, 2},
      {{AttemptPhase::kFailed, EndCause::kUser}, 1},
      {{AttemptPhase::kCancelled, EndCause::kCancelled}, 1},
      {{AttemptPhase::kAbandoned, EndCause::kAbandoned}, 1}};
  EXPECT_EQ(*counts, want);
}

// ---- databases that outlive their store (a file, PostgreSQL) ----

class JobStoreReopenTest : public StoreTest {};
INSTANTIATE_TEST_SUITE_P(Db, JobStoreReopenTest,
                         ::testing::Values(Backend::kSqliteFile, Backend::kPostgres), backendName);

TEST_P(JobStoreReopenTest, KeepsEverythingAcrossReopening) {
  const JobView want = awkwardView();
  ASSERT_TRUE(store_->createJob(want.job, created(want.job)));
  ASSERT_TRUE(store_->commit(
      Change{want.job, want.attempts, {event(want.job.id, 1, "Running", "Failed")}}));
  store_.reset();
  auto store = db_.open();  // migrations find the current version and change nothing
  ASSERT_NE(store, nullptr);
  auto got = store->getJob(want.job.id);
  ASSERT_TRUE(got && got->has_value());
  JobView stored = want;
  stored.job = asStored(want.job, (*got)->job, 1);
  EXPECT_EQ(**got, stored);
  EXPECT_EQ(store->events(want.job.id)->size(), 2u);
}

TEST(SqliteJobStoreFileTest, ANewFileIsReadableByItsOwnerOnly) {
  tuneplane::testing::TempDir dir;
  const std::string path = dir.file("store.db");
  auto store = openOrDie(path);
  ASSERT_NE(store, nullptr);
  const JobRecord job = sampleJob("mode-00000001");
  ASSERT_TRUE(store->createJob(job, created(job)));  // the -wal file exists while open
  for (const std::string& file : {path, path + "-wal"}) {
    const auto perms = std::filesystem::status(file).permissions();
    EXPECT_EQ(perms & std::filesystem::perms::all,
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)
        << file;
  }
}

TEST(SqliteJobStoreOpenTest, RefusesAnEmptyPathAndBadOptions) {
  auto empty = SqliteJobStore::open("");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, "store.invalid");
  auto no_readers = SqliteJobStore::open(SqliteJobStore::kInMemory, {.reader_connections = 0});
  ASSERT_FALSE(no_readers);
  EXPECT_EQ(no_readers.error().code, "store.invalid");
}

TEST(SqliteJobStoreOpenTest, AMissingDirectoryIsAnIoError) {
  tuneplane::testing::TempDir dir;
  auto store = SqliteJobStore::open(dir.file("no/such/dir/store.db"));
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error().code, "store.io");
  EXPECT_NE(store.error().message.find("no/such/dir"), std::string::npos);
}

}  // namespace
}  // namespace tuneplane::store
