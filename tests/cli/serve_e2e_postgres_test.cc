// `tuneplane serve` on PostgreSQL, end to end (e2e_fixture.h): the real serve, given
// `--db postgresql://…` without a password and server.db_password_file in the site, runs a
// job through the simulator to Succeeded; the password never reaches serve's logs; without
// the password file serve does not start. The server is the test binary's real PostgreSQL
// (support/pg_cluster.h), where the role used here must authenticate with its password.
#include <sys/stat.h>

#include "../catalog/temp_dir.h"
#include "e2e_fixture.h"
#include "support/pg_cluster.h"

namespace tuneplane::cli::testing {
namespace {

constexpr const char* kPassword = "pg-secret-6d1f0e9a";

class ServeE2ePostgresTest : public ServeE2eTest {
 protected:
  void SetUp() override {
    std::string why;
    cluster_ = test::sharedPostgres(why);
    if (cluster_ == nullptr) {
      if (test::postgresRequired()) FAIL() << "PostgreSQL required: " << why;
      GTEST_SKIP() << "*** SKIPPED: no PostgreSQL: " << why;
    }
    std::string error;
    database_ = cluster_->createDatabase(error, test::kPasswordRole, kPassword);
    ASSERT_FALSE(database_.empty()) << error;
    password_file_ = secrets_.write("db.pass", std::string(kPassword) + "\n");
    ASSERT_EQ(::chmod(password_file_.c_str(), 0600), 0);
    ServeE2eTest::SetUp();
  }
  void TearDown() override {
    if (cluster_ == nullptr) return;
    ServeE2eTest::TearDown();
    if (!database_.empty()) cluster_->dropDatabase(database_);
  }
  std::string db() const override { return cluster_->uri(database_, test::kPasswordRole); }
  std::string serverExtra() const override {
    return "  db_password_file: " + password_file_ + "\n";
  }

  test::PgCluster* cluster_ = nullptr;
  std::string database_;
  tuneplane::testing::TempDir secrets_;
  std::string password_file_;
};

TEST_F(ServeE2ePostgresTest, RunsAJobToSucceededAndNeverLogsThePassword) {
  const std::string spec = site_->specFile("hello.yaml", cpuSpec("echo hello from postgres"));
  const auto submitted =
      alice_->run({"submit", "-f", spec, "--wait", "--timeout", "2m", "--poll-interval", "200ms"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find(':'));
  EXPECT_EQ(submitted.out, id + ": Succeeded (attempt 1: the job completed)\n");
  const auto logs = alice_->run({"logs", id});
  EXPECT_EQ(logs.out, "hello from postgres\n");

  // The job is in PostgreSQL: serve stopped, a new one on the same database still has it.
  ASSERT_EQ(serve_->stop(), 0);
  startServe();
  ASSERT_NE(serve_, nullptr);
  EXPECT_TRUE(hasPhase(alice_->job(id), "Succeeded"));

  const std::string serve_logs = control::testing::readFile(site_->dir() + "/serve.out") +
                                 control::testing::readFile(site_->dir() + "/serve.err");
  EXPECT_NE(serve_logs.find("(db postgresql://"), std::string::npos) << serve_logs;
  EXPECT_EQ(serve_logs.find(kPassword), std::string::npos);
}

TEST_F(ServeE2ePostgresTest, WithoutThePasswordServeDoesNotStartAndSaysWhy) {
  EXPECT_EQ(alice_->run({"get"}).exit_code, 0);  // the running serve has the password
  // The same site without db_password_file: PostgreSQL refuses the role.
  const std::string site = site_->dir() + "/nopass.yaml";
  std::string text = control::testing::readFile(site_->site());
  text.erase(text.find("  db_password_file:"), serverExtra().size());
  control::testing::writeFile(site, text);
  const test::ProcessResult r = test::runProcess(
      {test::tuneplaneBinary(), "serve", "--site", site, "--db", db(), "--listen", "127.0.0.1:0"},
      {.scratch = site_->dir(), .limit = test::kChildLimit});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot connect to PostgreSQL"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(kPassword), std::string::npos);
}

}  // namespace
}  // namespace tuneplane::cli::testing
