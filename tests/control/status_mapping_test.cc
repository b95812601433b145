// Slurm state → attempt phase, from a table per component, and the roll-up across het
// components.
#include "control/status_mapping.h"

#include <gtest/gtest.h>

namespace tuneplane::control {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using store::ComponentRecord;

struct Row {
  std::vector<std::string> state;
  std::string reason;
  std::optional<int> exit_code;
  bool cancel_requested;
  AttemptPhase phase;
  AttemptPhase outcome;
  EndCause cause;
  std::string reason_contains;
};

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {{"PENDING"},
       "Resources",
       {},
       false,
       AttemptPhase::kQueued,
       AttemptPhase::kQueued,
       EndCause::kNone,
       "Resources"},
      {{"PENDING"},
       "None",
       {},
       false,
       AttemptPhase::kQueued,
       AttemptPhase::kQueued,
       EndCause::kNone,
       "queued"},
      // Issue 17: a requeue ends the attempt (the requeued job is cancelled), whatever the
      // base state; COMPLETING still holds it Releasing.
      {{"PENDING", "REQUEUE_HOLD"},
       "JobHeldUser",
       {},
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "requeued the job (REQUEUE_HOLD; Slurm's reason: JobHeldUser)"},
      {{"PENDING", "REQUEUED", "COMPLETING"},
       "NodeDown",
       {},
       false,
       AttemptPhase::kReleasing,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "requeued the job (REQUEUED; Slurm's reason: NodeDown); the epilog runs"},
      {{"PENDING", "REQUEUE_FED"},
       "None",
       {},
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "requeued the job (REQUEUE_FED)"},
      {{"RUNNING", "COMPLETING"},
       "None",
       {},
       false,
       AttemptPhase::kReleasing,
       AttemptPhase::kRunning,
       EndCause::kNone,
       "resources still held"},
      {{"PENDING", "STAGE_OUT"},
       "None",
       {},
       false,
       AttemptPhase::kReleasing,
       AttemptPhase::kQueued,
       EndCause::kNone,
       "staging out"},
      {{"PENDING"},
       "PartitionTimeLimit",
       {},
       false,
       AttemptPhase::kQueued,
       AttemptPhase::kQueued,
       EndCause::kNone,
       "PartitionTimeLimit: the job's time limit exceeds its partition's time limit"},
      {{"RUNNING"},
       "None",
       {},
       false,
       AttemptPhase::kRunning,
       AttemptPhase::kRunning,
       EndCause::kNone,
       "running"},
      {{"RUNNING", "CONFIGURING"},
       "None",
       {},
       false,
       AttemptPhase::kRunning,
       AttemptPhase::kRunning,
       EndCause::kNone,
       "prolog"},
      {{"RUNNING", "POWER_UP_NODE", "CONFIGURING"},
       "None",
       {},
       false,
       AttemptPhase::kRunning,
       AttemptPhase::kRunning,
       EndCause::kNone,
       "booting"},
      {{"RUNNING", "STOPPED"},
       "None",
       {},
       false,
       AttemptPhase::kRunning,
       AttemptPhase::kRunning,
       EndCause::kNone,
       "stopped"},
      {{"SUSPENDED"},
       "None",
       {},
       false,
       AttemptPhase::kRunning,
       AttemptPhase::kRunning,
       EndCause::kNone,
       "suspended"},
      {{"COMPLETED"},
       "None",
       0,
       false,
       AttemptPhase::kSucceeded,
       AttemptPhase::kSucceeded,
       EndCause::kNone,
       "completed"},
      {{"COMPLETED", "COMPLETING"},
       "None",
       0,
       false,
       AttemptPhase::kReleasing,
       AttemptPhase::kSucceeded,
       EndCause::kNone,
       "epilog"},
      {{"COMPLETED", "STAGE_OUT"},
       "None",
       0,
       false,
       AttemptPhase::kReleasing,
       AttemptPhase::kSucceeded,
       EndCause::kNone,
       "staging out"},
      {{"FAILED"},
       "NonZeroExitCode",
       3,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kUser,
       "exit code 3"},
      {{"FAILED", "COMPLETING"},
       "NonZeroExitCode",
       3,
       false,
       AttemptPhase::kReleasing,
       AttemptPhase::kFailed,
       EndCause::kUser,
       "exit code 3"},
      {{"FAILED"},
       "NonZeroExitCode",
       65,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "SHA-256"},
      {{"FAILED"},
       "NonZeroExitCode",
       66,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "missing"},
      {{"FAILED"},
       "NonZeroExitCode",
       67,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "Ray"},
      {{"FAILED"},
       "NonZeroExitCode",
       68,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "head"},
      {{"FAILED"},
       "BadConstraints",
       0,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kRejected,
       "BadConstraints"},
      {{"OUT_OF_MEMORY"},
       "OutOfMemory",
       0,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kUser,
       "memory"},
      {{"TIMEOUT"},
       "TimeLimit",
       0,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kUser,
       "time limit"},
      {{"TIMEOUT", "COMPLETING"},
       "TimeLimit",
       0,
       false,
       AttemptPhase::kReleasing,
       AttemptPhase::kFailed,
       EndCause::kUser,
       "time limit"},
      {{"DEADLINE"},
       "None",
       0,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kUser,
       "deadline"},
      {{"NODE_FAIL"},
       "None",
       0,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "node failed"},
      {{"NODE_FAIL", "COMPLETING"},
       "None",
       0,
       false,
       AttemptPhase::kReleasing,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "node failed"},
      {{"BOOT_FAIL"},
       "None",
       0,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "boot"},
      // Issue 47, the four ends of 23_preemption.json: PREEMPTED, whatever the exit code — a
      // program that saved and exited 0 or 3 in its grace time reads SUCCESS/0, one killed at
      // the grace end SIGNALED/KILL (no return code), one with no warning TERM.
      {{"PREEMPTED"},
       "None",
       0,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kPreempted,
       "preempted"},
      {{"PREEMPTED"},
       "None",
       3,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kPreempted,
       "preempted"},
      {{"PREEMPTED"},
       "None",
       {},
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kPreempted,
       "preempted"},
      {{"PREEMPTED", "COMPLETING"},
       "None",
       0,
       false,
       AttemptPhase::kReleasing,
       AttemptPhase::kFailed,
       EndCause::kPreempted,
       "epilog"},
      // A preempted job TunePlane had also asked to cancel is still Slurm's preemption.
      {{"PREEMPTED"},
       "None",
       0,
       true,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kPreempted,
       "preempted"},
      {{"FAILED", "LAUNCH_FAILED"},
       "None",
       1,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "LAUNCH_FAILED"},
      {{"PENDING", "LAUNCH_FAILED"},
       "None",
       {},
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "LAUNCH_FAILED"},
      {{"CANCELLED"},
       "None",
       0,
       true,
       AttemptPhase::kCancelled,
       AttemptPhase::kCancelled,
       EndCause::kCancelled,
       "request"},
      {{"CANCELLED", "COMPLETING"},
       "None",
       0,
       true,
       AttemptPhase::kReleasing,
       AttemptPhase::kCancelled,
       EndCause::kCancelled,
       "request"},
      {{"CANCELLED"},
       "None",
       0,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kExternalCancel,
       "outside TunePlane"},
      {{"COMPLETED", "REQUEUED", "SPECIAL_EXIT"},
       "None",
       0,
       false,
       AttemptPhase::kFailed,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       "requeued the job (REQUEUED)"},
      {{"CANCELLED", "REQUEUED"},
       "None",
       {},
       true,
       AttemptPhase::kCancelled,
       AttemptPhase::kCancelled,
       EndCause::kCancelled,
       "request"},
      {{"HIBERNATING"},
       "None",
       {},
       false,
       AttemptPhase::kUnknown,
       AttemptPhase::kUnknown,
       EndCause::kNone,
       "'HIBERNATING'"},
      {{"RUNNING", "WARP_DRIVE"},
       "None",
       {},
       false,
       AttemptPhase::kUnknown,
       AttemptPhase::kUnknown,
       EndCause::kNone,
       "'WARP_DRIVE'"},
      {{},
       "",
       {},
       false,
       AttemptPhase::kUnknown,
       AttemptPhase::kUnknown,
       EndCause::kNone,
       "no state"},
  };
  return table;
}

