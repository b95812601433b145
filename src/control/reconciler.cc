// The reconciler's tick and the helpers its steps share (see reconciler.h). The submit
// protocol is in reconciler_submit.cc; lost receipts, polling and cancel in
// reconciler_track.cc.
#include "control/reconciler.h"

#include <array>
#include <deque>
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
  if (!refreshKnown(report_)) return report_;
  report_.jobs = static_cast<int>(known_.size());
  std::set<AttemptKey> live;  // the current attempts: what the per-process memory keeps
  // The jobs this cycle's poll follows: as read (known_ changes only at the next tick's
  // refresh), or as a step of this tick left them (`changed` holds those).
  std::vector<const store::JobView*> tracked;
  std::deque<store::JobView> changed;
  for (const auto& [order, known] : known_) {
    if (stop.stop_requested()) {
      report_.stopped = true;
      return report_;
    }
    const store::JobView& view = known.view;
    if (!view.attempts.empty()) live.insert(key(view.attempts.back()));
    Driven driven = drive(view, JobFacts{}, /*polled=*/false);
    if (!driven.follow) continue;
    if (driven.after) {
      changed.push_back(std::move(*driven.after));
      tracked.push_back(&changed.back());
    } else {
      tracked.push_back(&view);
    }
  }
  if (!launches_.empty() && !stop.stop_requested()) runLaunches();
  if (!tracked.empty() && !stop.stop_requested()) {
    batching_ = true;
    poll(tracked, stop);
    flushBatch();  // also when stopped: the observations made are written whole
  }
  report_.stopped = stop.stop_requested();
  // Forget attempts that are no longer current (a new attempt's memory starts empty).
  for (auto it = memory_.begin(); it != memory_.end();) {
    const bool keep = live.count(it->first) || it->second.verifiedIn(steady_now_);  // or new
    it = keep ? std::next(it) : memory_.erase(it);
  }
  return report_;
}

bool Reconciler::refreshKnown(TickReport& report) {
  epoch_ = store_.fenceEpoch();
  const bool full = epoch_ != known_epoch_ || known_through_seq_ == 0 ||
                    steady_now_ - last_full_read_ms_ >= kFullReadIntervalMs;
  auto delta = store_.activeJobsSince(full ? 0 : known_through_seq_);
  if (!delta) {
    ++report.errors;
    spdlog::error("reconciler: cannot read the active jobs: {}", delta.error().describe());
    return false;
  }
  if (delta->full) {
    std::map<std::string, Known> kept;  // what was parsed stays parsed
    for (auto& [order, known] : known_) kept.emplace(order.second, std::move(known));
    known_.clear();
    created_of_.clear();
    last_full_read_ms_ = steady_now_;
    known_epoch_ = epoch_;
    for (auto& view : delta->active) {
      Known known{std::move(view), std::nullopt};
      if (auto it = kept.find(known.view.job.id); it != kept.end()) known.retry = it->second.retry;
      created_of_[known.view.job.id] = known.view.job.created_ms;
      known_.insert_or_assign({known.view.job.created_ms, known.view.job.id}, std::move(known));
    }
  } else {
    auto forget = [this](const std::string& id) {
      auto it = created_of_.find(id);
      if (it == created_of_.end()) return;
      known_.erase({it->second, id});
      created_of_.erase(it);
    };
    for (const std::string& id : delta->ended) forget(id);
    for (auto& view : delta->active) {
      std::optional<spec::RetryPolicy> retry;
      if (auto it = created_of_.find(view.job.id); it != created_of_.end()) {
        retry = known_[{it->second, view.job.id}].retry;
        forget(view.job.id);
      }
      created_of_[view.job.id] = view.job.created_ms;
      const std::pair<int64_t, std::string> order{view.job.created_ms, view.job.id};
      known_.insert_or_assign(order, Known{std::move(view), retry});
    }
  }
  known_through_seq_ = std::max(known_through_seq_, delta->through_seq);
  if (delta->full) known_through_seq_ = delta->through_seq;
  return true;
}

