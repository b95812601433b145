// `tuneplane slurm ping|submit|get|cancel|jobs` through the built binary, against the
// in-process slurmrestd simulator: exit codes (commands.h), JSON output, a job followed by
// its SLUID to COMPLETED, cancel, a lost submit receipt, auth and transport failures.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli_fixture.h"
#include "sim/simulator.h"
#include "support/wait.h"

namespace tuneplane::cli {
namespace {

using nlohmann::json;
using testing::CliFixture;
using testing::readFile;
using testing::RunResult;
using testing::sha256Of;
using testing::writeFile;

constexpr const char* kKey = "0123456789abcdef0123456789abcdef-cli-slurm-key";
constexpr const char* kOtherKey = "fedcba9876543210fedcba9876543210-not-the-key";

// A YAML single-quoted scalar.
std::string yamlQuoted(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("''") : std::string(1, ch);
  return out + "'";
}

// A CPU-only custom job running `command` (a JSON array) in the custom-sim runtime.
std::string simSpec(const std::string& command, const std::string& extra = "") {
  return "apiVersion: tuneplane.io/v1\n"
         "kind: TrainingJob\n"
         "metadata:\n"
         "  name: slurm-cli\n"
         "spec:\n"
         "  framework:\n"
         "    name: custom\n"
         "    task: custom\n"
         "    runtime_id: custom-sim\n"
         "    command: " +
         command +
         "\n"
         "  resources:\n"
         "    time_limit: 10m\n"
         "    pools:\n"
         "      - name: main\n"
         "        nodes: 1\n"
         "        gpus_per_node: 0\n"
         "        cpus: 1\n"
         "        memory_gb: 1\n" +
         extra;
}

class SlurmCommandTest : public CliFixture {
 protected:
  void SetUp() override {
    CliFixture::SetUp();
    if (HasFatalFailure()) return;
    key_file_ = dir_ + "/jwt.key";
    writeFile(key_file_, kKey);
    std::filesystem::create_directories(dir_ + "/sim");
    sim::SimulatorOptions options;
    options.listen = "127.0.0.1:0";
    options.jwt_key_file = key_file_;
    options.state_dir = dir_ + "/sim";
    options.epilog = std::chrono::milliseconds(200);
    options.kill_wait = std::chrono::milliseconds(500);
    auto started = sim::Simulator::start(options);
    ASSERT_TRUE(started.has_value()) << started.error().describe();
    sim_ = std::move(*started);

    // A stand-in SIF image: the simulator's `apptainer exec` runs the command locally.
    sif_ = dir_ + "/artifacts/custom-sim.sif";
    writeFile(sif_, "TunePlane CLI test runtime (a stand-in for a SIF image)\n");
    writeFile(dir_ + "/sim-runtimes.yaml",
              "runtimes:\n"
              "  - id: custom-sim\n"
              "    format: sif\n"
              "    path: " +
                  sif_ + "\n    sha256: " + sha256Of(readFile(sif_)) +
                  "\n    frameworks: [custom]\n");
    sim_site_ = writeSite("sim-site.yaml", sim_->baseUrl(), "jwt.key");
  }

  void TearDown() override {
    sim_.reset();  // kills running jobs before the temp dir goes
    CliFixture::TearDown();
  }

  // A site file pointing at `url`, minting tokens from `key_file` (relative to the site).
  std::string writeSite(const std::string& name, const std::string& url,
                        const std::string& key_file,
                        const std::string& user = testing::currentUser()) const {
    const char* path_env = std::getenv("PATH");
    const std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
    writeFile(dir_ + "/" + name,
              "slurm:\n"
              "  url: " +
                  url +
                  "\n"
                  "  api_version: v0.0.45\n"
                  "  user: " +
                  user +
                  "\n"
                  "  jwt_key_file: " +
                  key_file +
                  "\n"
                  "  token_lifespan: 10m\n"
                  "  job_environment:\n"
                  "    PATH: " +
                  yamlQuoted(path) +
                  "\n"
                  "partitions:\n"
                  "  gpu: gpu\n"
                  "  cpu: cpu\n"
                  "gpu_series:\n"
                  "  - name: h100\n"
                  "    slurm_constraint: h100\n"
                  "    gpus_per_node: 2\n"
                  "    gres_type: h100\n"
                  "container_runtime: apptainer\n"
                  "staging_root: " +
                  dir_ +
                  "/staging\n"
                  "runtime_registry_file: sim-runtimes.yaml\n");
    return dir_ + "/" + name;
  }

