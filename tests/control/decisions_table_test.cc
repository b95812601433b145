// The pure decisions of decisions.h as tables: how a failed submit is handled, which
// staging failures may pass, and which Slurm job a token's duplicates leave adopted.
#include "control/decisions.h"

#include <gtest/gtest.h>

#include "attempt/error_codes.h"
#include "catalog/error_codes.h"
#include "control/change_builder.h"
#include "control/error_codes.h"
#include "slurm/script_renderer.h"
#include "staging/error_codes.h"

namespace tuneplane::control {
namespace {

using slurm::TransportClass;

TEST(Decisions, EverySubmitFailureIsResentLookedUpOrRefused) {
  struct Row {
    std::string_view code;
    TransportClass transport;
    SubmitFailure expected;
  };
  const std::vector<Row> rows = {
      {slurm::kErrNotSent, TransportClass::kNotSent, SubmitFailure::kResend},
      {slurm::kErrAuthFailed, TransportClass::kRejected, SubmitFailure::kResend},
      {slurm::kErrTokenUnavailable, TransportClass::kNotSent, SubmitFailure::kResend},
      {slurm::kErrConfig, TransportClass::kNotSent, SubmitFailure::kResend},
      {slurm::kErrOutcomeUnknown, TransportClass::kUnknown, SubmitFailure::kLookUp},
      {slurm::kErrServerError, TransportClass::kRejected, SubmitFailure::kLookUp},
      {slurm::kErrBadResponse, TransportClass::kUnknown, SubmitFailure::kLookUp},
      {slurm::kErrRejected, TransportClass::kRejected, SubmitFailure::kRefused},
      {slurm::kErrBadResponse, TransportClass::kRejected, SubmitFailure::kRefused},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(row.code) + "/" + slurm::toString(row.transport));
    EXPECT_EQ(classifySubmitFailure(slurm::makeSlurmError(row.code, "submit", "x", row.transport)),
              row.expected);
  }
}

TEST(Decisions, ATooManyRequestsAnswerIsResentNotRefused) {
  // slurmrestd (or a proxy before it) turned the submit away unread: sent again later, never
  // the end of the job.
  slurm::SlurmError e =
      slurm::makeSlurmError(slurm::kErrRejected, "submit", "x", TransportClass::kRejected);
  e.http_status = kHttpTooManyRequests;
  EXPECT_EQ(classifySubmitFailure(e), SubmitFailure::kResend);
  e.http_status = 400;
  EXPECT_EQ(classifySubmitFailure(e), SubmitFailure::kRefused);
}

// Issue 37, defect 7: by Slurm's error number, not by the HTTP status: slurmctld never took
// the submit (connect failure, its rate limit) → sent again; any other 5xx → looked up.
TEST(Decisions, ASubmitSlurmctldNeverTookIsResent) {
  struct Row {
    int slurm_error;
    SubmitFailure expected;
  };
  for (const Row& row :
       std::vector<Row>{{slurm::kSlurmControllerConnectFailure, SubmitFailure::kResend},
                        {slurm::kSlurmControllerBackoff, SubmitFailure::kResend},
                        {slurm::kSlurmControllerHardDrop, SubmitFailure::kResend},
                        {1801, SubmitFailure::kLookUp},  // send failure
                        {1802, SubmitFailure::kLookUp},  // receive failure
                        {0, SubmitFailure::kLookUp}}) {
    SCOPED_TRACE(row.slurm_error);
    slurm::SlurmError e =
        slurm::makeSlurmError(slurm::kErrServerError, "submit", "x", TransportClass::kRejected);
    e.http_status = 502;
    e.slurm_error_number = row.slurm_error;
    EXPECT_EQ(classifySubmitFailure(e), row.expected);
  }
}

// Retries that learn: the nodes an ended attempt failed on through no fault of the job's.
TEST(Decisions, NodesToAvoidAreTheInfrastructuresFailures) {
  auto ended = [](int number, phase::EndCause cause, std::vector<std::string> state,
                  std::string nodes, std::optional<int> exit_code) {
    store::AttemptRecord a;
    a.number = number;
    a.phase = phase::AttemptPhase::kFailed;
    a.cause = cause;
    store::ComponentRecord c;
    c.state = std::move(state);
    c.nodes = std::move(nodes);
    c.exit_code = exit_code;
    a.components = {c};
    return a;
  };
  store::JobView view;
  view.attempts = {
      ended(1, phase::EndCause::kInfrastructure, {"NODE_FAIL"}, "gpu[1-2]", std::nullopt),
      ended(2, phase::EndCause::kInfrastructure, {"FAILED"}, "gpu3,gpu4",
            slurm::kExitArtifactMismatch),
      ended(3, phase::EndCause::kInfrastructure, {"FAILED"}, "gpu5", slurm::kExitRayJoinTimeout),
      ended(4, phase::EndCause::kUser, {"FAILED"}, "gpu6", 1),
  };
  const auto avoid = nodesToAvoid(view);
  EXPECT_EQ(avoid.size(), 3u);
  EXPECT_EQ(avoid.at("gpu1"), "NODE_FAIL in attempt 1");
  EXPECT_EQ(avoid.count("gpu2"), 1u);
  EXPECT_NE(avoid.at("gpu3").find("SHA-256"), std::string::npos) << avoid.at("gpu3");
  EXPECT_EQ(avoid.count("gpu4"), 0u);  // the batch host only
  EXPECT_EQ(avoid.count("gpu5"), 0u);  // which node never joined Ray is not known
  EXPECT_EQ(avoid.count("gpu6"), 0u);  // the user's failure
}

TEST(Decisions, OnlyIoAndAnUnreadableArtifactMayPass) {
  auto errors = [](const char* code) { return Errors{{code, "", "x"}}; };
  EXPECT_TRUE(stagingMayPass(errors(staging::codes::kIo)));
  EXPECT_TRUE(stagingMayPass(errors(catalog::codes::kArtifactUnreadable)));
  EXPECT_FALSE(stagingMayPass(errors(catalog::codes::kArtifactSha256Mismatch)));
  EXPECT_FALSE(stagingMayPass(errors(catalog::codes::kArtifactMissing)));
  EXPECT_FALSE(stagingMayPass(errors(attempt::codes::kStagedAttemptInvalid)));
  EXPECT_FALSE(stagingMayPass({}));
}

slurm::JobRecord record(uint64_t id, int64_t submitted, std::optional<int> offset = std::nullopt,
                        uint64_t leader = 0) {
  slurm::JobRecord r;
  r.job_id = id;
  r.sluid = "s" + std::to_string(id);
  r.submit_time = {true, false, submitted};
  if (offset) {
    r.het_job_id = {true, false, static_cast<int64_t>(leader)};
    r.het_job_offset = {true, false, *offset};
  }
  return r;
}

std::vector<uint64_t> ids(const std::vector<slurm::JobRecord>& records) {
  std::vector<uint64_t> out;
  for (const auto& r : records) out.push_back(r.job_id);
  return out;
}

TEST(Decisions, TheEarliestSubmittedJobIsAdoptedThenTheLowestId) {
  struct Row {
    std::string name;
    std::vector<slurm::JobRecord> records;
    std::vector<uint64_t> adopted;
    std::vector<uint64_t> duplicates;
    int duplicate_jobs;
  };
  const std::vector<Row> rows = {
      {"none", {}, {}, {}, 0},
      {"one", {record(7, 100)}, {7}, {}, 0},
      {"two, lower id first", {record(7, 100), record(8, 100)}, {7}, {8}, 1},
      {"two, earlier time wins over a lower id", {record(7, 200), record(8, 100)}, {8}, {7}, 1},
      {"three", {record(9, 300), record(7, 100), record(8, 200)}, {7}, {8, 9}, 2},
      {"a het job twice",
       {record(10, 100, 0, 10), record(11, 100, 1, 10), record(12, 100, 0, 12),
        record(13, 100, 1, 12)},
       {10, 11},
       {12, 13},
       1},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const TokenChoice choice = chooseByToken(row.records);
    EXPECT_EQ(ids(choice.adopted), row.adopted);
    auto dup = ids(choice.duplicates);
    std::sort(dup.begin(), dup.end());
    EXPECT_EQ(dup, row.duplicates);
    EXPECT_EQ(choice.duplicate_jobs, row.duplicate_jobs);
    if (!row.duplicates.empty()) {
      const std::string text = choice.describe({});
      for (uint64_t id : row.duplicates) {
        EXPECT_NE(text.find("s" + std::to_string(id)), std::string::npos) << text;
      }
    }
  }
}

// The job that claimed the attempt (logs/claim) is kept whatever its submit time: the other
// copy ran nothing, and cancelling the claimant would kill the only run.
TEST(Decisions, TheJobThatClaimedTheAttemptIsAdoptedBeforeTheEarliest) {
  struct Row {
    std::string name;
    std::vector<slurm::JobRecord> records;
    std::optional<uint64_t> claimant;
    std::vector<uint64_t> adopted;
    bool by_claim;
  };
  const std::vector<Row> rows = {
      {"the later one claimed", {record(7, 100), record(8, 200)}, 8, {8}, true},
      {"the earlier one claimed", {record(7, 100), record(8, 200)}, 7, {7}, true},
      {"a claimant that is neither", {record(7, 100), record(8, 200)}, 99, {7}, false},
      {"one job: no choice to make", {record(7, 100)}, 7, {7}, false},
      {"a het job's later copy claimed (its leader's id)",
       {record(10, 100, 0, 10), record(11, 100, 1, 10), record(12, 200, 0, 12),
        record(13, 200, 1, 12)},
       12,
       {12, 13},
       true},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const TokenChoice choice = chooseByToken(row.records, row.claimant);
    EXPECT_EQ(ids(choice.adopted), row.adopted);
    EXPECT_EQ(choice.by_claim, row.by_claim);
    EXPECT_EQ(choice.adopted.size() + choice.duplicates.size(), row.records.size());
    if (row.by_claim) {
      EXPECT_NE(choice.describe({}).find("claimed the attempt"), std::string::npos)
          << choice.describe({});
    }
  }
}

TEST(Decisions, ARequeueUnderANewSluidFailsTheAttemptAsInfrastructure) {
  slurm::JobRecord r = record(7, 100);
  r.sluid = "sNEW";
  r.job_state = {"PENDING"};
  r.state_reason = "BeginTime";
  const AttemptVerdict v = requeuedUnderNewSluid({r});
  EXPECT_EQ(v.phase, phase::AttemptPhase::kFailed);
  EXPECT_EQ(v.cause, phase::EndCause::kInfrastructure);
  EXPECT_EQ(v.requeued, std::vector<int>{0});
  EXPECT_NE(v.reason.find("sNEW"), std::string::npos);
  EXPECT_NE(v.reason.find("BeginTime"), std::string::npos);
  const AttemptVerdict held = holdForCancel(v, "the requeued Slurm job");
  EXPECT_EQ(held.phase, phase::AttemptPhase::kReleasing);
  EXPECT_EQ(held.cause, phase::EndCause::kInfrastructure);
}

// slurmdbd's record of a job slurmctld forgot: each row, the runs slurmdbd holds and what the
// attempt (job 7, SLUID sOURS, in /staging/jobs/j/attempts/1) is judged to be.
TEST(Decisions, AForgottenJobIsJudgedFromTheRunSlurmdbdRecordedForIt) {
  store::AttemptRecord attempt;
  attempt.staging_dir = "/staging/jobs/j/attempts/1";
  store::ComponentRecord c;
  c.pool = "main";
  c.slurm_job_id = 7;
  c.sluid = "sOURS";
  attempt.components = {c};
  auto run = [](uint64_t id, std::string sluid, std::vector<std::string> state, int64_t end,
                std::string cwd = "/staging/jobs/j/attempts/1", int64_t restarts = 0) {
    slurm::AccountingRun r;
    r.job_id = id;
    r.sluid = std::move(sluid);
    r.state = std::move(state);
    r.end_time = end;
    r.working_directory = std::move(cwd);
    r.restart_count = restarts;
    return r;
  };
  using phase::AttemptPhase;
  using phase::EndCause;
  struct Row {
    const char* name;
    std::vector<slurm::AccountingRun> runs;
    bool cancel_requested;
    std::optional<AttemptPhase> phase;  // nullopt: no verdict from slurmdbd
    EndCause cause;
  };
  const std::vector<Row> rows = {
      {"a node failure",
       {run(7, "sOURS", {"NODE_FAIL"}, 100)},
       false,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure},
      {"completed",
       {run(7, "sOURS", {"COMPLETED"}, 100)},
       false,
       AttemptPhase::kSucceeded,
       EndCause::kNone},
      {"a time limit",
       {run(7, "sOURS", {"TIMEOUT"}, 100)},
       false,
       AttemptPhase::kFailed,
       EndCause::kUser},
      {"cancelled as asked",
       {run(7, "sOURS", {"CANCELLED"}, 100)},
       true,
       AttemptPhase::kCancelled,
       EndCause::kCancelled},
      {"a reused id's run is another job's",
       {run(7, "sOTHER", {"COMPLETED"}, 100)},
       false,
       std::nullopt,
       EndCause::kNone},
      {"the run has not ended in slurmdbd yet",
       {run(7, "sOURS", {"RUNNING"}, 0)},
       false,
       std::nullopt,
       EndCause::kNone},
      {"no record (no slurmdbd)", {}, false, std::nullopt, EndCause::kNone},
      {"v0.0.44: no SLUID, the attempt's directory, the last run",
       {run(7, "", {"PENDING", "REQUEUED"}, 50, "/staging/jobs/j/attempts/1", 0),
        run(7, "", {"COMPLETED"}, 100, "/staging/jobs/j/attempts/1", 1)},
       false,
       AttemptPhase::kSucceeded,
       EndCause::kNone},
      {"v0.0.44: a run in another directory is another job's",
       {run(7, "", {"COMPLETED"}, 100, "/home/alice")},
       false,
       std::nullopt,
       EndCause::kNone},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    const auto v = judgeFromAccounting(attempt, row.runs, row.cancel_requested);
    ASSERT_EQ(v.has_value(), row.phase.has_value());
    if (!v) continue;
    EXPECT_EQ(v->phase, *row.phase);
    EXPECT_EQ(v->cause, row.cause);
    EXPECT_NE(v->reason.find("slurmdbd's record"), std::string::npos) << v->reason;
    EXPECT_TRUE(v->to_cancel.empty() && v->requeued.empty());  // nothing left in slurmctld
  }
}

// A job on its first attempt, both with the reason "running".
store::JobView oneAttempt(phase::JobPhase job, phase::AttemptPhase attempt) {
  store::JobView view;
  view.job.id = "hello-1a2b3c4d";
  view.job.phase = job;
  view.job.reason = "running";
  store::AttemptRecord a;
  a.number = 1;
  a.phase = attempt;
  a.reason = "running";
  a.submit_token = "tp-x";
  view.attempts.push_back(a);
  return view;
}

// ChangeBuilder: a phase moves only through the state machine's checks — an edit cannot move
// it, and an illegal move fails the whole change.
TEST(ChangeBuilderRules, AnEditCannotMoveAPhaseAndAnIllegalMoveFailsTheBuild) {
  const store::JobView view = oneAttempt(phase::JobPhase::kQueued, phase::AttemptPhase::kQueued);

  ChangeBuilder edit(view, 5);
  edit.editAttempt(1, [](store::AttemptRecord& r) {
    r.phase = phase::AttemptPhase::kSucceeded;  // ignored
    r.lookups = 4;
  });
  auto change = edit.build();
  ASSERT_TRUE(change);
  ASSERT_EQ(change->attempts.size(), 1u);
  EXPECT_EQ(change->attempts[0].phase, phase::AttemptPhase::kQueued);
  EXPECT_EQ(change->attempts[0].lookups, 4);
  EXPECT_TRUE(change->events.empty());

  ChangeBuilder illegal(view, 5);
  illegal.moveJob(phase::JobPhase::kPending, "back to the start");
  auto refused = illegal.build();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, codes::kIllegalTransition);
}

