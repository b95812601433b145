// The decisions of decisions.h.
#include "control/decisions.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include "catalog/error_codes.h"
#include "control/change_builder.h"
#include "control/retry_policy.h"
#include "control/status_mapping.h"
#include "slurm/hostlist.h"
#include "slurm/script_renderer.h"
#include "staging/error_codes.h"

namespace tuneplane::control {
namespace {

using phase::AttemptPhase;
using phase::EndCause;
using phase::JobPhase;

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

// The job's attempts up to `ended` (which is not yet in `view`'s stored form), as the retry
// policy counts them: preempted ones apart.
AttemptsEnded attemptsEnded(const store::JobView& view, const store::AttemptRecord& ended) {
  AttemptsEnded out;
  for (const auto& a : view.attempts) {
    if (a.number >= ended.number) continue;
    (a.cause == EndCause::kPreempted ? out.preemptions : out.counted) += 1;
  }
  (ended.cause == EndCause::kPreempted ? out.preemptions : out.counted) += 1;
  return out;
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
  const RetryDecision d =
      decideRetry(retry, attemptsEnded(b.view(), attempt), attempt.cause, b.now());
  if (d.retry) {
    b.setNextAttempt(d.not_before_ms);
    b.moveJob(JobPhase::kRetrying, prefix + attempt.reason + "; " + d.reason);
  } else {
    b.moveJob(JobPhase::kFailed, prefix + attempt.reason + "; " + d.reason);
  }
}

}  // namespace

SubmitFailure classifySubmitFailure(const slurm::SlurmError& e) {
  const std::string& code = e.error.code;
  // 429: the server turned the request away unread (too many requests): sent again later.
  if (e.transport == slurm::TransportClass::kNotSent || code == slurm::kErrAuthFailed ||
      code == slurm::kErrTokenUnavailable || code == slurm::kErrConfig ||
      e.http_status == kHttpTooManyRequests) {
    return SubmitFailure::kResend;
  }
  // slurmrestd's own word that slurmctld never took the request (its 502 "Unable to contact
  // slurm controller (connect failure)", the controller's rate limit): no job was made.
  if (slurm::neverReachedController(e.slurm_error_number)) return SubmitFailure::kResend;
  // Any other 5xx proves nothing either way.
  if (e.transport == slurm::TransportClass::kUnknown || code == slurm::kErrServerError) {
    return SubmitFailure::kLookUp;
  }
  return SubmitFailure::kRefused;
}

FailedSubmit afterFailedSubmit(const store::JobView& submitting, int number,
                               const slurm::SlurmError& e, int64_t now_ms) {
  switch (classifySubmitFailure(e)) {
    case SubmitFailure::kResend:
      return {deferSubmit(submitting, number,
                          "the submit did not reach Slurm (" + e.describe() + ")", now_ms),
              "submit not sent"};
    case SubmitFailure::kLookUp:
      return {markSubmitUnknown(submitting, number, "no receipt came back (" + e.describe() + ")",
                                now_ms),
              "lost receipt"};
    case SubmitFailure::kRefused:
      break;
  }
  return {markRefused(submitting, number, EndCause::kRejected,
                      "Slurm refused the submit: " + e.describe(), now_ms),
          "submit refused"};
}

bool isOurLostSubmittingCommit(const store::JobView& before, const store::JobView& stored,
                               int number, int64_t now_ms) {
  if (stored.attempts.empty()) return false;
  const store::AttemptRecord& attempt = stored.attempts.back();
  return attempt.number == number && attempt.phase == AttemptPhase::kSubmitting &&
         attempt.submitted_ms == now_ms && stored.job.updated_ms == now_ms &&
         stored.job.version == before.job.version + 1;
}

bool stagingMayPass(const Errors& errors) {
  return std::any_of(errors.begin(), errors.end(), [](const Error& e) {
    return e.code == staging::codes::kIo || e.code == catalog::codes::kArtifactUnreadable;
  });
}

FetchPlan planFetches(const std::vector<FetchNeed>& needs, int64_t now_ms,
                      const FetchLimits& limits) {
  FetchPlan plan;
  std::vector<size_t> unverified;
  std::vector<std::pair<int64_t, size_t>> due;  // (last verified, index)
  for (size_t i = 0; i < needs.size(); ++i) {
    const FetchNeed& n = needs[i];
    if (n.why == FetchReason::kChanged || n.why == FetchReason::kMustAct) {
      plan.fetch.emplace_back(i, n.why);
    } else if (!n.verified_ms) {
      unverified.push_back(i);
    } else if (now_ms - *n.verified_ms >= limits.full_refresh_interval_ms) {
      due.emplace_back(*n.verified_ms, i);
    }
  }
  for (size_t i : unverified) plan.fetch.emplace_back(i, FetchReason::kUnverified);
  std::stable_sort(due.begin(), due.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  const int64_t refresh_budget = 1 + static_cast<int64_t>(needs.size()) * limits.poll_interval_ms /
                                         std::max<int64_t>(1, limits.full_refresh_interval_ms);
  for (size_t i = 0; i < due.size() && static_cast<int64_t>(i) < refresh_budget; ++i) {
    plan.fetch.emplace_back(due[i].second, FetchReason::kRefresh);
  }
  plan.use_listing = static_cast<int>(plan.fetch.size()) > limits.listing_threshold;
  return plan;
}

bool isNoOp(const store::Change& change, const store::JobView& view) {
  return change.events.empty() && change.attempts.size() == 1 && !view.attempts.empty() &&
         change.attempts.front() == view.attempts.back() && change.job &&
         change.job->phase == view.job.phase && change.job->reason == view.job.reason;
}

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
  b.setNextAttempt(0);
  b.moveJob(JobPhase::kStaging, why);
  return b.build();
}

Result<store::Change> cancelBeforeSubmit(const store::JobView& view, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  const std::string actor = cancelActor(view.job);
  const std::string why = "cancelled before anything was submitted";
  if (const auto* a = currentAttempt(view); a && a->phase == AttemptPhase::kStaging) {
    b.editAttempt(a->number, [](store::AttemptRecord& r) { r.cause = EndCause::kCancelled; });
    b.moveAttempt(a->number, AttemptPhase::kCancelled, why, actor);
  }
  b.moveJob(JobPhase::kCancelled, why, actor);
  return b.build();
}

Result<store::Change> markSubmitting(const store::JobView& view, int number, int64_t now_ms,
                                     const std::vector<std::string>& notes) {
  ChangeBuilder b(view, now_ms);
  b.editAttempt(number, [&](store::AttemptRecord& a) { a.submitted_ms = now_ms; });
  std::string why = "submitting to slurmrestd";
  for (const auto& note : notes) why += "; " + note;
  b.moveAttempt(number, AttemptPhase::kSubmitting, why);
  mirror(b, b.attempt(number));
  return b.build();
}

std::map<std::string, std::string> nodesToAvoid(const store::JobView& view) {
  std::map<std::string, std::string> avoid;
  for (const auto& a : view.attempts) {
    if (!phase::isTerminal(a.phase) || a.cause != EndCause::kInfrastructure) continue;
    const std::string in = " in attempt " + std::to_string(a.number);
    for (const auto& c : a.components) {
      const slurm::JobBaseState base = baseStateOf(c.state);
      const std::vector<std::string> nodes = slurm::expandHostlist(c.nodes);
      if (base == slurm::JobBaseState::kNodeFail) {
        for (const auto& node : nodes)
          avoid.emplace(node, std::string(slurm::jobStateName(base)) + in);
        continue;
      }
      const bool node_trouble =
          base == slurm::JobBaseState::kFailed && c.exit_code &&
          (*c.exit_code == slurm::kExitArtifactMismatch ||
           *c.exit_code == slurm::kExitArtifactMissing ||
           *c.exit_code == slurm::kExitNoHeadAddress || *c.exit_code == slurm::kExitRayHeadFailed ||
           *c.exit_code == slurm::kExitCannotClaim);
      // The batch script runs on the first node of component 0.
      if (node_trouble && c.index == 0 && !nodes.empty()) {
        avoid.emplace(nodes.front(), std::string(scriptFailure(*c.exit_code)) + " (exit " +
                                         std::to_string(*c.exit_code) + in + ")");
      }
    }
  }
  return avoid;
}

Result<store::Change> deferSubmit(const store::JobView& view, int number, const std::string& why,
                                  int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  const int tries = b.attempt(number).lookups + 1;  // in Staging: tries that did not reach Slurm
  const auto delay = resendDelay(tries);
  b.editAttempt(number, [&](store::AttemptRecord& a) {
    a.lookups = tries;
    a.next_lookup_ms = now_ms + delay.count();
  });
  b.moveAttempt(number, AttemptPhase::kStaging, why + "; trying again in " + secondsText(delay));
  mirror(b, b.attempt(number));
  return b.build();
}

Result<store::Change> markSubmitUnknown(const store::JobView& view, int number,
                                        const std::string& why, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  b.editAttempt(number, [&](store::AttemptRecord& a) {
    a.lookups = 0;
    a.next_lookup_ms = now_ms;  // the first lookup in the next cycle
    a.missing_polls = 0;
  });
  b.moveAttempt(number, AttemptPhase::kSubmitUnknown,
                why +
                    "; the submit may have reached Slurm: looking for the job by its submit "
                    "token " +
                    b.attempt(number).submit_token +
                    ", and nothing is submitted again until it is found");
  mirror(b, b.attempt(number));
  return b.build();
}

Result<store::Change> markSubmitted(const store::JobView& view, int number, uint64_t job_id,
                                    int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  b.editAttempt(number, [&](store::AttemptRecord& a) {
    a.slurm_job_id = job_id;
    a.lookups = 0;
    a.next_lookup_ms = 0;
  });
  b.moveAttempt(number, AttemptPhase::kSubmitted,
                "submitted as Slurm job " + std::to_string(job_id) + "; resolving its SLUID");
  mirror(b, b.attempt(number));
  return b.build();
}

Result<store::Change> markRefused(const store::JobView& view, int number, EndCause cause,
                                  const std::string& why, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  b.editAttempt(number, [&](store::AttemptRecord& a) { a.cause = cause; });
  b.moveAttempt(number, AttemptPhase::kFailed, why);
  endJob(b, b.attempt(number), spec::RetryPolicy{});  // a refusal is never retried
  return b.build();
}

Result<store::Change> markLookupMiss(const store::JobView& view, int number, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  const store::AttemptRecord a = b.attempt(number);
  const int lookups = a.lookups + 1;
  const auto delay = lookupDelay(lookups);
  b.editAttempt(number, [&](store::AttemptRecord& r) {
    r.lookups = lookups;
    r.next_lookup_ms = now_ms + delay.count();
  });
  const std::string why =
      "submit receipt lost; no Slurm job carries the submit token " + a.submit_token + " after " +
      std::to_string(lookups) +
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

Result<store::Change> markNeverSubmitted(const store::JobView& view, int number, int lookups,
                                         int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  const store::AttemptRecord a = b.attempt(number);
  const std::string why = "no Slurm job carries the submit token " + a.submit_token + " after " +
                          std::to_string(lookups) +
                          " lookups in Slurm's own listing, and the attempt left no trace on the "
                          "node: the submit never made a job";
  if (b.job().cancel_requested) {
    const std::string actor = cancelActor(view.job);
    b.editAttempt(number, [](store::AttemptRecord& r) { r.cause = EndCause::kCancelled; });
    b.moveAttempt(number, AttemptPhase::kCancelled, "cancelled; " + why, actor);
    b.moveJob(JobPhase::kCancelled, "cancelled; " + why, actor);
    return b.build();
  }
  b.editAttempt(number, [&](store::AttemptRecord& r) {
    r.lookups = 0;
    r.next_lookup_ms = now_ms;
    r.missing_polls = 0;
  });
  b.moveAttempt(number, AttemptPhase::kStaging,
                why + "; submitting the same attempt again (its claim lets one copy run)");
  mirror(b, b.attempt(number));
  return b.build();
}

store::Change mergeChanges(const store::Change& first, const store::Change& second) {
  store::Change out = first;
  if (second.job) {
    const int64_t version = first.job ? first.job->version : second.job->version;
    out.job = second.job;
    out.job->version = version;
  }
  for (const auto& a : second.attempts) {
    auto it = std::find_if(out.attempts.begin(), out.attempts.end(),
                           [&](const auto& x) { return x.number == a.number; });
    if (it == out.attempts.end()) {
      out.attempts.push_back(a);
    } else {
      *it = a;
    }
  }
  out.events.insert(out.events.end(), second.events.begin(), second.events.end());
  out.synced = first.synced || second.synced;
  return out;
}

Result<store::Change> markAbandoned(const store::JobView& view, int number, int64_t now_ms) {
  ChangeBuilder b(view, now_ms);
  const store::AttemptRecord a = b.attempt(number);
  const std::string actor = a.abandoned_by.empty() ? "operator" : a.abandoned_by;
  b.editAttempt(number, [](store::AttemptRecord& r) { r.cause = EndCause::kAbandoned; });
  b.moveAttempt(number, AttemptPhase::kAbandoned,
                "abandoned by " + actor + ": " + a.abandon_reason +
                    " (if the original job exists, TunePlane no longer follows it)",
                actor);
  const std::string why = "attempt " + std::to_string(number) + " abandoned by " + actor + ": " +
                          a.abandon_reason + "; not retried automatically";
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
  b.moveJob(b.job().phase, observed.reason);
  return b.build();
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
  if (!phase::isTerminal(to) && to != AttemptPhase::kUnknown) {
    if (from == AttemptPhase::kCancelling) to = AttemptPhase::kCancelling;
    if (from == AttemptPhase::kReleasing) to = AttemptPhase::kReleasing;
  }
  if (phase::isTerminal(to)) observed.cause = verdict.cause;
  b.putAttempt(observed);
  std::string reason = verdict.reason;
  if (to == AttemptPhase::kCancelling && verdict.phase != AttemptPhase::kCancelling) {
    reason = "cancel sent; Slurm says: " + verdict.reason;
  }
  b.moveAttempt(number, to, reason);
  if (phase::isTerminal(to)) {
    endJob(b, b.attempt(number), retry);
  } else {
    mirror(b, b.attempt(number));
  }
  return b.build();
}

}  // namespace tuneplane::control
