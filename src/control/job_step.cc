// The step of job_step.h: the dispatch by attempt phase and the facts a branch asks for; the
// phases' own branches are step_submit.cc's, step_cancel.cc's and step_track.cc's (Step:
// job_step_impl.h). Each path follows one attempt phase; every branch that needs a fact asks
// for it and returns, so a branch only ever decides from facts it holds.
#include "control/job_step.h"

#include <algorithm>

#include "control/job_step_impl.h"
#include "control/status_mapping.h"

namespace tuneplane::control {
namespace detail {

bool hasEnded(const store::ComponentRecord& c) {
  const ComponentVerdict v = mapComponent(c.state, c.reason, c.exit_code, c.signal, true);
  return v.phase != AttemptPhase::kQueued && v.phase != AttemptPhase::kRunning &&
         v.phase != AttemptPhase::kUnknown;
}

StepPlan Step::run() {
  const store::JobRecord& job = view_.job;
  if (stored_ == nullptr || job.phase == phase::JobPhase::kRetrying) {
    nextAttempt();
    return std::move(plan_);
  }
  switch (stored_->phase) {
    case AttemptPhase::kStaging:
      if (job.cancel_requested) {
        write(cancelBeforeSubmit(view_, now_), "cancel");
      } else if (now_ >= stored_->next_lookup_ms) {
        plan_.launch = LaunchKind::kResume;
      }
      break;
    case AttemptPhase::kSubmitting:
      // Nothing leaves Submitting within a tick without a commit: this one was interrupted
      // (or its commit's answer was lost), and the request may have reached Slurm.
      write(markSubmitUnknown(view_, stored_->number,
                              "TunePlane stopped while the attempt was being submitted", now_),
            "interrupted submit");
      break;
    case AttemptPhase::kSubmitted:
      receipt();
      break;
    case AttemptPhase::kSubmitUnknown:
      lostReceipt();
      break;
    case AttemptPhase::kQueued:
    case AttemptPhase::kRunning:
    case AttemptPhase::kUnknown:
      if (job.cancel_requested) cancel();
      plan_.poll = true;
      break;
    case AttemptPhase::kCancelling:
      cancelAgain();
      plan_.poll = true;
      break;
    case AttemptPhase::kReleasing:
      plan_.poll = true;
      break;
    case AttemptPhase::kSucceeded:
    case AttemptPhase::kFailed:
    case AttemptPhase::kCancelled:
    case AttemptPhase::kAbandoned:
      // A commit is atomic, so an active job always has an active attempt or is Retrying.
      plan_.note = "job is " + std::string(phase::toString(job.phase)) + " but its attempt " +
                   std::to_string(stored_->number) + " ended; left as it is";
      break;
  }
  return std::move(plan_);
}

StepPlan Step::runPolled() {
  if (stored_ != nullptr) track();
  return std::move(plan_);
}

// chooseByToken over this cycle's records; with more than one Slurm job, logs/claim is read
// first, so the job that started the attempt is the one kept. False: the files are asked for.
bool Step::choose(TokenChoice& choice) {
  choice = chooseByToken(facts_.token.records);
  if (choice.duplicate_jobs == 0) return true;
  if (!filesRead()) return false;
  if (facts_.sentinels->claimed_by) {
    choice = chooseByToken(facts_.token.records, facts_.sentinels->claimed_by);
  }
  return true;
}

// Whether this cycle's lookup by token answered; asks for it when it was not made.
bool Step::tokenAnswered() {
  if (facts_.token.heard == Heard::kNotAsked) {
    plan_.read_token = true;
    return false;
  }
  if (facts_.token.heard == Heard::kNoAnswer) {
    plan_.note = "no listing this cycle (" + facts_.token.why + "): nothing is concluded";
    return false;
  }
  return true;
}

bool Step::filesRead() {
  if (facts_.sentinels && facts_.scheduler_log_missing) return true;
  plan_.read_files = true;
  return false;
}

// slurmdbd's runs, once read; a read that failed this cycle concludes nothing.
bool Step::accountingRead() {
  if (facts_.accounting) return true;
  if (!facts_.accounting_unanswered.empty()) {
    plan_.note = "slurmdbd's record could not be read this cycle (" + facts_.accounting_unanswered +
                 "): nothing is concluded";
    return false;
  }
  plan_.read_accounting = true;
  return false;
}

}  // namespace detail

std::string_view toString(Heard heard) {
  switch (heard) {
    case Heard::kNotAsked:
      return "not asked";
    case Heard::kNoAnswer:
      return "no answer";
    case Heard::kNotFound:
      return "not found";
    case Heard::kFound:
      return "found";
  }
  return "?";
}

StepPlan stepJob(const store::JobView& view, const JobFacts& facts, const AttemptMemory& memory,
                 const StepSettings& settings, int64_t now_ms, int64_t steady_ms) {
  return detail::Step(view, facts, memory, settings, now_ms, steady_ms).run();
}

StepPlan stepPolled(const store::JobView& view, const JobFacts& facts, const AttemptMemory& memory,
                    const StepSettings& settings, int64_t now_ms, int64_t steady_ms) {
  return detail::Step(view, facts, memory, settings, now_ms, steady_ms).runPolled();
}

store::JobView afterChange(const store::JobView& view, const store::Change& change) {
  store::JobView after = view;
  if (change.job) {
    const bool cancel_requested = after.job.cancel_requested;
    const std::string cancel_requested_by = after.job.cancel_requested_by;
    after.job = *change.job;
    after.job.cancel_requested = cancel_requested;
    after.job.cancel_requested_by = cancel_requested_by;
    after.job.version = view.job.version + 1;
  }
  for (const auto& a : change.attempts) {
    auto it = std::find_if(after.attempts.begin(), after.attempts.end(),
                           [&](const auto& x) { return x.number == a.number; });
    if (it == after.attempts.end()) {
      after.attempts.push_back(a);
    } else {
      *it = a;
    }
  }
  std::sort(after.attempts.begin(), after.attempts.end(),
            [](const auto& x, const auto& y) { return x.number < y.number; });
  return after;
}

}  // namespace tuneplane::control
