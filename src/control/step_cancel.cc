// The step's cancel (job_step_impl.h): a DELETE of every live component once the user asks,
// again while Cancelling, of every duplicate a lookup by token finds — all through deleteOf,
// the one way the step cancels a Slurm job and hears the answer.
#include "control/job_step_impl.h"

namespace tuneplane::control::detail {

// Queued, Running or Unknown with a cancel requested: a DELETE of every live component;
// Cancelling once Slurm heard them all.
void Step::cancel() {
  bool heard = true;
  bool waiting = false;
  for (const auto& c : stored_->components) {
    if (c.sluid.empty() || hasEnded(c)) continue;
    const Delete d = deleteOf(c.sluid);
    if (d == Delete::kAsked) {
      waiting = true;
      continue;
    }
    if (Step::heard(d)) {
      plan_.memory.cancel_heard_ms[c.sluid] = steady_;
    } else {
      heard = false;
    }
    if (d == Delete::kGone) plan_.memory.must_read = true;
  }
  if (waiting) return;
  if (!heard) {
    plan_.note = "a DELETE was not heard; sent again next cycle";
    return;
  }
  write(markCancelSent(view_, stored_->number, now_), "cancel sent");
}

// Cancelling: each component that still waits or runs gets its DELETE again — at once for
// a SLUID no DELETE was heard for yet (a requeue gave the job a new one after the user's
// cancel: the fault campaign's seed 12488474279110387694), else a minute after the last one
// Slurm heard. Nothing is written; the poll follows the attempt to its end.
void Step::cancelAgain() {
  for (const auto& c : stored_->components) {
    if (c.sluid.empty() || hasEnded(c)) continue;
    const auto at = plan_.memory.cancel_heard_ms.find(c.sluid);
    if (at != plan_.memory.cancel_heard_ms.end() && steady_ - at->second < kCancelRecheckMs) {
      continue;
    }
    const Delete d = deleteOf(c.sluid);
    if (Step::heard(d)) plan_.memory.cancel_heard_ms[c.sluid] = steady_;
    if (d == Delete::kGone) plan_.memory.must_read = true;
  }
}

// Cancels every duplicate of `choice` (the DELETEs first); the SLUIDs whose cancel Slurm did
// not hear become strays, sent again every cycle. The decision does not wait on them.
std::vector<std::string> Step::cancelDuplicatesUnheard(const TokenChoice& choice) {
  std::vector<std::string> unheard;
  for (const auto& r : choice.duplicates) {
    if (r.sluid.empty()) continue;
    if (deleteOf(r.sluid) == Delete::kUnheard) {
      unheard.push_back(r.sluid);
      plan_.strays.push_back(r.sluid);
    }
  }
  if (plan_.cancel_now.empty()) plan_.duplicate_jobs = choice.duplicate_jobs;
  return unheard;
}

bool Step::cancelDuplicates(const TokenChoice& choice) {
  cancelDuplicatesUnheard(choice);
  return plan_.cancel_now.empty();
}

// The one way a step cancels a Slurm job and hears the answer: the DELETE of `sluid` is
// asked for until this cycle holds Slurm's answer, then told apart. Slurm's "no such job"
// counts as heard unless `gone_is_heard` is false (a requeued job's SLUID changes: the job
// may pend under its new one). Callers return while any DELETE is asked for.
Delete Step::deleteOf(const std::string& sluid, bool gone_is_heard) {
  const auto answer = facts_.cancels.find(sluid);
  if (answer == facts_.cancels.end()) {
    plan_.cancel_now.push_back({sluid, gone_is_heard});
    return Delete::kAsked;
  }
  switch (answer->second) {
    case CancelHeard::kHeard:
      return Delete::kHeard;
    case CancelHeard::kGone:
      return gone_is_heard ? Delete::kGone : Delete::kUnheard;
    case CancelHeard::kUnheard:
      return Delete::kUnheard;
  }
  return Delete::kUnheard;
}

}  // namespace tuneplane::control::detail
