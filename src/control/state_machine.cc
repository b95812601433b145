// The transition tables of state_machine.h. One row per phase: every phase it may move to.
#include "control/state_machine.h"

#include <algorithm>
#include <map>
#include <vector>

namespace tuneplane::control {
namespace {

using phase::AttemptPhase;
using phase::JobPhase;

template <typename Phase>
std::vector<Phase> plus(std::vector<Phase> a, const std::vector<Phase>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Where Slurm's answer about a submitted job can take a job at once (found by its receipt
// or its token, it may already be running, ending or ended).
const std::vector<JobPhase> kJobObserved = {
    JobPhase::kQueued,   JobPhase::kRunning,    JobPhase::kReleasing,
    JobPhase::kUnknown,  JobPhase::kSucceeded,  JobPhase::kFailed,
    JobPhase::kRetrying, JobPhase::kCancelling, JobPhase::kCancelled};
const std::vector<AttemptPhase> kAttemptObserved = {
    AttemptPhase::kQueued,    AttemptPhase::kRunning,   AttemptPhase::kReleasing,
    AttemptPhase::kUnknown,   AttemptPhase::kSucceeded, AttemptPhase::kFailed,
    AttemptPhase::kCancelled, AttemptPhase::kCancelling};

const std::map<JobPhase, std::vector<JobPhase>>& jobTable() {
  static const std::map<JobPhase, std::vector<JobPhase>> table = {
      // An attempt starts, or the job ends before one does (cancel; a spec that no longer
      // passes the site's rules).
      {JobPhase::kPending, {JobPhase::kStaging, JobPhase::kFailed, JobPhase::kCancelled}},
      {JobPhase::kStaging, {JobPhase::kSubmitting, JobPhase::kFailed, JobPhase::kCancelled}},
      // Not sent → back to Staging; lost receipt → SubmitUnknown; else what Slurm says.
      {JobPhase::kSubmitting, plus({JobPhase::kStaging, JobPhase::kSubmitUnknown}, kJobObserved)},
      // Found, judged; or proven never made by Slurm's listing: submitted again (Staging).
      {JobPhase::kSubmitUnknown, plus(kJobObserved, {JobPhase::kStaging})},
      {JobPhase::kQueued,
       {JobPhase::kRunning, JobPhase::kReleasing, JobPhase::kUnknown, JobPhase::kSucceeded,
        JobPhase::kFailed, JobPhase::kRetrying, JobPhase::kCancelling, JobPhase::kCancelled}},
      {JobPhase::kRunning,
       {JobPhase::kReleasing, JobPhase::kUnknown, JobPhase::kSucceeded, JobPhase::kFailed,
        JobPhase::kRetrying, JobPhase::kCancelling, JobPhase::kCancelled}},
      // Resources are held until Releasing ends: no retry starts before.
      {JobPhase::kReleasing,
       {JobPhase::kUnknown, JobPhase::kSucceeded, JobPhase::kFailed, JobPhase::kRetrying,
        JobPhase::kCancelling, JobPhase::kCancelled}},
      // The next attempt starts, or cannot be created (its stored spec no longer parses).
      {JobPhase::kRetrying, {JobPhase::kStaging, JobPhase::kFailed, JobPhase::kCancelled}},
      // A job that finished before the cancel reached it succeeded; anything else that ends
      // while cancelling is Cancelled (no retry after a cancel).
      {JobPhase::kCancelling, {JobPhase::kSucceeded, JobPhase::kCancelled}},
      {JobPhase::kUnknown,
       {JobPhase::kQueued, JobPhase::kRunning, JobPhase::kReleasing, JobPhase::kSucceeded,
        JobPhase::kFailed, JobPhase::kRetrying, JobPhase::kCancelling, JobPhase::kCancelled}},
      {JobPhase::kSucceeded, {}},
      {JobPhase::kFailed, {}},
      {JobPhase::kCancelled, {}},
  };
  return table;
}

const std::map<AttemptPhase, std::vector<AttemptPhase>>& attemptTable() {
  static const std::map<AttemptPhase, std::vector<AttemptPhase>> table = {
      // Staged, or refused before anything was sent (the spec no longer passes; cancel).
      {AttemptPhase::kStaging,
       {AttemptPhase::kSubmitting, AttemptPhase::kFailed, AttemptPhase::kCancelled}},
      // Not sent → Staging (retried); receipt → Submitted; lost → SubmitUnknown; refused.
      {AttemptPhase::kSubmitting,
       {AttemptPhase::kStaging, AttemptPhase::kSubmitted, AttemptPhase::kSubmitUnknown,
        AttemptPhase::kFailed}},
      // Found by its token (or by its sentinels), abandoned by an operator, or proven never
      // made by Slurm's listing: submitted again as itself (Staging).
      {AttemptPhase::kSubmitUnknown,
       plus(kAttemptObserved, {AttemptPhase::kAbandoned, AttemptPhase::kStaging})},
      // SLUIDs resolved; or the record under that id is not ours → look for it by token.
      {AttemptPhase::kSubmitted, plus(kAttemptObserved, {AttemptPhase::kSubmitUnknown})},
      {AttemptPhase::kQueued,
       {AttemptPhase::kRunning, AttemptPhase::kReleasing, AttemptPhase::kUnknown,
        AttemptPhase::kSucceeded, AttemptPhase::kFailed, AttemptPhase::kCancelled,
        AttemptPhase::kCancelling}},
      {AttemptPhase::kRunning,
       {AttemptPhase::kReleasing, AttemptPhase::kUnknown, AttemptPhase::kSucceeded,
        AttemptPhase::kFailed, AttemptPhase::kCancelled, AttemptPhase::kCancelling}},
      // Already ending: a cancel has nothing left to stop, so no Cancelling from here.
      {AttemptPhase::kReleasing,
       {AttemptPhase::kUnknown, AttemptPhase::kSucceeded, AttemptPhase::kFailed,
        AttemptPhase::kCancelled}},
      // DELETE sent; only the end (or a state we cannot read) moves it on.
      {AttemptPhase::kCancelling,
       {AttemptPhase::kUnknown, AttemptPhase::kSucceeded, AttemptPhase::kFailed,
        AttemptPhase::kCancelled}},
      {AttemptPhase::kUnknown,
       {AttemptPhase::kQueued, AttemptPhase::kRunning, AttemptPhase::kReleasing,
        AttemptPhase::kSucceeded, AttemptPhase::kFailed, AttemptPhase::kCancelled,
        AttemptPhase::kCancelling}},
      {AttemptPhase::kSucceeded, {}},
      {AttemptPhase::kFailed, {}},
      {AttemptPhase::kCancelled, {}},
      {AttemptPhase::kAbandoned, {}},
  };
  return table;
}

template <typename Phase>
bool inTable(const std::map<Phase, std::vector<Phase>>& table, Phase from, Phase to) {
  if (from == to) return true;
  auto row = table.find(from);
  return row != table.end() &&
         std::find(row->second.begin(), row->second.end(), to) != row->second.end();
}

}  // namespace

bool allowed(JobPhase from, JobPhase to) {
  return inTable(jobTable(), from, to);
}
bool allowed(AttemptPhase from, AttemptPhase to) {
  return inTable(attemptTable(), from, to);
}

JobPhase jobPhaseFor(AttemptPhase attempt, bool cancel_requested) {
  if (cancel_requested && attempt != AttemptPhase::kStaging) return JobPhase::kCancelling;
  switch (attempt) {
    case AttemptPhase::kStaging:
      return JobPhase::kStaging;
    case AttemptPhase::kSubmitting:
    case AttemptPhase::kSubmitted:
      return JobPhase::kSubmitting;
    case AttemptPhase::kSubmitUnknown:
      return JobPhase::kSubmitUnknown;
    case AttemptPhase::kQueued:
      return JobPhase::kQueued;
    case AttemptPhase::kRunning:
      return JobPhase::kRunning;
    case AttemptPhase::kReleasing:
      return JobPhase::kReleasing;
    case AttemptPhase::kCancelling:
      return JobPhase::kCancelling;
    case AttemptPhase::kUnknown:
      return JobPhase::kUnknown;
    case AttemptPhase::kSucceeded:
    case AttemptPhase::kFailed:
    case AttemptPhase::kCancelled:
    case AttemptPhase::kAbandoned:
      break;
  }
  return JobPhase::kUnknown;  // REQUIRES violated: a terminal attempt has no mirror
}

store::EventRecord makeEvent(const std::string& job_id, int attempt, std::string_view from,
                             std::string_view to, int64_t now_ms, std::string reason,
                             std::string actor) {
  store::EventRecord event;
  event.job_id = job_id;
  event.attempt = attempt;
  event.time_ms = now_ms;
  event.from = std::string(from);
  event.to = std::string(to);
  event.reason = std::move(reason);
  event.actor = std::move(actor);
  return event;
}

store::EventRecord jobEvent(const std::string& job_id, JobPhase from, JobPhase to, int64_t now_ms,
                            std::string reason, std::string actor) {
  return makeEvent(job_id, 0, phase::toString(from), phase::toString(to), now_ms, std::move(reason),
                   std::move(actor));
}

store::EventRecord attemptEvent(const std::string& job_id, int attempt, AttemptPhase from,
                                AttemptPhase to, int64_t now_ms, std::string reason,
                                std::string actor) {
  return makeEvent(job_id, attempt, phase::toString(from), phase::toString(to), now_ms,
                   std::move(reason), std::move(actor));
}

}  // namespace tuneplane::control
