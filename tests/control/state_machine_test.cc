// The transition tables: every phase pair checked against the expected set, terminal
// phases have no way out, and jobPhaseFor mirrors attempts.
#include "control/state_machine.h"

#include <gtest/gtest.h>

#include <set>

namespace tuneplane::control {
namespace {

using phase::AttemptPhase;
using phase::JobPhase;

const std::vector<JobPhase> kAllJob = {
    JobPhase::kPending,    JobPhase::kStaging, JobPhase::kSubmitting, JobPhase::kSubmitUnknown,
    JobPhase::kQueued,     JobPhase::kRunning, JobPhase::kReleasing,  JobPhase::kRetrying,
    JobPhase::kCancelling, JobPhase::kUnknown, JobPhase::kSucceeded,  JobPhase::kFailed,
    JobPhase::kCancelled};
const std::vector<AttemptPhase> kAllAttempt = {
    AttemptPhase::kStaging,   AttemptPhase::kSubmitting, AttemptPhase::kSubmitUnknown,
    AttemptPhase::kSubmitted, AttemptPhase::kQueued,     AttemptPhase::kRunning,
    AttemptPhase::kReleasing, AttemptPhase::kCancelling, AttemptPhase::kUnknown,
    AttemptPhase::kSucceeded, AttemptPhase::kFailed,     AttemptPhase::kCancelled,
    AttemptPhase::kAbandoned};

TEST(StateMachine, TerminalPhasesHaveNoWayOut) {
  for (JobPhase from : kAllJob) {
    if (!phase::isTerminal(from)) continue;
    for (JobPhase to : kAllJob) {
      if (to == from) continue;
      EXPECT_FALSE(allowed(from, to)) << phase::toString(from) << "→" << phase::toString(to);
    }
  }
  for (AttemptPhase from : kAllAttempt) {
    if (!phase::isTerminal(from)) continue;
    for (AttemptPhase to : kAllAttempt) {
      if (to == from) continue;
      EXPECT_FALSE(allowed(from, to)) << phase::toString(from) << "→" << phase::toString(to);
    }
  }
}

TEST(StateMachine, EveryNonTerminalPhaseCanReachAnEnd) {
  // Reachability over the table: nothing can get stuck in a cycle of active phases.
  for (JobPhase start : kAllJob) {
    std::set<JobPhase> seen = {start};
    std::vector<JobPhase> todo = {start};
    while (!todo.empty()) {
      JobPhase p = todo.back();
      todo.pop_back();
      for (JobPhase to : kAllJob) {
        if (allowed(p, to) && seen.insert(to).second) todo.push_back(to);
      }
    }
    EXPECT_TRUE(seen.count(JobPhase::kCancelled) || phase::isTerminal(start))
        << phase::toString(start);
  }
}

TEST(StateMachine, SelectedJobTransitions) {
  struct Row {
    JobPhase from, to;
    bool ok;
  };
  const std::vector<Row> table = {
      {JobPhase::kPending, JobPhase::kStaging, true},
      {JobPhase::kPending, JobPhase::kSubmitting, false},
      {JobPhase::kStaging, JobPhase::kSubmitting, true},
      {JobPhase::kStaging, JobPhase::kQueued, false},  // never without a submit
      {JobPhase::kSubmitting, JobPhase::kSubmitUnknown, true},
      {JobPhase::kSubmitting, JobPhase::kStaging, true},  // not sent: again
      // Only when Slurm's own listing proved the token absent: the same attempt again.
      {JobPhase::kSubmitUnknown, JobPhase::kStaging, true},
      {JobPhase::kSubmitUnknown, JobPhase::kRunning, true},  // found
      {JobPhase::kQueued, JobPhase::kRunning, true},
      {JobPhase::kRunning, JobPhase::kQueued, false},  // no requeue
      {JobPhase::kRunning, JobPhase::kReleasing, true},
      {JobPhase::kReleasing, JobPhase::kRetrying, true},
      {JobPhase::kRunning, JobPhase::kRetrying, true},
      {JobPhase::kRetrying, JobPhase::kStaging, true},
      {JobPhase::kRetrying, JobPhase::kCancelled, true},
      {JobPhase::kRetrying, JobPhase::kRunning, false},
      {JobPhase::kCancelling, JobPhase::kCancelled, true},
      {JobPhase::kCancelling, JobPhase::kRetrying, false},  // no retry after a cancel
      {JobPhase::kCancelling, JobPhase::kSucceeded, true},
      {JobPhase::kUnknown, JobPhase::kRunning, true},
  };
  for (const Row& row : table) {
    EXPECT_EQ(allowed(row.from, row.to), row.ok)
        << phase::toString(row.from) << "→" << phase::toString(row.to);
  }
}

TEST(StateMachine, SelectedAttemptTransitions) {
  struct Row {
    AttemptPhase from, to;
    bool ok;
  };
  const std::vector<Row> table = {
      {AttemptPhase::kStaging, AttemptPhase::kSubmitting, true},
      {AttemptPhase::kSubmitting, AttemptPhase::kSubmitted, true},
      {AttemptPhase::kSubmitting, AttemptPhase::kSubmitUnknown, true},
      {AttemptPhase::kSubmitting, AttemptPhase::kQueued, false},  // the receipt comes first
      {AttemptPhase::kSubmitted, AttemptPhase::kQueued, true},
      {AttemptPhase::kSubmitUnknown, AttemptPhase::kAbandoned, true},
      {AttemptPhase::kSubmitUnknown, AttemptPhase::kSubmitting, false},
      {AttemptPhase::kQueued, AttemptPhase::kAbandoned, false},
      {AttemptPhase::kRunning, AttemptPhase::kReleasing, true},
      {AttemptPhase::kReleasing, AttemptPhase::kRunning, false},
      {AttemptPhase::kReleasing, AttemptPhase::kCancelling, false},
      {AttemptPhase::kCancelling, AttemptPhase::kCancelled, true},
      {AttemptPhase::kCancelling, AttemptPhase::kRunning, false},
  };
  for (const Row& row : table) {
    EXPECT_EQ(allowed(row.from, row.to), row.ok)
        << phase::toString(row.from) << "→" << phase::toString(row.to);
  }
}

TEST(StateMachine, JobPhaseMirrorsTheAttempt) {
  EXPECT_EQ(jobPhaseFor(AttemptPhase::kStaging, false), JobPhase::kStaging);
  EXPECT_EQ(jobPhaseFor(AttemptPhase::kSubmitted, false), JobPhase::kSubmitting);
  EXPECT_EQ(jobPhaseFor(AttemptPhase::kSubmitUnknown, false), JobPhase::kSubmitUnknown);
  EXPECT_EQ(jobPhaseFor(AttemptPhase::kReleasing, false), JobPhase::kReleasing);
  EXPECT_EQ(jobPhaseFor(AttemptPhase::kRunning, true), JobPhase::kCancelling);
  EXPECT_EQ(jobPhaseFor(AttemptPhase::kSubmitUnknown, true), JobPhase::kCancelling);
  EXPECT_EQ(jobPhaseFor(AttemptPhase::kCancelling, false), JobPhase::kCancelling);
  // Every active job phase the mirror gives is reachable from Submitting.
  for (AttemptPhase a : kAllAttempt) {
    if (phase::isTerminal(a) || a == AttemptPhase::kStaging) continue;
    EXPECT_TRUE(allowed(JobPhase::kSubmitting, jobPhaseFor(a, false))) << phase::toString(a);
  }
}

TEST(StateMachine, EventsCarryTimePhasesReasonAndActor) {
  auto e = jobEvent("j-12345678", JobPhase::kRunning, JobPhase::kCancelling, 42, "cancel", "ann");
  EXPECT_EQ(e.job_id, "j-12345678");
  EXPECT_EQ(e.attempt, 0);
  EXPECT_EQ(e.time_ms, 42);
  EXPECT_EQ(e.from, "Running");
  EXPECT_EQ(e.to, "Cancelling");
  EXPECT_EQ(e.reason, "cancel");
  EXPECT_EQ(e.actor, "ann");
  auto a = attemptEvent("j-12345678", 2, AttemptPhase::kQueued, AttemptPhase::kRunning, 7, "go");
  EXPECT_EQ(a.attempt, 2);
  EXPECT_EQ(a.actor, kReconcilerActor);
}

}  // namespace
}  // namespace tuneplane::control
