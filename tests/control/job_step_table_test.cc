// The control loop's step (job_step.h) as tables: a stored view, this cycle's facts (with "no
// answer" a value of its own), the attempt's memory and the time in; the plan out. Every
// defect of issue 37 where two faults met, and the fault campaign's seeds that reached the
// step, is a row here: no process, no store, no sleep.
#include "control/job_step.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "slurm/script_renderer.h"

namespace tuneplane::control {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using phase::JobPhase;

constexpr int64_t kNow = 1'800'000'000'000;  // ms
constexpr int64_t kSteady = 5'000'000;
const std::string kToken = "tp-0123456789abcdef0123456789abcdef";
const std::string kSluid = "sCC1M8VPKSJX00";
const std::string kOtherSluid = "sCC1M8VPKSJX11";
const std::string kDir = "/stage/jobs/tune-0000beef/attempts/1";

store::AttemptRecord attemptIn(AttemptPhase phase, int number = 1) {
  store::AttemptRecord a;
  a.job_id = "tune-0000beef";
  a.number = number;
  a.phase = phase;
  a.submit_token = number == 1 ? kToken : "tp-" + std::string(31, 'a') + std::to_string(number);
  a.staging_dir = kDir;
  a.created_ms = kNow - 600'000;
  a.submitted_ms = kNow - 600'000;
  store::ComponentRecord c;
  c.pool = "main";
  if (phase != AttemptPhase::kStaging && phase != AttemptPhase::kSubmitting &&
      phase != AttemptPhase::kSubmitUnknown) {
    a.slurm_job_id = 101;
    c.slurm_job_id = 101;
  }
  if (phase == AttemptPhase::kQueued || phase == AttemptPhase::kRunning ||
      phase == AttemptPhase::kCancelling || phase == AttemptPhase::kReleasing) {
    c.sluid = kSluid;
    c.state = {phase == AttemptPhase::kQueued ? "PENDING" : "RUNNING"};
    c.reason = phase == AttemptPhase::kQueued ? "Priority" : "None";
  }
  a.components.push_back(c);
  return a;
}

store::JobView jobWith(JobPhase phase, std::vector<store::AttemptRecord> attempts) {
  store::JobView v;
  v.job.id = "tune-0000beef";
  v.job.name = "tune";
  v.job.owner = "ann";
  v.job.phase = phase;
  v.job.version = 7;
  v.attempts = std::move(attempts);
  return v;
}

slurm::JobRecord record(const std::string& sluid, uint64_t id, const std::string& state,
                        int64_t restarts = 0) {
  slurm::JobRecord r;
  r.job_id = id;
  r.sluid = sluid;
  r.comment = kToken;
  r.user_name = "tp";
  r.job_state = {state};
  r.state_reason = state == "PENDING" ? "Priority" : "None";
  r.submit_time = {true, false, 1'700'000'000};
  r.restart_cnt = restarts;
  return r;
}

attempt::AttemptSentinels noSentinels() {
  return {};
}

JobFacts withFiles(JobFacts facts, attempt::AttemptSentinels sentinels = noSentinels()) {
  facts.sentinels = std::move(sentinels);
  facts.scheduler_log_missing = false;
  return facts;
}

JobFacts withAccounting(JobFacts facts, std::vector<slurm::AccountingRun> runs) {
  facts.accounting = std::move(runs);
  return facts;
}

// slurmdbd's record of the attempt's run (job 101 under kSluid), ended in `state`.
slurm::AccountingRun recordedRun(std::vector<std::string> state) {
  slurm::AccountingRun run;
  run.job_id = 101;
  run.sluid = kSluid;
  run.state = std::move(state);
  run.end_time = 1'700'000'000;
  run.working_directory = kDir;
  return run;
}

StepSettings retryTwice() {
  StepSettings s;
  s.retry.max_attempts = 2;
  s.retry.on = spec::RetryOn::kInfrastructure;
  return s;
}

// The phases a decision writes, for the rows' expectations.
const store::AttemptRecord* writtenAttempt(const StepPlan& plan, int number = 1) {
  if (!plan.write || !*plan.write) return nullptr;
  for (const auto& a : (*plan.write)->attempts) {
    if (a.number == number) return &a;
  }
  return nullptr;
}
std::optional<JobPhase> writtenJobPhase(const StepPlan& plan) {
  if (!plan.write || !*plan.write || !(*plan.write)->job) return std::nullopt;
  return (*plan.write)->job->phase;
}

struct Row {
  std::string name;
  store::JobView view;
  JobFacts facts;
  AttemptMemory memory;
  bool polled = false;
  std::function<void(const StepPlan&)> expect;
};

void run(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const StepSettings settings = retryTwice();
    const StepPlan plan = row.polled
                              ? stepPolled(row.view, row.facts, row.memory, settings, kNow, kSteady)
                              : stepJob(row.view, row.facts, row.memory, settings, kNow, kSteady);
    if (plan.write) {
      ASSERT_TRUE(*plan.write) << plan.write->error().describe();
    }
    row.expect(plan);
  }
}

void decidesNothing(const StepPlan& plan) {
  EXPECT_FALSE(plan.needsFacts());
  EXPECT_FALSE(plan.write.has_value());
  EXPECT_EQ(plan.launch, LaunchKind::kNone);
  EXPECT_TRUE(plan.cancel_after.empty());
}

// Issue 37, defect 1: neither a failed listing nor a bare 404 is Slurm's word; a step that
// has only them concludes nothing this cycle.
TEST(JobStepTable, NoAnswerConcludesNothing) {
  JobFacts lost_listing;
  lost_listing.token = SlurmAnswer::noAnswer("GET /jobs/ failed: HTTP 502");
  JobFacts bare_404;
  bare_404.read = SlurmAnswer::noAnswer("slurmrestd answered HTTP 404");
  JobFacts gone_but_no_listing;
  gone_but_no_listing.read = SlurmAnswer::notFound();
  gone_but_no_listing.token = SlurmAnswer::noAnswer("GET /jobs/ failed: HTTP 502");
  store::AttemptRecord missing_twice = attemptIn(AttemptPhase::kQueued);
  missing_twice.missing_polls = 2;
  run({
      {"a lost receipt's lookup whose listing failed",
       jobWith(JobPhase::kSubmitUnknown, {attemptIn(AttemptPhase::kSubmitUnknown)}),
       lost_listing,
       {},
       false,
       decidesNothing},
      {"a queued attempt whose read by SLUID got a bare 404",
       jobWith(JobPhase::kQueued, {attemptIn(AttemptPhase::kQueued)}),
       bare_404,
       {},
       true,
       decidesNothing},
      {"Slurm's 'invalid job id' with no listing to confirm it (the third miss)",
       jobWith(JobPhase::kQueued, {missing_twice}),
       gone_but_no_listing,
       {},
       true,
       decidesNothing},
      {"a receipt Slurm does not know, with no listing",
       jobWith(JobPhase::kSubmitting, {attemptIn(AttemptPhase::kSubmitted)}),
       gone_but_no_listing,
       {},
       false,
       decidesNothing},
  });
}

// Positive evidence: Slurm's "invalid job id" for the SLUID and a listing without the token,
// kMissingPollsToJudge times, then the sentinels judge.
TEST(JobStepTable, AnAttemptIsJudgedLostOnlyOnSlurmsWord) {
  JobFacts slurms_word;
  slurms_word.read = SlurmAnswer::notFound();
  slurms_word.token = SlurmAnswer::found({});
  store::AttemptRecord missing_once = attemptIn(AttemptPhase::kQueued);
  store::AttemptRecord missing_twice = attemptIn(AttemptPhase::kQueued);
  missing_twice.missing_polls = 2;
  run({
      {"the first miss with Slurm's word is counted",
       jobWith(JobPhase::kQueued, {missing_once}),
       slurms_word,
       {},
       true,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->missing_polls, 1);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kQueued);
       }},
      {"the third asks for the sentinels first",
       jobWith(JobPhase::kQueued, {missing_twice}),
       slurms_word,
       {},
       true,
       [](const StepPlan& plan) {
         EXPECT_TRUE(plan.read_files);
         EXPECT_FALSE(plan.write.has_value());
       }},
      {"…with no exit sentinel, then slurmdbd's record",
       jobWith(JobPhase::kQueued, {missing_twice}),
       withFiles(slurms_word),
       {},
       true,
       [](const StepPlan& plan) {
         EXPECT_TRUE(plan.read_accounting);
         EXPECT_FALSE(plan.write.has_value());
       }},
      {"…and with none there either it is lost (infrastructure): retried",
       jobWith(JobPhase::kQueued, {missing_twice}),
       withAccounting(withFiles(slurms_word), {}),
       {},
       true,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kFailed);
         EXPECT_EQ(writtenAttempt(plan)->cause, EndCause::kInfrastructure);
         EXPECT_NE(writtenAttempt(plan)->reason.find("lost"), std::string::npos);
         EXPECT_EQ(writtenJobPhase(plan), JobPhase::kRetrying);
       }},
      {"slurmdbd recorded how its run ended (a time limit): judged by it",
       jobWith(JobPhase::kQueued, {missing_twice}),
       withAccounting(withFiles(slurms_word), {recordedRun({"TIMEOUT"})}),
       {},
       true,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kFailed);
         EXPECT_EQ(writtenAttempt(plan)->cause, EndCause::kUser);
         EXPECT_NE(writtenAttempt(plan)->reason.find("slurmdbd's record"), std::string::npos);
       }},
      {"slurmdbd could not be read this cycle: nothing is concluded",
       jobWith(JobPhase::kQueued, {missing_twice}),
       [&] {
         JobFacts f = withFiles(slurms_word);
         f.accounting_unanswered = "slurmrestd answered 503";
         return f;
       }(),
       {},
       true,
       [](const StepPlan& plan) {
         EXPECT_FALSE(plan.needsFacts());
         EXPECT_FALSE(plan.write.has_value());
         EXPECT_NE(plan.note.find("503"), std::string::npos);
       }},
      {"a listing that lacks the job is not Slurm's word: read by SLUID",
       jobWith(JobPhase::kQueued, {missing_once}),
       JobFacts{},
       {},
       true,
       [](const StepPlan& plan) {
         EXPECT_TRUE(plan.read_sluid);
         EXPECT_FALSE(plan.write.has_value());
       }},
  });
}

