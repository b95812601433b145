// The job's fence while an attempt runs (issue 45, item 4; script_fence.cc), run for real: the
// batch scripts of a job's attempts, with the stub srun in its executing mode (the command runs
// as a local process, and srun's TERM reaches it), the fence's settings made short through the
// batch step's environment. A node that lost slurmctld keeps running an attempt that Slurm has
// judged ended; here that is simply a script still running when the next attempt is staged.
// Every wait is bounded (a hang fails, naming what was awaited); nothing asserts a speed.
// The same runs show what Slurm's preemption warning does to a step's command (at the end).
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "slurm/script_renderer.h"
#include "stubs/runtimes.h"
#include "stubs/test_shell.h"
#include "support/serve_harness.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::slurm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;
namespace sh = shell_test;
using namespace std::chrono_literals;

// A bound on a hang, far above what any of these waits takes (a few seconds at most).
constexpr std::chrono::seconds kFenceWaitLimit{40};

// The "training" command: appends "<name> tick" to LEDGER every 0.1 s until the file GO exists
// (then ends by itself, 0), and "<name> stopped" when a TERM ends it. argv: bash -c TEXT NAME
// LEDGER GO.
constexpr const char* kTrainingLoop = R"(trap 'echo "$0 stopped" >>"$1"; exit 143' TERM
while [ ! -e "$2" ]; do echo "$0 tick" >>"$1"; sleep 0.1; done
echo "$0 done" >>"$1")";

