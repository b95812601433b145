// The job store's database as doctor judges it (database, database/lease), from tables of
// gathered facts; and the gathering itself against a real SQLite file and a real
// PostgreSQL, which must look without changing anything (no migration, no lease taken).
#include "doctor/database_checks.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "../catalog/temp_dir.h"
#include "doctor/doctor.h"
#include "fixtures.h"
#include "store/error_codes.h"
#include "store/postgres_job_store.h"
#include "store/schema.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_job_store.h"
#include "store/store_probe.h"
#include "support/pg_test_database.h"

namespace tuneplane::doctor {
namespace {

using testing::contains;

constexpr int64_t kNow = 1'700'000'000'000;

DatabaseFacts postgres(int64_t version, std::optional<store::LeaseRow> lease = std::nullopt) {
  DatabaseFacts f;
  f.db = "postgresql://tp:***@db.example/tp";
  f.postgres = true;
  store::StoreProbe p;
  p.description = f.db;
  p.dialect = store::Dialect::kPostgres;
  p.version = version;
  p.current_version = store::currentSchemaVersion();
  p.lease = std::move(lease);
  p.now_ms = kNow;
  f.probe = p;
  return f;
}

DatabaseFacts sqlite(int64_t version) {
  DatabaseFacts f = postgres(version);
  f.db = "/var/lib/tuneplane/tuneplane.db";
  f.postgres = false;
  f.probe->dialect = store::Dialect::kSqlite;
  return f;
}

DatabaseFacts refused(const char* code, int64_t version) {
  DatabaseFacts f = postgres(version);
  f.probe->refusal = Error{code, "db", "the database refused it"};
  return f;
}

using DatabaseRow = testing::CheckRow<DatabaseFacts>;

TEST(DatabaseChecksTest, ReachableAndSchemaVersion) {
  const int current = store::currentSchemaVersion();
  DatabaseFacts unreachable = postgres(0);
  unreachable.probe.reset();
  unreachable.unavailable = Error{store::codes::kIo, "db", "connection refused"};
  DatabaseFacts bad_password = unreachable;
  bad_password.unavailable =
      Error{store::codes::kInvalid, "server.db_password_file", "readable by others"};
  DatabaseFacts unreadable_file = sqlite(0);
  unreadable_file.probe.reset();
  unreadable_file.unavailable = Error{store::codes::kIo, "db", "unable to open"};
  DatabaseFacts missing = sqlite(0);
  missing.probe.reset();
  missing.exists = false;
  testing::expectCheckRows<DatabaseFacts>(
      {
          {"current", postgres(current), CheckStatus::kOk,
           "schema version " + std::to_string(current) + " (current)", ""},
          {"current sqlite", sqlite(current), CheckStatus::kOk, "(current)", ""},
          {"older", postgres(current - 1), CheckStatus::kWarn, "serve migrates it", "back"},
          {"empty", postgres(0), CheckStatus::kOk, "is empty; serve creates schema", ""},
          {"missing sqlite file", missing, CheckStatus::kOk, "does not exist yet", ""},
          {"newer", refused(store::codes::kNewerVersion, current + 1), CheckStatus::kFail,
           "schema version " + std::to_string(current + 1) + ", newer", "TunePlane that wrote it"},
          {"foreign", refused(store::codes::kNotTuneplane, 0), CheckStatus::kFail,
           "store.not_tuneplane", "TunePlane's own database"},
          {"damaged", refused(store::codes::kCorrupt, 0), CheckStatus::kFail, "store.corrupt",
           "backup"},
          {"unreachable", unreachable, CheckStatus::kFail, "connection refused [store.io]",
           "PostgreSQL 15"},
          {"password file", bad_password, CheckStatus::kFail, "store.invalid", "chmod 600"},
          {"sqlite unreadable", unreadable_file, CheckStatus::kFail, "cannot open", "can read"},
      },
      checkDatabase);
}

TEST(DatabaseChecksTest, DetailsNameTheBackendAndVersionsButNoPassword) {
  const CheckResult r = checkDatabase(postgres(store::currentSchemaVersion()));
  EXPECT_EQ(r.details.at("backend"), "postgresql");
  EXPECT_EQ(r.details.at("schema_version"), store::currentSchemaVersion());
  EXPECT_EQ(r.details.at("current_schema_version"), store::currentSchemaVersion());
  EXPECT_EQ(r.details.at("db"), "postgresql://tp:***@db.example/tp");
}

TEST(DatabaseChecksTest, LeaseHolder) {
  const int current = store::currentSchemaVersion();
  const store::LeaseRow held{7, "replica-a:4242", 4242, kNow + 6'500};
  const store::LeaseRow expired{7, "replica-a:4242", 4242, kNow - 3'000};
  DatabaseFacts down = postgres(0);
  down.probe.reset();
  down.unavailable = Error{store::codes::kIo, "db", "connection refused"};
  testing::expectCheckRows<DatabaseFacts>(
      {
          {"held", postgres(current, held), CheckStatus::kOk,
           "held by replica-a:4242 (epoch 7), for 6.5 s more", ""},
          {"expired", postgres(current, expired), CheckStatus::kWarn,
           "(epoch 7, held by replica-a:4242) expired 3.0 s ago", "tuneplane serve"},
          {"never taken", postgres(current), CheckStatus::kWarn, "no replica has taken",
           "tuneplane serve"},
          {"no lease table yet", postgres(1), CheckStatus::kWarn, "no replica has taken", ""},
          {"database down", down, CheckStatus::kSkip, "could not be read", ""},
          {"database refused", refused(store::codes::kNewerVersion, current + 1),
           CheckStatus::kSkip, "could not be read", ""},
      },
      checkDatabaseLease);
  const CheckResult r = checkDatabaseLease(postgres(current, held));
  EXPECT_EQ(r.details.at("epoch"), 7);
  EXPECT_EQ(r.details.at("holder"), "replica-a:4242");
  EXPECT_EQ(r.details.at("holder_pid"), 4242);
  EXPECT_EQ(r.details.at("held"), true);
}

// The gathering layer against real databases.

TEST(DatabaseGatherTest, SqliteFileCurrentMissingAndNewerUnchanged) {
  tuneplane::testing::TempDir dir;
  const std::string path = dir.file("tuneplane.db");
  DatabaseFacts missing = gatherDatabaseFacts({path, std::nullopt, std::nullopt});
  EXPECT_FALSE(missing.exists);
  EXPECT_EQ(checkDatabase(missing).status, CheckStatus::kOk);
  std::ifstream absent(path);
  EXPECT_FALSE(absent.good()) << "doctor must not create the file";

  { ASSERT_TRUE(store::SqliteJobStore::open(path)); }
  DatabaseFacts current = gatherDatabaseFacts({path, std::nullopt, std::nullopt});
  ASSERT_TRUE(current.probe) << (current.unavailable ? current.unavailable->describe() : "");
  EXPECT_EQ(current.probe->version, store::currentSchemaVersion());
  EXPECT_FALSE(current.postgres);
  EXPECT_EQ(checkDatabase(current).status, CheckStatus::kOk);

  {
    auto raw = store::SqliteConnection::open(path, SQLITE_OPEN_READWRITE, 1000);
    ASSERT_TRUE(raw);
    ASSERT_TRUE((*raw)->exec("PRAGMA user_version = 99"));
  }
  DatabaseFacts newer = gatherDatabaseFacts({path, std::nullopt, std::nullopt});
  ASSERT_TRUE(newer.probe);
  EXPECT_EQ(newer.probe->version, 99);
  ASSERT_TRUE(newer.probe->refusal);
  EXPECT_EQ(newer.probe->refusal->code, store::codes::kNewerVersion);
  EXPECT_EQ(checkDatabase(newer).status, CheckStatus::kFail);

  // A password file is for PostgreSQL: the same refusal serve gives.
  DatabaseFacts with_password = gatherDatabaseFacts({path, dir.file("pw"), std::nullopt});
  ASSERT_TRUE(with_password.unavailable);
  EXPECT_EQ(with_password.unavailable->field, "server.db_password_file");
}

class DatabaseGatherPostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    database_.open();
    if (database_.ready()) uri_ = database_.uri();
  }
  test::PgTestDatabase database_;
  std::string uri_;
};

TEST_F(DatabaseGatherPostgresTest, AnEmptyDatabaseIsNotMigratedByLooking) {
  DatabaseFacts empty = gatherDatabaseFacts({uri_, std::nullopt, std::nullopt});
  ASSERT_TRUE(empty.probe) << (empty.unavailable ? empty.unavailable->describe() : "");
  EXPECT_TRUE(empty.postgres);
  EXPECT_EQ(empty.probe->version, 0);
  EXPECT_EQ(checkDatabaseLease(empty).status, CheckStatus::kWarn);
  // Looked at twice: still empty, so the first look created nothing.
  DatabaseFacts again = gatherDatabaseFacts({uri_, std::nullopt, std::nullopt});
  ASSERT_TRUE(again.probe);
  EXPECT_EQ(again.probe->version, 0);
}

TEST_F(DatabaseGatherPostgresTest, TheLeaseHolderIsReportedAndNotTaken) {
  auto store = store::PostgresJobStore::open(uri_, {.reader_connections = 1});
  ASSERT_TRUE(store) << store.error().describe();
  ASSERT_TRUE((*store)->enableLeadership({.lease_seconds = 30, .holder = "replica-a:1"}));
  ASSERT_TRUE((*store)->lease()->isLeader());
  const int64_t epoch = (*store)->lease()->epoch();

  DatabaseFacts facts = gatherDatabaseFacts({uri_, std::nullopt, std::nullopt});
  ASSERT_TRUE(facts.probe) << (facts.unavailable ? facts.unavailable->describe() : "");
  EXPECT_EQ(facts.probe->version, store::currentSchemaVersion());
  ASSERT_TRUE(facts.probe->lease);
  EXPECT_EQ(facts.probe->lease->epoch, epoch);
  EXPECT_EQ(facts.probe->lease->holder, "replica-a:1");
  EXPECT_GT(facts.probe->lease->expires_ms, facts.probe->now_ms);
  const CheckResult lease = checkDatabaseLease(facts);
  EXPECT_EQ(lease.status, CheckStatus::kOk) << lease.message;
  EXPECT_TRUE(contains(lease.message, "replica-a:1")) << lease.message;

  // Doctor took nothing: the replica still leads at the same epoch after a round.
  (*store)->lease()->step();
  EXPECT_TRUE((*store)->lease()->isLeader());
  EXPECT_EQ((*store)->lease()->epoch(), epoch);
}

TEST_F(DatabaseGatherPostgresTest, AnUnreachableServerFails) {
  DatabaseFacts facts =
      gatherDatabaseFacts({"postgresql:///nothing?host=/nonexistent-socket-dir&connect_timeout=2",
                           std::nullopt, std::nullopt});
  ASSERT_TRUE(facts.unavailable);
  EXPECT_EQ(checkDatabase(facts).status, CheckStatus::kFail);
  EXPECT_EQ(checkDatabaseLease(facts).status, CheckStatus::kSkip);
}

}  // namespace
}  // namespace tuneplane::doctor