// Issue 47: a preemption is told by Slurm's own record (PREEMPTED), never by what the job's
// sentinels say: a program that saved and exited 0 (or 3) in its grace time ends PREEMPTED
// with exit_code SUCCESS/0 (tests/data/slurm/transcripts/23_preemption.json), and its batch
// script writes an exit sentinel of 0. Retried without using one of max_attempts.
TEST(JobStepTable, APreemptionIsToldBySlurmsRecordNotBySentinels) {
  auto polledAs = [](std::vector<std::string> state, int exit_code) {
    JobFacts f;
    slurm::JobRecord r = record(kSluid, 101, "RUNNING");
    r.job_state = std::move(state);
    r.exit_code.return_code = {true, false, exit_code};
    f.read = SlurmAnswer::found({r});
    return f;
  };
  attempt::AttemptSentinels saved;  // the program saved and exited 0: so did the script
  saved.start["main"] = attempt::StartSentinel{"cpu1", 1'700'000'000};
  saved.exit["main"] = attempt::ExitSentinel{"cpu1", 0, 1'700'000'000, 1'700'000'100};
  JobFacts slurms_word;
  slurms_word.read = SlurmAnswer::notFound();
  slurms_word.token = SlurmAnswer::found({});
  store::AttemptRecord missing_twice = attemptIn(AttemptPhase::kRunning);
  missing_twice.missing_polls = 2;
  const auto preemptedAndRetried = [](const StepPlan& plan) {
    ASSERT_NE(writtenAttempt(plan), nullptr);
    EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kFailed);
    EXPECT_EQ(writtenAttempt(plan)->cause, EndCause::kPreempted) << writtenAttempt(plan)->reason;
    EXPECT_EQ(writtenJobPhase(plan), JobPhase::kRetrying);
    EXPECT_NE((*plan.write)->job->reason.find("preemption 1 of 10"), std::string::npos)
        << (*plan.write)->job->reason;
  };
  run({
      {"PREEMPTED with exit code 0 (saved and exited in the grace time): preempted",
       jobWith(JobPhase::kRunning, {attemptIn(AttemptPhase::kRunning)}),
       polledAs({"PREEMPTED"}, 0),
       {},
       true,
       preemptedAndRetried},
      {"PREEMPTED with exit code 3: preempted, not the user's failure",
       jobWith(JobPhase::kRunning, {attemptIn(AttemptPhase::kRunning)}),
       polledAs({"PREEMPTED"}, 3),
       {},
       true,
       preemptedAndRetried},
      {"PREEMPTED,COMPLETING: Releasing, heading to Failed; nothing retried yet",
       jobWith(JobPhase::kRunning, {attemptIn(AttemptPhase::kRunning)}),
       polledAs({"PREEMPTED", "COMPLETING"}, 0),
       {},
       true,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kReleasing);
         EXPECT_EQ(writtenJobPhase(plan), JobPhase::kReleasing);
         EXPECT_EQ(plan.launch, LaunchKind::kNone);
       }},
      {"RUNNING in its grace time (preempt_time set): still Running",
       jobWith(JobPhase::kRunning, {attemptIn(AttemptPhase::kRunning)}),
       [&] {
         JobFacts f = polledAs({"RUNNING"}, 0);
         f.read.records.front().preempt_time = {true, false, 1'700'000'000};
         f.read.records.front().end_time = {true, false, 1'700'000'030};  // + GraceTime
         return f;
       }(),
       {},
       true,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         const store::AttemptRecord& a = *writtenAttempt(plan);
         EXPECT_EQ(a.phase, AttemptPhase::kRunning);
         EXPECT_EQ(a.components.front().preempt_time, 1'700'000'000);
         EXPECT_NE(a.reason.find("being preempted since 2023-11-14T22:13:20Z: Slurm ends it by "
                                 "2023-11-14T22:13:50Z"),
                   std::string::npos)
             << a.reason;
         EXPECT_EQ(plan.launch, LaunchKind::kNone);
       }},
      {"slurmctld forgot it, with an exit sentinel: slurmdbd's record is asked first",
       jobWith(JobPhase::kRunning, {missing_twice}),
       withFiles(slurms_word, saved),
       {},
       true,
       [](const StepPlan& plan) {
         EXPECT_TRUE(plan.read_accounting);
         EXPECT_FALSE(plan.write.has_value());
       }},
      {"…slurmdbd says PREEMPTED: preempted, the exit sentinel of 0 notwithstanding",
       jobWith(JobPhase::kRunning, {missing_twice}),
       withAccounting(withFiles(slurms_word, saved), {recordedRun({"PREEMPTED"})}),
       {},
       true,
       [&](const StepPlan& plan) {
         preemptedAndRetried(plan);
         EXPECT_NE(writtenAttempt(plan)->reason.find("slurmdbd's record"), std::string::npos);
       }},
      {"…slurmdbd says COMPLETED: the exit sentinel of 0 judges, Succeeded",
       jobWith(JobPhase::kRunning, {missing_twice}),
       withAccounting(withFiles(slurms_word, saved), {recordedRun({"COMPLETED"})}),
       {},
       true,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kSucceeded);
         EXPECT_NE(writtenAttempt(plan)->reason.find("exit sentinel"), std::string::npos);
       }},
      {"…no slurmdbd at the site: the exit sentinel judges, as before",
       jobWith(JobPhase::kRunning, {missing_twice}),
       withAccounting(withFiles(slurms_word, saved), {}),
       {},
       true,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kSucceeded);
       }},
  });
}