class FenceWatchRun : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(bin());
    const fs::path stubs = test::sourceDir() / "tests/slurm/stubs";
    for (const char* name : {"srun", "apptainer", "tp-stub-in-container"}) {
      fs::copy_file(stubs / name, bin() / name);
      fs::permissions(bin() / name, fs::perms::owner_all);
    }
    sh::writeFile(root() / "image.sqsh", sh::kImageContent);
  }

  fs::path root() const { return dir_.path(); }
  fs::path bin() const { return root() / "bin"; }
  // The staging layout (staging_paths.h): <root>/jobs/<id>/{fence,attempts/<n>/logs}.
  fs::path jobDir() const { return root() / "jobs" / "fence-0a0b0c0d"; }
  fs::path fenceDir() const { return jobDir() / "fence"; }
  fs::path attemptDir(int n) const { return jobDir() / "attempts" / std::to_string(n); }
  fs::path logs(int n) const { return attemptDir(n) / "logs"; }
  fs::path ledger() const { return root() / "ledger"; }
  fs::path go() const { return root() / "go"; }

  // What staging does before attempt n can be submitted: its fence mark, its directories.
  void stage(int n) {
    fs::create_directories(fenceDir());
    sh::writeFile(fenceDir() / std::to_string(n), "");
    fs::create_directories(logs(n));
    fs::create_directories(attemptDir(n) / "records");
  }

  launch::LaunchRequest request(int n, std::vector<std::string> command) const {
    launch::LaunchRequest r;
    r.job_name = "fence";
    r.identity = {"fence-0a0b0c0d", n, "tp-" + std::string(32, static_cast<char>('a' + n))};
    r.framework = "custom/custom";
    r.container_runtime = catalog::ContainerRuntime::kPyxis;
    r.artifact = {(root() / "image.sqsh").string(), catalog::ArtifactFormat::kSqsh,
                  sh::kImageSha256};
    r.attempt_dir = attemptDir(n).string();
    r.logs_dir = logs(n).string();
    r.output_dir = root().string();
    r.container_output_dir = root().string();
    r.fence_dir = fenceDir().string();
    launch::Component c;
    c.pool_name = "main";
    c.partition = "cpu";
    r.components = {c};
    r.command = std::move(command);
    return r;
  }

  std::vector<std::string> training(int n) const {
    return {"bash",       "-c", kTrainingLoop, "attempt-" + std::to_string(n), ledger().string(),
            go().string()};
  }

  // The batch step's environment: P = 1 s, and G and U as given.
  std::vector<std::string> environment(int n, int grace, int unreadable) const {
    return {"PATH=" + bin().string() + ":/usr/bin:/bin",
            "TP_STUB_DIR=" + (attemptDir(n) / "records").string(),
            "TP_STUB_EXEC=1",
            "SLURM_JOB_ID=" + std::to_string(500 + n),
            "SLURM_JOB_NODELIST=node1",
            "SLURMD_NODENAME=node1",
            std::string(kFencePollEnv) + "=1",
            std::string(kFenceGraceEnv) + "=" + std::to_string(grace),
            std::string(kFenceUnreadableEnv) + "=" + std::to_string(unreadable)};
  }

  // Starts attempt n's batch script beside the test; its stdout and stderr are
  // <attempt>/job.out and job.err.
  std::unique_ptr<test::ChildProcess> start(const launch::LaunchRequest& r, int grace = 1,
                                            int unreadable = 3) {
    const int n = r.identity.attempt;
    sh::writeFile(attemptDir(n) / "job.sh", renderBatchScript(r));
    auto process = test::ChildProcess::start(
        {"bash", "job.sh"},
        {.scratch = attemptDir(n), .env = environment(n, grace, unreadable), .cwd = attemptDir(n)},
        "job");
    EXPECT_NE(process, nullptr);
    return process;
  }

  std::string err(int n) const { return sh::readFile(attemptDir(n) / "job.err"); }

  std::vector<std::string> ledgerLines() const {
    std::vector<std::string> lines;
    std::istringstream in(fs::exists(ledger()) ? sh::readFile(ledger()) : "");
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  bool ledgerHas(const std::string& line) const {
    for (const auto& l : ledgerLines()) {
      if (l == line) return true;
    }
    return false;
  }
  // Waits (bounded) until `line` is in the ledger; false, reported, when it never is.
  bool awaitLedger(const std::string& line) const {
    const bool seen = test::waitUntil([&] { return ledgerHas(line); }, kFenceWaitLimit);
    if (!seen) ADD_FAILURE() << "the ledger never had \"" << line << "\"";
    return seen;
  }
  bool awaitErr(int n, const std::string& text) const {
    const bool seen =
        test::waitUntil([&] { return err(n).find(text) != std::string::npos; }, kFenceWaitLimit);
    if (!seen) ADD_FAILURE() << "attempt " << n << " never said \"" << text << "\":\n" << err(n);
    return seen;
  }

  bool exitSentinel(int n) const {
    return fs::exists(logs(n) / sentinelFileName(kExitSentinel, "main"));
  }

  sh::TempDir dir_;
};

// The issue's case: attempt 1 still runs (its node lost slurmctld, not the shared filesystem)
// when attempt 2 is staged. Its watcher sees the later mark and stops its command; the script
// exits 73 and writes no exit sentinel (it did not end by itself).
TEST_F(FenceWatchRun, ARunningAttemptStopsItsCommandWhenALaterAttemptIsStaged) {
  stage(1);
  auto first = start(request(1, training(1)));
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(awaitLedger("attempt-1 tick")) << err(1);

  stage(2);  // the mark of attempt 2, as staging makes it before its submit
  const std::optional<int> code = first->exitWithin(kFenceWaitLimit);
  ASSERT_TRUE(code.has_value()) << "attempt 1 still ran " << kFenceWaitLimit.count()
                                << " s after attempt 2 was staged:\n"
                                << err(1);
  EXPECT_EQ(*code, kExitSuperseded) << err(1);
  const auto lines = ledgerLines();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "attempt-1 stopped") << "the command was not stopped by a TERM";
  EXPECT_THAT(err(1), HasSubstr("attempt 2 of this job was staged after this one (1), so this job "
                                "(501) stops its steps (TERM, then KILL after 1 s)"));
  EXPECT_TRUE(fs::exists(logs(1) / sentinelFileName(kStartSentinel, "main")));
  EXPECT_FALSE(exitSentinel(1)) << "a stopped attempt must not look as if it ended by itself";
}