// A failed submit's change, by the class of its error: each row, the attempt's next phase.
TEST(Decisions, AFailedSubmitIsStagedAgainLookedForOrRefused) {
  const store::JobView submitting =
      oneAttempt(phase::JobPhase::kSubmitting, phase::AttemptPhase::kSubmitting);
  struct Row {
    std::string_view code;
    TransportClass transport;
    phase::AttemptPhase next;
    std::string_view what;
    std::string_view reason;
  };
  const std::vector<Row> rows = {
      {slurm::kErrNotSent, TransportClass::kNotSent, phase::AttemptPhase::kStaging,
       "submit not sent", "did not reach Slurm"},
      {slurm::kErrOutcomeUnknown, TransportClass::kUnknown, phase::AttemptPhase::kSubmitUnknown,
       "lost receipt", "no receipt came back"},
      {slurm::kErrRejected, TransportClass::kRejected, phase::AttemptPhase::kFailed,
       "submit refused", "Slurm refused the submit"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.code);
    const FailedSubmit failed = afterFailedSubmit(
        submitting, 1, slurm::makeSlurmError(row.code, "submit", "why", row.transport), 5);
    EXPECT_EQ(failed.what, row.what);
    ASSERT_TRUE(failed.change) << failed.change.error().describe();
    ASSERT_EQ(failed.change->attempts.size(), 1u);
    EXPECT_EQ(failed.change->attempts[0].phase, row.next);
    EXPECT_NE(failed.change->attempts[0].reason.find(row.reason), std::string::npos)
        << failed.change->attempts[0].reason;
  }
  const FailedSubmit refused = afterFailedSubmit(
      submitting, 1,
      slurm::makeSlurmError(slurm::kErrRejected, "submit", "why", TransportClass::kRejected), 5);
  EXPECT_EQ(refused.change->attempts[0].cause, phase::EndCause::kRejected);
}

