// Listing jobs: newest first, every filter alone and together, keyset pages that neither
// skip nor repeat a job while jobs are added between pages, bad limits and tokens refused,
// user strings never reaching SQL text, and the queries served by their indexes.
#include "store/job_reads.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "store/continue_token.h"
#include "store/sqlite_connection.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

class JobReadsTest : public StoreTest {
 protected:
  // Job i: created at kT0 + (i / 2) * 10 (pairs share a time, so the id breaks the tie),
  // owner alice or bob, phase Running or Failed, name train or eval, label team=a|b|c.
  void fill(int count, int first = 0) {
    for (int i = first; i < first + count; ++i) {
      JobRecord job = sampleJob(idOf(i), kT0 + (i / 2) * 10);
      job.owner = i % 2 == 0 ? "alice" : "bob";
      job.phase = i % 3 == 0 ? JobPhase::kFailed : JobPhase::kRunning;
      job.name = i % 4 == 0 ? "eval" : "train";
      job.labels = {{"team", std::string(1, static_cast<char>('a' + i % 3))}};
      commitOk(Change{job, {}, {}});
      all_.push_back(job);
    }
  }
  static std::string idOf(int i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "job-%08x", i);
    return buf;
  }
  // What the listing should hold: `all_` filtered by `keep`, newest first.
  template <typename Keep>
  std::vector<std::string> expected(Keep keep) const {
    std::vector<JobRecord> kept;
    for (const auto& job : all_) {
      if (keep(job)) kept.push_back(job);
    }
    std::sort(kept.begin(), kept.end(), [](const JobRecord& a, const JobRecord& b) {
      return a.created_ms != b.created_ms ? a.created_ms > b.created_ms : a.id > b.id;
    });
    std::vector<std::string> ids;
    for (const auto& job : kept) ids.push_back(job.id);
    return ids;
  }
  // Every page of `query`, following continue tokens; fails on a token loop.
  std::vector<std::string> allPages(JobQuery query) {
    std::vector<std::string> ids;
    for (int pages = 0; pages < 1000; ++pages) {
      auto page = store_->listJobs(query);
      EXPECT_TRUE(page) << page.error().describe();
      if (!page) break;
      EXPECT_LE(static_cast<int>(page->jobs.size()), query.limit);
      for (const auto& job : page->jobs) ids.push_back(job.id);
      if (page->continue_token.empty()) break;
      query.continue_token = page->continue_token;
    }
    return ids;
  }

  std::vector<JobRecord> all_;
};
INSTANTIATE_TEST_SUITE_P(Db, JobReadsTest, kAllBackends, backendName);

TEST_P(JobReadsTest, ListsNewestFirstWithFullRecords) {
  fill(6);
  JobQuery query;
  auto page = store_->listJobs(query);
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->continue_token.empty());
  std::vector<std::string> ids;
  for (const auto& job : page->jobs) ids.push_back(job.id);
  EXPECT_EQ(ids, expected([](const JobRecord&) { return true; }));
  ASSERT_EQ(page->jobs.size(), 6u);
  JobRecord want = all_[0];  // labels and spec included; the store numbers its changes
  EXPECT_GT(page->jobs.back().change_seq, 0);
  want.change_seq = page->jobs.back().change_seq;
  EXPECT_EQ(page->jobs.back(), want);
}

TEST_P(JobReadsTest, EveryFilterAloneAndTogether) {
  fill(40);
  struct Row {
    const char* name;
    JobQuery query;
    bool (*keep)(const JobRecord&);
  };
  JobQuery owner, phase, name, label, all;
  owner.owner = "bob";
  phase.phase = JobPhase::kFailed;
  name.name = "eval";
  label.label = std::make_pair("team", "b");
  all.owner = "alice";
  all.phase = JobPhase::kRunning;
  all.name = "train";
  all.label = std::make_pair("team", "c");
  const std::vector<Row> rows = {
      {"owner", owner, [](const JobRecord& j) { return j.owner == "bob"; }},
      {"phase", phase, [](const JobRecord& j) { return j.phase == JobPhase::kFailed; }},
      {"name", name, [](const JobRecord& j) { return j.name == "eval"; }},
      {"label", label, [](const JobRecord& j) { return j.labels.at("team") == "b"; }},
      {"all", all,
       [](const JobRecord& j) {
         return j.owner == "alice" && j.phase == JobPhase::kRunning && j.name == "train" &&
                j.labels.at("team") == "c";
       }},
  };
  for (Row row : rows) {
    const auto want = expected(row.keep);
    ASSERT_FALSE(want.empty()) << row.name;
    row.query.limit = 3;  // several pages each
    EXPECT_EQ(allPages(row.query), want) << row.name;
  }
  JobQuery nobody;
  nobody.owner = "nobody";
  auto page = store_->listJobs(nobody);
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->jobs.empty());
  EXPECT_TRUE(page->continue_token.empty());
}

