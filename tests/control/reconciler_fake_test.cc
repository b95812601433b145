// The reconciler's tick() against FakeSlurmClient and a FakeClock (reconciler_fake_fixture.h):
// the submit protocol, lost receipts with 0, 1 and 2 matching Slurm jobs, and the Slurm edge
// cases of issue 17 part 1 — two jobs with one token, Slurm's requeue (same SLUID, and a new
// one), het survivors whose cancel failed, jobs Slurm can never start, and a staged attempt
// re-checked before it is sent again. No simulator, no threads, no sleeps.
#include <filesystem>

#include "control/decisions.h"
#include "reconciler_fake_fixture.h"

namespace tuneplane::control::testing {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using phase::JobPhase;

TEST_F(FakeReconcilerTest, ASuccessfulJobThroughEveryPhase) {
  const std::string id = submit();
  tick();
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  EXPECT_EQ(slurm_.count(Op::kSubmit), 1);
  ASSERT_EQ(slurm_.jobsWithToken(token(id)).size(), 1u);
  const std::string s = sluid(id);
  EXPECT_EQ(s, slurm_.jobsWithToken(token(id)).front()->sluid);

  slurm_.setState(s, {"RUNNING"});
  next();
  EXPECT_EQ(phase(id), JobPhase::kRunning);
  slurm_.setState(s, {"COMPLETED", "COMPLETING"}, "None", 0);
  next();
  EXPECT_EQ(phase(id), JobPhase::kReleasing);
  slurm_.setState(s, {"COMPLETED"}, "None", 0);
  next();
  EXPECT_EQ(phase(id), JobPhase::kSucceeded);
  EXPECT_EQ(slurm_.count(Op::kSubmit), 1);
  EXPECT_EQ(slurm_.count(Op::kCancel), 0);
}

TEST_F(FakeReconcilerTest, EveryReceiptIsReadBackOnlyAfterEverySubmitOfTheTick) {
  // A read-back costs slurmrestd about what a submit does: no job waits for Slurm's queue
  // behind another job's read.
  const std::vector<std::string> ids = {submit(), submit(), submit()};
  tick();
  std::vector<Op> ops;
  for (const auto& call : slurm_.calls()) ops.push_back(call.op);
  EXPECT_EQ(ops, (std::vector<Op>{Op::kSubmit, Op::kSubmit, Op::kSubmit, Op::kGetJob, Op::kGetJob,
                                  Op::kGetJob}));
  for (const auto& id : ids) {
    EXPECT_EQ(phase(id), JobPhase::kQueued) << view(id).job.reason;
    EXPECT_FALSE(sluid(id).empty()) << id;
  }
}

TEST_F(FakeReconcilerTest, OnlyTheCommitsAStartNeedsBeforeItsSubmitWaitForASync) {
  // The new attempt and Submitting are synced before the POST; the receipt and the SLUIDs
  // are not (a crash of the machine that loses them is recovered by the token lookup and a
  // second read), and the read-backs of one tick share one transaction.
  submit();
  submit();
  const store::GroupCommitStats before = store_->writeStats();
  tick();
  const store::GroupCommitStats after = store_->writeStats();
  // Per job: the new attempt, Submitting, the receipt; then one batch of SLUIDs for both.
  EXPECT_EQ(after.writes - before.writes, 2 * 3 + 1);
  EXPECT_EQ(after.unsynced - before.unsynced, 2 + 1);
}

TEST_F(FakeReconcilerTest, NothingChangedMeansNoReadBySluidAndNoWrite) {
  const std::string id = queued();
  next();  // the first poll of this process verifies the job by SLUID once
  slurm_.clearCalls();
  const auto before = view(id);
  next();
  EXPECT_EQ(slurm_.count(Op::kListJobStates), 1);
  EXPECT_EQ(slurm_.count(Op::kGetJob), 0);
  EXPECT_EQ(view(id), before);
}

// --- lost receipts: 0, 1 and 2 matching jobs ---

TEST_F(FakeReconcilerTest, LostReceiptWithNoMatchingJobIsLookedForAgainAndNothingIsResent) {
  const std::string id = submit();
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/false);
  tick();
  EXPECT_EQ(phase(id), JobPhase::kSubmitUnknown);
  next();
  EXPECT_EQ(phase(id), JobPhase::kSubmitUnknown);
  EXPECT_EQ(attempt(view(id)).lookups, 1);
  EXPECT_EQ(slurm_.count(Op::kListJobs), 1);
  next(1min);
  EXPECT_EQ(slurm_.count(Op::kSubmit), 1);
}