// Issue 37's case: a superseded attempt can never run. The next attempt starts only once every
// earlier attempt's Slurm jobs have ended or Slurm heard their DELETE.
TEST(JobStepTable, TheNextAttemptWaitsForEveryEarlierJobToEnd) {
  store::AttemptRecord judged_lost = attemptIn(AttemptPhase::kQueued);
  judged_lost.phase = AttemptPhase::kFailed;  // judged lost while Slurm still said PENDING
  judged_lost.cause = EndCause::kInfrastructure;
  store::JobView retrying = jobWith(JobPhase::kRetrying, {judged_lost});
  retrying.job.next_attempt_ms = kNow - 1;
  store::AttemptRecord ended = judged_lost;
  ended.components[0].state = {"COMPLETED"};
  store::JobView retrying_ended = jobWith(JobPhase::kRetrying, {ended});
  retrying_ended.job.next_attempt_ms = kNow - 1;
  store::JobView backing_off = retrying;
  backing_off.job.next_attempt_ms = kNow + 10'000;
  JobFacts gone, unheard, heard, no_listing, listed, copy_runs, copy_cancelled;
  for (JobFacts* f : {&gone, &unheard, &heard, &listed, &copy_runs, &copy_cancelled}) {
    f->token = SlurmAnswer::found({});  // Slurm's listing: no job carries the token
  }
  gone.cancels[kSluid] = CancelHeard::kGone;
  unheard.cancels[kSluid] = CancelHeard::kUnheard;
  heard.cancels[kSluid] = CancelHeard::kHeard;
  no_listing.cancels[kSluid] = CancelHeard::kGone;
  no_listing.token = SlurmAnswer::noAnswer("GET /jobs/ failed: HTTP 502");
  // A copy of the attempt's doubled submit that it never adopted still runs.
  copy_runs = gone;
  copy_runs.token = SlurmAnswer::found({record(kOtherSluid, 102, "RUNNING")});
  copy_cancelled = copy_runs;
  copy_cancelled.cancels[kOtherSluid] = CancelHeard::kHeard;
  run({
      {"a DELETE of the earlier job first",
       retrying,
       JobFacts{},
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_EQ(plan.cancel_now.size(), 1u);
         EXPECT_EQ(plan.cancel_now[0].sluid, kSluid);
         EXPECT_EQ(plan.launch, LaunchKind::kNone);
       }},
      {"Slurm holds no such job: the next attempt starts",
       retrying,
       gone,
       {},
       false,
       [](const StepPlan& plan) { EXPECT_EQ(plan.launch, LaunchKind::kFresh); }},
      {"Slurm heard the cancel: the next attempt starts",
       retrying,
       heard,
       {},
       false,
       [](const StepPlan& plan) { EXPECT_EQ(plan.launch, LaunchKind::kFresh); }},
      {"the DELETE was not heard: nothing starts",
       retrying,
       unheard,
       {},
       false,
       [](const StepPlan& plan) {
         decidesNothing(plan);
         EXPECT_NE(plan.note.find(kSluid), std::string::npos);
       }},
      {"an earlier job that ended needs no DELETE",
       retrying_ended,
       listed,
       {},
       false,
       [](const StepPlan& plan) {
         EXPECT_TRUE(plan.cancel_now.empty());
         EXPECT_EQ(plan.launch, LaunchKind::kFresh);
       }},
      {"without a listing nothing starts", retrying, no_listing, {}, false, decidesNothing},
      {"a copy of the doubled submit still runs: its DELETE first",
       retrying,
       copy_runs,
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_EQ(plan.cancel_now.size(), 1u);
         EXPECT_EQ(plan.cancel_now[0].sluid, kOtherSluid);
         EXPECT_EQ(plan.launch, LaunchKind::kNone);
       }},
      {"…heard: the next attempt starts",
       retrying,
       copy_cancelled,
       {},
       false,
       [](const StepPlan& plan) { EXPECT_EQ(plan.launch, LaunchKind::kFresh); }},
      {"before the backoff ends nothing is sent",
       backing_off,
       JobFacts{},
       {},
       false,
       decidesNothing},
  });
}

