// The start and exit sentinels the batch script writes (script_renderer.h), run for real
// with the stub srun first on PATH: both files appear whole, with the script's exit code;
// a logs dir that cannot be written never changes the job's own outcome.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slurm/script_renderer.h"
#include "stubs/test_shell.h"
#include "support/test_paths.h"

namespace tuneplane::slurm {
namespace {

namespace fs = std::filesystem;
namespace sh = shell_test;
using nlohmann::json;

class SentinelRun : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root() / "bin");
    fs::create_directories(root() / "records");
    fs::create_directories(root() / "logs");
    const fs::path stubs = test::sourceDir() / "tests/slurm/stubs";
    for (const char* name : {"srun", "tp-stub-in-container"}) {
      fs::copy_file(stubs / name, root() / "bin" / name);
      fs::permissions(root() / "bin" / name, fs::perms::owner_all);
    }
    sh::writeFile(root() / "image.sqsh", "test");
  }
  fs::path root() const { return dir_.path(); }

  launch::LaunchRequest request(const std::string& pool, std::string exit_code) const {
    launch::LaunchRequest r;
    r.job_name = "sentinel";
    r.identity = {"sentinel-0a0b0c0d", 1, "tp-" + std::string(32, 'a')};
    r.framework = "custom/custom";
    r.container_runtime = catalog::ContainerRuntime::kPyxis;
    r.artifact = {(root() / "image.sqsh").string(), catalog::ArtifactFormat::kSqsh,
                  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"};
    r.attempt_dir = root().string();
    r.logs_dir = (root() / "logs").string();
    r.output_dir = root().string();
    r.container_output_dir = root().string();
    launch::Component c;
    c.pool_name = pool;
    c.partition = "cpu";
    r.components = {c};
    r.command = {"exit-with", std::move(exit_code)};
    return r;
  }

  // `env`: more NAME=VALUE words for the script's environment (already quoted).
  sh::RunResult run(const std::string& script, const std::string& env = "") {
    sh::writeFile(root() / "job.sh", script);
    return sh::runShell("cd " + shellQuote(root().string()) + " && env -i PATH=" +
                            shellQuote((root() / "bin").string() + ":/usr/bin:/bin") +
                            " TP_STUB_DIR=" + shellQuote((root() / "records").string()) +
                            " SLURMD_NODENAME='node\"1 x' " + env + " bash job.sh",
                        root());
  }

  json sentinel(std::string_view kind, const std::string& pool) const {
    return json::parse(sh::readFile(root() / "logs" / sentinelFileName(kind, pool)), nullptr,
                       false);
  }

  sh::TempDir dir_;
};

