// Slurm's view of a job → the platform's attempt phase. Pure, table-tested.
//
// Per component (one het component, or the whole single-pool job), from the base state,
// the flags, Slurm's reason and the exit code:
//   PENDING                              → Queued (Slurm's reason shown)
//   RUNNING, +CONFIGURING, +STOPPED      → Running
//   SUSPENDED                            → Running (the allocation is held; it resumes)
//   ended base + COMPLETING or STAGE_OUT → Releasing: the end is known, resources are not
//                                          free yet; nothing ends and no retry starts before
//   COMPLETED                            → Succeeded
//   FAILED, OUT_OF_MEMORY, TIMEOUT,
//   DEADLINE                             → Failed, cause user — except FAILED with the batch
//                                          script's own exit codes 65–69 (artifact or Ray on
//                                          the node: infrastructure), and FAILED with reason
//                                          BadConstraints (Slurm refused it: rejected)
//   NODE_FAIL, BOOT_FAIL, PREEMPTED,
//   any + LAUNCH_FAILED                  → Failed, cause infrastructure
//   CANCELLED                            → Cancelled when TunePlane asked, else Failed
//                                          (cause external_cancel)
//   any base or flag this version does
//   not know, or no state at all         → Unknown, reported with the string; never guessed
// Flags that change nothing here (REQUEUED, SPECIAL_EXIT, POWER_UP_NODE, SIGNALING, …) are
// known and ignored; an unknown flag makes the component Unknown like an unknown base.
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

#include "store/job_store.h"
#include "store/phases.h"

namespace tuneplane::control {

// What one component's record says.
struct ComponentVerdict {
  store::AttemptPhase phase = store::AttemptPhase::kUnknown;
  // Where it ends: the same as `phase`, except for Releasing, where it is the end it is
  // heading to (Succeeded, Failed or Cancelled).
  store::AttemptPhase outcome = store::AttemptPhase::kUnknown;
  store::EndCause cause = store::EndCause::kNone;  // set when outcome is Failed
  std::string reason;                              // for people
};

// `state`: Slurm's job_state (base first, then flags). `cancel_requested`: TunePlane asked
// for this job's cancellation (a CANCELLED record is then ours, not someone else's).
ComponentVerdict mapComponent(const std::vector<std::string>& state, std::string_view reason,
                              std::optional<int> exit_code, std::optional<int> signal,
                              bool cancel_requested);

struct AttemptVerdict {
  store::AttemptPhase phase = store::AttemptPhase::kUnknown;
  store::EndCause cause = store::EndCause::kNone;  // set when phase is Failed
  std::string reason;
  // Indices (ComponentRecord::index) of components that still run or wait while another
  // has failed: the reconciler cancels them, so the attempt can end.
  std::vector<int> to_cancel;
};

// REQUIRES: `components` is not empty.
AttemptVerdict rollUp(const std::vector<store::ComponentRecord>& components, bool cancel_requested);

// True for Slurm base states and flags this version knows (status_mapping.cc lists them).
// What the batch script's own exit code says failed on the node (the image check, Ray), or
// "" when the code is the user's. Such an ending is the infrastructure's, not the user's.
std::string_view scriptFailure(int exit_code);

bool isKnownBaseState(std::string_view state);
bool isKnownStateFlag(std::string_view flag);

}  // namespace tuneplane::control
