// The reconciler's tick and the helpers its steps share (see reconciler.h). The submit
// protocol is in reconciler_submit.cc; lost receipts, polling and cancel in
// reconciler_track.cc.
#include "control/reconciler.h"

#include <array>
#include <utility>

#include <spdlog/spdlog.h>

#include "control/decisions.h"
#include "spec/spec_parser.h"

namespace tuneplane::control {
namespace {

constexpr std::array<std::pair<SubmitStep, std::string_view>, 6> kSteps = {{
    {SubmitStep::kAttemptDurable, "attempt-durable"},
    {SubmitStep::kStaged, "staged"},
    {SubmitStep::kSubmittingDurable, "submitting-durable"},
    {SubmitStep::kSubmitAnswered, "submit-answered"},
    {SubmitStep::kReceiptDurable, "receipt-durable"},
    {SubmitStep::kSluidsDurable, "sluids-durable"},
}};

}  // namespace

std::string_view toString(SubmitStep step) {
  for (const auto& [s, name] : kSteps) {
    if (s == step) return name;
  }
  return "?";
}

std::optional<SubmitStep> parseSubmitStep(std::string_view text) {
  for (const auto& [s, name] : kSteps) {
    if (name == text) return s;
  }
  return std::nullopt;
}

Reconciler::Reconciler(store::JobStore& store, slurm::SlurmClient& slurm,
                       pipeline::AttemptLauncher& launcher, const Clock& clock,
                       ReconcilerOptions options)
    : store_(store),
      slurm_(slurm),
      launcher_(launcher),
      clock_(clock),
      options_(std::move(options)) {
  std::vector<slurm::SlurmClient*> clients = options_.launch_clients;
  if (clients.empty()) clients.push_back(&slurm_);
  stage_ = std::make_unique<LaunchStage>(std::move(clients), clock_, options_.launch_stage);
}

TickReport Reconciler::tick(std::stop_token stop) {
  now_ = clock_.nowMs();
  steady_now_ = clock_.steadyMs();
  stop_ = stop;
  report_ = TickReport{};
  listing_.reset();
  by_token_.reset();
  launches_.clear();
  auto active = store_.activeJobs();
  if (!active) {
    ++report_.errors;
    spdlog::error("reconciler: cannot read the active jobs: {}", active.error().describe());
    return report_;
  }
  report_.jobs = static_cast<int>(active->size());
  std::set<std::string> live;  // the current attempts: what the per-process memory keeps
  for (const auto& view : *active) {
    if (!view.attempts.empty()) live.insert(key(view.attempts.back()));
  }
  std::vector<store::JobView> looking;
  std::vector<store::JobView> tracked;
  for (auto& view : *active) {
    if (stop.stop_requested()) {
      report_.stopped = true;
      return report_;
    }
    dispatch(std::move(view), looking, tracked);
  }
  if (!launches_.empty() && !stop.stop_requested()) runLaunches();
  if (!looking.empty() && !stop.stop_requested()) lookForLostReceipts(looking);
  if (!tracked.empty() && !stop.stop_requested()) {
    batching_ = true;
    poll(tracked, stop);
    flushBatch();  // also when stopped: the observations made are written whole
  }
  report_.stopped = stop.stop_requested();
  // Forget attempts that are no longer current.
  for (auto it = verified_ms_.begin(); it != verified_ms_.end();) {
    const bool keep = live.count(it->first) || it->second == steady_now_;  // or new this tick
    it = keep ? std::next(it) : verified_ms_.erase(it);
  }
  for (auto it = cancel_sent_.begin(); it != cancel_sent_.end();) {
    const std::string attempt = it->first.substr(0, it->first.rfind('/'));
    it = live.count(attempt) ? std::next(it) : cancel_sent_.erase(it);
  }
  for (auto it = unrunnable_since_.begin(); it != unrunnable_since_.end();) {
    const bool keep = live.count(it->first) || it->second == steady_now_;  // or new this tick
    it = keep ? std::next(it) : unrunnable_since_.erase(it);
  }
  return report_;
}

void Reconciler::dispatch(store::JobView view, std::vector<store::JobView>& looking,
                          std::vector<store::JobView>& tracked) {
  const store::JobRecord& job = view.job;
  const store::AttemptRecord* attempt = currentAttempt(view);
  if (attempt == nullptr || job.phase == phase::JobPhase::kRetrying) {
    if (job.cancel_requested) {
      commit(view, cancelBeforeSubmit(view, now_), "cancel");
    } else if (attempt == nullptr || now_ >= job.next_attempt_ms) {
      queueLaunch(std::move(view), /*fresh=*/true);
    }
    return;
  }
  switch (attempt->phase) {
    case phase::AttemptPhase::kStaging:
      if (job.cancel_requested) {
        commit(view, cancelBeforeSubmit(view, now_), "cancel");
      } else if (now_ >= attempt->next_lookup_ms) {
        queueLaunch(std::move(view), /*fresh=*/false);
      }
      return;
    case phase::AttemptPhase::kSubmitting:
      // Nothing leaves Submitting within a tick without a commit: this one was
      // interrupted, and the request may have reached Slurm.
      commit(view,
             markSubmitUnknown(view, attempt->number,
                               "TunePlane stopped while the attempt was being submitted", now_),
             "interrupted submit");
      return;
    case phase::AttemptPhase::kSubmitted:
      resolveReceipt(std::move(view));
      return;
    case phase::AttemptPhase::kSubmitUnknown:
      if (attempt->abandon_requested) {
        commit(view, markAbandoned(view, attempt->number, now_), "abandon");
      } else {
        looking.push_back(std::move(view));
      }
      return;
    case phase::AttemptPhase::kQueued:
    case phase::AttemptPhase::kRunning:
    case phase::AttemptPhase::kUnknown:
      if (job.cancel_requested && sendCancel(view)) {
        if (auto fresh = reload(job.id); fresh && !phase::isTerminal(fresh->job.phase)) {
          tracked.push_back(std::move(*fresh));
        }
        return;
      }
      tracked.push_back(std::move(view));
      return;
    case phase::AttemptPhase::kCancelling:
      cancelAgain(view);
      tracked.push_back(std::move(view));
      return;
    case phase::AttemptPhase::kReleasing:
      tracked.push_back(std::move(view));
      return;
    case phase::AttemptPhase::kSucceeded:
    case phase::AttemptPhase::kFailed:
    case phase::AttemptPhase::kCancelled:
    case phase::AttemptPhase::kAbandoned:
      // A commit is atomic, so an active job always has an active attempt or is Retrying.
      spdlog::error("reconciler: job {} is {} but its attempt {} ended; left as it is", job.id,
                    phase::toString(job.phase), attempt->number);
      ++report_.errors;
      return;
  }
}

bool Reconciler::commit(const store::JobView& view, const Result<store::Change>& change,
                        const char* what) {
  if (batching_ && change) {
    batch_.push_back(*change);
    return true;
  }
  return commitNow(report_, view, change, what);
}

bool Reconciler::commitNow(TickReport& tally, const store::JobView& view,
                           const Result<store::Change>& change, const char* what) {
  if (!change) {
    ++tally.errors;
    spdlog::error("reconciler: job {}: {} not recorded: {}", view.job.id, what,
                  change.error().describe());
    return false;
  }
  auto done = store_.commit(*change);
  if (!done) {
    ++tally.errors;
    spdlog::error("reconciler: job {}: {} not recorded: {}", view.job.id, what,
                  done.error().describe());
    return false;
  }
  ++tally.commits;
  reportEvents(*change);
  return true;
}

bool Reconciler::flushBatch(bool synced) {
  batching_ = false;
  if (batch_.empty()) return true;
  std::vector<store::Change> changes;
  changes.swap(batch_);
  for (store::Change& change : changes) change.synced = synced;
  auto done = store_.commitAll(changes);
  if (!done) {
    // Nothing is lost: the store still holds the earlier state, so the next tick sees the
    // same differences and decides again.
    ++report_.errors;
    spdlog::error("reconciler: {} observation(s) not recorded: {}", changes.size(),
                  done.error().describe());
    return false;
  }
  report_.commits += static_cast<int>(changes.size());
  for (const auto& change : changes) reportEvents(change);
  return true;
}

std::optional<store::JobView> Reconciler::reload(const std::string& job_id, TickReport* tally) {
  auto view = store_.getJob(job_id);
  if (!view || !*view) {
    ++(tally != nullptr ? *tally : report_).errors;
    spdlog::error("reconciler: cannot re-read job {}", job_id);
    return std::nullopt;
  }
  return std::move(**view);
}

void Reconciler::hook(SubmitStep step, const store::JobView& view, int attempt) {
  if (options_.step_hook) options_.step_hook(step, view.job.id, attempt);
}

void Reconciler::reportEvents(const store::Change& change) {
  for (const auto& e : change.events) {
    if (options_.observer != nullptr) {
      options_.observer->transition(e);
      continue;
    }
    spdlog::info("job {}{}: {} → {} ({})", e.job_id,
                 e.attempt ? " attempt " + std::to_string(e.attempt) : std::string(),
                 e.from.empty() ? "new" : e.from, e.to, e.reason);
  }
}

std::string Reconciler::key(const store::AttemptRecord& attempt) const {
  return attempt.job_id + "#" + std::to_string(attempt.number);
}

std::vector<std::string> Reconciler::poolsWithoutLog(const store::AttemptRecord& attempt) const {
  // The batch script runs in component 0 and writes its log there; the other components'
  // files appear only if a step writes to them, so their absence proves nothing.
  std::vector<std::string> missing;
  if (!attempt.components.empty() &&
      !launcher_.files().schedulerLogExists(attempt.staging_dir, attempt.components.front().pool)) {
    missing.push_back(attempt.components.front().pool);
  }
  return missing;
}

AttemptVerdict Reconciler::verdictFor(const store::AttemptRecord& observed,
                                      bool cancel_requested) const {
  AttemptVerdict verdict = rollUp(observed.components, cancel_requested);
  if (verdict.phase == phase::AttemptPhase::kFailed && verdict.cause == phase::EndCause::kUser) {
    verdict = noteMissingLogs(std::move(verdict), poolsWithoutLog(observed));
  }
  return verdict;
}

spec::RetryPolicy Reconciler::retryOf(const store::JobView& view,
                                      const AttemptVerdict& verdict) const {
  // Only an ending attempt consults the policy; parsing the stored spec for every observed
  // job on every tick would put YAML parsing on the poll path.
  if (!phase::isTerminal(verdict.phase)) return spec::RetryPolicy{};
  auto parsed = spec::parseJobSpec(view.job.spec);
  // A stored spec passed validation when it was submitted; if it no longer parses, no
  // retry is safer than a guessed one.
  return parsed ? parsed->retry : spec::RetryPolicy{};
}

}  // namespace tuneplane::control
