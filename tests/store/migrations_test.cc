// Migrations, tested from every earlier version: for each schema version this project has
// released there is a row below that builds a database of that version exactly as that build
// did (its migrations, then rows in that version's columns) and checks that today's store
// opens it, reaches the current version and reads every row back. Adding a schema version
// means adding a row here (the coverage test insists). The mechanism itself (order, all or
// nothing, the version number moving with the tables) is tested with synthetic migrations.
#include "store/schema.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "store/sqlite_connection.h"
#include "store_fixtures.h"

namespace tuneplane::store {
namespace {

using namespace tuneplane::store::testing;

std::unique_ptr<Connection> rawConnection(const std::string& path) {
  auto connection = SqliteConnection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                           /*busy_timeout_ms=*/1000);
  EXPECT_TRUE(connection) << (connection ? "" : connection.error().describe());
  return connection ? std::move(*connection) : nullptr;
}

// Builds a database of `version` at `path` with the migrations of that time.
void buildVersion(const std::string& path, int version) {
  auto connection = rawConnection(path);
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(migrate(*connection, knownMigrations().first(version)));
  ASSERT_EQ(connection->queryInteger("PRAGMA user_version").value_or(-1), version);
}

struct EarlierVersion {
  int version;
  const char* rows_sql;  // written in that version's columns
  JobView want;          // what today's getJob must return for job "old-00000001"
  std::size_t events;
};

JobView version1Want() {
  JobView view;
  view.job = JobRecord{"old-00000001",
                       "old",
                       "alice",
                       {{"team", "nlp"}},
                       "spec: 'ü'",
                       JobPhase::kSubmitUnknown,
                       "looking",
                       100,
                       200,
                       0,
                       true,
                       "bob"};
  AttemptRecord a;
  a.job_id = "old-00000001";
  a.number = 1;
  a.phase = AttemptPhase::kSubmitUnknown;
  a.reason = "no receipt";
  a.cause = EndCause::kNone;
  a.submit_token = "tp-old-1";
  a.staging_dir = "/shared/jobs/old-00000001/attempts/1";
  a.slurm_job_id = 4294967295u;
  a.components = {ComponentRecord{0,
                                  "main",
                                  4294967295u,
                                  "sZZZZZZZZZZZZZ",
                                  {"PENDING"},
                                  "Priority",
                                  std::nullopt,
                                  15,
                                  "",
                                  0,
                                  0}};
  a.created_ms = 110;
  a.submitted_ms = 120;
  a.lookups = 4;
  a.next_lookup_ms = 130;
  a.missing_polls = 2;
  a.abandon_requested = true;
  a.abandoned_by = "admin";
  a.abandon_reason = "gone";
  view.attempts = {a};
  return view;
}

// Rows in version 1's columns: the job's, then the rest (which no later version changed).
constexpr const char* kVersion1JobRow = R"sql(
INSERT INTO jobs VALUES ('old-00000001', 'old', 'alice', 'spec: ''ü''', 'SubmitUnknown',
  'looking', 100, 200, 0, 1, 'bob');
)sql";
constexpr const char* kRowsAfterTheJob = R"sql(
INSERT INTO job_labels VALUES ('old-00000001', 'team', 'nlp');
INSERT INTO attempts VALUES ('old-00000001', 1, 'SubmitUnknown', 'no receipt', 'none',
  'tp-old-1', '/shared/jobs/old-00000001/attempts/1', 4294967295, 110, 120, 0, 4, 130, 2,
  1, 'admin', 'gone');
INSERT INTO components VALUES ('old-00000001', 1, 0, 'main', 4294967295, 'sZZZZZZZZZZZZZ',
  '["PENDING"]', 'Priority', NULL, 15, '', 0, 0);
INSERT INTO events (job_id, attempt, time_ms, from_phase, to_phase, reason, actor)
  VALUES ('old-00000001', 0, 100, '', 'Pending', 'created', 'alice'),
         ('old-00000001', 1, 120, 'Submitting', 'SubmitUnknown', 'no receipt', 'reconciler');
)sql";

// Version 3's jobs carry their version and change sequence.
constexpr const char* kVersion3JobRow = R"sql(
INSERT INTO jobs VALUES ('old-00000001', 'old', 'alice', 'spec: ''ü''', 'SubmitUnknown',
  'looking', 100, 200, 0, 1, 'bob', 4, 9);
)sql";

JobView version3Want() {
  JobView view = version1Want();
  view.job.version = 4;
  view.job.change_seq = 9;
  return view;
}

