// The vocabulary of a job's life, shared by the store (which persists it), the control loop
// (which moves through it), the API and the API client (which show it): the phases a job
// and an attempt can be in, and why an attempt ended. The allowed transitions between them
// are control/'s (state_machine.h). Each value has a stable string (stored, and shown in
// the API and in events, so never rename one). Pure; depends on nothing of the project.
#pragma once

#include <optional>
#include <string_view>

namespace tuneplane::phase {

enum class JobPhase {
  kPending,        // accepted and durable; no attempt yet
  kStaging,        // an attempt's files are being written
  kSubmitting,     // the submit request is being sent
  kSubmitUnknown,  // a submit may have reached Slurm but no receipt came back: blocked until
                   // the job is found by its submit token (or an operator abandons it)
  kQueued,         // Slurm has the job, PENDING (reason says why)
  kRunning,        // RUNNING or CONFIGURING
  kReleasing,      // the job ended but Slurm still holds resources (COMPLETING, STAGE_OUT)
  kRetrying,       // an attempt failed with a retryable cause; waiting out the backoff
  kCancelling,     // cancel requested; waiting for Slurm to report the end
  kUnknown,        // Slurm reported a state this version does not know; reported, not guessed
  kSucceeded,      // terminal
  kFailed,         // terminal
  kCancelled,      // terminal
};

enum class AttemptPhase {
  kStaging,        // row durable with its submit token; files being staged
  kSubmitting,     // submit intent durable; the request may be in flight
  kSubmitUnknown,  // lost receipt: looking for the job by its token
  kSubmitted,      // receipt stored (numeric id); SLUIDs not yet resolved
  kQueued,         // PENDING
  kRunning,        // RUNNING / CONFIGURING
  kReleasing,      // ended, resources still held (COMPLETING / STAGE_OUT)
  kCancelling,     // cancel sent for every component; waiting for the end
  kUnknown,        // unknown Slurm state string; reported, never guessed
  kSucceeded,      // terminal
  kFailed,         // terminal; `cause` says why
  kCancelled,      // terminal; cancelled at TunePlane's request
  kAbandoned,      // terminal; an operator gave up looking for a lost receipt
};

// Why an attempt ended; decides whether a retry is allowed (spec.retry.on).
enum class EndCause {
  kNone,            // not ended, or succeeded
  kUser,            // the user's command failed: FAILED, OUT_OF_MEMORY, TIMEOUT, DEADLINE
  kInfrastructure,  // NODE_FAIL, BOOT_FAIL, LAUNCH_FAILED, lost, artifact on node
  kPreempted,       // PREEMPTED: Slurm took the nodes for other work; not a failure (retried
                    // up to spec.retry.max_preemptions, without using one of max_attempts)
  kCancelled,       // cancelled through TunePlane
  kExternalCancel,  // CANCELLED by someone outside TunePlane
  kRejected,        // Slurm refused the submit (no job runs)
  kAbandoned,       // an operator abandoned a lost receipt
  kUnobserved,      // started (start sentinel) but ended with no record and no exit sentinel
};

bool isTerminal(JobPhase phase);
bool isTerminal(AttemptPhase phase);

std::string_view toString(JobPhase phase);  // "Pending", "SubmitUnknown", …
std::string_view toString(AttemptPhase phase);
std::string_view toString(EndCause cause);  // "none", "user", "infrastructure", "preempted", …
std::optional<JobPhase> parseJobPhase(std::string_view text);
std::optional<AttemptPhase> parseAttemptPhase(std::string_view text);
std::optional<EndCause> parseEndCause(std::string_view text);

}  // namespace tuneplane::phase
