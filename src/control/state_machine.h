// The platform's state machine: which phase a job and an attempt may move to from where,
// as two tables (state_machine.cc), and the events that record each move. The phases
// themselves (with a comment per value, terminal ones marked) are phase/phases.h. The
// reconciler asks `allowed()` before it commits any change, so a decision that would break
// the machine is refused instead of stored. Pure; thread-safe.
//
// Jobs:     Pending ─► Staging ─► Submitting ─► Queued ─► Running ─► Releasing ─► Succeeded
//                         ▲           │  │        ▲  └────────┴──────────┴──────► Failed
//                         │           │  └► SubmitUnknown (lost receipt) ─┘
//                         │           └──► (not sent) Staging
//           Retrying ─────┘   (after a retryable failure, once the backoff is over)
//           Cancelling ─► Cancelled;  Unknown (a state string this version does not know)
// Attempts: Staging ─► Submitting ─► Submitted ─► Queued ─► Running ─► Releasing ─► end
//           (the same side phases; end = Succeeded | Failed | Cancelled | Abandoned)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "phase/phases.h"
#include "store/job_store.h"

namespace tuneplane::control {

// Who records an event when no person asked for it.
inline constexpr const char* kReconcilerActor = "reconciler";

// True when `from` → `to` is in the table. A phase "moving" to itself is not a transition
// (no event) and is always allowed.
bool allowed(phase::JobPhase from, phase::JobPhase to);
bool allowed(phase::AttemptPhase from, phase::AttemptPhase to);

// The job phase that mirrors its current attempt's phase. A requested cancel turns every
// active phase into Cancelling (the attempt may still be Queued while its DELETE is sent).
// REQUIRES: `attempt` is not terminal.
phase::JobPhase jobPhaseFor(phase::AttemptPhase attempt, bool cancel_requested);

// One event (attempt 0 = the job itself); `from` is "" for a creation.
store::EventRecord makeEvent(const std::string& job_id, int attempt, std::string_view from,
                             std::string_view to, int64_t now_ms, std::string reason,
                             std::string actor = kReconcilerActor);
// The event for one transition.
store::EventRecord jobEvent(const std::string& job_id, phase::JobPhase from, phase::JobPhase to,
                            int64_t now_ms, std::string reason,
                            std::string actor = kReconcilerActor);
store::EventRecord attemptEvent(const std::string& job_id, int attempt, phase::AttemptPhase from,
                                phase::AttemptPhase to, int64_t now_ms, std::string reason,
                                std::string actor = kReconcilerActor);

}  // namespace tuneplane::control