TEST_P(JobReadsTest, PagesNeitherSkipNorRepeatWhileJobsAreAdded) {
  fill(25);
  const auto before = expected([](const JobRecord&) { return true; });
  JobQuery query;
  query.limit = 4;
  std::vector<std::string> seen;
  std::set<std::string> behind, ahead;  // added behind / ahead of the listing's position
  for (int round = 0; round < 100; ++round) {
    auto page = store_->listJobs(query);
    ASSERT_TRUE(page) << page.error().describe();
    for (const auto& job : page->jobs) seen.push_back(job.id);
    if (page->continue_token.empty()) break;
    query.continue_token = page->continue_token;
    // Between pages: a job newer than everything, one older than everything, and two that
    // tie the created_ms of the last job listed — one sorting before it (larger id, already
    // passed) and one after it (smaller id, still to come).
    const JobRecord& last = page->jobs.back();
    const std::string n = std::to_string(10000000 + round);
    const std::string falling = std::to_string(20000000 - round);  // ids that keep shrinking
    const JobRecord added[] = {
        sampleJob("new-" + n, kT0 + 1'000'000), sampleJob("old-" + n, kT0 - 1000 - round),
        sampleJob("zz-" + n, last.created_ms), sampleJob("aa-" + falling, last.created_ms)};
    for (const JobRecord& job : added) commitOk(Change{job, {}, {}});
    behind.insert({added[0].id, added[2].id});
    ahead.insert({added[1].id, added[3].id});
  }
  // The listing is a walk down the sort key: every job there at the start appears exactly
  // once, in order; jobs added behind the position never appear; those added ahead of it do.
  std::vector<std::string> original;
  std::set<std::string> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), seen.size()) << "a job was listed twice";
  for (const auto& id : seen) {
    EXPECT_EQ(behind.count(id), 0u) << id;
    if (id.rfind("job-", 0) == 0) original.push_back(id);
  }
  EXPECT_EQ(original, before);
  ASSERT_FALSE(ahead.empty());
  for (const auto& id : ahead) EXPECT_EQ(unique.count(id), 1u) << id;
}

TEST_P(JobReadsTest, LimitsOutsideOneToAThousandAreRefused) {
  fill(3);
  for (int limit : {0, -1, 1001, INT32_MAX}) {
    JobQuery query;
    query.limit = limit;
    auto page = store_->listJobs(query);
    ASSERT_FALSE(page) << limit;
    EXPECT_EQ(page.error().code, "store.bad_limit");
    EXPECT_EQ(page.error().field, "limit");
  }
  for (int limit : {1, 1000}) {
    JobQuery query;
    query.limit = limit;
    auto page = store_->listJobs(query);
    ASSERT_TRUE(page) << limit;
    EXPECT_EQ(page->jobs.size(), std::min<std::size_t>(limit, 3));
  }
}

TEST_P(JobReadsTest, BadAndForeignContinueTokensAreRefused) {
  fill(5);
  JobQuery query;
  query.limit = 2;
  auto first = store_->listJobs(query);
  ASSERT_TRUE(first);
  ASSERT_FALSE(first->continue_token.empty());

  JobQuery other = query;
  other.owner = "alice";
  other.continue_token = first->continue_token;
  auto foreign = store_->listJobs(other);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code, "store.bad_continue");

  for (std::string token : {std::string("'; DROP TABLE jobs; --"), std::string("%%%"),
                            first->continue_token.substr(1)}) {
    query.continue_token = token;
    auto bad = store_->listJobs(query);
    ASSERT_FALSE(bad) << token;
    EXPECT_EQ(bad.error().code, "store.bad_continue");
  }
  // A well-formed token with a hostile id is only a position: it lists, and drops nothing.
  query.continue_token = encodeContinue({kT0 + 1000, "x') OR 1=1; DROP TABLE jobs; --"}, query);
  auto hostile = store_->listJobs(query);
  ASSERT_TRUE(hostile) << hostile.error().describe();
  EXPECT_EQ(allPages(JobQuery{}).size(), 5u);
}

TEST(ListJobsSqlTest, UserStringsNeverReachTheSqlText) {
  const std::string hostile = "x' OR '1'='1\"; DROP TABLE jobs; --";
  JobQuery query;
  query.owner = hostile;
  query.name = hostile;
  query.label = std::make_pair(hostile, hostile);
  query.phase = JobPhase::kRunning;
  query.continue_token = hostile;
  for (bool after : {false, true}) {
    const std::string sql = listJobsSql(query, after);
    EXPECT_EQ(sql.find("DROP"), std::string::npos) << sql;
    EXPECT_EQ(sql.find("Running"), std::string::npos) << sql;
    EXPECT_EQ(sql.find('\''), std::string::npos) << sql;
    EXPECT_NE(sql.find(":owner"), std::string::npos);
    EXPECT_EQ(sql.find(":after_id") != std::string::npos, after);
  }
}

