// The reconciler end to end against the simulator: success, user failure with and without
// retry, a node failure retried in a new directory while the old one stays byte-identical,
// Releasing while COMPLETING, the missing-log reason.
#include <filesystem>

#include "control/decisions.h"
#include "reconciler_fixture.h"
#include "staging/staging_paths.h"

namespace tuneplane::control::testing {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using phase::JobPhase;
namespace fs = std::filesystem;

class ReconcilerTest : public ReconcilerFixture {};

TEST_F(ReconcilerTest, ASuccessfulJobGoesThroughEveryPhaseOnce) {
  const std::string id = submit(cpuSpec("echo hello from the job"));
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(view(id).job.phase, JobPhase::kPending);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));

  const store::JobView v = view(id);
  ASSERT_EQ(v.attempts.size(), 1u);
  const store::AttemptRecord& a = v.attempts[0];
  EXPECT_EQ(a.phase, AttemptPhase::kSucceeded);
  EXPECT_EQ(a.staging_dir, site_->stagingRoot() + "/jobs/" + id + "/attempts/1");
  ASSERT_EQ(a.components.size(), 1u);
  EXPECT_EQ(a.components[0].sluid.size(), 14u);
  EXPECT_EQ(a.components[0].state, (std::vector<std::string>{"COMPLETED"}));
  EXPECT_EQ(a.components[0].exit_code, 0);
  EXPECT_NE(a.slurm_job_id, 0u);
  EXPECT_EQ(slurmJobsWithToken(a.submit_token), 1);
  EXPECT_NE(readFile(a.staging_dir + "/logs/main.out").find("hello from the job"),
            std::string::npos);
  // The sentinels the script wrote.
  EXPECT_TRUE(fs::exists(a.staging_dir + "/logs/start-main.json"));
  EXPECT_NE(readFile(a.staging_dir + "/logs/exit-main.json").find("\"exit_code\":0"),
            std::string::npos);

  const auto steps = trail(id);
  EXPECT_TRUE(hasStep(steps, "Pending→Staging"));
  EXPECT_TRUE(hasStep(steps, "Staging→Submitting"));
  EXPECT_TRUE(hasStep(steps, "a1:Submitting→Submitted"));
  EXPECT_TRUE(hasStep(steps, "a1:Releasing→Succeeded") || hasStep(steps, "a1:Running→Succeeded"));
  EXPECT_FALSE(hasStep(steps, "Submitting→SubmitUnknown"));
  // Every event has a time and a reason.
  for (const auto& e : events(id)) {
    EXPECT_GT(e.time_ms, 0);
    EXPECT_FALSE(e.reason.empty()) << e.from << "→" << e.to;
  }
}

TEST_F(ReconcilerTest, UserFailureWithoutRetryFailsTheJobWithTheExitCode) {
  const std::string id = submit(cpuSpec("echo failing; exit 3"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kFailed));
  const store::JobView v = view(id);
  ASSERT_EQ(v.attempts.size(), 1u);
  EXPECT_EQ(v.attempts[0].cause, EndCause::kUser);
  EXPECT_NE(v.job.reason.find("exit code 3"), std::string::npos) << v.job.reason;
  EXPECT_NE(v.job.reason.find("not retried"), std::string::npos) << v.job.reason;
}

TEST_F(ReconcilerTest, UserFailureRetriedUnderOnAnyAfterTheBackoffInANewDirectory) {
  const std::string id = submit(cpuSpec("exit 4", retryBlock(2, 30, "any")));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRetrying));
  store::JobView v = view(id);
  ASSERT_EQ(v.attempts.size(), 1u);
  EXPECT_EQ(v.job.next_attempt_ms, v.attempts[0].ended_ms + 30'000);
  // Before the backoff is over nothing starts.
  for (int i = 0; i < 3; ++i) reconciler_->tick();
  EXPECT_EQ(view(id).attempts.size(), 1u);
  clock_.advance(30s);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kFailed));
  v = view(id);
  ASSERT_EQ(v.attempts.size(), 2u);
  EXPECT_NE(v.attempts[0].staging_dir, v.attempts[1].staging_dir);
  EXPECT_NE(v.attempts[0].submit_token, v.attempts[1].submit_token);
  EXPECT_EQ(v.attempts[1].cause, EndCause::kUser);
  EXPECT_NE(v.job.reason.find("max_attempts"), std::string::npos) << v.job.reason;
}

