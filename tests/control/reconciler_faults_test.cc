// The reconciler when things go wrong: a dropped submit answer, a lost receipt that is
// never found (backoff, abandon), a crash after every step of the submit protocol, a submit
// that never left, a refusal, a numeric id reused by Slurm, a job purged while unwatched.
#include <filesystem>

#include "control/decisions.h"
#include "control/retry_policy.h"
#include "fake_job_store.h"
#include "reconciler_fixture.h"
#include "slurm/script_renderer.h"

namespace tuneplane::control::testing {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using phase::JobPhase;
namespace fs = std::filesystem;

// Thrown by a step hook: the process "dies" right after that step (the store keeps what was
// committed; nothing after the step runs).
struct FaultCrash {};

class ReconcilerFaultsTest : public ReconcilerFixture {
 protected:
  // The numeric id of the Slurm job carrying `token`, from the full listing.
  std::string slurmIdOf(const std::string& token) {
    for (const auto& j : allSlurmJobs()) {
      if (j.value("comment", "") == token) return std::to_string(j.value("job_id", 0));
    }
    return "";
  }
};

TEST_F(ReconcilerFaultsTest, DroppedSubmitAnswerIsFoundByItsTokenAndRunsExactlyOnce) {
  sim_->dropNextSubmitResponses(1);
  const std::string id = submit(cpuSpec("echo once"));
  const TickReport first = reconciler_->tick();
  EXPECT_EQ(first.submits, 1);
  store::JobView v = view(id);
  ASSERT_EQ(v.job.phase, JobPhase::kSubmitUnknown) << v.job.reason;
  const std::string token = v.attempts[0].submit_token;
  EXPECT_NE(v.job.reason.find(token), std::string::npos) << v.job.reason;
  EXPECT_TRUE(fs::exists(v.attempts[0].staging_dir + "/job.sh"));  // the files stay

  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  v = view(id);
  ASSERT_EQ(v.attempts.size(), 1u);
  EXPECT_EQ(v.attempts[0].submit_token, token);
  EXPECT_EQ(slurmJobsWithToken(token), 1);
  EXPECT_EQ(allSlurmJobs().size(), 1u);
  const auto steps = trail(id);
  EXPECT_TRUE(hasStep(steps, "a1:Submitting→SubmitUnknown"));
  EXPECT_NE(std::find_if(steps.begin(), steps.end(),
                         [](const auto& s) { return s.starts_with("a1:SubmitUnknown→"); }),
            steps.end());
}

class ReconcilerFailingStoreTest : public ReconcilerFaultsTest {
 protected:
  store::JobStore& store() override { return fake_; }
  FakeJobStore fake_;
};

TEST_F(ReconcilerFailingStoreTest, AReceiptTheStoreLostIsHealedByTheTokenLookup) {
  const std::string id = submit(cpuSpec("echo healed"));
  // Commits: the attempt, Submitting, then the receipt — which fails to be written.
  fake_.failCommits(2, 1);
  const TickReport first = reconciler_->tick();
  EXPECT_EQ(first.submits, 1);
  EXPECT_GE(first.errors, 1);
  EXPECT_EQ(view(id).attempts[0].phase, AttemptPhase::kSubmitting);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  const store::JobView v = view(id);
  EXPECT_TRUE(hasStep(trail(id), "a1:Submitting→SubmitUnknown"));
  EXPECT_EQ(slurmJobsWithToken(v.attempts[0].submit_token), 1);
}

class ReconcilerPurgeTest : public ReconcilerFaultsTest {
 protected:
  void tune(sim::SimulatorOptions& o) override { o.min_job_age = std::chrono::seconds(0); }
};

TEST_F(ReconcilerPurgeTest, ALostReceiptNeverFoundIsLookedForOnABackoffUntilAbandoned) {
  sim_->pauseScheduling(true);
  sim_->dropNextSubmitResponses(1);
  const std::string id = submit(cpuSpec("echo never"));
  reconciler_->tick();
  ASSERT_EQ(view(id).job.phase, JobPhase::kSubmitUnknown);
  const std::string token = view(id).attempts[0].submit_token;
  // The job Slurm made goes away before anyone finds it (cancelled while pending, purged).
  const std::string slurm_id = slurmIdOf(token);
  ASSERT_FALSE(slurm_id.empty());
  ASSERT_TRUE(delAsSlurmUser("/job/" + slurm_id));
  ASSERT_TRUE(waitFor([&] { return sim_->jobCount() == 0; }));

  TickReport r = reconciler_->tick();
  EXPECT_EQ(r.listings, 1);
  store::JobView v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kSubmitUnknown);
  EXPECT_EQ(v.attempts[0].lookups, 1);
  EXPECT_NE(v.job.reason.find("not proof"), std::string::npos) << v.job.reason;
  // Not again before the backoff; then again, with a longer one.
  EXPECT_EQ(reconciler_->tick().listings, 0);
  clock_.advance(lookupDelay(1));
  EXPECT_EQ(reconciler_->tick().listings, 1);
  EXPECT_EQ(view(id).attempts[0].lookups, 2);
  EXPECT_EQ(view(id).attempts[0].next_lookup_ms, clock_.nowMs() + lookupDelay(2).count());