StepSettings Reconciler::settingsFor(const store::JobView& view) {
  StepSettings settings;
  settings.unrunnable_grace_ms = unrunnableGraceMs();
  // The spec is parsed once per job and process: never on the poll path of a steady cycle.
  auto it = created_of_.find(view.job.id);
  Known* known = it != created_of_.end() ? &known_[{it->second, view.job.id}] : nullptr;
  if (known != nullptr && known->retry) {
    settings.retry = *known->retry;
    return settings;
  }
  auto parsed = spec::parseJobSpec(view.job.spec);
  // A stored spec passed validation when it was submitted; if it no longer parses, no retry
  // is safer than a guessed one.
  settings.retry = parsed ? parsed->retry : spec::RetryPolicy{};
  if (known != nullptr) known->retry = settings.retry;
  return settings;
}

Reconciler::Driven Reconciler::drive(const store::JobView& view, JobFacts facts, bool polled) {
  // The rounds a step may ask for facts before it decides: a read, the lookup by token, the
  // files, the DELETEs it waits for, and their combinations.
  constexpr int kMaxRounds = 8;
  const StepSettings settings = settingsFor(view);
  AttemptMemory scratch;
  AttemptMemory& memory = view.attempts.empty() ? scratch : memory_[key(view.attempts.back())];
  StepPlan plan;
  for (int round = 0;; ++round) {
    plan = polled ? stepPolled(view, facts, memory, settings, now_, steady_now_)
                  : stepJob(view, facts, memory, settings, now_, steady_now_);
    if (!plan.needsFacts()) break;
    if (round + 1 == kMaxRounds || stop_.stop_requested()) {
      if (round + 1 == kMaxRounds) {
        ++report_.errors;
        spdlog::error("reconciler: job {}: no decision after {} rounds of facts", view.job.id,
                      kMaxRounds);
      }
      return {};
    }
    gather(view, plan, facts);
  }
  memory = plan.memory;
  if (!plan.note.empty()) spdlog::warn("reconciler: job {}: {}", view.job.id, plan.note);
  for (const std::string& sluid : plan.strays) {
    stray_cancels_[sluid] = {view.job.id, view.job.run_as};
  }
  if (plan.duplicate_jobs > 0 && options_.observer != nullptr && !view.attempts.empty()) {
    options_.observer->duplicates(view.attempts.back(), plan.duplicate_jobs);
  }
  Driven driven;
  if (plan.write) {
    if (!commit(view, *plan.write, plan.what)) return {};
    driven.after = afterChange(view, **plan.write);
    quarantineFailedNodes(view, *driven.after);
  }
  const store::JobView& now = driven.after ? *driven.after : view;
  for (const auto& [memory_key, sluid] : plan.cancel_after) {
    if (cancelOne(view.job.id, view.job.run_as, sluid) != CancelHeard::kUnheard) {
      memory_[key(now.attempts.back())].cancel_heard_ms[memory_key] = steady_now_;
    }
  }
  if (plan.launch != LaunchKind::kNone) queueLaunch(now, plan.launch == LaunchKind::kFresh);
  driven.follow = plan.poll && !phase::isTerminal(now.job.phase);
  return driven;
}

void Reconciler::quarantineFailedNodes(const store::JobView& before, const store::JobView& after) {
  const auto quarantine = launcher_.site().site.slurm.failed_node_quarantine;
  if (quarantine.count() <= 0 || after.attempts.empty()) return;
  const store::AttemptRecord& ended = after.attempts.back();
  const bool ended_now =
      phase::isTerminal(ended.phase) &&
      (before.attempts.empty() || !phase::isTerminal(before.attempts.back().phase));
  if (!ended_now) return;
  store::JobView just_this = after;
  just_this.attempts = {ended};
  for (const auto& [node, why] : nodesToAvoid(just_this)) {
    quarantine_[node] = {steady_now_ + quarantine.count(), why + " of job " + after.job.id};
    spdlog::warn(
        "reconciler: node {} is kept out of every job's next attempts for {} s: {} of "
        "job {}",
        node, quarantine.count() / 1000, why, after.job.id);
  }
}