TEST_F(ReconcilerTest, NodeFailureRetriesInANewDirectoryAndTheOldStaysByteIdentical) {
  const std::string id = submit(cpuSpec(
      "if [ \"$TUNEPLANE_ATTEMPT\" = 1 ]; then sleep 60; fi; echo attempt $TUNEPLANE_ATTEMPT",
      retryBlock(2, 0, "infrastructure")));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning));
  const std::string sluid = view(id).attempts[0].components[0].sluid;
  // Let the script write its start sentinel before the node "fails".
  const std::string first_dir = view(id).attempts[0].staging_dir;
  ASSERT_TRUE(waitFor([&] { return fs::exists(first_dir + "/logs/start-main.json"); }));
  ASSERT_TRUE(sim_->endJob(sluid, "NODE_FAIL"));
  ASSERT_TRUE(tickUntil(id, [](const store::JobView& v) { return v.attempts.size() == 2; }));
  store::JobView v = view(id);
  EXPECT_EQ(v.attempts[0].phase, AttemptPhase::kFailed);
  EXPECT_EQ(v.attempts[0].cause, EndCause::kInfrastructure);
  const std::string before = treeHash(first_dir);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  v = view(id);
  EXPECT_EQ(v.attempts[1].staging_dir, site_->stagingRoot() + "/jobs/" + id + "/attempts/2");
  EXPECT_NE(readFile(v.attempts[1].staging_dir + "/logs/main.out").find("attempt 2"),
            std::string::npos);
  EXPECT_EQ(treeHash(first_dir), before);
  const auto steps = trail(id);
  EXPECT_TRUE(hasStep(steps, "Retrying→Staging"));
}

class ReconcilerLongEpilogTest : public ReconcilerFixture {
 protected:
  void tune(sim::SimulatorOptions& o) override { o.epilog = 1500ms; }
};

TEST_F(ReconcilerLongEpilogTest, CompletingKeepsTheAttemptReleasingAndNoRetryStarts) {
  const std::string id = submit(cpuSpec("exit 2", retryBlock(2, 0, "any")));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kReleasing));
  store::JobView v = view(id);
  EXPECT_EQ(v.attempts.back().phase, AttemptPhase::kReleasing);
  EXPECT_EQ(v.attempts.back().components[0].state,
            (std::vector<std::string>{"FAILED", "COMPLETING"}));
  EXPECT_EQ(v.attempts.size(), 1u);  // no retry while resources are held
  ASSERT_TRUE(tickUntil(id, [](const store::JobView& v) { return v.attempts.size() == 2; }));
  EXPECT_EQ(view(id).attempts[0].phase, AttemptPhase::kFailed);
  EXPECT_TRUE(hasStep(trail(id), "a1:Releasing→Failed"));
}

TEST_F(ReconcilerTest, AJobThatCannotWriteItsLogSaysSo) {
  sim_->pauseScheduling(true);
  const std::string id = submit(cpuSpec("echo never seen"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kQueued));
  // The job's logs/ goes away before it starts (as if the job user could not write there).
  const std::string dir = view(id).attempts[0].staging_dir;
  fs::permissions(dir, fs::perms::owner_write, fs::perm_options::add);
  fs::remove_all(dir + "/logs");
  fs::permissions(dir, fs::perms::owner_write, fs::perm_options::remove);
  sim_->pauseScheduling(false);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kFailed));
  const store::JobView v = view(id);
  EXPECT_NE(v.job.reason.find(attempt::kLogNeverWrittenReason), std::string::npos) << v.job.reason;
  EXPECT_NE(v.attempts[0].cause, EndCause::kUser);
}

TEST_F(ReconcilerTest, InvalidSpecsAreRefusedWithEveryErrorBeforeAnythingIsStored) {
  auto refused =
      service_->submit(cpuSpec("x", "", "hello", "        colour: blue\n        nodes: 0\n"), "");
  ASSERT_FALSE(refused);
  std::set<std::string> codes;
  for (const auto& e : refused.error()) codes.insert(e.code);
  EXPECT_TRUE(codes.count("control.no_owner"));
  EXPECT_TRUE(codes.count("spec.unknown_field")) << refused.error().front().describe();
  EXPECT_GE(refused.error().size(), 3u);
  EXPECT_TRUE(store().activeJobs()->empty());
  EXPECT_FALSE(fs::exists(site_->stagingRoot() + "/jobs"));
}

}  // namespace
}  // namespace tuneplane::control::testing