// A lost receipt: found by its token and adopted; or proven absent by Slurm's listing often
// and long enough, with no trace on the node, and submitted again as the same attempt.
TEST(JobStepTable, ALostReceiptIsFoundOrSubmittedAgainAsItself) {
  store::AttemptRecord third = attemptIn(AttemptPhase::kSubmitUnknown);
  third.lookups = kLookupsBeforeResend - 1;
  store::AttemptRecord third_recent = third;
  third_recent.submitted_ms = kNow - 10'000;
  store::AttemptRecord first = attemptIn(AttemptPhase::kSubmitUnknown);
  JobFacts absent;
  absent.token = SlurmAnswer::found({});
  attempt::AttemptSentinels claimed;
  claimed.claimed_by = 101;
  JobFacts found;
  found.token = SlurmAnswer::found({record(kSluid, 101, "PENDING")});
  store::JobView cancelled = jobWith(JobPhase::kCancelling, {third});
  cancelled.job.cancel_requested = true;
  run({
      {"found: adopted with its SLUID",
       jobWith(JobPhase::kSubmitUnknown, {first}),
       found,
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kQueued);
         EXPECT_EQ(writtenAttempt(plan)->components[0].sluid, kSluid);
         EXPECT_EQ(plan.memory.verified_ms, kSteady);
       }},
      {"absent, the first lookup: looked up again",
       jobWith(JobPhase::kSubmitUnknown, {first}),
       withFiles(absent),
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kSubmitUnknown);
         EXPECT_EQ(writtenAttempt(plan)->lookups, 1);
       }},
      {"absent often and long enough, no trace: submitted again as itself",
       jobWith(JobPhase::kSubmitUnknown, {third}),
       withFiles(absent),
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kStaging);
         EXPECT_EQ(writtenAttempt(plan)->submit_token, kToken);
         EXPECT_EQ(writtenJobPhase(plan), JobPhase::kStaging);
       }},
      {"absent, but too soon after the submit: looked up again",
       jobWith(JobPhase::kSubmitUnknown, {third_recent}),
       withFiles(absent),
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kSubmitUnknown);
       }},
      {"absent, but a Slurm job claimed it on the node: never submitted again",
       jobWith(JobPhase::kSubmitUnknown, {third}),
       withFiles(absent, claimed),
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kSubmitUnknown);
       }},
      {"absent with a cancel requested: cancelled, nothing ever ran",
       cancelled,
       withFiles(absent),
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kCancelled);
         EXPECT_EQ(writtenJobPhase(plan), JobPhase::kCancelled);
       }},
  });
}