TEST_F(FakeReconcilerTest, LostReceiptWithOneMatchingJobIsAdopted) {
  const std::string id = submit();
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/true);
  tick();
  EXPECT_EQ(phase(id), JobPhase::kSubmitUnknown);
  next();
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  EXPECT_EQ(sluid(id), slurm_.jobsWithToken(token(id)).front()->sluid);
  EXPECT_EQ(slurm_.count(Op::kCancel), 0);
  EXPECT_TRUE(observer_.duplicates().empty());
}

// The fault campaign's seed 2107 (issue 21): the receipt was lost, and Slurm requeued the
// job before TunePlane found it by its token; adopted as "queued (BeginTime)", it ran again.
TEST_F(FakeReconcilerTest, ALostReceiptFoundAfterARequeueEndsTheAttemptAndCancelsTheJob) {
  const std::string id = submit();
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/true);
  tick();
  EXPECT_EQ(phase(id), JobPhase::kSubmitUnknown);
  const slurm::JobRecord* made = slurm_.jobsWithToken(token(id)).front();
  const std::string fresh = slurm_.requeue(made->sluid, {"PENDING"}, "BeginTime");
  next();
  const auto v = view(id);
  EXPECT_EQ(attempt(v).phase, AttemptPhase::kFailed) << attempt(v).reason;
  EXPECT_EQ(attempt(v).cause, EndCause::kInfrastructure);
  EXPECT_EQ(slurm_.args(Op::kCancel), std::vector<std::string>{fresh});
  EXPECT_EQ(slurm_.record(fresh).job_state, std::vector<std::string>{"CANCELLED"});
}

// The fault campaign's seed 2110 (issue 21): a submit made two jobs (the copy cancelled), then
// the adopted one was purged before its end was seen. Found by its token, the cancelled copy
// was taken for a requeue and the attempt held Releasing forever; a copy (restart_cnt 0) is no
// requeue: the job is judged from its sentinels, as any job Slurm forgot.
TEST_F(FakeReconcilerTest, APurgedJobWhoseCancelledCopyRemainsIsJudgedAsMissingNotRequeued) {
  const std::string id = submit();
  slurm_.setSubmitCopies(2);
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/true);
  tick();
  next();  // found: the earliest kept, the copy cancelled
  ASSERT_EQ(slurm_.jobsWithToken(token(id)).size(), 2u);
  slurm_.purge(sluid(id));
  for (int i = 0; i < 4; ++i) next();
  EXPECT_TRUE(phase::isTerminal(phase(id))) << view(id).job.reason;
  EXPECT_EQ(view(id).job.reason.find("requeued"), std::string::npos) << view(id).job.reason;
}