// The control loop reads the active jobs once, then only those written since (issue 37: the
// steady poll cycle reads nothing from the store).
TEST_P(JobReadsTest, ActiveJobsSinceReturnsOnlyWhatWasWrittenAfter) {
  const JobRecord a = sampleJob("delta-00000001");
  const JobRecord b = sampleJob("delta-00000002");
  create(a);
  create(b);
  auto full = store_->activeJobsSince(0);
  ASSERT_TRUE(full) << full.error().describe();
  EXPECT_TRUE(full->full);
  EXPECT_EQ(full->active.size(), 2u);
  const int64_t seen = full->through_seq;
  ASSERT_GT(seen, 0);

  auto nothing = store_->activeJobsSince(seen);
  ASSERT_TRUE(nothing);
  EXPECT_FALSE(nothing->full);
  EXPECT_TRUE(nothing->active.empty());
  EXPECT_TRUE(nothing->ended.empty());
  EXPECT_EQ(nothing->through_seq, seen);

  // A request, a commit that keeps the job active, and one that ends the other.
  ASSERT_TRUE(store_->requestCancel(a.id, "bob", kT0));
  JobRecord ended = viewOf(b.id).job;
  ended.phase = JobPhase::kSucceeded;
  commitOk(Change{ended, {sampleAttempt(b.id, 1)}, {}});
  auto changed = store_->activeJobsSince(seen);
  ASSERT_TRUE(changed);
  EXPECT_FALSE(changed->full);
  ASSERT_EQ(changed->active.size(), 1u);
  EXPECT_EQ(changed->active[0].job.id, a.id);
  EXPECT_TRUE(changed->active[0].job.cancel_requested);
  EXPECT_EQ(changed->ended, std::vector<std::string>{b.id});
  EXPECT_GT(changed->through_seq, seen);
  auto after = store_->activeJobsSince(changed->through_seq);
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->active.empty() && after->ended.empty());
}

// The queries that must stay fast as the table grows are answered from an index, with no
// full scan of jobs and no sort.
TEST(JobReadsPlanTest, HotQueriesUseTheirIndexes) {
  tuneplane::testing::TempDir dir;
  const std::string path = dir.file("plan.db");
  ASSERT_NE(openOrDie(path), nullptr);  // creates the schema
  auto connection = SqliteConnection::open(path, SQLITE_OPEN_READWRITE, 1000);
  ASSERT_TRUE(connection);
  auto plan = [&](const std::string& sql) {
    auto q = (*connection)->query("EXPLAIN QUERY PLAN " + sql);
    EXPECT_TRUE(q) << (q ? "" : q.error().describe());
    std::string text;
    while (q && q->step().value_or(false)) text += q->text(3) + "\n";
    return text;
  };
  JobQuery none, owner, phase, name;
  owner.owner = "a";
  phase.phase = JobPhase::kRunning;
  name.name = "n";
  const std::vector<std::pair<std::string, std::string>> rows = {
      {activeJobsSql(), "jobs_active"},
      {activeLabelsSql(), "jobs_active"},
      {activeAttemptsSql(), "jobs_active"},
      {changedJobsSql(), "jobs_by_change"},
      {changedActiveJobsSql(), "jobs_by_change"},
      {changedActiveLabelsSql(), "jobs_by_change"},
      {changedActiveAttemptsSql(), "jobs_by_change"},
      {listJobsSql(none, true), "jobs_newest"},
      {listJobsSql(owner, true), "jobs_by_owner"},
      {listJobsSql(phase, true), "jobs_by_phase"},
      {listJobsSql(name, false), "jobs_by_name"},
  };
  for (const auto& [sql, index] : rows) {
    const std::string text = plan(sql);
    EXPECT_NE(text.find(" j USING INDEX " + index), std::string::npos) << sql << "\n" << text;
    // No full scan of any table, and no sort of the whole result (sorting one job's few
    // attempt rows, "RIGHT PART OF ORDER BY", is fine).
    EXPECT_EQ(text.find("SCAN a"), std::string::npos) << sql << "\n" << text;
    EXPECT_EQ(text.find("SCAN l"), std::string::npos) << sql << "\n" << text;
    EXPECT_EQ(text.find("SCAN c"), std::string::npos) << sql << "\n" << text;
    EXPECT_EQ(text.find("TEMP B-TREE FOR ORDER BY"), std::string::npos) << sql << "\n" << text;
  }
  EXPECT_NE(plan("SELECT seq FROM events WHERE job_id = 'x' ORDER BY seq").find("events_by_job"),
            std::string::npos);
}

// kActiveJobsCondition must name exactly the terminal job phases (and match the partial
// index, which the plan test checks).
TEST(JobReadsPlanTest, TheActiveConditionListsExactlyTheTerminalPhases) {
  const std::string condition = kActiveJobsCondition;
  for (JobPhase phase :
       {JobPhase::kPending, JobPhase::kStaging, JobPhase::kSubmitting, JobPhase::kSubmitUnknown,
        JobPhase::kQueued, JobPhase::kRunning, JobPhase::kReleasing, JobPhase::kRetrying,
        JobPhase::kCancelling, JobPhase::kUnknown, JobPhase::kSucceeded, JobPhase::kFailed,
        JobPhase::kCancelled}) {
    const std::string quoted = "'" + std::string(toString(phase)) + "'";
    EXPECT_EQ(condition.find(quoted) != std::string::npos, isTerminal(phase)) << quoted;
  }
}

}  // namespace
}  // namespace tuneplane::store