// The fault campaign's seed 2107: a lost receipt found only after Slurm requeued its job (a
// new SLUID, restart_cnt 1) ran once already: the attempt ends and the requeued job is
// cancelled by its new SLUID (held Releasing while that DELETE is not heard).
TEST(JobStepTable, ALostReceiptFoundRequeuedEndsAndIsCancelled) {
  JobFacts found;
  found.token = SlurmAnswer::found({record(kOtherSluid, 101, "PENDING", 1)});
  JobFacts heard = found;
  heard.cancels[kOtherSluid] = CancelHeard::kHeard;
  JobFacts gone = found;
  gone.cancels[kOtherSluid] = CancelHeard::kGone;
  const store::JobView lost =
      jobWith(JobPhase::kSubmitUnknown, {attemptIn(AttemptPhase::kSubmitUnknown)});
  run({
      {"the DELETE of the requeued job first",
       lost,
       found,
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_EQ(plan.cancel_now.size(), 1u);
         EXPECT_EQ(plan.cancel_now[0].sluid, kOtherSluid);
         EXPECT_FALSE(plan.cancel_now[0].gone_is_heard);
       }},
      {"heard: the attempt failed (infrastructure), retried",
       lost,
       heard,
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kFailed);
         EXPECT_EQ(writtenJobPhase(plan), JobPhase::kRetrying);
       }},
      {"'no such job' for the SLUID just read is not heard here: held Releasing",
       lost,
       gone,
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kReleasing);
       }},
  });
}

