// Slurm's view of a job → the platform's attempt phase. Pure, table-tested.
//
// Per component (one het component, or the whole single-pool job), from the base state,
// the flags, Slurm's reason and the exit code. The names are slurm/job_state.h's (the one
// table); mapComponent is a switch over its enums, so the compiler proves every base state
// is handled. docs/users.md, "Slurm state → phase", holds the same table, and
// status_table_test checks the two agree.
//   PENDING                              → Queued (Slurm's reason shown); a reason of
//                                          slurm/pending_reasons.h marks it unrunnable
//   RUNNING, +CONFIGURING, +STOPPED      → Running
//   SUSPENDED                            → Running (the allocation is held; it resumes)
//   any base + COMPLETING or STAGE_OUT   → Releasing: resources are not free yet; nothing
//                                          ends and no retry starts before
//   any base but CANCELLED + REQUEUED,
//   REQUEUE_HOLD, REQUEUE_FED or
//   SPECIAL_EXIT                         → Failed, cause infrastructure ("Slurm requeued
//                                          the job"); the requeued job is cancelled first
//   COMPLETED                            → Succeeded
//   FAILED, OUT_OF_MEMORY, TIMEOUT,
//   DEADLINE                             → Failed, cause user — except FAILED with the batch
//                                          script's own exit codes 65–69 (artifact or Ray on
//                                          the node: infrastructure), and FAILED with reason
//                                          BadConstraints (Slurm refused it: rejected)
//   NODE_FAIL, BOOT_FAIL,
//   any + LAUNCH_FAILED                  → Failed, cause infrastructure
//   PREEMPTED                            → Failed, cause preempted, whatever the exit code
//                                          (a program that saved and exited 0 in its grace
//                                          time still reads PREEMPTED, SUCCESS/0)
//   CANCELLED                            → Cancelled when TunePlane asked, else Failed
//                                          (cause external_cancel)
//   any base or flag this version does
//   not know, or no state at all         → Unknown, reported with the string; never guessed
// Other flags (POWER_UP_NODE, SIGNALING, RESIZING, …) are known and change nothing; an
// unknown flag makes the component Unknown like an unknown base.
//
// A RUNNING component with a preempt_time is in Slurm's grace time: still Running, its
// reason saying so and by when Slurm ends it.
//
// The attempt rolls its components up (rollUp): Unknown if any is Unknown; a failed
// component fails the attempt (the others are listed to be cancelled, and the attempt is
// Releasing until every component has ended and let go); else Running / Queued while any
// component runs or waits; Releasing while any holds resources; then Failed, Cancelled or
// Succeeded.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "phase/phases.h"
#include "slurm/job_state.h"
#include "store/job_store.h"

namespace tuneplane::control {

// What one component's record says.
struct ComponentVerdict {
  phase::AttemptPhase phase = phase::AttemptPhase::kUnknown;
  // Where it ends: the same as `phase`, except for Releasing, where it is the end it is
  // heading to (Succeeded, Failed or Cancelled).
  phase::AttemptPhase outcome = phase::AttemptPhase::kUnknown;
  phase::EndCause cause = phase::EndCause::kNone;  // set when outcome is Failed
  std::string reason;                              // for people
  // Slurm requeued it (REQUEUED, REQUEUE_HOLD, REQUEUE_FED or SPECIAL_EXIT): the attempt is
  // over, and the requeued job must be cancelled before it can run a second time.
  bool requeued = false;
  // PENDING on a reason Slurm uses for "can never run as submitted" (slurm/pending_reasons.h).
  bool unrunnable = false;
};

// `state`: Slurm's job_state (base first, then flags). `cancel_requested`: TunePlane asked
// for this job's cancellation (a CANCELLED record is then ours, not someone else's).
ComponentVerdict mapComponent(const std::vector<std::string>& state, std::string_view reason,
                              std::optional<int> exit_code, std::optional<int> signal,
                              bool cancel_requested);

struct AttemptVerdict {
  phase::AttemptPhase phase = phase::AttemptPhase::kUnknown;
  phase::EndCause cause = phase::EndCause::kNone;  // set when phase is Failed
  std::string reason;
  // Indices (ComponentRecord::index) of components that still run or wait while another
  // has failed: the reconciler cancels them, so the attempt can end.
  std::vector<int> to_cancel;
  // Indices of components Slurm requeued: cancelled (by SLUID) before the attempt may end.
  std::vector<int> requeued;
  // Queued, and some component waits on a reason Slurm can never satisfy as submitted.
  bool unrunnable = false;
};

// REQUIRES: `components` is not empty.
AttemptVerdict rollUp(const std::vector<store::ComponentRecord>& components, bool cancel_requested);

// What the batch script's own exit code says failed on the node (the image check, Ray), or
// "" when the code is the user's. Such an ending is the infrastructure's, not the user's.
std::string_view scriptFailure(int exit_code);

// True for Slurm base states and flags this version knows (slurm/job_state.h).
bool isKnownBaseState(std::string_view state);
// The typed base state of a stored job_state (its first name); kNone when there is none or
// this version does not know it.
slurm::JobBaseState baseStateOf(const std::vector<std::string>& state);
bool isKnownStateFlag(std::string_view flag);

}  // namespace tuneplane::control
