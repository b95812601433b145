// See lying_reads.h.
#include "campaign/lying_reads.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "campaign/ledger.h"
#include "slurm/script_renderer.h"
#include "staging/staging_paths.h"
#include "support/test_files.h"
#include "support/wait.h"

namespace tuneplane::campaign {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A one-node CPU job of the site's runtime custom-demo running `bash -c COMMAND` (no double
// quotes in it); `extra` is appended under `spec:`.
std::string cpuJob(const std::string& name, const std::string& command, int cpus, int memory_gb,
                   const std::string& time_limit, const std::string& extra = "") {
  return "apiVersion: tuneplane.io/v1\nkind: TrainingJob\nmetadata:\n  name: " + name +
         "\nspec:\n  framework:\n    name: custom\n    task: custom\n    runtime_id: custom-demo\n"
         "    command: [\"bash\", \"-c\", \"" +
         command + "\"]\n  resources:\n    time_limit: " + time_limit +
         "\n    pools:\n      - name: main\n        nodes: 1\n        gpus_per_node: 0\n"
         "        cpus: " +
         std::to_string(cpus) + "\n        memory_gb: " + std::to_string(memory_gb) + "\n" + extra;
}

// Submits `spec` (written beside the direct site file) through the CLI; the job's id, "" when
// refused (reported).
std::string submit(const LyingReadsSetup& setup, const std::string& name, const std::string& spec) {
  const std::string file = (fs::path(setup.direct_site).parent_path() / (name + ".yaml")).string();
  test::writeFile(file, spec, fs::perms::owner_read | fs::perms::owner_write);
  const test::ProcessResult got = setup.cli.run({"submit", "-f", file, "-o", "json"});
  EXPECT_EQ(got.exit_code, 0) << got.out << got.err;
  const json job = json::parse(got.out, nullptr, false);
  return job.is_object() ? job.value("id", "") : "";
}

bool hasPhase(const json& job, const std::string& phase) {
  return job.is_object() && job.value("phase", "") == phase;
}

}  // namespace

test::ProxyUpstream upstreamOfUrl(const std::string& url) {
  std::string rest = url.substr(url.find("://") == std::string::npos ? 0 : url.find("://") + 3);
  rest = rest.substr(0, rest.find('/'));
  const size_t colon = rest.rfind(':');
  std::string host = rest.substr(0, colon);
  if (host == "localhost") host = "127.0.0.1";
  const int port = colon == std::string::npos ? 80 : std::atoi(rest.c_str() + colon + 1);
  return test::ProxyUpstream::tcp(port, host);
}

std::string siteWithUrl(const std::string& site_file, const std::string& url,
                        const std::string& name) {
  std::string text = test::readFile(site_file);
  const size_t at = text.find("  url: ");
  if (at != std::string::npos) {
    const size_t end = text.find('\n', at);
    text.replace(at, end - at, "  url: " + url);
  }
  const std::string path = (fs::path(site_file).parent_path() / name).string();
  test::writeFile(path, text,
                  fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                      fs::perms::others_read);
  return path;
}