// The hand-off: attempt 2 is staged and starts while attempt 1 (no exit sentinel) still runs.
// Attempt 2 waits before its command, so every line attempt 1's command wrote comes before
// attempt 2's first — the order of appends to one file, so no two clocks are compared.
TEST_F(FenceWatchRun, ALaterAttemptStartsItsCommandOnlyAfterTheRunningOneStopped) {
  stage(1);
  auto first = start(request(1, training(1)), /*grace=*/2);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(awaitLedger("attempt-1 tick")) << err(1);

  stage(2);
  auto second =
      start(request(2, {"bash", "-c", R"(echo "$0 ran" >>"$1")", "attempt-2", ledger().string()}),
            /*grace=*/2);
  ASSERT_NE(second, nullptr);
  const std::optional<int> second_code = second->exitWithin(kFenceWaitLimit);
  const std::optional<int> first_code = first->exitWithin(kFenceWaitLimit);
  ASSERT_TRUE(first_code && second_code) << err(1) << err(2);
  EXPECT_EQ(*first_code, kExitSuperseded) << err(1);
  EXPECT_EQ(*second_code, 0) << err(2);

  const auto lines = ledgerLines();
  const auto ran = std::find(lines.begin(), lines.end(), "attempt-2 ran");
  ASSERT_NE(ran, lines.end()) << "attempt 2's command never ran:\n" << err(2);
  EXPECT_TRUE(std::none_of(ran, lines.end(), [](const std::string& l) {
    return l.starts_with("attempt-1");
  })) << "attempt 1 wrote after attempt 2's command had started: two writers";
  EXPECT_THAT(err(2), HasSubstr("attempt 1 of this job started and did not end by itself"));
  EXPECT_THAT(err(2), HasSubstr("waits " + std::to_string(fenceHandoffSeconds(1, 2)) + " s"));
  EXPECT_TRUE(exitSentinel(2));
}

// Only an earlier attempt that may still run is waited for: one that claimed and has no exit
// sentinel. One that ended by itself, or never claimed (a late start would meet the later
// mark), is not.
TEST_F(FenceWatchRun, TheHandOffWaitsOnlyForAnEarlierAttemptThatMayStillRun) {
  const std::string waits = "did not end by itself";
  const auto runSecond = [&] {
    fs::remove_all(attemptDir(2));
    stage(2);
    auto second = start(request(2, {"true"}));
    const std::optional<int> code = second ? second->exitWithin(kFenceWaitLimit) : std::nullopt;
    EXPECT_EQ(code, std::optional<int>(0)) << err(2);
    return err(2);
  };
  stage(1);
  EXPECT_THAT(runSecond(), Not(HasSubstr(waits))) << "attempt 1 never claimed";

  sh::writeFile(logs(1) / "claim", "501\n");
  sh::writeFile(logs(1) / sentinelFileName(kStartSentinel, "main"), "{}\n");
  EXPECT_THAT(runSecond(), HasSubstr("attempt 1 of this job started and did not end by itself"))
      << "attempt 1 claimed and wrote no exit sentinel (a NODE_FAIL)";

  sh::writeFile(logs(1) / sentinelFileName(kExitSentinel, "main"), "{}\n");
  EXPECT_THAT(runSecond(), Not(HasSubstr(waits))) << "attempt 1 ended by itself";
}

