// The submit protocol of the reconciler (reconciler.h): a new attempt and its token made
// durable, the attempt staged, Submitting made durable, the POST, the receipt made durable,
// then the job read back by its numeric id — checked to be ours by its comment — and its
// SLUIDs stored. Each commit happens before the step that depends on it. startAttempt and
// stageAndSubmit run as launch tasks on the launch stage's threads (several attempts at
// once, each in this order); the read-backs run on the stage after every submit of the
// batch, and the SLUIDs are settled back on the loop's thread, in one transaction.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "control/decisions.h"
#include "control/reconciler.h"
#include "spec/spec_parser.h"
#include "store/error_codes.h"

namespace tuneplane::control {
namespace {

std::string describeAll(const Errors& errors) {
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : "; ") + e.describe();
  return out;
}

}  // namespace

void Reconciler::queueLaunch(store::JobView view, bool fresh) {
  const int64_t paused_until = stage_->pausedUntilMs();
  if (paused_until > steady_now_) {
    // The stage backs off after an overload: nothing starts until the pause ends.
    report_.relaunch_in_ms = paused_until - steady_now_;
    return;
  }
  if (static_cast<int>(launches_.size()) >= options_.max_submits_per_tick) {
    report_.relaunch_in_ms = 0;  // the budget is used: the next tick takes the rest at once
    return;
  }
  std::map<std::string, std::string> avoid = nodesToAvoid(view);
  for (auto it = quarantine_.begin(); it != quarantine_.end();) {
    if (it->second.first <= steady_now_) {
      it = quarantine_.erase(it);
      continue;
    }
    avoid.emplace(it->first, it->second.second + "; kept out of every job for a while");
    ++it;
  }
  launches_.push_back(Launch{std::move(view), fresh, {}, {}, {}, std::move(avoid)});
}

void Reconciler::runLaunches() {
  std::vector<LaunchStage::Task> tasks;
  tasks.reserve(launches_.size());
  for (Launch& launch : launches_) {
    tasks.push_back([this, &launch](slurm::SlurmClient& slurm) {
      if (launch.fresh) {
        startAttempt(launch, slurm);
      } else {
        stageAndSubmit(launch, launch.view, slurm);
      }
    });
  }
  const size_t started = stage_->run(tasks, stop_);
  if (started < launches_.size() && !stop_.stop_requested()) {
    // Left by a backoff that began during the run: nothing starts before it ends.
    report_.relaunch_in_ms = std::max<int64_t>(0, stage_->pausedUntilMs() - clock_.steadyMs());
  }
  // The receipts are read back once every submit of the run is answered: a read costs
  // slurmrestd about what a submit does, and no job should wait for Slurm's queue behind
  // another job's bookkeeping. A read not made now (stopped, paused) is made by a later tick,
  // which finds the attempt Submitted.
  std::vector<LaunchStage::Task> reads;
  for (size_t i = 0; i < started; ++i) {
    Launch& launch = launches_[i];
    if (!launch.submitted) continue;
    reads.push_back([&launch](slurm::SlurmClient& slurm) {
      ++launch.tally.fetches;
      launch.records = slurm.getJob(std::to_string(launch.submitted->attempts.back().slurm_job_id));
    });
  }
  if (!reads.empty() && !stop_.stop_requested()) stage_->run(reads, stop_);
  // Back on the loop's thread: the tallies, then the receipts read back are settled, all in
  // one transaction: this one thread would otherwise pay a sync per job, one after another.
  std::vector<const Launch*> settled;
  batching_ = true;
  for (size_t i = 0; i < started; ++i) {
    Launch& launch = launches_[i];
    report_.submits += launch.tally.submits;
    report_.fetches += launch.tally.fetches;
    report_.commits += launch.tally.commits;
    report_.errors += launch.tally.errors;
    if (!launch.submitted || !launch.records) continue;
    // The read-back is the Submitted step's read of the receipt (job_step.h).
    JobFacts facts;
    const auto& records = *launch.records;
    if (records) {
      facts.read = SlurmAnswer::found(*records);
    } else if (records.error().error.code == slurm::kErrJobNotFound) {
      facts.read = SlurmAnswer::notFound();
    } else {
      facts.read = SlurmAnswer::noAnswer(records.error().describe());
    }
    drive(*launch.submitted, std::move(facts), /*polled=*/false);
    const auto remembered = memory_.find(key(launch.submitted->attempts.back()));
    if (remembered != memory_.end() && remembered->second.verifiedIn(steady_now_)) {
      settled.push_back(&launch);
    }
  }
  // Not synced either: lost by a crash of the machine, the attempts are Submitted again, and
  // a later tick reads them again. (Only what the read-backs decided is in this batch.)
  if (!flushBatch(/*synced=*/false)) return;  // still Submitted: the next tick reads them again
  for (const Launch* launch : settled) {
    hook(SubmitStep::kSluidsDurable, *launch->submitted, launch->submitted->attempts.back().number);
  }
}