// Issue 17, 1.1: a proxy that sent the POST twice and lost the answer.
TEST_F(FakeReconcilerTest, TwoJobsWithOneTokenAdoptTheEarliestAndCancelTheOther) {
  const std::string id = submit();
  slurm_.setSubmitCopies(2);
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/true);
  tick();
  const auto twins = slurm_.jobsWithToken(token(id));
  ASSERT_EQ(twins.size(), 2u);
  const std::string first = twins[0]->sluid;
  const std::string second = twins[1]->sluid;
  next();
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  EXPECT_EQ(sluid(id), first);
  EXPECT_EQ(slurm_.args(Op::kCancel), std::vector<std::string>{second});
  EXPECT_EQ(slurm_.record(second).job_state, std::vector<std::string>{"CANCELLED"});
  EXPECT_EQ(slurm_.record(first).job_state, std::vector<std::string>{"PENDING"});
  EXPECT_TRUE(anyEventSays(id, second)) << "the event names the duplicate";
  EXPECT_TRUE(anyEventSays(id, "cancelled"));
  EXPECT_EQ(observer_.duplicates(), std::vector<int>{1});
  // It stays cancelled: the adopted job is followed, the other never again.
  slurm_.setState(first, {"RUNNING"});
  next();
  EXPECT_EQ(phase(id), JobPhase::kRunning);
  EXPECT_EQ(slurm_.count(Op::kCancel), 1);
}

TEST_F(FakeReconcilerTest, TheEarliestSubmitTimeWinsThenTheLowestId) {
  const std::string id = submit();
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/false);
  tick();
  // Made elsewhere: a later-numbered job submitted first wins over a lower id.
  const std::string late = slurm_.addJob(token(id), 1, {"PENDING"}, "None", 2'000);
  const std::string early = slurm_.addJob(token(id), 1, {"PENDING"}, "None", 1'000);
  next();
  EXPECT_EQ(sluid(id), early);
  EXPECT_EQ(slurm_.args(Op::kCancel), std::vector<std::string>{late});
}

TEST_F(FakeReconcilerTest, ADuplicatedHetJobKeepsOneJobPerComponentAndCancelsTheOthers) {
  const std::string id = submit(hetJobSpec());
  slurm_.setSubmitCopies(2);
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/true);
  tick();
  const auto all = slurm_.jobsWithToken(token(id));
  ASSERT_EQ(all.size(), 4u);
  next();
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  const auto a = attempt(view(id));
  ASSERT_EQ(a.components.size(), 2u);
  EXPECT_EQ(a.components[0].sluid, all[0]->sluid);
  EXPECT_EQ(a.components[1].sluid, all[1]->sluid);
  auto cancelled = slurm_.args(Op::kCancel);
  std::sort(cancelled.begin(), cancelled.end());
  EXPECT_EQ(cancelled, (std::vector<std::string>{all[2]->sluid, all[3]->sluid}));
  EXPECT_EQ(observer_.duplicates(), std::vector<int>{1});
}

TEST_F(FakeReconcilerTest, ADuplicateWhoseCancelFailedIsCancelledOnALaterCycle) {
  const std::string id = submit();
  slurm_.setSubmitCopies(2);
  slurm_.failNext(Op::kSubmit, FakeSlurmClient::timeout(), 1, /*acted=*/true);
  tick();
  const std::string second = slurm_.jobsWithToken(token(id))[1]->sluid;
  slurm_.failNext(Op::kCancel, FakeSlurmClient::timeout());
  next();
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  EXPECT_EQ(slurm_.record(second).job_state, std::vector<std::string>{"PENDING"});
  next();
  EXPECT_EQ(slurm_.record(second).job_state, std::vector<std::string>{"CANCELLED"});
  next();
  EXPECT_EQ(slurm_.count(Op::kCancel), 2);
}

// --- Slurm's requeue (1.2) ---

TEST_F(FakeReconcilerTest, ARequeueEndsTheAttemptAndTheRequeuedJobIsCancelled) {
  const std::string id = running();
  const std::string s = sluid(id);
  slurm_.setState(s, {"PENDING", "REQUEUED"}, "BeginTime");
  next();
  const auto v = view(id);
  EXPECT_EQ(attempt(v).phase, AttemptPhase::kFailed);
  EXPECT_EQ(attempt(v).cause, EndCause::kInfrastructure);
  EXPECT_NE(attempt(v).reason.find("requeued"), std::string::npos) << attempt(v).reason;
  EXPECT_NE(attempt(v).reason.find("BeginTime"), std::string::npos) << attempt(v).reason;
  EXPECT_EQ(slurm_.args(Op::kCancel), std::vector<std::string>{s});
  EXPECT_EQ(slurm_.record(s).job_state, std::vector<std::string>{"CANCELLED"});
  EXPECT_EQ(v.job.phase, JobPhase::kFailed);  // max_attempts 1: the policy says no retry
}