void lieWhileARetryableJobWaits(const LyingReadsSetup& setup, LyingReadsJobs& jobs) {
  // The node held: all its CPUs, until the test lets go (`go` in the job's output folder).
  jobs.blocker =
      submit(setup, "holds-the-node",
             cpuJob("holds-the-node",
                    "for i in $(seq 1500); do [ -e $TUNEPLANE_OUTPUT_DIR/go ] && break; sleep 0.2; "
                    "done; echo let go",
                    setup.node_cpus, setup.node_memory_gb, setup.time_limit));
  ASSERT_FALSE(jobs.blocker.empty());
  const json blocker = setup.cli.waitJob(
      jobs.blocker, [](const json& job) { return hasPhase(job, "Running"); }, "ran", setup.limit);
  ASSERT_TRUE(hasPhase(blocker, "Running")) << blocker.dump(2);

  // The job that waits: retryable, its command recording each run in the job's ledger.
  jobs.target = submit(setup, "waits-behind",
                       cpuJob("waits-behind", ledgerPrologue() + "; echo ran", 1, 1,
                              setup.time_limit, "  retry:\n    max_attempts: 2\n"));
  ASSERT_FALSE(jobs.target.empty());
  const json queued = setup.cli.waitJob(
      jobs.target,
      [](const json& job) {
        return hasPhase(job, "Queued") && job["attempts"].size() == 1 &&
               job["attempts"][0]["components"][0]["sluid"].is_string();
      },
      "waited in Slurm's queue", setup.limit);
  ASSERT_TRUE(hasPhase(queued, "Queued")) << queued.dump(2);
  const json attempt = queued["attempts"][0];
  const std::string token = attempt.value("submit_token", "");

  // Slurm's reads lie for the window; TunePlane must conclude nothing from them.
  // Asked once a second through the window of real time the real serve is lied to in.
  setup.proxy.lie(test::slurmReadLies(setup.api), setup.lie_for);
  json during;
  const bool held = test::holdsThroughout(
      [&] {
        during = setup.cli.job(jobs.target);
        if (!during.is_object()) return true;  // no answer: nothing concluded
        return during["attempts"].size() == 1 && !during.value("terminal", false);
      },
      setup.lie_for, 1s);
  setup.proxy.stopLying();
  EXPECT_TRUE(held) << "while Slurm's reads lied, TunePlane concluded something:\n"
                    << during.dump(2);
  const test::FaultProxy::Counters told = setup.proxy.counters();
  EXPECT_GT(told.lies, 0) << "no read was lied to: the proxy is not in serve's path";
  // slurmReadLies' order: the state poll, the listing, one job.
  const std::vector<int>& by = told.lies_by_rule;
  const std::string lies = std::to_string(by.size() > 0 ? by[0] : 0) + " empty state polls, " +
                           std::to_string(by.size() > 1 ? by[1] : 0) + " listings answered 502, " +
                           std::to_string(by.size() > 2 ? by[2] : 0) + " bare 404s";
  std::cout << "  while the reads lied: " << lies << std::endl;
  ::testing::Test::RecordProperty("lies_told", lies);

  // The reads heal; the node is let go; the job that waited runs, once.
  const json holder = setup.cli.job(jobs.blocker);
  ASSERT_TRUE(holder.is_object());
  test::writeFile(holder["attempts"][0].value("staging_dir", "") + "/output/go", "");
  const json done = setup.cli.waitJob(
      jobs.target, [](const json& job) { return job.value("terminal", false); }, "ended",
      setup.limit);
  EXPECT_TRUE(hasPhase(done, "Succeeded")) << done.dump(2);
  ASSERT_EQ(done["attempts"].size(), 1u) << "a second attempt was started:\n" << done.dump(2);
  EXPECT_EQ(done["attempts"][0].value("submit_token", ""), token);

  // Slurm's own word, asked directly: exactly one Slurm job carries the token, and it ran.
  const std::vector<slurm::JobRecord> slurm = test::slurmJobsWithComment(setup.direct_site, token);
  ASSERT_EQ(slurm.size(), 1u) << "Slurm jobs carrying " << token;
  ASSERT_FALSE(slurm[0].job_state.empty());
  EXPECT_EQ(slurm[0].job_state.front(), "COMPLETED");
  const uint64_t slurm_id = slurm[0].job_id;

  // The job's own records: its claim names that Slurm job, its sentinels say it started and
  // ended by itself, and its ledger holds one run, of attempt 1, in that Slurm job.
  const fs::path dir = done["attempts"][0].value("staging_dir", "");
  const fs::path logs = dir / staging::kLogsDir;
  EXPECT_EQ(test::readFile(logs / slurm::kClaimFile), std::to_string(slurm_id) + "\n");
  EXPECT_TRUE(fs::exists(logs / "start-main.json"));
  const json exit = json::parse(test::readFile(logs / "exit-main.json"), nullptr, false);
  EXPECT_TRUE(exit.is_object() && exit.value("exit_code", -1) == 0) << exit.dump();
  const std::string ledger =
      test::readFile(dir.parent_path().parent_path() / staging::kCheckpointsDir / kLedgerFile);
  const LedgerVerdict runs = checkLedger(ledger, [](const LedgerRun&) { return std::nullopt; });
  EXPECT_TRUE(runs.violations.empty()) << ::testing::PrintToString(runs.violations);
  ASSERT_EQ(runs.runs.size(), 1u) << ledger;
  EXPECT_EQ(runs.runs[0].attempt, 1);
  EXPECT_EQ(runs.runs[0].slurm_job_id, slurm_id);
  EXPECT_TRUE(runs.runs[0].end_us.has_value()) << ledger;

  const json released = setup.cli.waitJob(
      jobs.blocker, [](const json& job) { return job.value("terminal", false); }, "ended",
      setup.limit);
  EXPECT_TRUE(hasPhase(released, "Succeeded")) << released.dump(2);
}

}  // namespace tuneplane::campaign