  auto refused = service_->abandon(id, 1, "ops-bob", "");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "control.no_reason");
  ASSERT_TRUE(service_->abandon(id, 1, "ops-bob", "slurmctld lost its state"));
  reconciler_->tick();
  v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kFailed);
  EXPECT_EQ(v.attempts[0].phase, AttemptPhase::kAbandoned);
  EXPECT_EQ(v.attempts[0].cause, EndCause::kAbandoned);
  EXPECT_NE(v.job.reason.find("ops-bob"), std::string::npos) << v.job.reason;
  bool recorded = false;
  for (const auto& e : events(id)) {
    recorded |= e.to == "Abandoned" && e.actor == "ops-bob" &&
                e.reason.find("slurmctld lost its state") != std::string::npos;
  }
  EXPECT_TRUE(recorded);
  EXPECT_EQ(v.attempts.size(), 1u);  // never a second submit
  EXPECT_EQ(sim_->jobCount(), 0u);
}

TEST_F(ReconcilerFaultsTest, ACrashAfterEachSubmitStepLeavesExactlyOneSlurmJob) {
  for (const SubmitStep step :
       {SubmitStep::kAttemptDurable, SubmitStep::kStaged, SubmitStep::kSubmittingDurable,
        SubmitStep::kSubmitAnswered, SubmitStep::kReceiptDurable, SubmitStep::kSluidsDurable}) {
    SCOPED_TRACE(std::string(toString(step)));
    const std::string id = submit(cpuSpec("echo crash test"));
    {
      ReconcilerOptions o = options();
      o.step_hook = [step](SubmitStep at, const std::string&, int) {
        if (at == step) throw FaultCrash{};
      };
      Reconciler dying(store(), *client_, *launcher_, clock_, o);
      EXPECT_THROW(dying.tick(), FaultCrash);
    }
    reconciler_ = makeReconciler();  // "restarted": no memory of the dead one
    if (step == SubmitStep::kSubmittingDurable) {
      // Stopped after Submitting was durable and before the POST: whether the request left
      // cannot be known, so the attempt looks for its token and never submits again. No
      // job exists, so only an operator can end the wait.
      for (int i = 0; i < 3; ++i) reconciler_->tick();
      const store::JobView v = view(id);
      EXPECT_EQ(v.job.phase, JobPhase::kSubmitUnknown);
      EXPECT_EQ(slurmJobsWithToken(v.attempts[0].submit_token), 0);
      ASSERT_TRUE(service_->abandon(id, 1, "ops", "checked: it never reached Slurm"));
      ASSERT_TRUE(tickUntilPhase(id, JobPhase::kFailed));
      EXPECT_EQ(slurmJobsWithToken(v.attempts[0].submit_token), 0);
      continue;
    }
    ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
    const store::JobView v = view(id);
    ASSERT_EQ(v.attempts.size(), 1u);
    EXPECT_EQ(slurmJobsWithToken(v.attempts[0].submit_token), 1);
    EXPECT_EQ(hasStep(trail(id), "a1:Submitting→SubmitUnknown"),
              step == SubmitStep::kSubmitAnswered);
  }
}