// Version 4's jobs carry the Unix user they run as.
constexpr const char* kVersion4JobRow = R"sql(
INSERT INTO jobs VALUES ('old-00000001', 'old', 'alice', 'spec: ''ü''', 'SubmitUnknown',
  'looking', 100, 200, 0, 1, 'bob', 4, 9, 'alice-unix');
)sql";

JobView version4Want() {
  JobView view = version3Want();
  view.job.run_as = "alice-unix";
  return view;
}

// Version 5 added the idempotency_keys table; its rows bind a key to a job of the time.
constexpr const char* kVersion5KeyRow = R"sql(
INSERT INTO idempotency_keys VALUES ('alice', 'key-1', 'aaaa', 'old-00000001', 100);
)sql";

// Version 6's components carry when Slurm chose to preempt them (earlier rows read 0).
JobView version6Want() {
  JobView view = version4Want();
  view.attempts.front().components.front().preempt_time = 1796687416;
  return view;
}

std::string version6Rows() {
  std::string rows = std::string(kVersion4JobRow) + kRowsAfterTheJob + kVersion5KeyRow;
  const std::string old_component = "'[\"PENDING\"]', 'Priority', NULL, 15, '', 0, 0);";
  rows.replace(rows.find(old_component), old_component.size(),
               "'[\"PENDING\"]', 'Priority', NULL, 15, '', 0, 0, 1796687416);");
  return rows;
}

const std::vector<EarlierVersion>& earlierVersions() {
  static const std::string version1 = std::string(kVersion1JobRow) + kRowsAfterTheJob;
  static const std::string version3 = std::string(kVersion3JobRow) + kRowsAfterTheJob;
  static const std::string version4 = std::string(kVersion4JobRow) + kRowsAfterTheJob;
  static const std::string version5 = version4 + kVersion5KeyRow;
  static const std::string version6 = version6Rows();
  static const std::vector<EarlierVersion> rows = {
      {1, version1.c_str(), version1Want(), 2},
      {2, version1.c_str(), version1Want(), 2},  // version 2 added a table only
      {3, version3.c_str(), version3Want(), 2},  // earlier jobs run as the site's user ('')
      {4, version4.c_str(), version4Want(), 2},
      {5, version5.c_str(), version4Want(), 2},
      {6, version6.c_str(), version6Want(), 2},
  };
  return rows;
}

TEST(MigrationsTest, EveryVersionHasARowBelow) {
  std::set<int> covered;
  for (const auto& row : earlierVersions()) covered.insert(row.version);
  for (int version = 1; version <= currentSchemaVersion(); ++version) {
    EXPECT_EQ(covered.count(version), 1u) << "no migration test row for version " << version;
  }
}

TEST(MigrationsTest, KnownMigrationsAreNumberedByPosition) {
  const auto known = knownMigrations();
  ASSERT_FALSE(known.empty());
  for (std::size_t i = 0; i < known.size(); ++i) {
    EXPECT_EQ(known[i].to_version, static_cast<int>(i) + 1);
    EXPECT_FALSE(known[i].summary.empty());
  }
  EXPECT_EQ(currentSchemaVersion(), known.back().to_version);
}

TEST(MigrationsTest, ADatabaseOfEveryEarlierVersionOpensWithItsData) {
  for (const auto& row : earlierVersions()) {
    SCOPED_TRACE("from version " + std::to_string(row.version));
    tuneplane::testing::TempDir dir;
    const std::string path = dir.file("old.db");
    buildVersion(path, row.version);
    {
      auto connection = rawConnection(path);
      ASSERT_TRUE(connection->exec(row.rows_sql));
    }
    auto store = openOrDie(path);
    ASSERT_NE(store, nullptr);
    auto view = store->getJob("old-00000001");
    ASSERT_TRUE(view && view->has_value());
    EXPECT_EQ(**view, row.want);
    EXPECT_EQ(store->events("old-00000001")->size(), row.events);
    // Keys bound before today's build still stand for their job (a version 5 row).
    auto key = store->findIdempotencyKey("alice", "key-1", 0);
    ASSERT_TRUE(key);
    EXPECT_EQ(key->has_value(), row.version >= 5);
    if (*key) {
      EXPECT_EQ((*key)->job_id, "old-00000001");
    }
    // And it is a working database of the current version.
    const JobRecord job = sampleJob("new-00000001");
    EXPECT_TRUE(store->createJob(job, created(job)));
    store.reset();
    EXPECT_EQ(rawConnection(path)->queryInteger("PRAGMA user_version").value_or(-1),
              currentSchemaVersion());
  }
}

