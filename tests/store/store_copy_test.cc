// `tuneplane store copy` at the store's boundary (store/store_copy.h): a SQLite site with
// jobs in every kind of state is copied into a new PostgreSQL database, and then every read
// the API makes — getJob, listJobs with its filters and keyset pages, events, the /metrics
// counts — answers the same on both. A target that holds a job is refused with nothing
// written; a source this build must not read (newer schema, damaged, missing) is refused and
// keeps every byte.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "store/error_codes.h"
#include "store/schema.h"
#include "store/sqlite_connection.h"
#include "store/store_copy.h"
#include "store_fixtures.h"
#include "support/pg_test_database.h"

namespace tuneplane::store {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace): the store fixtures

class StoreCopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    database_.open(tuneplane::test::kPasswordRole, kPassword);
    if (!database_.ready()) return;
    target_ = database_.uri(tuneplane::test::kPasswordRole);
    password_file_ = dir_.file("db.pass");
    { std::ofstream(password_file_) << kPassword << "\n"; }
    ASSERT_EQ(::chmod(password_file_.c_str(), 0600), 0);
    source_ = dir_.file("site.db");
  }
  CopyRequest request() const {
    return CopyRequest{"sqlite:" + source_, target_, password_file_, "--password-file"};
  }
  std::unique_ptr<JobStore> openTarget() const {
    auto store = PostgresJobStore::open(target_, {.reader_connections = 1, .password = kPassword});
    EXPECT_TRUE(store.has_value()) << (store ? "" : store.error().describe());
    return store ? std::move(*store) : nullptr;
  }

  // A site's worth of states: pending with a cancel request, running het, succeeded, failed
  // after a retry, a lost receipt marked for abandonment, and bytes a careless copy would
  // mangle (NUL, \x01, UTF-8). Two jobs share created_ms, so keyset pages break the tie by id.
  void fillSource() {
    auto store = openOrDie(source_);
    ASSERT_NE(store, nullptr);
    JobRecord pending = sampleJob("pending-00000001", kT0);
    static constexpr char kMangleable[] = "a\0b\x01z ü";  // NUL, \x01 and UTF-8
    pending.spec = std::string(kMangleable, sizeof kMangleable - 1);
    ASSERT_TRUE(store->createJob(pending, created(pending)));
    ASSERT_TRUE(store->requestCancel(pending.id, "bob", kT0 + 5));

    JobRecord running = sampleJob("running-00000002", kT0 + 100);
    ASSERT_TRUE(store->createJob(running, created(running)));
    running.phase = JobPhase::kRunning;
    running.reason = "running";
    AttemptRecord het = sampleAttempt(running.id, 1, 2);
    het.components[1].exit_code = std::nullopt;
    het.components[1].signal = 9;
    ASSERT_TRUE(store->commit({running, {het}, {event(running.id, 1, "Staging", "Running")}}));

    JobRecord done = sampleJob("done-00000003", kT0 + 100);
    ASSERT_TRUE(store->createJob(done, created(done)));
    done.phase = JobPhase::kSucceeded;
    done.owner = "carol";
    AttemptRecord ok_attempt = sampleAttempt(done.id, 1, 1);
    ok_attempt.phase = AttemptPhase::kSucceeded;
    ok_attempt.cause = EndCause::kNone;
    ok_attempt.ended_ms = kT0 + 900;
    ok_attempt.slurm_job_id = 0xFFFFFFFFull + 7;  // beyond 32 bits survives
    ASSERT_TRUE(store->commit({done, {ok_attempt}, {event(done.id, 1, "Running", "Succeeded")}}));

    JobRecord failed = sampleJob("failed-00000004", kT0 + 200);
    failed.labels = {{"team", "vision"}};
    ASSERT_TRUE(store->createJob(failed, created(failed)));
    failed.phase = JobPhase::kFailed;
    failed.next_attempt_ms = kT0 + 600;
    AttemptRecord first = sampleAttempt(failed.id, 1, 1);
    first.phase = AttemptPhase::kFailed;
    first.cause = EndCause::kInfrastructure;
    AttemptRecord second = sampleAttempt(failed.id, 2, 1);
    second.phase = AttemptPhase::kFailed;
    second.cause = EndCause::kUser;
    ASSERT_TRUE(store->commit(
        {failed,
         {first, second},
         {event(failed.id, 1, "Running", "Failed"), event(failed.id, 2, "Running", "Failed")}}));

    JobRecord lost = sampleJob("lost-00000005", kT0 + 300);
    ASSERT_TRUE(store->createJob(lost, created(lost)));
    AttemptRecord unknown = sampleAttempt(lost.id, 1, 1);
    unknown.phase = AttemptPhase::kSubmitUnknown;
    unknown.lookups = 7;
    ASSERT_TRUE(store->commit({lost, {unknown}, {}}));
    ASSERT_TRUE(store->requestAbandon(lost.id, 1, "admin", "node rebooted", kT0 + 400));
  }

  const std::vector<std::string> kIds = {"pending-00000001", "running-00000002", "done-00000003",
                                         "failed-00000004", "lost-00000005"};
  static constexpr const char* kPassword = tuneplane::test::kPasswordRolePassword;
  tuneplane::testing::TempDir dir_;
  tuneplane::test::PgTestDatabase database_;
  std::string target_;
  std::string password_file_;
  std::string source_;
};

