// `tuneplane serve` on PostgreSQL, end to end (e2e_fixture.h): the real serve, given
// `--db postgresql://…` without a password and server.db_password_file in the site, runs a
// job through the simulator to Succeeded; the password never reaches serve's logs; without
// the password file serve does not start. The server is the test binary's real PostgreSQL
// (support/pg_cluster.h), where the role used here must authenticate with its password.
#include <signal.h>

#include <libpq-fe.h>

#include "postgres_e2e_fixture.h"
#include "store/pg_connection.h"

namespace tuneplane::cli::testing {
namespace {

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

  const std::string serve_logs =
      test::readFile(site_->dir() + "/serve.out") + test::readFile(site_->dir() + "/serve.err");
  EXPECT_NE(serve_logs.find("(db postgresql://"), std::string::npos) << serve_logs;
  EXPECT_EQ(serve_logs.find(kPostgresPassword), std::string::npos);
}

// Two replicas on one database: the first leads, the second stands by and takes jobs; the
// leader SIGKILLed while the job runs, the standby takes over and follows the job to
// Succeeded; then the new leader SIGSTOPped past its lease is replaced by a restarted
// replica, and once resumed reports itself a standby.
TEST_F(ServeE2ePostgresTest, AStandbyTakesOverFromAKilledOrPausedLeader) {
  auto standby = test::ServeProcess::start(site_->site(), db(), site_->dir());
  ASSERT_NE(standby, nullptr);
  ASSERT_TRUE(test::waitUntil([&] { return leaderGauge(serve_->url()) == 1; }, kJobLimit));
  EXPECT_EQ(leaderGauge(standby->url()), 0);

  const test::CliRunner via_standby(standby->url(), kAliceToken, site_->dir());
  const std::string spec = site_->specFile("gated.yaml", cpuSpec(gatedScript("echo done")));
  const test::ProcessResult r = via_standby.run({"submit", "-f", spec, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = json::parse(r.out).value("id", "");
  const json running = via_standby.waitJob(
      id,
      [](const json& job) {
        return !job["attempts"].empty() && job["attempts"][0].value("phase", "") == "Running";
      },
      "ran", kJobLimit);
  ASSERT_EQ(running["attempts"][0].value("phase", ""), "Running") << running.dump(2);

  serve_->crash();  // SIGKILL: its session ends, the standby takes the lease
  serve_.reset();
  ASSERT_TRUE(test::waitUntil([&] { return leaderGauge(standby->url()) == 1; }, kJobLimit));
  openGate(running["attempts"][0]);
  const json done = via_standby.waitJob(
      id, [](const json& job) { return hasPhase(job, "Succeeded"); }, "succeeded", kJobLimit);
  ASSERT_TRUE(hasPhase(done, "Succeeded")) << done.dump(2);
  ASSERT_EQ(done["attempts"].size(), 1u);  // not submitted again by the new leader
  EXPECT_EQ(slurmJobsOf(done["attempts"][0]).size(), 1u);

  // Pause the new leader past its lease; a replica started beside it takes over.
  standby->process().signal(SIGSTOP);
  startServe();
  ASSERT_NE(serve_, nullptr);
  ASSERT_TRUE(test::waitUntil([&] { return leaderGauge(serve_->url()) == 1; }, kJobLimit));
  standby->process().signal(SIGCONT);
  EXPECT_TRUE(test::waitUntil([&] { return leaderGauge(standby->url()) == 0; }, kJobLimit));
  EXPECT_EQ(leaderGauge(serve_->url()), 1);
  EXPECT_EQ(standby->stop(), 0);
  const std::string logs = test::readFile(site_->dir() + "/serve.err");
  EXPECT_NE(logs.find("lease taken, epoch 1"), std::string::npos);
  EXPECT_NE(logs.find("lease taken, epoch 2"), std::string::npos);
  EXPECT_NE(logs.find("lease taken, epoch 3"), std::string::npos);
  EXPECT_NE(logs.find("lease lost, epoch 2"), std::string::npos);
}

TEST_F(ServeE2ePostgresTest, WithoutThePasswordServeDoesNotStartAndSaysWhy) {
  EXPECT_EQ(alice_->run({"get"}).exit_code, 0);  // the running serve has the password
  // The same site without db_password_file: PostgreSQL refuses the role.
  const std::string site = site_->dir() + "/nopass.yaml";
  std::string text = test::readFile(site_->site());
  text.erase(text.find("  db_password_file:"), serverExtra().size());
  test::writeFile(site, text);
  const test::ProcessResult r = test::runProcess(
      {test::tuneplaneBinary(), "serve", "--site", site, "--db", db(), "--listen", "127.0.0.1:0"},
      {.scratch = site_->dir(), .limit = test::kChildLimit});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot connect to PostgreSQL"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(kPostgresPassword), std::string::npos);
}

// Issue 37, defect 3: one PostgreSQL session stopped inside a write transaction (holding the
// writers' lock, as a SIGSTOPped replica's would) stalls no one for long. A submit answers 503
// store.busy within serve's lock_timeout instead of hanging; once the server ends that session
// (its idle_in_transaction_session_timeout, as TunePlane's own sessions set it), submits go
// through again.
TEST_F(ServeE2ePostgresTest, AWriterStuckInsideATransactionGets503NotAHang) {
  const std::string conninfo =
      db() + (db().find('?') == std::string::npos ? "?" : "&") + "password=" + kPostgresPassword;
  PGconn* stuck = PQconnectdb(conninfo.c_str());
  ASSERT_EQ(PQstatus(stuck), CONNECTION_OK) << PQerrorMessage(stuck);
  auto exec = [&](const std::string& sql) {
    PGresult* r = PQexec(stuck, sql.c_str());
    const bool done = PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return done;
  };
  ASSERT_TRUE(exec("SET idle_in_transaction_session_timeout = 8000"));
  ASSERT_TRUE(exec("BEGIN"));
  ASSERT_TRUE(exec("SELECT pg_advisory_xact_lock(" + std::to_string(store::kWriteLockKey) + ")"));

  const std::string spec = site_->specFile("busy.yaml", cpuSpec("echo hi"));
  const auto busy = alice_->run({"submit", "-f", spec, "-o", "json"});
  EXPECT_NE(busy.exit_code, 0) << busy.out;
  EXPECT_NE((busy.out + busy.err).find("store.busy"), std::string::npos) << busy.out << busy.err;

  // The server ends the stuck session; a submit then goes through, and the job runs.
  ASSERT_TRUE(test::waitUntil(
      [&] {
        const auto r = alice_->run({"submit", "-f", spec, "-o", "json"});
        return r.exit_code == 0;
      },
      kJobLimit));
  PQfinish(stuck);
}

}  // namespace
}  // namespace tuneplane::cli::testing