// A submit that reached Slurm twice: the copy that claimed the attempt on the node is kept,
// the other cancelled; a copy whose DELETE is not heard is sent again every cycle (a stray).
TEST(JobStepTable, DuplicatesOfADoubledSubmitAreCancelled) {
  slurm::JobRecord first = record(kSluid, 101, "PENDING");
  slurm::JobRecord second = record(kOtherSluid, 102, "RUNNING");
  second.submit_time = {true, false, 1'700'000'001};
  JobFacts found;
  found.token = SlurmAnswer::found({first, second});
  attempt::AttemptSentinels claimed_by_second;
  claimed_by_second.claimed_by = 102;
  JobFacts with_claim = withFiles(found, claimed_by_second);
  JobFacts unheard = with_claim;
  unheard.cancels[kSluid] = CancelHeard::kUnheard;
  const store::JobView lost =
      jobWith(JobPhase::kSubmitUnknown, {attemptIn(AttemptPhase::kSubmitUnknown)});
  run({
      {"two jobs carry the token: the claim is read first",
       lost,
       found,
       {},
       false,
       [](const StepPlan& plan) { EXPECT_TRUE(plan.read_files); }},
      {"the claimant is kept, the other cancelled first",
       lost,
       with_claim,
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_EQ(plan.cancel_now.size(), 1u);
         EXPECT_EQ(plan.cancel_now[0].sluid, kSluid);
       }},
      {"a DELETE not heard becomes a stray; the claimant is adopted",
       lost,
       unheard,
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->components[0].sluid, kOtherSluid);
         EXPECT_EQ(plan.strays, std::vector<std::string>{kSluid});
       }},
  });
}

// The submit protocol's other steps.
TEST(JobStepTable, TheSubmitProtocolsSteps) {
  store::AttemptRecord deferred = attemptIn(AttemptPhase::kStaging);
  deferred.next_lookup_ms = kNow + 5'000;
  store::JobView cancelled_staging =
      jobWith(JobPhase::kStaging, {attemptIn(AttemptPhase::kStaging)});
  cancelled_staging.job.cancel_requested = true;
  JobFacts not_ours;
  slurm::JobRecord reused = record(kSluid, 101, "RUNNING");
  reused.comment = "tp-ffffffffffffffffffffffffffffffff";
  not_ours.read = SlurmAnswer::found({reused});
  JobFacts receipt_gone;
  receipt_gone.read = SlurmAnswer::notFound();
  receipt_gone.token = SlurmAnswer::found({});
  run({
      {"the first attempt of a new job",
       jobWith(JobPhase::kPending, {}),
       JobFacts{},
       {},
       false,
       [](const StepPlan& plan) { EXPECT_EQ(plan.launch, LaunchKind::kFresh); }},
      {"a Staging attempt whose resend is due",
       jobWith(JobPhase::kStaging, {attemptIn(AttemptPhase::kStaging)}),
       JobFacts{},
       {},
       false,
       [](const StepPlan& plan) { EXPECT_EQ(plan.launch, LaunchKind::kResume); }},
      {"a Staging attempt before its resend",
       jobWith(JobPhase::kStaging, {deferred}),
       JobFacts{},
       {},
       false,
       decidesNothing},
      {"cancelled while Staging",
       cancelled_staging,
       JobFacts{},
       {},
       false,
       [](const StepPlan& plan) { EXPECT_EQ(writtenJobPhase(plan), JobPhase::kCancelled); }},
      {"Submitting found at the start of a cycle was interrupted",
       jobWith(JobPhase::kSubmitting, {attemptIn(AttemptPhase::kSubmitting)}),
       JobFacts{},
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kSubmitUnknown);
       }},
      {"a receipt is read back",
       jobWith(JobPhase::kSubmitting, {attemptIn(AttemptPhase::kSubmitted)}),
       JobFacts{},
       {},
       false,
       [](const StepPlan& plan) { EXPECT_TRUE(plan.read_receipt); }},
      {"a receipt whose job carries another token is looked for by the token",
       jobWith(JobPhase::kSubmitting, {attemptIn(AttemptPhase::kSubmitted)}),
       not_ours,
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kSubmitUnknown);
       }},
      {"a receipt Slurm does not know, and a listing without it: counted missing",
       jobWith(JobPhase::kSubmitting, {attemptIn(AttemptPhase::kSubmitted)}),
       receipt_gone,
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->missing_polls, 1);
       }},
  });
}