TEST(MigrationsTest, ANewFileGetsTheCurrentSchemaInWalMode) {
  tuneplane::testing::TempDir dir;
  const std::string path = dir.write("empty.db", "");  // an empty file is a new database
  ASSERT_NE(openOrDie(path), nullptr);
  auto connection = rawConnection(path);
  EXPECT_EQ(connection->queryInteger("PRAGMA user_version").value_or(-1), currentSchemaVersion());
  EXPECT_EQ(connection->queryInteger("PRAGMA application_id").value_or(-1), kApplicationId);
  EXPECT_EQ(connection->queryText("PRAGMA journal_mode").value_or(""), "wal");
}

// ---- the mechanism, with synthetic versions after today's ----

Status addPriority(Connection& c) {
  return c.exec(
      "ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 5;"
      "CREATE INDEX jobs_by_priority ON jobs (priority)");
}
Status failHalfWay(Connection& c) {
  return c.exec("CREATE TABLE half (x INTEGER); INSERT INTO nowhere VALUES (1)");
}
Status addNote(Connection& c) {
  return c.exec("ALTER TABLE jobs ADD COLUMN note TEXT NOT NULL DEFAULT 'n'");
}

std::vector<Migration> withExtra(std::initializer_list<Migration> extra) {
  std::vector<Migration> list(knownMigrations().begin(), knownMigrations().end());
  list.insert(list.end(), extra);
  return list;
}

class MigrationMechanismTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("db");
    auto store = openOrDie(path_);
    ASSERT_NE(store, nullptr);
    const JobRecord job = sampleJob("keep-00000001");
    ASSERT_TRUE(store->createJob(job, created(job)));
  }
  int64_t version(Connection& c) { return c.queryInteger("PRAGMA user_version").value_or(-1); }

  tuneplane::testing::TempDir dir_;
  std::string path_;
};

TEST_F(MigrationMechanismTest, AppliesEachLaterStepInOrderAndKeepsTheData) {
  const int now = currentSchemaVersion();
  const auto list = withExtra({{now + 1, "priority", &addPriority}, {now + 2, "note", &addNote}});
  auto c = rawConnection(path_);
  ASSERT_TRUE(migrate(*c, list));
  EXPECT_EQ(version(*c), now + 2);
  auto row = c->query("SELECT id, priority, note FROM jobs");
  ASSERT_TRUE(row);
  ASSERT_TRUE(row->step().value_or(false));
  EXPECT_EQ(row->text(0), "keep-00000001");
  EXPECT_EQ(row->integer(1), 5);
  EXPECT_EQ(row->text(2), "n");
}

TEST_F(MigrationMechanismTest, ResumesFromTheVersionFound) {
  const int now = currentSchemaVersion();
  auto c = rawConnection(path_);
  ASSERT_TRUE(migrate(*c, withExtra({{now + 1, "priority", &addPriority}})));
  // A later build with one more step runs only that step (priority would fail twice).
  ASSERT_TRUE(
      migrate(*c, withExtra({{now + 1, "priority", &addPriority}, {now + 2, "note", &addNote}})));
  EXPECT_EQ(version(*c), now + 2);
}

TEST_F(MigrationMechanismTest, AFailingStepLeavesTheDatabaseAsItWas) {
  const int now = currentSchemaVersion();
  const auto list =
      withExtra({{now + 1, "priority", &addPriority}, {now + 2, "broken", &failHalfWay}});
  auto c = rawConnection(path_);
  auto done = migrate(*c, list);
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().message.find("version " + std::to_string(now + 2)), std::string::npos)
      << done.error().message;
  EXPECT_NE(done.error().message.find("left at version " + std::to_string(now)), std::string::npos)
      << done.error().message;
  EXPECT_EQ(version(*c), now);
  EXPECT_EQ(c->queryInteger("SELECT count(*) FROM sqlite_schema WHERE name IN "
                            "('half', 'jobs_by_priority')")
                .value_or(-1),
            0);
  EXPECT_FALSE(c->query("SELECT priority FROM jobs"));  // the first step was undone too
  c.reset();
  auto store = openOrDie(path_);  // and today's build still opens it
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->getJob("keep-00000001").value().has_value());
}

TEST_F(MigrationMechanismTest, ABuildRefusesADatabaseItsLastMigrationDoesNotReach) {
  const int now = currentSchemaVersion();
  auto c = rawConnection(path_);
  ASSERT_TRUE(migrate(*c, withExtra({{now + 1, "priority", &addPriority}})));
  auto inspected = inspectDatabase(*c, knownMigrations());
  ASSERT_FALSE(inspected);
  EXPECT_EQ(inspected.error().code, "store.newer_version");
  EXPECT_TRUE(inspectDatabase(*c, withExtra({{now + 1, "priority", &addPriority}})));
}

}  // namespace
}  // namespace tuneplane::store