TEST_F(ReconcilerFaultsTest, ASubmitThatNeverLeftIsSentAgainAfterABackoff) {
  // A slurmrestd that refuses connections: provably not sent.
  catalog::SlurmSite dead = context_.site.slurm;
  dead.url = "http://127.0.0.1:1";
  auto dead_client = slurm::SlurmRestClient::fromSite(dead);
  ASSERT_TRUE(dead_client);
  Reconciler offline(store(), **dead_client, *launcher_, clock_, options());
  const std::string id = submit(cpuSpec("echo later"));
  EXPECT_EQ(offline.tick().submits, 1);
  store::JobView v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kStaging);
  EXPECT_EQ(v.attempts[0].phase, AttemptPhase::kStaging);
  EXPECT_NE(v.job.reason.find("did not reach Slurm"), std::string::npos) << v.job.reason;
  EXPECT_EQ(offline.tick().submits, 0);  // backoff
  clock_.advance(kResendInitialDelay);
  EXPECT_EQ(offline.tick().submits, 1);
  // slurmrestd is back: the same staged attempt is submitted, once.
  clock_.advance(resendDelay(2));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  v = view(id);
  ASSERT_EQ(v.attempts.size(), 1u);
  EXPECT_EQ(slurmJobsWithToken(v.attempts[0].submit_token), 1);
}

TEST_F(ReconcilerFaultsTest, ASubmitSlurmRefusesFailsTheJobWithSlurmsError) {
  const std::string id = submit(cpuSpec("echo x", "", "hello", "        partition: nosuch\n"));
  reconciler_->tick();
  const store::JobView v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kFailed);
  EXPECT_EQ(v.attempts[0].cause, EndCause::kRejected);
  EXPECT_NE(v.job.reason.find("Slurm refused the submit"), std::string::npos) << v.job.reason;
  EXPECT_TRUE(fs::exists(v.attempts[0].staging_dir + "/job.sh"));
}

TEST_F(ReconcilerPurgeTest, AReusedNumericIdIsNeverTakenForOurs) {
  const std::string id = submit(cpuSpec("sleep 60"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning));
  const store::AttemptRecord ours = view(id).attempts[0];
  ASSERT_TRUE(waitFor([&] { return fs::exists(ours.staging_dir + "/logs/start-main.json"); }));
  // While TunePlane is not looking: our job dies and is purged, slurmctld restarts, and
  // someone else's job gets our numeric id — in the same RUNNING state we last saw.
  ASSERT_TRUE(sim_->endJob(ours.components[0].sluid, "NODE_FAIL"));
  ASSERT_TRUE(waitFor([&] { return sim_->jobCount() == 0; }));
  sim_->restart();
  const int other = SimFixture::submit(jobBody("sleep 60"));
  ASSERT_EQ(static_cast<uint64_t>(other), ours.slurm_job_id);
  ASSERT_TRUE(waitState(std::to_string(other), json::array({"RUNNING"})));

  for (int i = 0; i < 3; ++i) reconciler_->tick();
  store::JobView v = view(id);
  EXPECT_EQ(v.attempts[0].components[0].sluid, ours.components[0].sluid);
  EXPECT_EQ(v.attempts[0].missing_polls, 0);  // same state under the same id: not yet seen
  // The slow refresh reads by SLUID: ours is gone; the other job is not adopted.
  clock_.advance(options().full_refresh_interval);
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kFailed));
  v = view(id);
  EXPECT_EQ(v.attempts[0].cause, EndCause::kUnobserved);
  EXPECT_EQ(v.attempts[0].components[0].sluid, ours.components[0].sluid);
  EXPECT_NE(v.job.reason.find("ended unobserved"), std::string::npos) << v.job.reason;
  EXPECT_EQ(state(std::to_string(other)), json::array({"RUNNING"}));  // left alone
}