// Issue 40: where the site's REST API takes no SLUID in a path (v0.0.44, Slurm 25.11), the
// client keys each job "<SLUID>@<numeric id>" and confirms every read and cancel by it; the
// step stores those keys as it stores SLUIDs, and says once per attempt, in an event, that
// its jobs are followed by numeric id.
TEST(JobStepTable, AJobFollowedByNumericIdSaysSoOnce) {
  const std::string kKey = "sFK1M94Y5HJ700@101";
  auto noteIn = [](const StepPlan& plan) -> const store::EventRecord* {
    if (!plan.write || !*plan.write) return nullptr;
    for (const auto& e : (*plan.write)->events) {
      if (e.reason.find("by its numeric id") != std::string::npos) return &e;
    }
    return nullptr;
  };
  JobFacts receipt_v44;
  receipt_v44.read = SlurmAnswer::found({record(kKey, 101, "PENDING")});
  JobFacts receipt_v45;
  receipt_v45.read = SlurmAnswer::found({record(kSluid, 101, "PENDING")});
  store::AttemptRecord followed = attemptIn(AttemptPhase::kRunning);
  followed.components[0].sluid = kKey;
  JobFacts ended;
  ended.read = SlurmAnswer::found({record(kKey, 101, "COMPLETED")});
  ended = withFiles(ended);
  JobFacts lost_found;
  lost_found.token = SlurmAnswer::found({record(kKey, 101, "RUNNING")});
  lost_found = withFiles(lost_found);
  run({
      {"a receipt read by numeric id stores the key and says why, once",
       jobWith(JobPhase::kSubmitting, {attemptIn(AttemptPhase::kSubmitted)}),
       receipt_v44,
       {},
       false,
       [&](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->components[0].sluid, kKey);
         const store::EventRecord* note = noteIn(plan);
         ASSERT_NE(note, nullptr);
         EXPECT_EQ(note->attempt, 1);
         EXPECT_EQ(note->from, "Queued");
         EXPECT_EQ(note->to, "Queued");
         EXPECT_NE(note->reason.find("101 (SLUID sFK1M94Y5HJ700)"), std::string::npos);
         EXPECT_NE(note->reason.find("confirms every read and cancel"), std::string::npos);
       }},
      {"a receipt by SLUID (v0.0.45) needs no such event",
       jobWith(JobPhase::kSubmitting, {attemptIn(AttemptPhase::kSubmitted)}),
       receipt_v45,
       {},
       false,
       [&](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(noteIn(plan), nullptr);
       }},
      {"an attempt already followed by numeric id is not told again",
       jobWith(JobPhase::kRunning, {followed}),
       ended,
       {},
       true,
       [&](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kSucceeded);
         EXPECT_EQ(writtenAttempt(plan)->components[0].sluid, kKey);
         EXPECT_EQ(noteIn(plan), nullptr);
       }},
      {"a lost receipt found by its token by numeric id says so too",
       jobWith(JobPhase::kSubmitUnknown, {attemptIn(AttemptPhase::kSubmitUnknown)}),
       lost_found,
       {},
       false,
       [&](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->phase, AttemptPhase::kRunning);
         EXPECT_NE(noteIn(plan), nullptr);
       }},
  });
}

// Cancel: DELETEs first, Cancelling once Slurm heard them all; a SLUID Slurm no longer knows
// is read next cycle (a requeue may have changed it: the campaign's seed 12488474279110387694).
TEST(JobStepTable, ACancelIsStoredOnlyOnceSlurmHeardIt) {
  store::JobView to_cancel = jobWith(JobPhase::kRunning, {attemptIn(AttemptPhase::kRunning)});
  to_cancel.job.cancel_requested = true;
  JobFacts heard, unheard, gone;
  heard.cancels[kSluid] = CancelHeard::kHeard;
  unheard.cancels[kSluid] = CancelHeard::kUnheard;
  gone.cancels[kSluid] = CancelHeard::kGone;
  AttemptMemory recent;
  recent.cancel_heard_ms[kSluid] = kSteady - 1'000;
  AttemptMemory long_ago;
  long_ago.cancel_heard_ms[kSluid] = kSteady - 120'000;
  const store::JobView cancelling =
      jobWith(JobPhase::kCancelling, {attemptIn(AttemptPhase::kCancelling)});
  run({
      {"the DELETE first",
       to_cancel,
       JobFacts{},
       {},
       false,
       [](const StepPlan& plan) {
         ASSERT_EQ(plan.cancel_now.size(), 1u);
         EXPECT_TRUE(plan.poll);
       }},
      {"heard: Cancelling",
       to_cancel,
       heard,
       {},
       false,
       [](const StepPlan& plan) {
         EXPECT_EQ(writtenJobPhase(plan), JobPhase::kCancelling);
         EXPECT_EQ(plan.memory.cancel_heard_ms.at(kSluid), kSteady);
       }},
      {"not heard: nothing stored, sent again next cycle",
       to_cancel,
       unheard,
       {},
       false,
       [](const StepPlan& plan) { EXPECT_FALSE(plan.write.has_value()); }},
      {"gone: Cancelling, and read by SLUID next cycle",
       to_cancel,
       gone,
       {},
       false,
       [](const StepPlan& plan) {
         EXPECT_EQ(writtenJobPhase(plan), JobPhase::kCancelling);
         EXPECT_TRUE(plan.memory.must_read);
       }},
      {"Cancelling: not again within a minute of a heard DELETE", cancelling, JobFacts{}, recent,
       false, [](const StepPlan& plan) { EXPECT_TRUE(plan.cancel_now.empty()); }},
      {"Cancelling: again a minute later", cancelling, JobFacts{}, long_ago, false,
       [](const StepPlan& plan) { EXPECT_EQ(plan.cancel_now.size(), 1u); }},
  });
}