// Every page of a listing, following its continue tokens.
std::vector<JobPage> allPages(JobStore& store, JobQuery query) {
  std::vector<JobPage> pages;
  for (int guard = 0; guard < 100; ++guard) {
    auto page = store.listJobs(query);
    EXPECT_TRUE(page) << page.error().describe();
    if (!page) break;
    pages.push_back(*page);
    if (page->continue_token.empty()) break;
    query.continue_token = page->continue_token;
  }
  return pages;
}

TEST_F(StoreCopyTest, EveryReadAnswersTheSameOnTheCopy) {
  fillSource();
  const std::string before = readBytes(source_);
  auto copied = copyStore(request());
  ASSERT_TRUE(copied) << copied.error().describe();
  EXPECT_EQ(*copied, (CopyCounts{5, 5, 6, 11}));
  EXPECT_EQ(readBytes(source_), before) << "the source must not change";

  auto source = openOrDie(source_);
  auto target = openTarget();
  ASSERT_NE(target, nullptr);
  for (const std::string& id : kIds) {
    auto a = source->getJob(id);
    auto b = target->getJob(id);
    ASSERT_TRUE(a && b && a->has_value());
    EXPECT_EQ(**a, **b) << id;
    auto ea = source->events(id);
    auto eb = target->events(id);
    ASSERT_TRUE(ea && eb);
    EXPECT_FALSE(ea->empty());
    EXPECT_EQ(*ea, *eb) << id;  // seq numbers included
  }
  std::vector<JobQuery> queries(5);
  queries[0].limit = 2;  // keyset pages, the created_ms tie included
  queries[1].owner = "carol";
  queries[2].phase = JobPhase::kFailed;
  queries[3].label = {"team", "nlp"};
  queries[4].limit = 1000;
  for (const JobQuery& query : queries) {
    const auto a = allPages(*source, query);
    const auto b = allPages(*target, query);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].jobs, b[i].jobs);
      ASSERT_EQ(a[i].attempts.size(), b[i].attempts.size());
      for (std::size_t k = 0; k < a[i].attempts.size(); ++k) {
        EXPECT_EQ(a[i].attempts[k].count, b[i].attempts[k].count);
        EXPECT_EQ(a[i].attempts[k].last, b[i].attempts[k].last);
      }
      EXPECT_EQ(a[i].continue_token, b[i].continue_token);
    }
  }
  EXPECT_EQ(allPages(*source, queries[0]).size(), 3u);
  EXPECT_EQ(*source->countJobsByPhase(), *target->countJobsByPhase());
  EXPECT_EQ(*source->countEndedAttempts(), *target->countEndedAttempts());
  auto active_a = source->activeJobs();
  auto active_b = target->activeJobs();
  ASSERT_TRUE(active_a && active_b);
  EXPECT_EQ(*active_a, *active_b);

  // The target's next event follows the copied ones.
  auto last = target->events("running-00000002");
  ASSERT_TRUE(last && !last->empty());
  ASSERT_TRUE(target->requestCancel("running-00000002", "dave", kT0 + 1000));
  int64_t highest = 0;
  for (const std::string& id : kIds) {
    auto events = source->events(id);
    ASSERT_TRUE(events);
    for (const EventRecord& e : *events) highest = std::max(highest, e.seq);
  }
  auto after = target->events("running-00000002");
  ASSERT_TRUE(after);
  EXPECT_GT(after->back().seq, highest);
}