TEST_F(FakeReconcilerTest, ARequeueStillCompletingHoldsTheAttemptReleasing) {
  const std::string id = running();
  const std::string s = sluid(id);
  slurm_.setState(s, {"PENDING", "REQUEUED", "COMPLETING"}, "NodeDown");
  next();
  EXPECT_EQ(phase(id), JobPhase::kReleasing);
  EXPECT_NE(view(id).job.reason.find("requeued"), std::string::npos) << view(id).job.reason;
  // The requeue completes: Slurm gives the job a new SLUID; the old one is gone.
  const std::string fresh = slurm_.requeue(s, {"PENDING", "REQUEUE_HOLD"}, "JobHeldAdmin");
  next();
  const auto v = view(id);
  EXPECT_EQ(attempt(v).phase, AttemptPhase::kFailed) << attempt(v).reason;
  EXPECT_EQ(attempt(v).cause, EndCause::kInfrastructure);
  EXPECT_NE(attempt(v).reason.find("requeued"), std::string::npos) << attempt(v).reason;
  EXPECT_EQ(slurm_.record(fresh).job_state, std::vector<std::string>{"CANCELLED"});
  EXPECT_FALSE(anyEventSays(id, "ended unobserved"));
}

TEST_F(FakeReconcilerTest, ARequeuedJobUnderANewSluidIsFoundByItsTokenAndRetriedByPolicy) {
  const std::string id =
      running(cpuSpec("true", "  retry:\n    max_attempts: 2\n    backoff_seconds: 30\n"));
  const std::string s = sluid(id);
  const std::string fresh = slurm_.requeue(s, {"PENDING"}, "BeginTime");
  next();
  const auto v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kRetrying) << v.job.reason;
  EXPECT_EQ(v.attempts.front().cause, EndCause::kInfrastructure);
  EXPECT_NE(v.attempts.front().reason.find("requeued"), std::string::npos);
  EXPECT_EQ(slurm_.args(Op::kCancel), std::vector<std::string>{fresh});
  // The retry is a new attempt with a new token; the requeued job never runs again.
  next(30s);
  EXPECT_EQ(view(id).attempts.size(), 2u);
  EXPECT_EQ(slurm_.record(fresh).job_state, std::vector<std::string>{"CANCELLED"});
}

TEST_F(FakeReconcilerTest, ARequeuedJobWhoseCancelFailsStaysReleasingUntilCancelled) {
  const std::string id = running();
  const std::string s = sluid(id);
  slurm_.setState(s, {"PENDING", "REQUEUED"}, "BeginTime");
  slurm_.failNext(Op::kCancel, FakeSlurmClient::timeout());
  next();
  EXPECT_EQ(phase(id), JobPhase::kReleasing);
  next();
  EXPECT_EQ(attempt(view(id)).phase, AttemptPhase::kFailed);
  EXPECT_EQ(slurm_.record(s).job_state, std::vector<std::string>{"CANCELLED"});
}

// The fault campaign's seed 1002 (issue 21): the requeued job's first DELETE timed out, and
// nothing re-sent it (the attempt's stored components read PENDING, with no REQUEUED flag on
// 26.05): after BeginTime it ran a second time and the attempt passed for Succeeded.
TEST_F(FakeReconcilerTest, ARequeuedJobUnderANewSluidWhoseCancelFailsIsCancelledAgainNextCycle) {
  const std::string id = running();
  const std::string fresh = slurm_.requeue(sluid(id), {"PENDING"}, "BeginTime");
  slurm_.failNext(Op::kCancel, FakeSlurmClient::timeout());
  next();
  EXPECT_EQ(phase(id), JobPhase::kReleasing);
  next();  // nothing changed in Slurm: the cancel is sent again
  EXPECT_EQ(slurm_.args(Op::kCancel), (std::vector<std::string>{fresh, fresh}));
  EXPECT_EQ(slurm_.record(fresh).job_state, std::vector<std::string>{"CANCELLED"});
  const auto v = view(id);
  EXPECT_EQ(attempt(v).phase, AttemptPhase::kFailed);
  EXPECT_EQ(attempt(v).cause, EndCause::kInfrastructure);
}