  RunResult slurm(std::vector<std::string> args, const std::string& site = "") {
    args.insert(args.begin(), "slurm");
    args.push_back("--site");
    args.push_back(site.empty() ? sim_site_ : site);
    return run(args);
  }

  // `slurm <args> --output json`, parsed; a failed test and null on a bad exit or body.
  json slurmJson(std::vector<std::string> args) {
    args.push_back("--output");
    args.push_back("json");
    auto r = slurm(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    auto doc = json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out;
    return r.exit_code == 0 && !doc.is_discarded() ? doc : json();
  }

  json jobState(const std::string& sluid) {
    const json doc = slurmJson({"get", sluid});
    if (!doc.is_object() || !doc["jobs"].is_array() || doc["jobs"].empty()) return json();
    return doc["jobs"][0]["job_state"];
  }

  // Polls `slurm get` until the job's state is `wanted` (a bound of ~30 s, not a timing
  // assertion); returns the last state seen.
  json waitState(const std::string& sluid, const json& wanted) {
    json state;
    tuneplane::test::waitUntil(
        [&] {
          state = jobState(sluid);
          return state == wanted;
        },
        std::chrono::seconds(30), std::chrono::milliseconds(100));
    return state;
  }

  // Submits and checks the receipt's shape; returns it (null on failure).
  json submitOk(const std::string& spec_text) {
    auto r = slurm({"submit", "-f", spec("job.yaml", spec_text), "--output", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    auto doc = json::parse(r.out, nullptr, false);
    EXPECT_TRUE(doc.is_object()) << r.out;
    if (r.exit_code != 0 || !doc.is_object()) return json();
    EXPECT_GT(doc.value("job_id", 0), 0) << r.out;
    const std::string sluid = doc.value("sluid", "");
    EXPECT_TRUE(std::regex_match(sluid, std::regex("s[0-9A-Z]{13}"))) << sluid;
    EXPECT_TRUE(std::regex_match(doc.value("submit_token", ""), std::regex("tp-[0-9a-f]{32}")))
        << r.out;
    return doc;
  }

  size_t attemptDirsUnder(const std::string& root) const {
    size_t count = 0;
    if (!std::filesystem::exists(root)) return 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_directory() && entry.path().parent_path().filename() == "attempts") ++count;
    }
    return count;
  }

  std::string key_file_;
  std::string sif_;
  std::string sim_site_;
  std::unique_ptr<sim::Simulator> sim_;
};

TEST_F(SlurmCommandTest, PingPrintsTheClusterAsTextAndJson) {
  auto text = slurm({"ping"});
  ASSERT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("cluster tp "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("UP"), std::string::npos) << text.out;

  const json doc = slurmJson({"ping"});
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["cluster"], "tp");
  ASSERT_TRUE(doc["controllers"].is_array());
  ASSERT_FALSE(doc["controllers"].empty()) << doc.dump();
  EXPECT_EQ(doc["controllers"][0]["responding"], true) << doc.dump();
  EXPECT_FALSE(doc.value("release", "").empty()) << doc.dump();
}

TEST_F(SlurmCommandTest, SubmitStagesTheAttemptAndTheJobRunsToCompleted) {
  const json receipt = submitOk(simSpec(R"(["sh", "-c", "echo hi-from-the-job"])"));
  ASSERT_TRUE(receipt.is_object());
  const std::string sluid = receipt["sluid"];
  const std::string attempt_dir = receipt["attempt_dir"];
  EXPECT_TRUE(attempt_dir.starts_with(dir_ + "/staging/jobs/slurm-cli-")) << attempt_dir;
  EXPECT_TRUE(std::filesystem::is_directory(attempt_dir)) << attempt_dir;
  EXPECT_TRUE(std::filesystem::is_regular_file(attempt_dir + "/job.sh"));
  EXPECT_TRUE(std::filesystem::is_regular_file(attempt_dir + "/submit.json"));
  EXPECT_EQ(sim_->jobCount(), 1u);

  // Found by its SLUID; the comment carries the submit token.
  const json got = slurmJson({"get", sluid});
  ASSERT_TRUE(got.is_object());
  ASSERT_EQ(got["jobs"].size(), 1u) << got.dump();
  EXPECT_EQ(got["jobs"][0]["sluid"], sluid);
  EXPECT_EQ(got["jobs"][0]["job_id"], receipt["job_id"]);
  EXPECT_EQ(got["jobs"][0]["partition"], "cpu");
  EXPECT_NE(
      got["jobs"][0]["comment"].get<std::string>().find(receipt["submit_token"].get<std::string>()),
      std::string::npos)
      << got.dump();

  EXPECT_EQ(waitState(sluid, json::array({"COMPLETED"})), json::array({"COMPLETED"}));
  const json done = slurmJson({"get", sluid});
  ASSERT_TRUE(done.is_object());
  EXPECT_EQ(done["jobs"][0]["exit_code"], 0) << done.dump();
  EXPECT_NE(readFile(attempt_dir + "/logs/main.out").find("hi-from-the-job"), std::string::npos);

  // Text mode names the SLUID and the state on one line.
  auto text = slurm({"get", sluid});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(sluid + " "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("COMPLETED"), std::string::npos) << text.out;

  // `slurm jobs` lists it by numeric id.
  const json jobs = slurmJson({"jobs"});
  ASSERT_TRUE(jobs.is_object());
  ASSERT_EQ(jobs["jobs"].size(), 1u) << jobs.dump();
  // /jobs/state gives ids verbatim, as strings.
  EXPECT_EQ(jobs["jobs"][0]["job_id"], std::to_string(receipt["job_id"].get<int64_t>()));
  EXPECT_EQ(jobs["jobs"][0]["state"], json::array({"COMPLETED"}));
}

TEST_F(SlurmCommandTest, CancelEndsARunningJobAndASecondCancelIsRefused) {
  const json receipt = submitOk(simSpec(R"(["sleep", "30"])"));
  ASSERT_TRUE(receipt.is_object());
  const std::string sluid = receipt["sluid"];
  EXPECT_EQ(waitState(sluid, json::array({"RUNNING"})), json::array({"RUNNING"}));

  auto cancel = slurm({"cancel", sluid});
  ASSERT_EQ(cancel.exit_code, kExitOk) << cancel.out << cancel.err;
  EXPECT_NE(cancel.out.find("cancel requested for " + sluid), std::string::npos) << cancel.out;
  EXPECT_EQ(waitState(sluid, json::array({"CANCELLED"})), json::array({"CANCELLED"}));

  // Already completed: Slurm refuses (2021) and the CLI says so with exit 2.
  auto again = slurm({"cancel", sluid});
  EXPECT_EQ(again.exit_code, kExitInvalid) << again.out << again.err;
  EXPECT_NE(again.err.find("slurm.already_completing"), std::string::npos) << again.err;
  auto again_json = slurm({"cancel", sluid, "--output", "json"});
  EXPECT_EQ(again_json.exit_code, kExitInvalid);
  const json doc = json::parse(again_json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << again_json.out;
  EXPECT_EQ(doc["code"], "slurm.already_completing") << again_json.out;
  EXPECT_EQ(doc["transport"], "rejected");
  EXPECT_EQ(doc["slurm_error_number"], 2021);
}

TEST_F(SlurmCommandTest, LostReceiptExitsFourAndSaysNotToSubmitAgain) {
  sim_->dropNextSubmitResponses(1);
  auto r = slurm({"submit", "-f", spec("job.yaml", simSpec(R"(["true"])"))});
  EXPECT_EQ(r.exit_code, kExitUnknownOutcome) << r.out << r.err;
  EXPECT_NE(r.err.find("do not submit again"), std::string::npos) << r.err;
  std::smatch token;
  ASSERT_TRUE(std::regex_search(r.err, token, std::regex("tp-[0-9a-f]{32}"))) << r.err;
  EXPECT_NE(r.err.find("transport unknown"), std::string::npos) << r.err;
  EXPECT_EQ(attemptDirsUnder(dir_ + "/staging"), 1u);

  // The job exists exactly once, and carries the token the message named.
  EXPECT_EQ(sim_->jobCount(), 1u);
  const json jobs = slurmJson({"jobs"});
  ASSERT_TRUE(jobs.is_object());
  ASSERT_EQ(jobs["jobs"].size(), 1u) << jobs.dump();
  const json got = slurmJson({"get", jobs["jobs"][0]["job_id"].get<std::string>()});
  ASSERT_TRUE(got.is_object());
  ASSERT_EQ(got["jobs"].size(), 1u) << got.dump();
  EXPECT_NE(got["jobs"][0]["comment"].get<std::string>().find(token.str()), std::string::npos)
      << got.dump();
}

TEST_F(SlurmCommandTest, WrongJwtKeyExitsThreeAndPrintsNoToken) {
  writeFile(dir_ + "/other.key", kOtherKey);
  const std::string site = writeSite("bad-key-site.yaml", sim_->baseUrl(), "other.key");
  for (const char* command : {"ping", "jobs"}) {
    SCOPED_TRACE(command);
    auto text = slurm({command}, site);
    EXPECT_EQ(text.exit_code, kExitAuth) << text.out << text.err;
    EXPECT_NE(text.err.find("slurm.auth_failed"), std::string::npos) << text.err;
    EXPECT_EQ(text.err.find("eyJ"), std::string::npos) << text.err;
    EXPECT_EQ(text.out.find("eyJ"), std::string::npos) << text.out;
    auto as_json = slurm({command, "--output", "json"}, site);
    EXPECT_EQ(as_json.exit_code, kExitAuth) << as_json.out << as_json.err;
    EXPECT_EQ(as_json.out.find("eyJ"), std::string::npos) << as_json.out;
    EXPECT_EQ(as_json.err.find("eyJ"), std::string::npos) << as_json.err;
  }
}

TEST_F(SlurmCommandTest, UnreachableSlurmrestdExitsOneAsNotSent) {
  const std::string site = writeSite("unreachable-site.yaml", "http://127.0.0.1:1", "jwt.key");
  auto r = slurm({"ping"}, site);
  EXPECT_EQ(r.exit_code, kExitFailure) << r.out << r.err;
  EXPECT_NE(r.err.find("transport not_sent"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("slurm.not_sent"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");  // retries are logged on stderr, never mixed into the output
  auto as_json = slurm({"ping", "--output", "json"}, site);
  EXPECT_EQ(as_json.exit_code, kExitFailure);
  const json doc = json::parse(as_json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << as_json.out;
  EXPECT_EQ(doc["transport"], "not_sent");
  EXPECT_EQ(doc["http_status"], 0);
}

TEST_F(SlurmCommandTest, GetOfAnUnknownSluidExitsTwo) {
  auto r = slurm({"get", "sCC1M8VPKSJX00"});
  EXPECT_EQ(r.exit_code, kExitInvalid) << r.out << r.err;
  EXPECT_NE(r.err.find("slurm.job_not_found"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(sim_->jobCount(), 0u);
}

TEST_F(SlurmCommandTest, InvalidSpecSubmitsNothingAndStagesNothing) {
  auto r =
      slurm({"submit", "-f", spec("bad.yaml", simSpec(R"(["true"])", "  wrong_section: {}\n"))});
  EXPECT_EQ(r.exit_code, kExitInvalid) << r.out << r.err;
  EXPECT_NE(r.err.find("[spec.unknown_field]"), std::string::npos) << r.err;
  EXPECT_EQ(sim_->jobCount(), 0u);
  EXPECT_EQ(attemptDirsUnder(dir_ + "/staging"), 0u);

  // An artifact whose digest no longer matches the registry: also refused before staging.
  writeFile(sif_, "tampered after the registry pinned it\n");
  auto tampered =
      slurm({"submit", "-f", spec("job.yaml", simSpec(R"(["true"])")), "--output", "json"});
  EXPECT_EQ(tampered.exit_code, kExitInvalid) << tampered.out << tampered.err;
  EXPECT_NE(tampered.out.find("artifact.sha256_mismatch"), std::string::npos) << tampered.out;
  EXPECT_EQ(sim_->jobCount(), 0u);
  EXPECT_EQ(attemptDirsUnder(dir_ + "/staging"), 0u);
}

TEST_F(SlurmCommandTest, AJobUserWhoCouldNotWriteItsLogsIsRefusedBeforeStaging) {
  const std::string other =
      writeSite("other-user.yaml", sim_->baseUrl(), "jwt.key", testing::anotherUser());
  auto r =
      slurm({"submit", "-f", spec("job.yaml", simSpec(R"(["true"])")), "--output", "json"}, other);
  EXPECT_EQ(r.exit_code, kExitInvalid) << r.out << r.err;
  const json doc = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << r.out;
  EXPECT_EQ(doc["code"], "staging.job_user_mismatch") << r.out;
  EXPECT_EQ(doc["field"], "slurm.user");
  EXPECT_NE(doc["message"].get<std::string>().find("'" + testing::anotherUser() + "'"),
            std::string::npos);
  EXPECT_EQ(sim_->jobCount(), 0u);
  EXPECT_EQ(attemptDirsUnder(dir_ + "/staging"), 0u);
}

}  // namespace
}  // namespace tuneplane::cli