// One failed read stops nothing (a filesystem that hiccups must not end healthy training); a
// fence that stays unreadable for U s stops the steps, exit 72, no exit sentinel.
TEST_F(FenceWatchRun, AFenceUnreadableForAMomentStopsNothingButOneThatStaysUnreadableDoes) {
  stage(1);
  auto first = start(request(1, training(1)), /*grace=*/1, /*unreadable=*/600);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(awaitLedger("attempt-1 tick")) << err(1);
  fs::rename(fenceDir(), jobDir() / "fence.away");  // the filesystem cannot be read
  ASSERT_TRUE(awaitErr(1, "cannot read the job fence"));
  fs::rename(jobDir() / "fence.away", fenceDir());
  ASSERT_TRUE(awaitErr(1, "can be read again"));
  sh::writeFile(go(), "");
  EXPECT_EQ(first->exitWithin(kFenceWaitLimit), std::optional<int>(0)) << err(1);
  EXPECT_TRUE(ledgerHas("attempt-1 done"));
  EXPECT_TRUE(exitSentinel(1));

  fs::remove(go());
  fs::remove(ledger());
  fs::remove_all(attemptDir(1));
  stage(1);
  auto again = start(request(1, training(1)), /*grace=*/1, /*unreadable=*/2);
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(awaitLedger("attempt-1 tick")) << err(1);
  fs::rename(fenceDir(), jobDir() / "fence.away");
  const std::optional<int> code = again->exitWithin(kFenceWaitLimit);
  ASSERT_TRUE(code.has_value()) << "still ran with its fence unreadable:\n" << err(1);
  EXPECT_EQ(*code, kExitCannotClaim) << err(1);
  EXPECT_EQ(ledgerLines().back(), "attempt-1 stopped");
  EXPECT_THAT(err(1), HasSubstr("stayed unreadable for 2 s"));
  EXPECT_FALSE(exitSentinel(1));
}

// The script reads the fence itself before it stops anything: a USR2 that its watcher did not
// send (an operator's `scancel --batch --signal=USR2`) stops nothing, and the command's own
// exit code is still the job's.
TEST_F(FenceWatchRun, AUsr2ThatIsNotTheWatchersStopsNothing) {
  stage(1);
  auto first = start(request(1, training(1)));
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(awaitLedger("attempt-1 tick")) << err(1);
  first->signal(SIGUSR2);
  first->signal(SIGUSR2);
  EXPECT_EQ(first->exitWithin(1s), std::nullopt) << err(1);
  sh::writeFile(go(), "");
  EXPECT_EQ(first->exitWithin(kFenceWaitLimit), std::optional<int>(0)) << err(1);
  EXPECT_TRUE(ledgerHas("attempt-1 done"));
  EXPECT_TRUE(exitSentinel(1));
}

// slurm.preemption_warning (on by default): Slurm sends the warning to every process of every
// step, and each step's command starts with it ignored. The "training" is a Python program
// (a shell script cannot trap a signal ignored when it started; docs/users.md says so) that
// says its pid, then installs a handler for $TUNEPLANE_PREEMPT_SIGNAL or not, and runs until
// GO exists. Its pid is what Slurm signals: the command itself (exec'd by the step's start).
constexpr const char* kWarnedTraining = R"(import os, signal, sys, time
ledger, go, handles = sys.argv[1], sys.argv[2], sys.argv[3] == "handles"
def note(text):
    with open(ledger, "a") as f:
        f.write(text + "\n")
def save(number, frame):
    note("saved on " + signal.Signals(number).name)
    sys.exit(0)
if handles:
    signal.signal(getattr(signal, "SIG" + os.environ["TUNEPLANE_PREEMPT_SIGNAL"]), save)
note("pid " + str(os.getpid()))
while not os.path.exists(go):
    time.sleep(0.05)
note("done")
)";