void Reconciler::startAttempt(Launch& launch, slurm::SlurmClient& slurm) {
  const store::JobView& view = launch.view;
  // Parsed once for the whole attempt: its name and pools here, its staging below.
  const spec::PartialSpec parsed = spec::parsePartialJobSpec(view.job.spec);
  if (!parsed.complete()) {
    commitNow(
        launch.tally, view,
        failJob(view, "the stored spec no longer parses: " + describeAll(parsed.errors), now_),
        "unparsable spec");
    return;
  }
  const spec::JobSpec& spec = parsed.spec;
  const store::AttemptRecord* last = currentAttempt(view);
  const int number = last ? last->number + 1 : 1;
  auto token = launcher_.newSubmitToken(spec.metadata.name);
  auto dir = launcher_.attemptDir(view.job.id, number, view.job.run_as);
  if (!token || !dir) {
    ++launch.tally.errors;
    spdlog::error("reconciler: job {}: no identity for attempt {}: {}", view.job.id, number,
                  (!token ? token.error() : dir.error()).describe());
    return;
  }
  std::vector<std::string> pools;
  for (const auto& pool : spec.resources.pools) pools.push_back(pool.name);
  if (!commitNow(launch.tally, view, beginAttempt(view, number, *token, *dir, pools, now_),
                 "new attempt")) {
    return;
  }
  auto fresh = reload(view.job.id, &launch.tally);
  if (!fresh) return;
  hook(SubmitStep::kAttemptDurable, *fresh, number);
  if (stop_.stop_requested()) return;  // the next run stages it
  stageAndSubmit(launch, std::move(*fresh), slurm, &parsed);
}

void Reconciler::stageAndSubmit(Launch& launch, store::JobView view, slurm::SlurmClient& slurm,
                                const spec::PartialSpec* parsed) {
  TickReport& tally = launch.tally;
  const store::AttemptRecord attempt = view.attempts.back();
  const int n = attempt.number;
  // Retries that learn: Slurm's node list, to keep out the nodes to avoid where the pools
  // still fit without them (read only when there are any).
  pipeline::NodeAvoidance avoidance;
  avoidance.avoid = launch.avoid;
  if (!avoidance.avoid.empty()) {
    ++tally.fetches;
    if (auto nodes = slurm.listNodes()) avoidance.inventory = std::move(*nodes);
  }
  std::optional<spec::PartialSpec> own;
  if (parsed == nullptr) own = spec::parsePartialJobSpec(view.job.spec);
  auto staged = launcher_.stageOrLoad(parsed != nullptr ? *parsed : *own, attempt, view.job.run_as,
                                      avoidance, view.job.owner);
  if (!staged) {
    const std::string why = describeAll(staged.error());
    if (stagingMayPass(staged.error())) {
      commitNow(tally, view, deferSubmit(view, n, "staging failed: " + why, now_),
                "staging failure");
    } else {
      commitNow(tally, view,
                markRefused(view, n, phase::EndCause::kRejected,
                            "the launch was refused before anything was submitted: " + why, now_),
                "launch refused");
    }
    return;
  }
  hook(SubmitStep::kStaged, view, n);
  // The last point to stop before sending: once Submitting is durable, the POST goes out
  // and its answer is recorded, so a stop never strands an attempt that was not sent.
  if (stop_.stop_requested()) return;
  auto submitting = commitSubmitting(tally, view, n, staged->notes);
  if (!submitting) return;
  hook(SubmitStep::kSubmittingDurable, *submitting, n);

  ++tally.submits;
  // As the job's user (slurm.identity per_user): the job is then that user's in Slurm.
  auto receipt = slurm.as(view.job.run_as).submit(staged->body);
  hook(SubmitStep::kSubmitAnswered, *submitting, n);
  if (!receipt) {
    const FailedSubmit failed = afterFailedSubmit(*submitting, n, receipt.error(), now_);
    commitNow(tally, *submitting, failed.change, failed.what);
    return;
  }
  // Not synced: a crash of the machine that loses the receipt leaves the attempt
  // Submitting, and a restart finds its job by the submit token (docs/decisions.md).
  auto receipt_change = markSubmitted(*submitting, n, receipt->job_id, now_);
  if (receipt_change) receipt_change->synced = false;
  if (!commitNow(tally, *submitting, receipt_change, "receipt")) return;
  auto submitted = reload(view.job.id, &tally);
  if (!submitted) return;
  if (options_.observer != nullptr) {
    const store::AttemptRecord& stored = submitted->attempts.back();
    options_.observer->submitted(stored,
                                 static_cast<double>(clock_.nowMs() - stored.created_ms) / 1000.0);
  }
  hook(SubmitStep::kReceiptDurable, *submitted, n);
  launch.submitted = std::move(*submitted);  // read back and settled by runLaunches
}

std::optional<store::JobView> Reconciler::commitSubmitting(TickReport& tally,
                                                           const store::JobView& view, int number,
                                                           const std::vector<std::string>& notes) {
  auto change = markSubmitting(view, number, now_, notes);
  if (!change) {
    commitNow(tally, view, change, "submitting");
    return std::nullopt;
  }
  change->read_epoch = epoch_;
  auto done = store_.commit(*change);
  if (done) {
    ++tally.commits;
    reportEvents(*change);
    return reload(view.job.id, &tally);
  }
  ++tally.errors;
  spdlog::error("reconciler: job {}: submitting not recorded: {}", view.job.id,
                done.error().describe());
  // A commit whose answer was lost (the connection cut as COMMIT went out: "store.io") may
  // have been stored. Re-read: found Submitting as this commit wrote it (its version, its
  // time), the POST goes out as if the commit had answered — else the next cycle would take
  // it for an interrupted submit and look for a job that was never sent. A refusal (stale,
  // fenced, busy) stored nothing.
  if (done.error().code != store::codes::kIo) return std::nullopt;
  auto stored = reload(view.job.id, &tally);
  if (!stored || !isOurLostSubmittingCommit(view, *stored, number, now_)) return std::nullopt;
  spdlog::warn(
      "reconciler: job {}: Submitting was stored although its commit's answer was "
      "lost; submitting attempt {}",
      view.job.id, number);
  return stored;
}

}  // namespace tuneplane::control