void Reconciler::gather(const store::JobView& view, const StepPlan& plan, JobFacts& facts) {
  const store::AttemptRecord& attempt = view.attempts.back();
  auto answer = [](const slurm::SlurmResult<std::vector<slurm::JobRecord>>& records) {
    if (records) return SlurmAnswer::found(*records);
    if (records.error().error.code == slurm::kErrJobNotFound) return SlurmAnswer::notFound();
    return SlurmAnswer::noAnswer(records.error().describe());
  };
  if (plan.read_sluid && facts.read.heard == Heard::kNotAsked) {
    ++report_.fetches;
    // The leader's SLUID answers for every component of a het job.
    facts.read = answer(slurmFor(view.job).getJob(attempt.components.front().sluid));
    if (facts.read.heard == Heard::kNoAnswer) ++report_.errors;
  }
  if (plan.read_receipt && facts.read.heard == Heard::kNotAsked) {
    ++report_.fetches;
    facts.read = answer(slurmFor(view.job).getJob(std::to_string(attempt.slurm_job_id)));
  }
  if (plan.read_token && facts.token.heard == Heard::kNotAsked) {
    auto found = byToken(attempt.submit_token, view.job);
    facts.token =
        found ? SlurmAnswer::found(std::move(*found)) : SlurmAnswer::noAnswer(listingError());
  }
  if (plan.read_files && (!facts.sentinels || !facts.scheduler_log_missing)) {
    std::vector<std::string> pools;
    for (const auto& c : attempt.components) pools.push_back(c.pool);
    facts.sentinels = launcher_.files().sentinels(attempt.staging_dir, pools);
    facts.scheduler_log_missing =
        !attempt.components.empty() &&
        !launcher_.files().schedulerLogExists(attempt.staging_dir, attempt.components.front().pool);
  }
  if (plan.read_accounting && !facts.accounting && facts.accounting_unanswered.empty()) {
    std::vector<slurm::AccountingRun> runs;
    for (const auto& c : attempt.components) {
      if (c.slurm_job_id == 0) continue;
      ++report_.fetches;
      auto recorded = slurmFor(view.job).accountingRuns(c.slurm_job_id);
      if (recorded) {
        runs.insert(runs.end(), recorded->begin(), recorded->end());
      } else if (recorded.error().error.code != slurm::kErrAccountingUnavailable) {
        ++report_.errors;
        facts.accounting_unanswered = recorded.error().describe();
        break;
      }  // no slurmdbd: judged without its record
    }
    if (facts.accounting_unanswered.empty()) facts.accounting = std::move(runs);
  }
  for (const CancelOrder& order : plan.cancel_now) {
    if (facts.cancels.count(order.sluid)) continue;
    facts.cancels[order.sluid] = cancelOne(view.job.id, view.job.run_as, order.sluid);
  }
}

bool Reconciler::commit(const store::JobView& view, const Result<store::Change>& change,
                        const char* what) {
  if (batching_ && change) {
    batch_.push_back(*change);
    batch_.back().read_epoch = epoch_;
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
  store::Change fenced = *change;
  fenced.read_epoch = epoch_;
  auto done = store_.commit(fenced);
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
  std::vector<std::size_t> stale;
  auto done = store_.commitAll(changes, &stale);
  if (!done) {
    // Nothing is lost: the store still holds the earlier state, so the next tick sees the
    // same differences and decides again.
    ++report_.errors;
    spdlog::error("reconciler: {} observation(s) not recorded: {}", changes.size(),
                  done.error().describe());
    return false;
  }
  for (std::size_t i : stale) {
    ++report_.errors;
    spdlog::warn(
        "reconciler: job {}: its observation was built from a stale read and was not "
        "recorded; it is read again",
        changes[i].job ? changes[i].job->id : std::string("?"));
  }
  std::size_t next_stale = 0;
  for (std::size_t i = 0; i < changes.size(); ++i) {
    if (next_stale < stale.size() && stale[next_stale] == i) {
      ++next_stale;
      continue;
    }
    ++report_.commits;
    reportEvents(changes[i]);
  }
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

}  // namespace tuneplane::control
