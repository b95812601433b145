// SIGKILL at each step of the submit protocol, for real: a host process runs the
// reconciler against a SQLite file and the simulator, kills itself right after the named
// step, and is started again without the hook. Afterwards: exactly one Slurm job per
// attempt (none when it died before the POST could leave, and then the attempt waits for
// an operator instead of guessing), and nothing forgotten.
#include <filesystem>
#include <iostream>

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

}  // namespace
}  // namespace tuneplane::control::testing