TEST_F(ReconcilerPurgeTest, AJobPurgedWhileUnwatchedIsJudgedByItsExitSentinel) {
  const std::string ok_id = submit(cpuSpec("echo fine"));
  const std::string bad_id = submit(cpuSpec("exit 5", "", "bad"));
  reconciler_->tick();  // both submitted; then TunePlane looks away
  ASSERT_TRUE(waitFor([&] { return sim_->jobCount() == 0; }));
  ASSERT_TRUE(tickUntilPhase(ok_id, JobPhase::kSucceeded));
  ASSERT_TRUE(tickUntilPhase(bad_id, JobPhase::kFailed));
  const store::JobView ok = view(ok_id);
  const store::JobView bad = view(bad_id);
  EXPECT_NE(ok.job.reason.find("exit sentinel"), std::string::npos) << ok.job.reason;
  EXPECT_EQ(bad.attempts[0].cause, EndCause::kUser);
  EXPECT_NE(bad.job.reason.find("exit code 5"), std::string::npos) << bad.job.reason;
  EXPECT_GE(bad.attempts[0].missing_polls, kMissingPollsToJudge);
}

// slurmctld forgets a job MinJobAge after it ended (e.g. while serve was down); a node failure
// kills the script before it can write its exit sentinel. With slurmdbd (the simulator's
// --accounting), the run's record says how it ended: a node failure, retried as
// infrastructure — not "ended unobserved", and never "lost". Without slurmdbd the same job is
// judged from its start sentinel alone.
class ReconcilerForgottenJobTest : public ReconcilerPurgeTest {
 protected:
  void tune(sim::SimulatorOptions& o) override {
    ReconcilerPurgeTest::tune(o);
    o.accounting = accounting_;
  }
  // A node fails under the running job while TunePlane looks away; slurmctld forgets it.
  std::string forgottenNodeFailure() {
    const std::string id =
        submit(cpuSpec("sleep 60", retryBlock(2, 0, "infrastructure"), "forgotten"));
    EXPECT_TRUE(tickUntilPhase(id, JobPhase::kRunning));
    const std::string dir = view(id).attempts[0].staging_dir;
    EXPECT_TRUE(waitFor([&] { return fs::exists(dir + "/logs/start-main.json"); }));
    EXPECT_TRUE(sim_->endJob(view(id).attempts[0].components[0].sluid, "NODE_FAIL"));
    EXPECT_TRUE(waitFor([&] { return sim_->jobCount() == 0; }));
    return id;
  }
  bool accounting_ = true;
};

TEST_F(ReconcilerForgottenJobTest, ANodeFailureSlurmctldForgotIsJudgedFromSlurmdbdsRecord) {
  const std::string id = forgottenNodeFailure();
  ASSERT_TRUE(tickUntil(
      id, [](const store::JobView& v) { return phase::isTerminal(v.attempts[0].phase); }));
  const store::AttemptRecord first = view(id).attempts[0];
  EXPECT_EQ(first.phase, AttemptPhase::kFailed);
  EXPECT_EQ(first.cause, EndCause::kInfrastructure);
  EXPECT_NE(first.reason.find("slurmdbd's record"), std::string::npos) << first.reason;
  EXPECT_GE(first.missing_polls, kMissingPollsToJudge);
  // An infrastructure failure: retried under retry.on infrastructure.
  EXPECT_TRUE(tickUntil(id, [](const store::JobView& v) { return v.attempts.size() == 2; }));
}

class ReconcilerForgottenJobWithoutSlurmdbdTest : public ReconcilerForgottenJobTest {
 protected:
  void SetUp() override {
    accounting_ = false;
    ReconcilerForgottenJobTest::SetUp();
  }
};

TEST_F(ReconcilerForgottenJobWithoutSlurmdbdTest, TheSameJobIsJudgedFromItsStartSentinel) {
  const std::string id = forgottenNodeFailure();
  ASSERT_TRUE(tickUntil(
      id, [](const store::JobView& v) { return phase::isTerminal(v.attempts[0].phase); }));
  const store::AttemptRecord first = view(id).attempts[0];
  EXPECT_EQ(first.phase, AttemptPhase::kFailed);
  EXPECT_EQ(first.cause, EndCause::kUnobserved);
  EXPECT_NE(first.reason.find("ended unobserved"), std::string::npos) << first.reason;
}