// The fault campaign's seeds 16855430511954106818 and …832 (issue 21): the cycle read the
// requeued job under the SLUID it had while its epilog ran; by the time the DELETE went out the
// requeue had finished and the job pended under a new SLUID, so Slurm answered "no such job".
// Taken as heard, the attempt ended and the job was left to run again after its BeginTime.
TEST_F(FakeReconcilerTest, ARequeuedJobsCancelAnsweredNoSuchJobIsSentAgainToItsNewSluid) {
  const std::string id = running();
  const std::string fresh = slurm_.requeue(sluid(id), {"PENDING"}, "BeginTime");
  slurm_.failNext(Op::kCancel,
                  FakeSlurmClient::error(slurm::kErrJobNotFound, slurm::TransportClass::kRejected));
  next();
  EXPECT_EQ(phase(id), JobPhase::kReleasing) << view(id).job.reason;
  next();
  EXPECT_EQ(slurm_.args(Op::kCancel), (std::vector<std::string>{fresh, fresh}));
  EXPECT_EQ(slurm_.record(fresh).job_state, std::vector<std::string>{"CANCELLED"});
  const auto v = view(id);
  EXPECT_EQ(attempt(v).phase, AttemptPhase::kFailed) << attempt(v).reason;
  EXPECT_EQ(attempt(v).cause, EndCause::kInfrastructure);
}

TEST_F(FakeReconcilerTest, ARequeuedJobThatRanAgainBeforeItsCancelGotThroughIsNoSuccess) {
  const std::string id = running();
  const std::string fresh = slurm_.requeue(sluid(id), {"PENDING"}, "BeginTime");
  slurm_.failNext(Op::kCancel, FakeSlurmClient::timeout());
  next();
  EXPECT_EQ(phase(id), JobPhase::kReleasing);
  slurm_.setState(fresh, {"COMPLETED"});  // it ran a second time, and ended
  next();
  const auto v = view(id);
  EXPECT_EQ(attempt(v).phase, AttemptPhase::kFailed) << attempt(v).reason;
  EXPECT_EQ(attempt(v).cause, EndCause::kInfrastructure);
  EXPECT_NE(attempt(v).reason.find("requeued"), std::string::npos) << attempt(v).reason;
}

// --- het survivors (1.3) ---

TEST_F(FakeReconcilerTest, HetSurvivorsAreCancelledEveryCycleUntilSlurmConfirmsTheEnd) {
  const std::string id = running(hetJobSpec());
  const std::string learners = sluid(id, 0);
  const std::string actors = sluid(id, 1);
  slurm_.setState(actors, {"NODE_FAIL"});
  slurm_.failNext(Op::kCancel, FakeSlurmClient::timeout(), 2);
  next();
  EXPECT_EQ(phase(id), JobPhase::kReleasing);
  EXPECT_EQ(slurm_.args(Op::kCancel), std::vector<std::string>{learners});
  next();  // nothing changed in Slurm: the cancel is still retried
  EXPECT_EQ(slurm_.count(Op::kCancel), 2);
  EXPECT_EQ(phase(id), JobPhase::kReleasing);
  next();
  EXPECT_EQ(slurm_.count(Op::kCancel), 3);
  EXPECT_EQ(slurm_.record(learners).job_state, std::vector<std::string>{"CANCELLED"});
  next();
  const auto v = view(id);
  EXPECT_EQ(attempt(v).phase, AttemptPhase::kFailed);
  EXPECT_EQ(attempt(v).cause, EndCause::kInfrastructure);
  next();
  EXPECT_EQ(slurm_.count(Op::kCancel), 3);
}

