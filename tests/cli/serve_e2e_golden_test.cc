// Golden output of `tuneplane get` and `describe` with -o json and -o yaml, from a real run
// (e2e_fixture.h): what scripts parse is the server's objects, so the files pin the /v1 job
// and event shapes as the CLI prints them. The job's path is made deterministic: scheduling
// is paused until it is Queued, it runs until the test lets it end, and the simulator's
// epilog is long against the poll interval, so Queued, Running and Releasing are each seen.
// Volatile values are replaced by normalizeVolatile() below. Regenerate the files with
// TUNEPLANE_UPDATE_GOLDEN=1 build/tests/cli_test --gtest_filter='ServeE2eGolden*' and review
// the diff.
#include <cstdlib>
#include <regex>

#include "e2e_fixture.h"
#include "support/fixtures.h"
#include "support/golden.h"
#include "support/test_paths.h"

namespace tuneplane::cli::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = test::sourceDir() / "tests/cli/golden";

// Makes a run's output comparable across runs, in JSON or YAML text alike:
//   - every RFC 3339 time ("2026-12-03T05:07:38.123Z")        → <time>
//   - the job's id (it ends in random hex)                    → <job-id>
//   - attempt N's submit token                                → <submit-token-N>
//   - attempt N's component SLUIDs                            → <sluid-N>
//   - the site's staging root (a temporary directory)         → <staging-root>
//   - numeric Slurm job ids: `job_id` values, "Slurm job N"   → <slurm-job-id>
// Everything else (phases, reasons, events, the spec, owners, nodes, exit codes) is kept:
// that is what the golden files pin. `job` is the job's JSON (get ID -o json).
std::string normalizeVolatile(std::string text, const json& job, const std::string& staging_root) {
  auto replaceAll = [&text](const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
      text.replace(at, from.size(), to);
      at += to.size();
    }
  };
  replaceAll(staging_root, "<staging-root>");
  replaceAll(job.value("id", ""), "<job-id>");
  for (const auto& attempt : job["attempts"]) {
    const std::string n = std::to_string(attempt.value("number", 0));
    replaceAll(attempt.value("submit_token", ""), "<submit-token-" + n + ">");
    for (const auto& component : attempt["components"]) {
      if (component["sluid"].is_string()) replaceAll(component["sluid"], "<sluid-" + n + ">");
    }
  }
  text = std::regex_replace(text, std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)"),
                            "<time>");
  text = std::regex_replace(text, std::regex(R"((\"?job_id\"?: )\d+)"), "$1<slurm-job-id>");
  return std::regex_replace(text, std::regex(R"(Slurm job \d+)"), "Slurm job <slurm-job-id>");
}

void expectGolden(const std::string& name, const std::string& actual) {
  test::expectGolden(kGoldenDir / name, actual, "the CLI's output");
}

class ServeE2eGoldenTest : public ServeE2eTest {
 protected:
  // An epilog long against serve's 200 ms poll: Releasing is always seen.
  std::vector<std::string> simArgs() const override {
    return {"--epilog-ms", "2500", "--kill-wait-ms", "500"};
  }
};

TEST_F(ServeE2eGoldenTest, GetAndDescribeMatchTheirGoldenFiles) {
  std::string spec = cpuSpec(gatedScript("echo golden"), "", "golden");
  spec.insert(spec.find("spec:\n"), "  labels:\n    team: e2e\n");
  ASSERT_EQ(sim_->setFaults({{"pause_scheduling", true}}), 200);
  const std::string id = submit(spec);
  ASSERT_FALSE(id.empty());
  waitPhase(id, "Queued");
  ASSERT_EQ(sim_->setFaults({{"pause_scheduling", false}}), 200);
  const json running = waitAttemptRunning(id, 1);
  openGate(running["attempts"][0]);
  const json job = waitPhase(id, "Succeeded");
  ASSERT_TRUE(hasPhase(job, "Succeeded"));

  struct Case {
    std::string golden;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"get_job.json", {"get", id, "-o", "json"}},
      {"get_job.yaml", {"get", "job", id, "-o", "yaml"}},
      {"get_list.json", {"get", "-o", "json"}},
      {"describe.json", {"describe", id, "-o", "json"}},
      {"describe.yaml", {"describe", id, "-o", "yaml"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.golden);
    const auto r = alice_->run(c.args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expectGolden(c.golden, normalizeVolatile(r.out, job, site_->stagingRoot()));
  }
}

}  // namespace
}  // namespace tuneplane::cli::testing