TEST_F(ReconcilerPurgeTest, AJobWithNoRecordAndNoSentinelIsLostAfterSeveralChecks) {
  sim_->pauseScheduling(true);
  const std::string id = submit(cpuSpec("echo never started", retryBlock(2, 0, "infrastructure")));
  reconciler_->tick();
  ASSERT_EQ(view(id).job.phase, JobPhase::kQueued);
  ASSERT_TRUE(delAsSlurmUser("/job/" + std::to_string(view(id).attempts[0].slurm_job_id)));
  ASSERT_TRUE(waitFor([&] { return sim_->jobCount() == 0; }));
  for (int i = 1; i < kMissingPollsToJudge; ++i) {
    reconciler_->tick();
    EXPECT_EQ(view(id).attempts[0].missing_polls, i);
    EXPECT_EQ(view(id).job.phase, JobPhase::kQueued);  // one empty answer proves nothing
  }
  reconciler_->tick();
  const store::JobView v = view(id);
  EXPECT_EQ(v.attempts[0].phase, AttemptPhase::kFailed);
  EXPECT_EQ(v.attempts[0].cause, EndCause::kInfrastructure);
  EXPECT_NE(v.attempts[0].reason.find("lost"), std::string::npos) << v.attempts[0].reason;
  EXPECT_EQ(v.job.phase, JobPhase::kRetrying);  // lost is an infrastructure failure
}

// A submit carried out twice on an idle cluster: both copies start before any poll could
// cancel one. Here the later copy starts first (the earlier one is held back a moment): it
// claims the attempt, the earlier one then finds the claim and runs nothing, and TunePlane,
// finding both by the token, keeps the claimant, not the earliest submitted.
TEST_F(ReconcilerFaultsTest, ADoubledSubmitThatBothStartRunsOnceAndTheClaimantIsKept) {
  sim_->pauseScheduling(true);
  sim_->duplicateNextSubmits(1);
  sim_->dropNextSubmitResponses(1);
  const std::string id =
      submit(cpuSpec("echo ran >> \"$TUNEPLANE_OUTPUT_DIR/runs\"; sleep 1", "", "twice"));
  reconciler_->tick();
  const store::AttemptRecord attempt = view(id).attempts[0];
  ASSERT_EQ(attempt.phase, AttemptPhase::kSubmitUnknown) << attempt.reason;
  std::vector<std::string> copies;
  for (const auto& j : allSlurmJobs()) {
    if (j.value("comment", "") == attempt.submit_token) {
      copies.push_back(std::to_string(j.value("job_id", 0)));
    }
  }
  ASSERT_EQ(copies.size(), 2u);
  ASSERT_TRUE(sim_->neverStart(copies[0], "Priority"));  // the earlier copy waits
  sim_->pauseScheduling(false);
  const fs::path claim = fs::path(attempt.staging_dir) / "logs/claim";
  ASSERT_TRUE(waitFor([&] { return readFile(claim.string()) == copies[1] + "\n"; }));
  ASSERT_TRUE(sim_->neverStart(copies[0], ""));  // now it starts, and finds the claim
  ASSERT_TRUE(waitState(copies[0], {"FAILED"}));
  EXPECT_EQ(job(copies[0])[0]["exit_code"]["return_code"]["number"], slurm::kExitAlreadyClaimed);

  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  const store::JobView v = view(id);
  ASSERT_EQ(v.attempts.size(), 1u);
  EXPECT_EQ(std::to_string(v.attempts[0].slurm_job_id), copies[1]);
  bool named = false;
  for (const auto& e : events(id))
    named = named || e.reason.find("claimed the attempt") != std::string::npos;
  EXPECT_TRUE(named) << "no event says the claimant was kept";
  const std::string runs = readFile((fs::path(attempt.staging_dir) / "output/runs").string());
  EXPECT_EQ(std::count(runs.begin(), runs.end(), '\n'), 1) << runs;
}