// --- jobs Slurm can never start (1.4) ---

TEST_F(FakeReconcilerTest, AJobSlurmCanNeverStartIsCancelledAndRejectedAfterTheGracePeriod) {
  slurm_.setSubmitState({"PENDING"}, "PartitionTimeLimit");
  const std::string id = queued();
  EXPECT_NE(view(id).job.reason.find("PartitionTimeLimit"), std::string::npos);
  next(4min);
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  EXPECT_EQ(slurm_.count(Op::kCancel), 0);
  next(2min);
  const auto v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kFailed);
  EXPECT_EQ(attempt(v).cause, EndCause::kRejected);
  EXPECT_NE(attempt(v).reason.find("time limit"), std::string::npos) << attempt(v).reason;
  EXPECT_NE(attempt(v).reason.find("PartitionTimeLimit"), std::string::npos);
  EXPECT_EQ(slurm_.args(Op::kCancel), std::vector<std::string>{sluid(id)});
}

TEST_F(FakeReconcilerTest, AWallClockStepForwardDoesNotCutTheGracePeriodShort) {
  // An NTP step of three hours is not three hours of waiting: the grace is measured on the
  // clock that never steps.
  slurm_.setSubmitState({"PENDING"}, "PartitionTimeLimit");
  const std::string id = queued();
  clock_.stepWall(3h);
  next(1min);
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  EXPECT_EQ(slurm_.count(Op::kCancel), 0);
  next(5min);
  EXPECT_EQ(phase(id), JobPhase::kFailed);
  EXPECT_EQ(slurm_.args(Op::kCancel), std::vector<std::string>{sluid(id)});
}

TEST_F(FakeReconcilerTest, AWaitingReasonStaysQueued) {
  slurm_.setSubmitState({"PENDING"}, "QOSJobLimit");
  const std::string id = queued();
  for (int i = 0; i < 10; ++i) next(1min);
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  EXPECT_EQ(slurm_.count(Op::kCancel), 0);
}

TEST_F(FakeReconcilerTest, AnAdministratorsFixWithinTheGraceKeepsTheJob) {
  slurm_.setSubmitState({"PENDING"}, "PartitionConfig");
  const std::string id = queued();
  next(2min);
  slurm_.setState(sluid(id), {"PENDING"}, "Priority");  // the partition was fixed
  next(4min);
  EXPECT_EQ(phase(id), JobPhase::kQueued) << view(id).job.reason;
  EXPECT_EQ(slurm_.count(Op::kCancel), 0);
}

// --- a job Slurm forgot (purged), with and without sentinels ---

using FakePurgeTest = FakeReconcilerTest;

TEST_F(FakePurgeTest, APurgedJobWithAnExitSentinelIsJudgedByIt) {
  const std::string id = running();
  writeAttemptLog(id, "main.out", "ran\n");
  writeAttemptLog(id, "start-main.json", R"({"version":1,"node":"cpu1","time":1700000000})");
  writeAttemptLog(
      id, "exit-main.json",
      R"({"version":1,"node":"cpu1","exit_code":0,"start_time":1700000000,"end_time":1700000100})");
  slurm_.purge(sluid(id));
  for (int i = 0; i < kMissingPollsToJudge; ++i) next();
  const auto v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kSucceeded) << v.job.reason;
  EXPECT_NE(attempt(v).reason.find("exit sentinel"), std::string::npos) << attempt(v).reason;
}