class PreemptionWarningRun : public FenceWatchRun,
                             public ::testing::WithParamInterface<catalog::ContainerRuntime> {
 protected:
  // Attempt 1 of a job whose command is kWarnedTraining in `mode` ("handles" or not), with the
  // warning on or off; its pid once it said it (bounded: 0 when it never did).
  struct Started {
    std::unique_ptr<test::ChildProcess> job;
    pid_t pid = 0;
  };
  Started startWarned(bool warning_on, const std::string& mode) {
    launch::LaunchRequest r =
        request(1, {"python3", "-c", kWarnedTraining, ledger().string(), go().string(), mode});
    r.container_runtime = GetParam();
    if (warning_on) {
      r.preemption_warning = catalog::PreemptionWarning{};
      r.environment.emplace_back("TUNEPLANE_PREEMPT_SIGNAL", r.preemption_warning->signal);
    }
    stage(1);
    Started started{start(r), 0};
    if (started.job == nullptr) return started;
    test::waitUntil(
        [&] {
          for (const auto& line : ledgerLines()) {
            if (line.starts_with("pid ")) {
              started.pid = static_cast<pid_t>(std::atoi(line.c_str() + 4));
            }
          }
          return started.pid > 0;
        },
        kFenceWaitLimit);
    return started;
  }
  // Whether the kernel ignores `signal` for `pid` (its SigIgn mask in /proc/PID/status).
  static bool ignores(pid_t pid, int signal) {
    std::istringstream status(sh::readFile("/proc/" + std::to_string(pid) + "/status"));
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("SigIgn:")) {
        return (std::stoull(line.substr(7), nullptr, 16) >> (signal - 1)) & 1U;
      }
    }
    ADD_FAILURE() << "no SigIgn in /proc/" << pid << "/status";
    return false;
  }
};

// A program that knows nothing of the warning runs on through it and ends by itself.
TEST_P(PreemptionWarningRun, ACommandThatDoesNotHandleTheWarningRunsOnThroughIt) {
  auto [job, pid] = startWarned(/*warning_on=*/true, "ignores");
  ASSERT_NE(job, nullptr);
  ASSERT_GT(pid, 0) << err(1);
  EXPECT_TRUE(ignores(pid, SIGUSR2)) << "the command did not start with the warning ignored";
  ASSERT_EQ(::kill(pid, SIGUSR2), 0);  // what slurmstepd sends every process of the step
  sh::writeFile(go(), "");
  EXPECT_EQ(job->exitWithin(kFenceWaitLimit), std::optional<int>(0)) << err(1);
  EXPECT_TRUE(ledgerHas("done")) << "the warning ended the command";
}

// A program that installs a handler for the signal it is told gets the warning, and saves.
TEST_P(PreemptionWarningRun, ACommandThatHandlesTheWarningGetsItAndSaves) {
  auto [job, pid] = startWarned(/*warning_on=*/true, "handles");
  ASSERT_NE(job, nullptr);
  ASSERT_GT(pid, 0) << err(1);
  ASSERT_EQ(::kill(pid, SIGUSR2), 0);
  ASSERT_TRUE(awaitLedger("saved on SIGUSR2")) << err(1);
  EXPECT_EQ(job->exitWithin(kFenceWaitLimit), std::optional<int>(0)) << err(1);
  EXPECT_FALSE(ledgerHas("done"));
}

// Why the step starts with it ignored: without the warning (and its start), the same signal
// ends a program that does not handle it (128 + 12, as srun reports a task killed by USR2).
TEST_P(PreemptionWarningRun, WithoutTheWarningsStartTheSameSignalEndsTheCommand) {
  auto [job, pid] = startWarned(/*warning_on=*/false, "ignores");
  ASSERT_NE(job, nullptr);
  ASSERT_GT(pid, 0) << err(1);
  EXPECT_FALSE(ignores(pid, SIGUSR2));
  ASSERT_EQ(::kill(pid, SIGUSR2), 0);
  EXPECT_EQ(job->exitWithin(kFenceWaitLimit), std::optional<int>(128 + SIGUSR2)) << err(1);
  EXPECT_FALSE(ledgerHas("done"));
}

INSTANTIATE_TEST_SUITE_P(Runtimes, PreemptionWarningRun, bothRuntimes(), runtimeName);

}  // namespace
}  // namespace tuneplane::slurm