// A Submitting commit whose answer was lost is ours only when the stored job is exactly what
// that commit wrote.
TEST(Decisions, ALostSubmittingCommitIsOursOnlyWhenStoredAsItWrote) {
  store::JobView before = oneAttempt(phase::JobPhase::kStaging, phase::AttemptPhase::kStaging);
  before.job.version = 7;
  auto stored = [&](int number, phase::AttemptPhase attempt, int64_t at, int64_t version) {
    store::JobView v = before;
    v.attempts[0].number = number;
    v.attempts[0].phase = attempt;
    v.attempts[0].submitted_ms = at;
    v.job.updated_ms = at;
    v.job.version = version;
    return v;
  };
  const int64_t now = 1'000;
  EXPECT_TRUE(isOurLostSubmittingCommit(before, stored(1, phase::AttemptPhase::kSubmitting, now, 8),
                                        1, now));
  EXPECT_FALSE(isOurLostSubmittingCommit(before, stored(1, phase::AttemptPhase::kStaging, now, 8),
                                         1, now));  // not stored
  EXPECT_FALSE(isOurLostSubmittingCommit(
      before, stored(1, phase::AttemptPhase::kSubmitting, now - 1, 8), 1, now));  // another time
  EXPECT_FALSE(isOurLostSubmittingCommit(
      before, stored(1, phase::AttemptPhase::kSubmitting, now, 9), 1, now));  // a later writer
  EXPECT_FALSE(isOurLostSubmittingCommit(
      before, stored(2, phase::AttemptPhase::kSubmitting, now, 8), 1, now));  // another attempt
  store::JobView none = before;
  none.attempts.clear();
  EXPECT_FALSE(isOurLostSubmittingCommit(before, none, 1, now));
}

