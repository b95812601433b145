// The decisions of decisions.h.
#include "control/decisions.h"

#include <algorithm>

#include "control/change_builder.h"
#include "control/retry_policy.h"
#include "control/status_mapping.h"
#include "slurm/script_renderer.h"

namespace tuneplane::control {
namespace {

using store::AttemptPhase;
using store::EndCause;
using store::JobPhase;

std::string secondsText(std::chrono::milliseconds delay) {
  return std::to_string((delay.count() + 999) / 1000) + " s";
}

// Who moves the job when it ends because of a cancel: the person who asked.
std::string cancelActor(const store::JobRecord& job) {
  return job.cancel_requested_by.empty() ? kReconcilerActor : job.cancel_requested_by;
}

// The job's phase and reason follow its (non-terminal) attempt.
void mirror(ChangeBuilder& b, const store::AttemptRecord& attempt) {
  b.moveJob(jobPhaseFor(attempt.phase, b.job().cancel_requested), attempt.reason);
}

// The job after its attempt ended (`attempt` terminal): succeeded, cancelled, retrying or
// failed for good.
void endJob(ChangeBuilder& b, const store::AttemptRecord& attempt, const spec::RetryPolicy& retry) {
  const store::JobRecord& job = b.job();
  const std::string prefix = "attempt " + std::to_string(attempt.number) + ": ";
  if (attempt.phase == AttemptPhase::kSucceeded) {
    b.moveJob(JobPhase::kSucceeded, prefix + attempt.reason);
    return;
  }
  if (job.cancel_requested || attempt.phase == AttemptPhase::kCancelled) {
    b.moveJob(JobPhase::kCancelled, prefix + attempt.reason, cancelActor(job));
    return;
  }
  const RetryDecision d = decideRetry(retry, attempt.number, attempt.cause, b.now());
  if (d.retry) {
    b.job().next_attempt_ms = d.not_before_ms;
    b.moveJob(JobPhase::kRetrying, prefix + attempt.reason + "; " + d.reason);
  } else {
    b.moveJob(JobPhase::kFailed, prefix + attempt.reason + "; " + d.reason);
  }
}

const store::ComponentRecord* byOffset(const store::AttemptRecord& a, int index) {
  for (const auto& c : a.components) {
    if (c.index == index) return &c;
  }
  return nullptr;
}

void copyRecord(store::ComponentRecord& c, const slurm::JobRecord& r) {
  c.slurm_job_id = r.job_id;
  c.sluid = r.sluid;
  c.state = r.job_state;
  c.reason = r.state_reason;
  const auto code = r.exit_code.return_code.value();
  c.exit_code = code ? std::optional<int>(static_cast<int>(*code)) : std::nullopt;
  const auto signal = r.exit_code.signal_id.value();
  c.signal = signal && *signal != 0 ? std::optional<int>(static_cast<int>(*signal)) : std::nullopt;
  c.nodes = r.nodes;
  c.start_time = r.start_time.value().value_or(0);
  c.end_time = r.end_time.value().value_or(0);
}

}  // namespace

const store::AttemptRecord* currentAttempt(const store::JobView& view) {
  return view.attempts.empty() ? nullptr : &view.attempts.back();
}

Result<store::Change> beginAttempt(const store::JobView& view, int number,
                                   const std::string& submit_token, const std::string& staging_dir,
                                   const std::vector<std::string>& pools, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  store::AttemptRecord a;
  a.number = number;
  a.phase = AttemptPhase::kStaging;
  a.submit_token = submit_token;
  a.staging_dir = staging_dir;
  for (size_t i = 0; i < pools.size(); ++i) {
    store::ComponentRecord c;
    c.index = static_cast<int>(i);
    c.pool = pools[i];
    a.components.push_back(c);
  }
  const std::string why =
      number == 1 ? "staging the first attempt" : "staging attempt " + std::to_string(number);
  b.addAttempt(std::move(a), why);
  b.job().next_attempt_ms = 0;
  b.moveJob(JobPhase::kStaging, why);
  return b.build();
}

Result<store::Change> cancelBeforeSubmit(const store::JobView& view, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  const std::string actor = cancelActor(view.job);
  const std::string why = "cancelled before anything was submitted";
  if (const auto* a = currentAttempt(view); a && a->phase == AttemptPhase::kStaging) {
    b.attempt(a->number).cause = EndCause::kCancelled;
    b.moveAttempt(a->number, AttemptPhase::kCancelled, why, actor);
  }
  b.moveJob(JobPhase::kCancelled, why, actor);
  return b.build();
}

Result<store::Change> markSubmitting(const store::JobView& view, int number, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  b.attempt(number).submitted_ms = now_ms;
  b.moveAttempt(number, AttemptPhase::kSubmitting, "submitting to slurmrestd");
  mirror(b, b.attempt(number));
  return b.build();
}

Result<store::Change> deferSubmit(const store::JobView& view, int number, const std::string& why,
                                  int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  store::AttemptRecord& a = b.attempt(number);
  a.lookups += 1;  // in Staging: tries that did not reach Slurm
  const auto delay = resendDelay(a.lookups);
  a.next_lookup_ms = now_ms + delay.count();
  b.moveAttempt(number, AttemptPhase::kStaging, why + "; trying again in " + secondsText(delay));
  mirror(b, b.attempt(number));
  return b.build();
}

Result<store::Change> markSubmitUnknown(const store::JobView& view, int number,
                                        const std::string& why, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  store::AttemptRecord& a = b.attempt(number);
  a.lookups = 0;
  a.next_lookup_ms = now_ms;  // the first lookup in the next cycle
  a.missing_polls = 0;
  b.moveAttempt(number, AttemptPhase::kSubmitUnknown,
                why +
                    "; the submit may have reached Slurm: looking for the job by its submit "
                    "token " +
                    a.submit_token + ", and nothing is submitted again until it is found");
  mirror(b, b.attempt(number));
  return b.build();
}

Result<store::Change> markSubmitted(const store::JobView& view, int number, uint64_t job_id,
                                    int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  store::AttemptRecord& a = b.attempt(number);
  a.slurm_job_id = job_id;
  a.lookups = 0;
  a.next_lookup_ms = 0;
  b.moveAttempt(number, AttemptPhase::kSubmitted,
                "submitted as Slurm job " + std::to_string(job_id) + "; resolving its SLUID");
  mirror(b, b.attempt(number));
  return b.build();
}

Result<store::Change> markRefused(const store::JobView& view, int number, EndCause cause,
                                  const std::string& why, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  b.attempt(number).cause = cause;
  b.moveAttempt(number, AttemptPhase::kFailed, why);
  endJob(b, b.attempt(number), spec::RetryPolicy{});  // a refusal is never retried
  return b.build();
}

Result<store::Change> markLookupMiss(const store::JobView& view, int number, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  store::AttemptRecord& a = b.attempt(number);
  a.lookups += 1;
  const auto delay = lookupDelay(a.lookups);
  a.next_lookup_ms = now_ms + delay.count();
  const std::string why =
      "submit receipt lost; no Slurm job carries the submit token " + a.submit_token + " after " +
      std::to_string(a.lookups) +
      " lookup(s) — not proof that none exists, so nothing is submitted again; next lookup in " +
      secondsText(delay) + " (an operator can abandon the attempt)";
  b.moveAttempt(number, AttemptPhase::kSubmitUnknown, why);
  if (!b.job().cancel_requested) {
    b.moveJob(JobPhase::kSubmitUnknown, why);
  } else {
    b.moveJob(JobPhase::kCancelling,
              "cancel requested; it will be cancelled as soon as it is "
              "found. " +
                  why);
  }
  return b.build();
}

Result<store::Change> markAbandoned(const store::JobView& view, int number, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  store::AttemptRecord& a = b.attempt(number);
  const std::string actor = a.abandoned_by.empty() ? "operator" : a.abandoned_by;
  a.cause = EndCause::kAbandoned;
  b.moveAttempt(number, AttemptPhase::kAbandoned,
                "abandoned by " + actor + ": " + a.abandon_reason +
                    " (if the original job exists, TunePlane no longer follows it)",
                actor);
  const std::string why = "attempt " + std::to_string(number) + " abandoned by " + actor + ": " +
                          b.attempt(number).abandon_reason + "; not retried automatically";
  if (b.job().cancel_requested) {
    b.moveJob(JobPhase::kCancelled, why, actor);
  } else {
    b.moveJob(JobPhase::kFailed, why, actor);
  }
  return b.build();
}

Result<store::Change> markCancelSent(const store::JobView& view, int number, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  const std::string actor = cancelActor(view.job);
  b.moveAttempt(number, AttemptPhase::kCancelling,
                "cancel sent for every component; waiting for Slurm to report the end", actor);
  b.moveJob(JobPhase::kCancelling, b.attempt(number).reason, actor);
  return b.build();
}

Result<store::Change> failJob(const store::JobView& view, const std::string& why, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  b.moveJob(JobPhase::kFailed, why);
  return b.build();
}

Result<store::Change> recordObservation(const store::JobView& view,
                                        const store::AttemptRecord& observed, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  b.putAttempt(observed);
  b.moveAttempt(observed.number, b.attempt(observed.number).phase, observed.reason);
  b.job().reason = observed.reason;
  return b.build();
}

store::AttemptRecord countMissing(store::AttemptRecord attempt) {
  attempt.missing_polls += 1;
  attempt.reason = "Slurm has no record of the job (" + std::to_string(attempt.missing_polls) +
                   " of " + std::to_string(kMissingPollsToJudge) +
                   " checks before it is judged from its sentinels)";
  return attempt;
}

AttemptVerdict judgeFromSentinels(const AttemptSentinels& sentinels, bool cancel_requested) {
  AttemptVerdict v;
  if (!sentinels.exit.empty()) {
    const auto& [pool, exit] = *sentinels.exit.begin();
    const std::string how = "ended with exit code " + std::to_string(exit.exit_code) + " on " +
                            exit.node + " (from its exit sentinel; Slurm no longer has a record)";
    if (exit.exit_code == 0) {
      v.phase = AttemptPhase::kSucceeded;
      v.reason = "the job " + how;
    } else if (cancel_requested) {
      v.phase = AttemptPhase::kCancelled;
      v.cause = EndCause::kCancelled;
      v.reason = "cancelled; the job " + how;
    } else {
      const bool node = !scriptFailure(exit.exit_code).empty();
      v.phase = AttemptPhase::kFailed;
      v.cause = node ? EndCause::kInfrastructure : EndCause::kUser;
      v.reason = "the job " + how;
    }
    return v;
  }
  if (cancel_requested) {
    v.phase = AttemptPhase::kCancelled;
    v.cause = EndCause::kCancelled;
    v.reason = "cancelled; Slurm no longer has a record of the job";
    return v;
  }
  v.phase = AttemptPhase::kFailed;
  if (!sentinels.start.empty()) {
    const auto& [pool, start] = *sentinels.start.begin();
    v.cause = EndCause::kUnobserved;
    v.reason = "ended unobserved: it started on " + start.node + " at " +
               std::to_string(start.time) +
               " (Unix time), left no exit sentinel, and Slurm no longer has a record (killed: "
               "time limit, cancel or node loss)";
  } else {
    v.cause = EndCause::kInfrastructure;
    v.reason = "lost: Slurm has no record of the job after " +
               std::to_string(kMissingPollsToJudge) + " checks and it left no sentinel";
  }
  if (!sentinels.problems.empty()) v.reason += "; unreadable: " + sentinels.problems.front();
  return v;
}

AttemptVerdict noteMissingLogs(AttemptVerdict verdict,
                               const std::vector<std::string>& pools_without_log) {
  if (verdict.phase != AttemptPhase::kFailed || verdict.cause != EndCause::kUser ||
      pools_without_log.empty()) {
    return verdict;
  }
  std::string files;
  for (const auto& pool : pools_without_log) {
    files += (files.empty() ? "" : ", ") + std::string("logs/") + pool + ".out";
  }
  verdict.cause = EndCause::kInfrastructure;
  verdict.reason = std::string(kLogNeverWrittenReason) + " (missing: " + files +
                   "; Slurm said: " + verdict.reason + ")";
  return verdict;
}

bool applyRecords(store::AttemptRecord& attempt, const std::vector<slurm::JobRecord>& records,
                  bool by_sluid) {
  if (!by_sluid) {
    // Adoption: the records define the components, in het offset order.
    std::vector<const slurm::JobRecord*> sorted;
    for (const auto& r : records) sorted.push_back(&r);
    std::sort(sorted.begin(), sorted.end(), [](const auto* x, const auto* y) {
      return x->het_job_offset.value().value_or(0) < y->het_job_offset.value().value_or(0);
    });
    std::vector<store::ComponentRecord> comps;
    for (const auto* r : sorted) {
      store::ComponentRecord c;
      c.index = static_cast<int>(r->het_job_offset.value().value_or(0));
      const auto* planned = byOffset(attempt, c.index);
      c.pool = planned ? planned->pool : "component-" + std::to_string(c.index);
      copyRecord(c, *r);
      comps.push_back(std::move(c));
    }
    if (!sorted.empty()) {
      const auto* lead = sorted.front();
      attempt.slurm_job_id =
          lead->isHetComponent() ? static_cast<uint64_t>(*lead->het_job_id.value()) : lead->job_id;
    }
    const bool complete = !comps.empty() && comps.size() >= attempt.components.size();
    if (!comps.empty()) attempt.components = std::move(comps);
    return complete;
  }
  bool all = !attempt.components.empty();
  for (auto& c : attempt.components) {
    auto it = std::find_if(records.begin(), records.end(), [&](const slurm::JobRecord& r) {
      return !c.sluid.empty() && r.sluid.size() == c.sluid.size() &&
             std::equal(r.sluid.begin(), r.sluid.end(), c.sluid.begin(),
                        [](char x, char y) { return std::toupper(x) == std::toupper(y); });
    });
    if (it == records.end()) {
      all = false;
      continue;
    }
    const std::string sluid = c.sluid;
    copyRecord(c, *it);
    c.sluid = sluid;
  }
  return all;
}

Result<store::Change> applyVerdict(const store::JobView& view, store::AttemptRecord observed,
                                   const AttemptVerdict& verdict, const spec::RetryPolicy& retry,
                                   int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  const int number = observed.number;
  const AttemptPhase from = b.attempt(number).phase;
  AttemptPhase to = verdict.phase;
  // Once DELETE is out, only the end moves a cancelling attempt; once an attempt is ending,
  // it does not go back to running.
  if (!store::isTerminal(to) && to != AttemptPhase::kUnknown) {
    if (from == AttemptPhase::kCancelling) to = AttemptPhase::kCancelling;
    if (from == AttemptPhase::kReleasing) to = AttemptPhase::kReleasing;
  }
  if (store::isTerminal(to)) observed.cause = verdict.cause;
  b.putAttempt(observed);
  std::string reason = verdict.reason;
  if (to == AttemptPhase::kCancelling && verdict.phase != AttemptPhase::kCancelling) {
    reason = "cancel sent; Slurm says: " + verdict.reason;
  }
  b.moveAttempt(number, to, reason);
  if (store::isTerminal(to)) {
    endJob(b, b.attempt(number), retry);
  } else {
    mirror(b, b.attempt(number));
  }
  return b.build();
}

}  // namespace tuneplane::control