TEST_F(StoreCopyTest, AnEmptySiteCopiesNothingAndTheTargetStillWorks) {
  { ASSERT_NE(openOrDie(source_), nullptr); }
  auto copied = copyStore(request());
  ASSERT_TRUE(copied) << copied.error().describe();
  EXPECT_EQ(*copied, CopyCounts{});
  auto target = openTarget();
  ASSERT_NE(target, nullptr);
  const JobRecord job = sampleJob("fresh-00000009");
  ASSERT_TRUE(target->createJob(job, created(job)));
}

TEST_F(StoreCopyTest, ATargetHoldingAJobIsRefusedAndKeepsWhatItHad) {
  fillSource();
  {
    auto target = openTarget();
    ASSERT_NE(target, nullptr);
    const JobRecord job = sampleJob("already-00000009");
    ASSERT_TRUE(target->createJob(job, created(job)));
  }
  // The password given in the URI itself must not come back in the message.
  CopyRequest with_password = request();
  with_password.password_file.reset();
  with_password.to = "postgresql://" + std::string(tuneplane::test::kPasswordRole) + ":" +
                     kPassword + "@" + target_.substr(std::string("postgresql://").size());
  with_password.to = with_password.to.substr(0, with_password.to.find("&user="));
  auto copied = copyStore(with_password);
  ASSERT_FALSE(copied);
  EXPECT_EQ(copied.error().code, codes::kTargetNotEmpty) << copied.error().describe();
  EXPECT_NE(copied.error().message.find("***"), std::string::npos) << copied.error().message;
  EXPECT_EQ(copied.error().message.find(kPassword), std::string::npos);

  auto target = openTarget();
  ASSERT_NE(target, nullptr);
  auto page = target->listJobs({});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->jobs.size(), 1u);
  EXPECT_EQ(page->jobs[0].id, "already-00000009");
  auto events = target->events("already-00000009");
  ASSERT_TRUE(events);
  EXPECT_EQ(events->size(), 1u);
}

TEST_F(StoreCopyTest, ANewerSourceIsRefusedAndKeepsEveryByte) {
  fillSource();
  {
    auto raw = SqliteConnection::open(source_, SQLITE_OPEN_READWRITE, 1000);
    ASSERT_TRUE(raw);
    ASSERT_TRUE(
        (*raw)->exec("PRAGMA user_version = " + std::to_string(currentSchemaVersion() + 1)));
  }
  const std::string before = readBytes(source_);
  auto copied = copyStore(request());
  ASSERT_FALSE(copied);
  EXPECT_EQ(copied.error().code, codes::kNewerVersion) << copied.error().describe();
  EXPECT_EQ(readBytes(source_), before);
}

TEST_F(StoreCopyTest, ADamagedOrMissingSourceIsRefused) {
  { std::ofstream(source_) << std::string(8192, 'x'); }
  const std::string before = readBytes(source_);
  auto damaged = copyStore(request());
  ASSERT_FALSE(damaged);
  EXPECT_EQ(damaged.error().code, codes::kCorrupt) << damaged.error().describe();
  EXPECT_EQ(readBytes(source_), before);

  CopyRequest missing = request();
  missing.from = dir_.file("nothing-here.db");
  auto absent = copyStore(missing);
  ASSERT_FALSE(absent);
  EXPECT_EQ(absent.error().code, codes::kIo);
  struct stat info {};
  EXPECT_NE(::stat(missing.from.c_str(), &info), 0) << "a read-only open creates nothing";
}

TEST_F(StoreCopyTest, TheEndsMustBeASqliteFileAndAPostgresUri) {
  CopyRequest swapped{target_, source_, std::nullopt, "--password-file"};
  auto copied = copyStore(swapped);
  ASSERT_FALSE(copied);
  EXPECT_EQ(copied.error().code, codes::kInvalid);
  EXPECT_EQ(copied.error().field, "from");
  auto to_file = copyStore({source_, dir_.file("other.db"), std::nullopt, "--password-file"});
  ASSERT_FALSE(to_file);
  EXPECT_EQ(to_file.error().field, "to");
}

}  // namespace
}  // namespace tuneplane::store