TEST_F(FakePurgeTest, APurgedJobWithoutSentinelsIsLostOnlyAfterSeveralChecks) {
  const std::string id = running();
  slurm_.purge(sluid(id));
  for (int i = 1; i < kMissingPollsToJudge; ++i) {
    next();
    EXPECT_EQ(phase(id), JobPhase::kRunning) << "one empty answer proves nothing";
  }
  next();
  const auto v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kFailed);
  EXPECT_EQ(attempt(v).cause, EndCause::kInfrastructure);
  EXPECT_NE(attempt(v).reason.find("lost"), std::string::npos) << attempt(v).reason;
  // Before judging, each miss looked for the job by its token (a requeue changes the SLUID).
  EXPECT_EQ(slurm_.count(Op::kListJobs), kMissingPollsToJudge);
}

TEST_F(FakePurgeTest, TheSentinelsAreReadThroughTheInjectedReader) {
  const std::string id = running();
  // No file in logs/: the reader alone says the job started and exited 0.
  const std::string dir = attempt(view(id)).staging_dir;
  attempt::AttemptSentinels sentinels;
  sentinels.start["main"] = attempt::StartSentinel{"cpu1", 1700000000};
  sentinels.exit["main"] = attempt::ExitSentinel{"cpu1", 0, 1700000000, 1700000100};
  files_.setSentinels(dir, sentinels);
  files_.setSchedulerLog(dir, "main");
  slurm_.purge(sluid(id));
  for (int i = 0; i < kMissingPollsToJudge; ++i) next();
  const auto v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kSucceeded) << v.job.reason;
  EXPECT_NE(attempt(v).reason.find("exit sentinel"), std::string::npos) << attempt(v).reason;
  EXPECT_GT(files_.sentinelReads(), 0);
}

// --- a staged attempt sent again (1.5) ---

TEST_F(FakeReconcilerTest, AStagedAttemptSentAgainIsCheckedAgainThroughTheVerifiersCache) {
  const std::string id = submit();
  slurm_.failNext(Op::kSubmit,
                  FakeSlurmClient::error(slurm::kErrNotSent, slurm::TransportClass::kNotSent));
  tick();
  EXPECT_EQ(phase(id), JobPhase::kStaging);
  const long long reads = verifier_.fullReads();
  next(1min);
  EXPECT_EQ(phase(id), JobPhase::kQueued);
  EXPECT_EQ(verifier_.fullReads(), reads) << "an unchanged artifact is a cache hit";
  EXPECT_EQ(slurm_.count(Op::kSubmit), 2);
}

TEST_F(FakeReconcilerTest, AStagedAttemptWhoseSubmitBodyCannotBeReadBackIsNotSent) {
  const std::string id = submit();
  slurm_.failNext(Op::kSubmit,
                  FakeSlurmClient::error(slurm::kErrNotSent, slurm::TransportClass::kNotSent));
  tick();
  ASSERT_EQ(phase(id), JobPhase::kStaging);
  files_.failStagedFile("submit.json");
  next(1min);
  EXPECT_GT(files_.stagedReads(), 0) << "the launcher reads what was staged through the reader";
  EXPECT_EQ(slurm_.count(Op::kSubmit), 1) << "nothing is sent that was not read back";
  // What was staged is what is submitted, or nothing: the attempt is refused, never
  // staged over.
  const auto v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kFailed);
  EXPECT_NE(attempt(v).reason.find("cannot be submitted"), std::string::npos) << attempt(v).reason;
}

TEST_F(FakeReconcilerTest, AStagedAttemptWhoseArtifactChangedIsNotSent) {
  const std::string id = submit();
  slurm_.failNext(Op::kSubmit,
                  FakeSlurmClient::error(slurm::kErrNotSent, slurm::TransportClass::kNotSent));
  tick();
  EXPECT_EQ(phase(id), JobPhase::kStaging);
  writeFile(site_->dir() + "/artifacts/demo.sif", "replaced by something else\n");
  next(1min);
  const auto v = view(id);
  EXPECT_EQ(v.job.phase, JobPhase::kFailed) << v.job.reason;
  EXPECT_NE(v.job.reason.find("sha256"), std::string::npos) << v.job.reason;
  EXPECT_EQ(slurm_.count(Op::kSubmit), 1);
}

}  // namespace
}  // namespace tuneplane::control::testing
