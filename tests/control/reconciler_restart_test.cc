// SIGKILL at each step of the submit protocol, for real: a host process runs the
// reconciler against a SQLite file and the simulator, kills itself right after the named
// step, and is started again without the hook. Afterwards: exactly one Slurm job per
// attempt (none when it died before the POST could leave, and then the attempt waits for
// an operator instead of guessing), and nothing forgotten.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "reconciler_fixture.h"
#include "store/sqlite_job_store.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace tuneplane::control::testing {
namespace {

using phase::JobPhase;

std::string hostBinary() {
  return (test::binaryDir() / "tests/control_reconciler_host").string();
}

struct HostRun {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
};

class ReconcilerRestartTest : public ReconcilerFixture {
 protected:
  // The reconciler runs in the host process, on its own clock, so nothing here drives the
  // fixture's: the simulator keeps real time (its epilogs are the fixture's 300 ms).
  const Clock* simulatorClock() override { return nullptr; }
  HostRun host(std::vector<std::string> args) {
    const std::string binary = hostBinary();
    args.insert(args.begin(), {binary, "--db", db(), "--site", site_->site()});
    HostRun run;
    // The host also sets an alarm of its own; runProcess's bound is for a host that cannot
    // even do that.
    const test::ProcessResult result = test::runProcess(args, {.scratch = dir_.path()});
    std::cerr << result.err;                                   // its diagnostics, in the test's log
    if (result.timed_out || result.exit_code < 0) return run;  // reported
    run.exit_code = result.exit_code;
    run.out = result.out;
    return run;
  }
  std::string db() const { return dir_.path() + "/tuneplane.db"; }
  store::JobView stored(const std::string& id) {
    auto s = store::SqliteJobStore::open(db());
    EXPECT_TRUE(s) << s.error().describe();
    auto v = (*s)->getJob(id);
    EXPECT_TRUE(v && *v);
    return v && *v ? **v : store::JobView{};
  }
};

TEST_F(ReconcilerRestartTest, SigkillAfterEachSubmitStepThenRestart) {
  const std::string spec = site_->specFile("job.yaml", cpuSpec("echo survived"));
  for (const char* step : {"attempt-durable", "staged", "submitting-durable", "submit-answered",
                           "receipt-durable", "sluids-durable"}) {
    SCOPED_TRACE(step);
    const HostRun submitted = host({"--submit", spec});
    ASSERT_EQ(submitted.exit_code, 0);
    const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
    ASSERT_FALSE(id.empty());

    EXPECT_EQ(host({"--kill-at", step}).exit_code, 128 + SIGKILL);
    ASSERT_EQ(host({"--ticks", "100"}).exit_code, 0);
    store::JobView v = stored(id);
    ASSERT_EQ(v.attempts.size(), 1u);
    const std::string token = v.attempts[0].submit_token;
    if (std::string(step) == "submitting-durable") {
      // Killed after Submitting was durable, before the POST: unknowable, so it looks for
      // its token, submits nothing again, and waits for an operator.
      EXPECT_EQ(v.job.phase, JobPhase::kSubmitUnknown);
      EXPECT_EQ(slurmJobsWithToken(token), 0);
      auto s = store::SqliteJobStore::open(db());
      ASSERT_TRUE(s);
      ASSERT_TRUE((*s)->requestAbandon(id, 1, "ops", "it never reached Slurm", 1));
      ASSERT_EQ(host({"--ticks", "5"}).exit_code, 0);
      EXPECT_EQ(stored(id).job.phase, JobPhase::kFailed);
      continue;
    }
    EXPECT_EQ(v.job.phase, JobPhase::kSucceeded) << v.job.reason;
    EXPECT_EQ(slurmJobsWithToken(token), 1);
  }
}

// The same with many attempts in flight on the launch stage (4 connections): the host dies
// the 3rd time any attempt reaches the step, so the others are caught at every step of the
// protocol at once. After a restart: every job has one attempt; each has exactly one Slurm
// job and succeeded, or none — it died before its POST could leave — and then waits in
// SubmitUnknown for an operator. Nothing submitted twice, nothing lost.
TEST_F(ReconcilerRestartTest, SigkillAtEachSubmitStepWithManyInFlightThenRestart) {
  constexpr int kJobs = 8;
  const std::string spec = site_->specFile("many.yaml", cpuSpec("echo survived"));
  for (const char* step : {"attempt-durable", "staged", "submitting-durable", "submit-answered",
                           "receipt-durable", "sluids-durable"}) {
    SCOPED_TRACE(step);
    const HostRun submitted = host({"--submit", spec, "--copies", std::to_string(kJobs)});
    ASSERT_EQ(submitted.exit_code, 0);
    std::vector<std::string> ids;
    std::istringstream lines(submitted.out);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) ids.push_back(line);
    }
    ASSERT_EQ(ids.size(), static_cast<size_t>(kJobs));

    EXPECT_EQ(host({"--kill-at", step, "--kill-on", "3", "--submit-concurrency", "4"}).exit_code,
              128 + SIGKILL);
    ASSERT_EQ(host({"--ticks", "100", "--submit-concurrency", "4"}).exit_code, 0);
    int waiting = 0;
    for (const auto& id : ids) {
      SCOPED_TRACE(id);
      const store::JobView v = stored(id);
      ASSERT_EQ(v.attempts.size(), 1u) << "a second attempt was made";
      const int in_slurm = slurmJobsWithToken(v.attempts[0].submit_token);
      if (v.job.phase == JobPhase::kSubmitUnknown) {
        EXPECT_EQ(in_slurm, 0) << "a submitted job was not found by its token";
        ++waiting;
        continue;
      }
      EXPECT_EQ(v.job.phase, JobPhase::kSucceeded) << v.job.reason;
      EXPECT_EQ(in_slurm, 1);
    }
    // Only attempts caught between Submitting and their POST can be waiting.
    if (std::string(step) != "submitting-durable") {
      EXPECT_LE(waiting, 3) << "more attempts waiting than could have been mid-submit";
    }
    // The operator gives up on those; nothing else is left active.
    auto s = store::SqliteJobStore::open(db());
    ASSERT_TRUE(s);
    for (const auto& id : ids) {
      if (stored(id).job.phase == JobPhase::kSubmitUnknown) {
        ASSERT_TRUE((*s)->requestAbandon(id, 1, "ops", "it never reached Slurm", 1));
      }
    }
    ASSERT_EQ(host({"--ticks", "5"}).exit_code, 0);
    auto active = (*s)->activeJobs();
    ASSERT_TRUE(active);
    EXPECT_TRUE(active->empty());
  }
}

}  // namespace
}  // namespace tuneplane::control::testing