TEST(Decisions, AFetchPlanReadsChangedFirstThenUnverifiedThenABoundedShareOfRefreshes) {
  const int64_t now = 10'000'000;
  const FetchLimits limits{10'000, 3'600'000, 64};
  std::vector<FetchNeed> needs = {
      {FetchReason::kNone, now - 1'000},      // 0: verified recently: nothing
      {FetchReason::kNone, std::nullopt},     // 1: unverified
      {FetchReason::kChanged, now - 1'000},   // 2: changed
      {FetchReason::kNone, now - 4'000'000},  // 3: refresh due (newer)
      {FetchReason::kNone, now - 5'000'000},  // 4: refresh due (older): first
      {FetchReason::kMustAct, now - 1'000},   // 5: survivors to cancel
  };
  const FetchPlan plan = planFetches(needs, now, limits);
  // 6 jobs × 10 s / 1 h → a budget of one refresh per cycle, the oldest.
  const std::vector<std::pair<size_t, FetchReason>> expected = {{2, FetchReason::kChanged},
                                                                {5, FetchReason::kMustAct},
                                                                {1, FetchReason::kUnverified},
                                                                {4, FetchReason::kRefresh}};
  EXPECT_EQ(plan.fetch, expected);
  EXPECT_FALSE(plan.use_listing);
  EXPECT_TRUE(planFetches({}, now, limits).fetch.empty());

  std::vector<FetchNeed> many(65, FetchNeed{FetchReason::kChanged, now});
  EXPECT_TRUE(planFetches(many, now, limits).use_listing);
  many.pop_back();
  EXPECT_FALSE(planFetches(many, now, limits).use_listing);
}

TEST(Decisions, AChangeIsANoOpOnlyWhenItStoresNothingNew) {
  const store::JobView view = oneAttempt(phase::JobPhase::kRunning, phase::AttemptPhase::kRunning);
  const store::AttemptRecord& a = view.attempts.back();

  auto observed = [&](auto edit) {
    store::AttemptRecord o = a;
    edit(o);
    AttemptVerdict v;
    v.phase = o.phase;
    v.reason = o.reason;
    auto change = applyVerdict(view, o, v, spec::RetryPolicy{}, 5);
    EXPECT_TRUE(change);
    return change ? isNoOp(*change, view) : false;
  };
  // The job's updated_ms moves with every change; that alone is nothing new.
  EXPECT_TRUE(observed([](store::AttemptRecord&) {}));
  EXPECT_FALSE(observed([](store::AttemptRecord& o) { o.reason = "running on cpu2"; }));
  EXPECT_FALSE(observed([](store::AttemptRecord& o) { o.missing_polls = 1; }));
  EXPECT_FALSE(
      observed([](store::AttemptRecord& o) { o.phase = phase::AttemptPhase::kReleasing; }));
}

}  // namespace
}  // namespace tuneplane::control