// The same doubled submit with its answer delivered: the receipt names the first copy, and
// TunePlane does not know the second exists. The second starts first and claims the attempt;
// the first exits 71. TunePlane must then find the claimant by the token and follow it, not
// fail the attempt (a retry would run the work a second time beside the claimant).
TEST_F(ReconcilerFaultsTest, AReceiptNamingTheCopyThatFoundTheAttemptClaimedMovesToTheClaimant) {
  sim_->pauseScheduling(true);
  sim_->duplicateNextSubmits(1);
  const std::string id = submit(cpuSpec("echo ran >> \"$TUNEPLANE_OUTPUT_DIR/runs\"; sleep 1",
                                        retryBlock(2, 0, "any"), "answered"));
  reconciler_->tick();
  const store::AttemptRecord attempt = view(id).attempts[0];
  ASSERT_EQ(attempt.phase, AttemptPhase::kQueued) << attempt.reason;
  const std::string named = std::to_string(attempt.slurm_job_id);
  std::string other;
  for (const auto& j : allSlurmJobs()) {
    const std::string num = std::to_string(j.value("job_id", 0));
    if (j.value("comment", "") == attempt.submit_token && num != named) other = num;
  }
  ASSERT_FALSE(other.empty()) << "the submit was not carried out twice";
  ASSERT_TRUE(sim_->neverStart(named, "Priority"));  // the copy the receipt names waits
  sim_->pauseScheduling(false);
  const fs::path claim = fs::path(attempt.staging_dir) / "logs/claim";
  ASSERT_TRUE(waitFor([&] { return readFile(claim.string()) == other + "\n"; }));
  ASSERT_TRUE(sim_->neverStart(named, ""));
  ASSERT_TRUE(waitState(named, {"FAILED"}));  // it found the attempt claimed

  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kSucceeded));
  const store::JobView v = view(id);
  ASSERT_EQ(v.attempts.size(), 1u) << "a second attempt was made";
  EXPECT_EQ(std::to_string(v.attempts[0].slurm_job_id), other);
  const std::string runs = readFile((fs::path(attempt.staging_dir) / "output/runs").string());
  EXPECT_EQ(std::count(runs.begin(), runs.end(), '\n'), 1) << runs;
}

class ReconcilerRequeueTest : public ReconcilerFaultsTest {
 protected:
  // A site that lets a requeued job start again soon (SchedulerParameters=requeue_delay=0
  // would let it start at once): TunePlane cannot be trusted to cancel it in time.
  void tune(sim::SimulatorOptions& o) override { o.requeue_delay = 300ms; }
  json historyOf(const std::string& slurm_id) {
    const json history = sim_->history();
    for (const json& j : history["jobs"]) {
      if (std::to_string(j.value("job_id", 0)) == slurm_id) return j;
    }
    return json();
  }
};

// A user's cancel that meets an administrator's requeue (the fault campaign's seed
// 12488474279110387694): the DELETE of the SLUID TunePlane holds finds nothing, since the
// requeue gave the job a new one, so it counts as heard and the attempt is Cancelling; the
// next poll finds the requeued job by its token, but its DELETE is not heard (it times out).
// The attempt must cancel it again, not wait for a Slurm that will instead start it again.
class ReconcilerCancelMeetsRequeueTest : public ReconcilerFaultsTest {
 protected:
  void tune(sim::SimulatorOptions& o) override { o.requeue_delay = 60s; }
  std::string extraSlurmYaml() override { return "  request_timeout: 1s\n"; }
};

TEST_F(ReconcilerCancelMeetsRequeueTest, ARequeuedJobWhoseCancelWasNotHeardIsCancelledAgain) {
  const std::string id = submit(cpuSpec("sleep 60", "", "rq"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning));
  const store::AttemptRecord first = view(id).attempts[0];
  const std::string slurm_id = slurmIdOf(first.submit_token);
  ASSERT_TRUE(sim_->requeueJob(slurm_id, false));
  ASSERT_TRUE(waitFor([&] {
    const json j = job(slurm_id);
    return j.is_array() && !j.empty() && j[0]["step_id"]["sluid"] != first.components[0].sluid &&
           j[0]["job_state"] == json::array({"PENDING"});
  }));
  ASSERT_TRUE(sim_->stallDeletes(slurm_id, 1, 3s));  // the DELETE of the new SLUID
  ASSERT_TRUE(service_->cancel(id, "ann"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kCancelled, 30s));
  const json record = job(slurm_id)[0];
  EXPECT_EQ(record["job_state"], json::array({"CANCELLED"}));
  EXPECT_EQ(sim_->history()["jobs"][0]["starts"], 1);  // never started again
}