std::string label(const Row& row) {
  std::string out;
  for (const auto& s : row.state) out += (out.empty() ? "" : "+") + s;
  return (out.empty() ? "<none>" : out) + "/" + row.reason + "/" +
         (row.exit_code ? std::to_string(*row.exit_code) : "-") +
         (row.cancel_requested ? "/cancel" : "");
}

TEST(StatusMapping, EveryRowOfTheComponentTable) {
  for (const Row& row : rows()) {
    SCOPED_TRACE(label(row));
    const ComponentVerdict v =
        mapComponent(row.state, row.reason, row.exit_code, std::nullopt, row.cancel_requested);
    EXPECT_EQ(v.phase, row.phase);
    EXPECT_EQ(v.outcome, row.outcome);
    EXPECT_EQ(v.cause, row.cause);
    EXPECT_NE(v.reason.find(row.reason_contains), std::string::npos) << v.reason;
  }
}

TEST(StatusMapping, KnowsEveryBaseStateAndFlagOfSlurm2605) {
  for (const char* s :
       {"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT",
        "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}) {
    EXPECT_TRUE(isKnownBaseState(s)) << s;
  }
  for (const char* f :
       {"LAUNCH_FAILED", "REQUEUED", "REQUEUE_HOLD", "SPECIAL_EXIT", "RESIZING", "CONFIGURING",
        "COMPLETING", "STOPPED", "RECONFIG_FAIL", "POWER_UP_NODE", "REVOKED", "REQUEUE_FED",
        "RESV_DEL_HOLD", "SIGNALING", "STAGE_OUT", "EXPEDITING"}) {
    EXPECT_TRUE(isKnownStateFlag(f)) << f;
  }
  EXPECT_FALSE(isKnownBaseState("COMPLETING"));  // a flag, never a base
  EXPECT_FALSE(isKnownStateFlag("RUNNING"));
}

ComponentRecord component(int index, const std::string& pool, std::vector<std::string> state,
                          std::optional<int> exit_code = std::nullopt) {
  ComponentRecord c;
  c.index = index;
  c.pool = pool;
  c.state = std::move(state);
  c.exit_code = exit_code;
  return c;
}

struct RollRow {
  std::string name;
  std::vector<std::vector<std::string>> states;  // one per component
  bool cancel_requested;
  AttemptPhase phase;
  EndCause cause;
  std::vector<int> to_cancel;
};

TEST(StatusMappingRollUp, EveryRowOfTheRollUpTable) {
  const std::vector<RollRow> table = {
      {"all pending",
       {{"PENDING"}, {"PENDING"}},
       false,
       AttemptPhase::kQueued,
       EndCause::kNone,
       {}},
      {"starting", {{"RUNNING"}, {"PENDING"}}, false, AttemptPhase::kRunning, EndCause::kNone, {}},
      {"all running",
       {{"RUNNING"}, {"RUNNING"}},
       false,
       AttemptPhase::kRunning,
       EndCause::kNone,
       {}},
      {"one done, one running",
       {{"COMPLETED"}, {"RUNNING"}},
       false,
       AttemptPhase::kRunning,
       EndCause::kNone,
       {}},
      {"one releasing",
       {{"COMPLETED", "COMPLETING"}, {"COMPLETED"}},
       false,
       AttemptPhase::kReleasing,
       EndCause::kNone,
       {}},
      {"all completed",
       {{"COMPLETED"}, {"COMPLETED"}},
       false,
       AttemptPhase::kSucceeded,
       EndCause::kNone,
       {}},
      {"one failed, others run: cancel them",
       {{"RUNNING"}, {"NODE_FAIL"}, {"PENDING"}},
       false,
       AttemptPhase::kReleasing,
       EndCause::kNone,
       {0, 2}},
      {"one failed, other releasing",
       {{"NODE_FAIL"}, {"COMPLETED", "COMPLETING"}},
       false,
       AttemptPhase::kReleasing,
       EndCause::kNone,
       {}},
      {"failed one still in epilog",
       {{"FAILED", "COMPLETING"}, {"COMPLETED"}},
       false,
       AttemptPhase::kReleasing,
       EndCause::kNone,
       {}},
      {"failed and the other cancelled by us: cause is the failure",
       {{"CANCELLED"}, {"NODE_FAIL"}},
       false,
       AttemptPhase::kFailed,
       EndCause::kInfrastructure,
       {}},
      {"user failure wins over success",
       {{"COMPLETED"}, {"FAILED"}},
       false,
       AttemptPhase::kFailed,
       EndCause::kUser,
       {}},
      {"cancelled at our request",
       {{"CANCELLED"}, {"CANCELLED"}},
       true,
       AttemptPhase::kCancelled,
       EndCause::kCancelled,
       {}},
      // Issue 47: the component TunePlane cancelled after another was preempted does not hide
      // the preemption.
      {"one preempted, the other cancelled after it",
       {{"PREEMPTED"}, {"CANCELLED"}},
       false,
       AttemptPhase::kFailed,
       EndCause::kPreempted,
       {}},
      {"one preempted, the other still running: stopped",
       {{"PREEMPTED"}, {"RUNNING"}},
       false,
       AttemptPhase::kReleasing,
       EndCause::kNone,
       {1}},
      {"unknown wins",
       {{"RUNNING"}, {"MYSTERY"}},
       false,
       AttemptPhase::kUnknown,
       EndCause::kNone,
       {}},
  };
  for (const RollRow& row : table) {
    SCOPED_TRACE(row.name);
    std::vector<ComponentRecord> comps;
    for (size_t i = 0; i < row.states.size(); ++i) {
      comps.push_back(component(int(i), "pool" + std::to_string(i), row.states[i], 0));
    }
    const AttemptVerdict v = rollUp(comps, row.cancel_requested);
    EXPECT_EQ(v.phase, row.phase) << v.reason;
    EXPECT_EQ(v.cause, row.cause) << v.reason;
    EXPECT_EQ(v.to_cancel, row.to_cancel);
  }
}

TEST(StatusMappingRollUp, HetReasonsNameTheComponentSingleOnesDoNot) {
  auto het =
      rollUp({component(0, "learners", {"RUNNING"}), component(1, "actors", {"FAILED"}, 2)}, false);
  EXPECT_NE(het.reason.find("component 1 (actors)"), std::string::npos) << het.reason;
  EXPECT_NE(het.reason.find("exit code 2"), std::string::npos) << het.reason;
  auto single = rollUp({component(0, "main", {"FAILED"}, 2)}, false);
  EXPECT_EQ(single.reason.find("component"), std::string::npos) << single.reason;
  EXPECT_EQ(single.phase, AttemptPhase::kFailed);
}

// Issue 47: a RUNNING component with a preempt_time is in Slurm's grace time — still Running,
// and its reason says by when Slurm ends it; one without is plainly running.
TEST(StatusMappingRollUp, ARunningJobBeingPreemptedSaysByWhenSlurmEndsIt) {
  ComponentRecord c = component(0, "main", {"RUNNING"});
  c.preempt_time = 1'796'687'416;
  c.end_time = 1'796'687'446;  // + GraceTime 30 s (23_preemption.json, keeps_running)
  const AttemptVerdict v = rollUp({c}, false);
  EXPECT_EQ(v.phase, AttemptPhase::kRunning);
  EXPECT_EQ(v.reason,
            "running; being preempted since 2026-12-07T23:50:16Z: Slurm ends it by "
            "2026-12-07T23:50:46Z");
  c.preempt_time = 0;
  EXPECT_EQ(rollUp({c}, false).reason, "running");
}

}  // namespace
}  // namespace tuneplane::control
