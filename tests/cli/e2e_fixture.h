// The CLI end to end, as a user runs it: `tuneplane-slurmsim` and `tuneplane serve` started
// as processes of their own on loopback (as scripts/demo.sh starts them), the `tuneplane`
// binary run once per command against serve, and faults set through the simulator's admin
// route. Each test gets a fresh simulator, site, SQLite file and server. Jobs run for real
// in the simulator, so every wait is a bounded poll (support/serve_harness.h); these tests
// are LONG in tests/CMakeLists.txt.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../pipeline/site_fixture.h"
#include "staging/stager.h"
#include "support/serve_harness.h"

namespace tuneplane::cli::testing {

using nlohmann::json;
using namespace std::chrono_literals;
using pipeline::testing::cpuSpec;
using pipeline::testing::retryBlock;

inline constexpr const char* kAliceToken = "e2e-alice-token-3f9a1c";
inline constexpr const char* kBobToken = "e2e-bob-token-77d2e0";
inline constexpr const char* kOpsToken = "e2e-ops-token-c41b08";  // an admin
// A bound on one job's run in the simulator on a loaded machine (not a timing assertion).
inline constexpr std::chrono::milliseconds kJobLimit = 120s;

// A command that runs until the test creates `go` in the attempt's output folder: the test
// decides when the job ends, whatever the machine's speed.
inline std::string gatedScript(const std::string& then = "echo finished") {
  return "while [ ! -e \"$TUNEPLANE_OUTPUT_DIR/go\" ]; do sleep 0.1; done; " + then;
}

inline bool hasPhase(const json& job, const std::string& phase) {
  return job.value("phase", "") == phase;
}

class ServeE2eTest : public ::testing::Test {
 protected:
  // The simulator's flags; a test may want a longer epilog.
  virtual std::vector<std::string> simArgs() const {
    return {"--epilog-ms", "300", "--kill-wait-ms", "500"};
  }

  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tp-e2e-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    scratch_ = tmpl;
    const std::string key = scratch_ + "/jwt.key";  // the site's key (site_fixture.h)
    pipeline::testing::writeFile(key, pipeline::testing::kJwtKey);
    sim_ = test::SlurmSimProcess::start(scratch_, key, simArgs());
    ASSERT_NE(sim_, nullptr);
    const std::string server =
        "server:\n  poll_interval: 200ms\n  tokens:\n" + tokenLine("alice", kAliceToken, false) +
        tokenLine("bob", kBobToken, false) + tokenLine("ops", kOpsToken, true) + serverExtra();
    site_ = std::make_unique<pipeline::testing::SiteDir>(sim_->url(), false, "", server);
    startServe();
    ASSERT_NE(serve_, nullptr);
  }

  void TearDown() override {
    if (serve_) {
      // Whatever the test did, serve still stops cleanly on SIGTERM.
      EXPECT_EQ(serve_->stop(), 0) << serve_->process().err();
      serve_.reset();
    }
    if (site_) {
      // No API token reached serve's logs (the access log on stdout, the rest on stderr),
      // across every start of the test.
      const std::string logs = pipeline::testing::readFile(site_->dir() + "/serve.out") +
                               pipeline::testing::readFile(site_->dir() + "/serve.err");
      EXPECT_NE(logs.find("/v1/"), std::string::npos) << "no access log read";
      // Every answer serve gave (the CLI's, the harness's) has a status docs/openapi.json
      // documents for its operation; the bodies the CLI prints are checked in CliRunner::run.
      EXPECT_EQ(test::checkAccessLog(pipeline::testing::readFile(site_->dir() + "/serve.out")), "");
      for (const char* token : {kAliceToken, kBobToken, kOpsToken, "not-a-token"}) {
        EXPECT_EQ(logs.find(token), std::string::npos) << token;
      }
    }
    sim_.reset();  // its jobs end before their attempt dirs go
    site_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(scratch_, ignored);
  }

  static std::string tokenLine(const std::string& user, const std::string& token, bool admin) {
    return "    - user: " + user + "\n      token_sha256: " + staging::sha256Hex(token) +
           "\n      admin: " + (admin ? "true" : "false") + "\n";
  }

  // Starts serve on `port` (0: any free one) with the test's site and database.
  void startServe(int port = 0) {
    serve_ = test::ServeProcess::start(site_->site(), db(), site_->dir(), port);
    if (!serve_) return;
    alice_ = std::make_unique<test::CliRunner>(serve_->url(), kAliceToken, site_->dir());
  }
  // The database serve is given (--db), and more lines for the site's server: section.
  virtual std::string db() const { return site_->dir() + "/tuneplane.db"; }
  virtual std::string serverExtra() const { return ""; }

  test::CliRunner as(const std::string& token) const {
    return test::CliRunner(serve_->url(), token, site_->dir());
  }

  // `tuneplane submit -f SPEC -o json` as alice; the new job's id ("" reported).
  std::string submit(const std::string& spec) {
    const std::string path = site_->specFile("job-" + std::to_string(++specs_) + ".yaml", spec);
    const test::ProcessResult r = alice_->run({"submit", "-f", path, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json job = json::parse(r.out, nullptr, false);
    return job.is_object() ? job.value("id", "") : "";
  }

  // Polls `get -o json` until alice has `count` jobs (a `submit --wait` running beside the
  // test has posted its job); the newest one's id ("" reported).
  std::string waitForJobs(size_t count) {
    json listed;
    const bool seen = test::waitUntil(
        [&] {
          listed = json::parse(alice_->run({"get", "-o", "json"}).out, nullptr, false);
          return listed.is_object() && listed["items"].size() == count;
        },
        kJobLimit);
    if (!seen) ADD_FAILURE() << "never " << count << " jobs; last listing:\n" << listed.dump(2);
    return seen ? listed["items"][0].value("id", "") : "";
  }

  json waitPhase(const std::string& id, const std::string& phase) {
    return alice_->waitJob(
        id, [&](const json& job) { return hasPhase(job, phase); }, "reached " + phase, kJobLimit);
  }

  // Waits until attempt `n` runs in Slurm; the job then.
  json waitAttemptRunning(const std::string& id, int n) {
    return alice_->waitJob(
        id,
        [&](const json& job) {
          const json& attempts = job["attempts"];
          if (!attempts.is_array() || static_cast<int>(attempts.size()) < n) return false;
          const json& attempt = attempts[n - 1];
          return attempt.value("phase", "") == "Running" && attempt["components"].size() == 1 &&
                 attempt["components"][0]["sluid"].is_string();
        },
        "ran attempt " + std::to_string(n), kJobLimit);
  }

  // Lets a gatedScript() job's attempt end.
  static void openGate(const json& attempt) {
    pipeline::testing::writeFile(attempt.value("staging_dir", "") + "/output/go", "");
  }

  std::vector<slurm::JobRecord> slurmJobsOf(const json& attempt) const {
    return test::slurmJobsWithComment(site_->site(), attempt.value("submit_token", ""));
  }

  std::string scratch_;
  std::unique_ptr<test::SlurmSimProcess> sim_;
  std::unique_ptr<pipeline::testing::SiteDir> site_;
  std::unique_ptr<test::ServeProcess> serve_;
  std::unique_ptr<test::CliRunner> alice_;
  int specs_ = 0;
};

}  // namespace tuneplane::cli::testing
