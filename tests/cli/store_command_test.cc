// `tuneplane store copy` through the built binary: a SQLite site copied into an empty
// PostgreSQL database, the password from --password-file or PGPASSFILE (never the command
// line), the target printed with any password masked, and the exit codes of its refusals.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "store/postgres_job_store.h"
#include "store/schema.h"
#include "store/sqlite_connection.h"
#include "store/sqlite_job_store.h"
#include "support/pg_test_database.h"

namespace tuneplane::cli {
namespace {

using testing::CliFixture;

constexpr const char* kPassword = test::kPasswordRolePassword;

class StoreCopyCommandTest : public CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    database_.open(test::kPasswordRole, kPassword);
    if (!database_.ready()) return;
    password_file_ = dir_ + "/db.pass";
    testing::writeFile(password_file_, std::string(kPassword) + "\n");
    ASSERT_EQ(::chmod(password_file_.c_str(), 0600), 0);
    source_ = dir_ + "/site.db";
    auto store = store::SqliteJobStore::open(source_);
    ASSERT_TRUE(store);
    for (const char* id : {"one-00000001", "two-00000002"}) {
      store::JobRecord job;
      job.id = id;
      job.name = std::string(id).substr(0, 3);
      job.owner = "alice";
      job.spec = "spec";
      job.created_ms = 1000;
      ASSERT_TRUE((*store)->createJob(job, {0, id, 0, 1000, "", "Pending", "created", "alice"}));
    }
  }
  std::string target() const { return database_.uri(test::kPasswordRole); }
  // The same database with the password written into the URI (what an operator should not
  // do, but may): it must never be printed.
  std::string targetWithPassword() const {
    const std::string uri = database_.uri();
    return "postgresql://" + std::string(test::kPasswordRole) + ":" + kPassword + "@" +
           uri.substr(std::string("postgresql://").size(), uri.find("&user=") - 13);
  }

  test::PgTestDatabase database_;
  std::string password_file_;
  std::string source_;
};

TEST_F(StoreCopyCommandTest, CopiesWithThePasswordFileAndRefusesASecondCopy) {
  auto first = run({"store", "copy", "--from", "sqlite:" + source_, "--to", target(),
                    "--password-file", password_file_});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("copied 2 jobs (0 attempts, 0 components, 2 events)"), std::string::npos)
      << first.out;
  EXPECT_EQ(first.out.find(kPassword), std::string::npos);

  auto store =
      store::PostgresJobStore::open(target(), {.reader_connections = 1, .password = kPassword});
  ASSERT_TRUE(store);
  auto job = (*store)->getJob("two-00000002");
  ASSERT_TRUE(job && job->has_value());
  EXPECT_EQ((*job)->job.owner, "alice");

  auto second = run(
      {"store", "copy", "--from", source_, "--to", target(), "--password-file", password_file_});
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.err.find("store.target_not_empty"), std::string::npos) << second.err;
}

TEST_F(StoreCopyCommandTest, APasswordInTheUriIsMaskedAndPgpassfileIsUsed) {
  const std::string pgpass = dir_ + "/pgpass";
  testing::writeFile(pgpass, std::string("*:*:*:*:") + kPassword + "\n");
  ASSERT_EQ(::chmod(pgpass.c_str(), 0600), 0);
  auto copied = run({"store", "copy", "--from", source_, "--to", target(), "-o", "json"},
                    {{"PGPASSFILE", pgpass}});
  ASSERT_EQ(copied.exit_code, 0) << copied.err;
  const auto out = nlohmann::json::parse(copied.out);
  EXPECT_EQ(out.at("jobs"), 2);
  EXPECT_EQ(out.at("events"), 2);

  // Refused (the target now holds jobs): the message names it, masked.
  auto refused = run({"store", "copy", "--from", source_, "--to", targetWithPassword()});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("***"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find(kPassword), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out.find(kPassword), std::string::npos);
}

TEST_F(StoreCopyCommandTest, ExitCodesOfBadFlagsAndUnreadableSources) {
  EXPECT_EQ(run({"store", "copy", "--from", source_}).exit_code, 2);
  EXPECT_EQ(run({"store", "copy", "--from", source_, "--to", dir_ + "/other.db"}).exit_code, 2);
  EXPECT_EQ(run({"store", "copy", "--from", source_, "--to", target(), "-o", "xml"}).exit_code, 2);
  auto missing = run({"store", "copy", "--from", dir_ + "/missing.db", "--to", target(),
                      "--password-file", password_file_});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  {
    auto raw = store::SqliteConnection::open(source_, SQLITE_OPEN_READWRITE, 1000);
    ASSERT_TRUE(raw);
    ASSERT_TRUE(
        (*raw)->exec("PRAGMA user_version = " + std::to_string(store::currentSchemaVersion() + 1)));
  }
  auto newer = run(
      {"store", "copy", "--from", source_, "--to", target(), "--password-file", password_file_});
  EXPECT_EQ(newer.exit_code, 2);
  EXPECT_NE(newer.err.find("store.newer_version"), std::string::npos) << newer.err;
}

}  // namespace
}  // namespace tuneplane::cli