// A job that waits on a reason Slurm can never satisfy is cancelled once the grace passed, and
// fails (rejected) only when Slurm heard the DELETE.
TEST(JobStepTable, AnUnrunnableJobIsRejectedAfterTheGrace) {
  store::AttemptRecord waiting = attemptIn(AttemptPhase::kQueued);
  JobFacts read;
  slurm::JobRecord r = record(kSluid, 101, "PENDING");
  r.state_reason = "PartitionConfig";
  read.read = SlurmAnswer::found({r});
  waiting.components[0].reason = "PartitionConfig";
  JobFacts heard = read;
  heard.cancels[kSluid] = CancelHeard::kHeard;
  AttemptMemory since_long_ago;
  since_long_ago.unrunnable_since_ms = kSteady - 400'000;
  AttemptMemory since_now;
  const store::JobView view = jobWith(JobPhase::kQueued, {waiting});
  run({
      {"the grace starts", view, read, since_now, true,
       [](const StepPlan& plan) {
         EXPECT_EQ(plan.memory.unrunnable_since_ms, kSteady);
         EXPECT_TRUE(plan.cancel_now.empty());
       }},
      {"past the grace: the DELETE first", view, read, since_long_ago, true,
       [](const StepPlan& plan) { EXPECT_EQ(plan.cancel_now.size(), 1u); }},
      {"heard: rejected", view, heard, since_long_ago, true,
       [](const StepPlan& plan) {
         ASSERT_NE(writtenAttempt(plan), nullptr);
         EXPECT_EQ(writtenAttempt(plan)->cause, EndCause::kRejected);
       }},
  });
}

// A job whose own Slurm job ran nothing (exit 71: another copy claimed the attempt) adopts the
// claimant; one that exits 73 (superseded) or 72 (cannot claim) failed on the node's side.
TEST(JobStepTable, TheScriptsOwnRefusalsAreTheInfrastructures) {
  for (int code : {slurm::kExitCannotClaim, slurm::kExitSuperseded}) {
    SCOPED_TRACE(code);
    slurm::JobRecord r = record(kSluid, 101, "FAILED");
    r.exit_code.return_code = {true, false, code};
    JobFacts read;
    read.read = SlurmAnswer::found({r});
    read.token = SlurmAnswer::found({r});  // no other copy carries the token
    const StepPlan plan =
        stepPolled(jobWith(JobPhase::kRunning, {attemptIn(AttemptPhase::kRunning)}),
                   withFiles(read), {}, retryTwice(), kNow, kSteady);
    ASSERT_TRUE(plan.write && *plan.write);
    ASSERT_NE(writtenAttempt(plan), nullptr);
    EXPECT_EQ(writtenAttempt(plan)->cause, EndCause::kInfrastructure);
    EXPECT_EQ(writtenJobPhase(plan), JobPhase::kRetrying);
  }
}

// A steady cycle: the read found what the store holds, so nothing is written.
TEST(JobStepTable, ARefreshThatFindsNothingNewWritesNothing) {
  JobFacts read;
  read.read = SlurmAnswer::found({record(kSluid, 101, "PENDING")});
  const store::JobView stored = jobWith(JobPhase::kQueued, {attemptIn(AttemptPhase::kQueued)});
  const StepPlan first = stepPolled(stored, read, {}, retryTwice(), kNow, kSteady);
  ASSERT_TRUE(first.write && *first.write);  // the reason in words, first time round
  const StepPlan plan =
      stepPolled(afterChange(stored, **first.write), read, {}, retryTwice(), kNow, kSteady);
  EXPECT_FALSE(plan.needsFacts());
  EXPECT_FALSE(plan.write.has_value());
  EXPECT_EQ(plan.memory.verified_ms, kSteady);
}

// afterChange and mergeChanges: the view a second decision is made on, and one change of two.
TEST(JobStepTable, TwoDecisionsMergeIntoOneChangeAtTheReadVersion) {
  const store::JobView view = jobWith(JobPhase::kQueued, {attemptIn(AttemptPhase::kQueued)});
  auto first = recordObservation(view, view.attempts[0], kNow);
  ASSERT_TRUE(first);
  const store::JobView after = afterChange(view, *first);
  EXPECT_EQ(after.job.version, view.job.version + 1);
  auto second = markCancelSent(after, 1, kNow);
  ASSERT_TRUE(second);
  const store::Change merged = mergeChanges(*first, *second);
  ASSERT_TRUE(merged.job);
  EXPECT_EQ(merged.job->version, view.job.version);
  EXPECT_EQ(merged.job->phase, JobPhase::kCancelling);
  ASSERT_EQ(merged.attempts.size(), 1u);
  EXPECT_EQ(merged.attempts[0].phase, AttemptPhase::kCancelling);
  EXPECT_EQ(merged.events.size(), first->events.size() + second->events.size());
}

}  // namespace
}  // namespace tuneplane::control