// The same meeting when TunePlane last saw the job PENDING (seed 11872089177346762027): it
// started and was requeued between two polls, so the state list still says PENDING — nothing
// changed, as far as it shows — while the SLUID is new. The user's DELETE of the stored
// SLUID finds nothing; that alone must send TunePlane to read the job, find it by its token
// under the new SLUID and cancel it there, rather than wait for Slurm to start it again.
TEST_F(ReconcilerCancelMeetsRequeueTest, ARequeueBetweenTwoPollsIsFoundWhenTheCancelFindsNoJob) {
  sim_->pauseScheduling(true);
  const std::string id = submit(cpuSpec("sleep 60", "", "rq"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kQueued));
  const store::AttemptRecord first = view(id).attempts[0];
  const std::string slurm_id = slurmIdOf(first.submit_token);
  sim_->pauseScheduling(false);  // no tick: it starts, and is requeued, unseen
  ASSERT_TRUE(waitState(slurm_id, {"RUNNING"}));
  ASSERT_TRUE(sim_->requeueJob(slurm_id, false));
  ASSERT_TRUE(waitFor([&] {
    const json j = job(slurm_id);
    return j.is_array() && !j.empty() && j[0]["step_id"]["sluid"] != first.components[0].sluid &&
           j[0]["job_state"] == json::array({"PENDING"});
  }));
  ASSERT_TRUE(service_->cancel(id, "ann"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kCancelled, 30s));
  EXPECT_EQ(job(slurm_id)[0]["job_state"], json::array({"CANCELLED"}));
  EXPECT_EQ(sim_->history()["jobs"][0]["starts"], 1);  // never started again
}

// An administrator requeues a running job while TunePlane is not looking (serve stopped,
// or just slower than the site's requeue delay), and Slurm starts it again under a new
// SLUID. The restart runs nothing (the script refuses it), the first run's log survives it
// (open_mode APPEND), and TunePlane, when it looks, ends the attempt as requeued.
TEST_F(ReconcilerRequeueTest, ARestartBeforeTunePlaneLooksRunsNothingAndKeepsTheFirstRunsLog) {
  const std::string id = submit(cpuSpec(
      "echo first-run-output; echo ran >> \"$TUNEPLANE_OUTPUT_DIR/runs\"; sleep 60", "", "rq"));
  ASSERT_TRUE(tickUntilPhase(id, JobPhase::kRunning));
  const store::AttemptRecord first = view(id).attempts[0];
  const fs::path runs = fs::path(first.staging_dir) / "output/runs";
  ASSERT_TRUE(waitFor([&] { return fs::exists(runs); }));
  const std::string slurm_id = slurmIdOf(first.submit_token);
  ASSERT_TRUE(sim_->requeueJob(slurm_id, false));
  // No tick: Slurm restarts the job and its script ends.
  ASSERT_TRUE(waitFor([&] {
    const json h = historyOf(slurm_id);
    return h.is_object() && h["runs"].size() == 2 && h["runs"][1].contains("exit_code");
  }));
  EXPECT_EQ(historyOf(slurm_id)["runs"][1]["restart_cnt"], 1);
  EXPECT_EQ(historyOf(slurm_id)["runs"][1]["exit_code"], slurm::kExitRestartRefused);

  ASSERT_TRUE(tickUntil(
      id, [](const store::JobView& v) { return phase::isTerminal(v.attempts[0].phase); }));
  const store::AttemptRecord ended = view(id).attempts[0];
  EXPECT_EQ(ended.phase, AttemptPhase::kFailed);
  EXPECT_EQ(ended.cause, EndCause::kInfrastructure);
  EXPECT_NE(ended.reason.find("requeued"), std::string::npos) << ended.reason;
  EXPECT_EQ(readFile(runs.string()), "ran\n");  // the command ran once
  std::string out, err;
  for (const auto& entry : fs::directory_iterator(fs::path(first.staging_dir) / "logs")) {
    if (entry.path().extension() == ".out") out += readFile(entry.path().string());
    if (entry.path().extension() == ".err") err += readFile(entry.path().string());
  }
  EXPECT_NE(out.find("first-run-output"), std::string::npos) << "the restart truncated the log";
  EXPECT_NE(err.find("Slurm started this job again"), std::string::npos) << err;
}

}  // namespace
}  // namespace tuneplane::control::testing