TEST_F(SentinelRun, StartAndExitSentinelsCarryNodeTimesAndTheExitCode) {
  const auto result = run(renderBatchScript(request("main", "7")));
  ASSERT_EQ(result.exit_code, 7) << result.err;
  const json start = sentinel(kStartSentinel, "main");
  const json exit = sentinel(kExitSentinel, "main");
  ASSERT_TRUE(start.is_object()) << sh::readFile(root() / "logs/start-main.json");
  ASSERT_TRUE(exit.is_object()) << sh::readFile(root() / "logs/exit-main.json");
  EXPECT_EQ(start["version"], 1);
  EXPECT_EQ(start["node"], "node_1_x");  // reduced to [A-Za-z0-9._-]: always valid JSON
  EXPECT_GT(start["time"].get<int64_t>(), 1'600'000'000);
  EXPECT_EQ(exit["exit_code"], 7);
  EXPECT_EQ(exit["node"], "node_1_x");
  EXPECT_EQ(exit["start_time"], start["time"]);
  EXPECT_GE(exit["end_time"].get<int64_t>(), exit["start_time"].get<int64_t>());
  // Nothing half-written is left behind.
  for (const auto& entry : fs::directory_iterator(root() / "logs")) {
    EXPECT_NE(entry.path().filename().string().front(), '.') << entry.path();
  }
}

TEST_F(SentinelRun, SuccessWritesExitCodeZero) {
  ASSERT_EQ(run(renderBatchScript(request("main", "0"))).exit_code, 0);
  EXPECT_EQ(sentinel(kExitSentinel, "main")["exit_code"], 0);
}

// Issue 37, defect 5: the claim fails closed. A logs/ where the claim cannot be created, or a
// claim that exists but is empty (its write failed), runs nothing: exit 72, no step, no
// sentinel (a second copy that could also not claim must not run beside it).
TEST_F(SentinelRun, AClaimThatCannotBeMadeRunsNothing) {
  fs::remove_all(root() / "logs");
  const auto missing = run(renderBatchScript(request("main", "5")));
  EXPECT_EQ(missing.exit_code, kExitCannotClaim) << missing.err;
  EXPECT_NE(missing.err.find("runs nothing"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(root() / "logs"));
  EXPECT_TRUE(fs::is_empty(root() / "records")) << "srun ran without a claim";

  fs::create_directories(root() / "logs");
  sh::writeFile(root() / "logs/claim", "");  // created, but its write failed
  const auto empty = run(renderBatchScript(request("main", "5")));
  EXPECT_EQ(empty.exit_code, kExitCannotClaim) << empty.err;
  EXPECT_TRUE(fs::is_empty(root() / "records"));
  EXPECT_FALSE(fs::exists(root() / "logs/start-main.json"));

  fs::remove(root() / "logs/claim");
  fs::create_directories(root() / "logs/claim");  // a claim that is not a file
  const auto odd = run(renderBatchScript(request("main", "5")));
  EXPECT_EQ(odd.exit_code, kExitCannotClaim) << odd.err;
  EXPECT_TRUE(fs::is_empty(root() / "records"));
}

// The job's fence (staging/job_fence.h): an attempt runs only while no later attempt of its
// job has been staged, and fails closed when it cannot tell.
TEST_F(SentinelRun, ASupersededAttemptRunsNothingAndAnUnreadableFenceFailsClosed) {
  launch::LaunchRequest r = request("main", "7");
  r.identity.attempt = 2;
  r.fence_dir = (root() / "fence").string();
  fs::create_directories(root() / "fence");
  auto fresh = [this] {
    fs::remove_all(root() / "logs");
    fs::create_directories(root() / "logs");
    fs::remove_all(root() / "records");
    fs::create_directories(root() / "records");
  };
  // Its own mark missing (a fence it cannot see whole): nothing runs.
  fresh();
  auto unseen = run(renderBatchScript(r));
  EXPECT_EQ(unseen.exit_code, kExitCannotClaim) << unseen.err;
  EXPECT_TRUE(fs::is_empty(root() / "records"));
  // Its own mark, an earlier one, and names that are not attempt numbers: it runs.
  for (const char* name : {"1", "2", "10abc", ".2", "x"})
    sh::writeFile(root() / "fence" / name, "");
  fresh();
  EXPECT_EQ(run(renderBatchScript(r)).exit_code, 7);
  EXPECT_FALSE(fs::is_empty(root() / "records"));
  // A later attempt staged: this one (a late start, or a copy) exits 73 before anything.
  sh::writeFile(root() / "fence" / "3", "");
  fresh();
  auto superseded = run(renderBatchScript(r), "SLURM_JOB_ID=77");
  EXPECT_EQ(superseded.exit_code, kExitSuperseded) << superseded.err;
  EXPECT_NE(superseded.err.find("attempt 3 of this job was staged after this one (2)"),
            std::string::npos)
      << superseded.err;
  EXPECT_TRUE(fs::is_empty(root() / "records")) << "a superseded attempt ran";
  EXPECT_FALSE(fs::exists(root() / "logs/start-main.json"));
  // Numbers compare as numbers: 10 is later than 9, 009 is 9.
  r.identity.attempt = 9;
  fs::remove_all(root() / "fence");
  fs::create_directories(root() / "fence");
  for (const char* name : {"9", "009", "8"}) sh::writeFile(root() / "fence" / name, "");
  fresh();
  EXPECT_EQ(run(renderBatchScript(r)).exit_code, 7);
  sh::writeFile(root() / "fence" / "10", "");
  fresh();
  EXPECT_EQ(run(renderBatchScript(r)).exit_code, kExitSuperseded);
  // The fence directory gone (an unmounted or stale filesystem): nothing runs.
  fs::remove_all(root() / "fence");
  fresh();
  EXPECT_EQ(run(renderBatchScript(r)).exit_code, kExitCannotClaim);
  EXPECT_TRUE(fs::is_empty(root() / "records"));
}

TEST_F(SentinelRun, ArtifactFailureStillWritesTheExitSentinel) {
  sh::writeFile(root() / "image.sqsh", "tampered");
  const auto result = run(renderBatchScript(request("main", "0")));
  EXPECT_EQ(result.exit_code, kExitArtifactMismatch);
  EXPECT_EQ(sentinel(kExitSentinel, "main")["exit_code"], kExitArtifactMismatch);
}

// Bash 5.2 can run the EXIT trap in a command substitution that a SIGTERM reaches while it
// forks (seen under load: a cancelled job's exit sentinel said exit_code 0, so it looked like
// a job that had ended by itself). The script's sentinel prologue is run here with a
// subshell calling the trap's function, which is what that race amounts to, deterministically.
TEST_F(SentinelRun, OnlyTheScriptsOwnShellWritesTheExitSentinel) {
  const std::string script = renderBatchScript(request("main", "0"));
  const auto prologue_end = script.find("\ntp_write_sentinels start");
  ASSERT_NE(prologue_end, std::string::npos);
  const std::string prologue = script.substr(0, script.find('\n', prologue_end + 1) + 1);
  const auto result = run(prologue +
                          "( tp_on_exit 0 )\n"
                          "x=$(tp_on_exit 0)\n"
                          "if [[ -e $tp_logs_dir/exit-main.json ]]; then exit 9; fi\n"
                          "exit 4\n");
  EXPECT_EQ(result.exit_code, 4) << "a subshell wrote the exit sentinel\n" << result.err;
  EXPECT_EQ(sentinel(kExitSentinel, "main")["exit_code"], 4);
}

// Slurm starts a requeued job's script again, with SLURM_RESTART_COUNT set (env.c sets it
// only when it is not 0). That start must run nothing and touch no sentinel: the attempt ran
// once, and its files say how that run went.
TEST_F(SentinelRun, ARestartedJobRunsNothingAndLeavesTheFirstRunsSentinelsAlone) {
  const std::string script = renderBatchScript(request("main", "7"));
  ASSERT_EQ(run(script).exit_code, 7);
  const std::string start = sh::readFile(root() / "logs/start-main.json");
  const std::string exit = sh::readFile(root() / "logs/exit-main.json");
  fs::remove_all(root() / "records");
  fs::create_directories(root() / "records");

  const auto restarted = run(script, "SLURM_RESTART_COUNT=1");
  EXPECT_EQ(restarted.exit_code, kExitRestartRefused) << restarted.err;
  EXPECT_NE(restarted.err.find("Slurm started this job again (SLURM_RESTART_COUNT=1)"),
            std::string::npos)
      << restarted.err;
  EXPECT_TRUE(fs::is_empty(root() / "records")) << "srun ran on a restart";
  EXPECT_EQ(sh::readFile(root() / "logs/start-main.json"), start);
  EXPECT_EQ(sh::readFile(root() / "logs/exit-main.json"), exit);

  // "0" is a first start (Slurm never sets it so, but a site's prolog might): it runs
  // (its own attempt: no claim left by another run).
  fs::remove(root() / "logs/claim");
  EXPECT_EQ(run(script, "SLURM_RESTART_COUNT=0").exit_code, 7);
  EXPECT_FALSE(fs::is_empty(root() / "records"));
}

// A submit carried out twice makes two Slurm jobs of one script, which may both start. The
// first claims the attempt (logs/claim: its SLURM_JOB_ID); the other runs nothing, names both,
// and leaves the first's sentinels alone.
TEST_F(SentinelRun, ASecondSlurmJobOfTheAttemptFindsItClaimedAndRunsNothing) {
  const std::string script = renderBatchScript(request("main", "7"));
  ASSERT_EQ(run(script, "SLURM_JOB_ID=4021").exit_code, 7);
  EXPECT_EQ(sh::readFile(root() / "logs/claim"), "4021\n");
  const std::string start = sh::readFile(root() / "logs/start-main.json");
  const std::string exit = sh::readFile(root() / "logs/exit-main.json");
  fs::remove_all(root() / "records");
  fs::create_directories(root() / "records");

  const auto copy = run(script, "SLURM_JOB_ID=4022");
  EXPECT_EQ(copy.exit_code, kExitAlreadyClaimed) << copy.err;
  EXPECT_NE(copy.err.find("Slurm job 4021 already runs this attempt, so this one (4022) runs "
                          "nothing"),
            std::string::npos)
      << copy.err;
  EXPECT_TRUE(fs::is_empty(root() / "records")) << "srun ran in the second copy";
  EXPECT_EQ(sh::readFile(root() / "logs/claim"), "4021\n");
  EXPECT_EQ(sh::readFile(root() / "logs/start-main.json"), start);
  EXPECT_EQ(sh::readFile(root() / "logs/exit-main.json"), exit);
}

}  // namespace
}  // namespace tuneplane::slurm
