// The step's tracked attempt (job_step_impl.h): read by SLUID or in the listing, judged from
// Slurm's records, or — when Slurm has no record — found again by its token or judged from its
// sentinels and slurmdbd's record; each observation settled by one write.
#include <algorithm>

#include "control/job_step_impl.h"
#include "control/state_machine.h"
#include "slurm/job_key.h"

namespace tuneplane::control::detail {
namespace {

// Whether any of the attempt's jobs is followed by numeric id (slurm/job_key.h).
bool followedByNumericId(const store::AttemptRecord& a) {
  return std::any_of(a.components.begin(), a.components.end(),
                     [](const auto& c) { return slurm::isFollowedByNumericId(c.sluid); });
}

// Why an attempt's jobs are followed by numeric id, for its event.
std::string numericIdNote(const store::AttemptRecord& a) {
  std::string jobs;
  bool by_sluid = false;
  for (const auto& c : a.components) {
    const auto key = slurm::parseJobKey(c.sluid);
    if (!key || !key->numeric_form) continue;
    jobs += (jobs.empty() ? "" : ", ") + std::to_string(key->job_id);
    if (!key->sluid.empty()) {
      jobs += " (SLUID " + key->sluid + ")";
      by_sluid = true;
    }
  }
  return "this site's Slurm REST API names no job by SLUID in a path: TunePlane follows Slurm "
         "job " +
         jobs + " by its numeric id, and confirms every read and cancel against " +
         (by_sluid ? std::string("the SLUID Slurm reports for it")
                   : std::string("its submit time and submit token")) +
         ", so that a job that takes over the id once this one is purged is never taken for it";
}

}  // namespace

// A tracked attempt (SLUIDs known), read this cycle by SLUID or in the listing.
void Step::track() {
  const SlurmAnswer& read = facts_.read;
  if (read.heard == Heard::kNotAsked) {
    // The listing did not hold it: not Slurm's word; ask by SLUID.
    plan_.read_sluid = true;
    return;
  }
  if (read.heard == Heard::kNoAnswer) {
    plan_.note = "GET by SLUID failed: " + read.why;
    return;
  }
  plan_.memory.must_read = false;
  store::AttemptRecord observed = *stored_;
  const bool complete =
      read.heard == Heard::kFound && applyRecords(observed, read.records, /*by_sluid=*/true);
  if (!complete) {
    vanished(observed);
    return;
  }
  observed.missing_polls = 0;
  plan_.memory.verified_ms = steady_;
  if (foundClaimedByAnother(observed)) {
    // The job TunePlane holds ran nothing: another Slurm job with the token claimed the
    // attempt first and runs it. Adopt that one, found by the token and logs/claim; with no
    // listing this cycle nothing is concluded, and without a claim the attempt fails below.
    if (!tokenAnswered()) return;
    TokenChoice choice;
    if (!choose(choice)) return;
    if (choice.by_claim) {
      if (!cancelDuplicates(choice)) return;
      store::AttemptRecord claimant = *stored_;
      applyRecords(claimant, choice.adopted, /*by_sluid=*/false);
      AttemptVerdict verdict = verdictFor(claimant);
      if (plan_.needsFacts()) return;
      verdict.reason = choice.describe({}) + "; " + verdict.reason;
      settle(claimant, verdict, "claimant adopted");
      return;
    }
  }
  AttemptVerdict verdict =
      heldForRequeue(*stored_) ? stillRequeued(observed.components) : verdictFor(observed);
  if (plan_.needsFacts()) return;
  settle(observed, verdict, "observation");
}

// Slurm has no record under the stored SLUID (its "invalid job id"), or one of a het job's
// components is missing from what it answered.
void Step::vanished(const store::AttemptRecord& observed) {
  if (facts_.read.heard != Heard::kNotFound) {
    plan_.note = "Slurm's answer for SLUID " + stored_->components.front().sluid +
                 " lacks a component; nothing is concluded from it";
    return;
  }
  // Before judging the job vanished, look for it by its token: a requeue gives the job a
  // new SLUID (docs/decisions.md, "Slurm's requeue").
  if (!tokenAnswered()) return;
  const std::vector<slurm::JobRecord>& found = facts_.token.records;
  if (!found.empty() && requeuedAlready(found)) {
    TokenChoice choice;
    if (!choose(choice)) return;
    if (!cancelDuplicates(choice)) return;
    store::AttemptRecord adopted = *stored_;
    applyRecords(adopted, choice.adopted, /*by_sluid=*/false);
    adopted.missing_polls = 0;
    plan_.memory.verified_ms = steady_;
    settle(adopted, requeuedUnderNewSluid(choice.adopted), "requeued job found");
    return;
  }
  // Only copies of a doubled submit carry the token (restart_cnt 0: not a requeue); the job
  // itself is gone, purged (the fault campaign's seed 2110). Copies still alive are
  // cancelled; the job is judged as missing, from its sentinels.
  for (const std::string& sluid : liveSluids(found)) {
    if (deleteOf(sluid) == Delete::kUnheard) plan_.strays.push_back(sluid);
  }
  if (!plan_.cancel_now.empty()) return;
  judgeMissing(countMissing(observed));
}

// Slurm had no record this cycle, with Slurm's word for it: counted, and judged at
// kMissingPollsToJudge — slurmctld forgot the job (MinJobAge, e.g. while serve was down).
// slurmdbd's record of a preemption says how it ended; else the job's own exit sentinel;
// without one, slurmdbd's record of its run (a node failure, a time limit, a cancel: ends
// that leave no sentinel); without either, the start sentinel (ended unobserved) or nothing
// (lost).
void Step::judgeMissing(const store::AttemptRecord& observed) {
  if (observed.missing_polls < kMissingPollsToJudge) {
    write(recordObservation(view_, observed, now_), "missing record");
    return;
  }
  if (!filesRead()) return;
  // slurmdbd's record is read even when the job left an exit sentinel: a preemption is told
  // only by Slurm's record (PREEMPTED), and a program that saved and exited 0 in its grace
  // time leaves an exit sentinel of 0 that must not make the attempt Succeeded.
  if (!accountingRead()) return;
  if (auto recorded =
          judgeFromAccounting(observed, *facts_.accounting, view_.job.cancel_requested)) {
    if (facts_.sentinels->exit.empty() || recorded->cause == phase::EndCause::kPreempted) {
      write(applyVerdict(view_, observed, *recorded, settings_.retry, now_),
            "judged by slurmdbd's record");
      return;
    }
  }
  const AttemptVerdict verdict = judgeFromSentinels(*facts_.sentinels, view_.job.cancel_requested);
  write(applyVerdict(view_, observed, verdict, settings_.retry, now_), "judged by sentinels");
}

// The one way an observation is recorded (receipt resolved, found by token, polled): holds
// an ending attempt until its requeued job is cancelled, rejects a job Slurm can never start
// once the grace has passed, writes what changed, cancels het survivors.
void Step::settle(const store::AttemptRecord& observed, AttemptVerdict verdict, const char* what) {
  if (verdict.phase == AttemptPhase::kQueued && verdict.unrunnable && !view_.job.cancel_requested) {
    if (!plan_.memory.unrunnable_since_ms) plan_.memory.unrunnable_since_ms = steady_;
    const int64_t waited = steady_ - *plan_.memory.unrunnable_since_ms;
    if (waited >= settings_.unrunnable_grace_ms) {
      bool heard = true;
      for (const auto& c : observed.components) {
        if (c.sluid.empty()) continue;
        if (deleteOf(c.sluid) == Delete::kUnheard) heard = false;
      }
      if (!plan_.cancel_now.empty()) return;
      if (heard) verdict = rejectUnrunnable(verdict, waited);
    }
  } else {
    plan_.memory.unrunnable_since_ms.reset();
  }
  if (phase::isTerminal(verdict.phase) && !verdict.requeued.empty()) {
    // "No such job" is not heard here: the SLUID read (from this cycle's listing) may have
    // been replaced since by the requeue's new one, under which the job would run again
    // (the fault campaign's seeds …818 and …832). Held Releasing, the next cycle finds the
    // job by its token under the new SLUID and cancels that.
    bool heard = true;
    for (int index : verdict.requeued) {
      for (const auto& c : observed.components) {
        if (c.index != index || c.sluid.empty()) continue;
        if (deleteOf(c.sluid, /*gone_is_heard=*/false) == Delete::kUnheard) heard = false;
      }
    }
    if (!plan_.cancel_now.empty()) return;
    if (!heard) verdict = holdForCancel(std::move(verdict), "the requeued Slurm job");
  }
  auto change = applyVerdict(view_, observed, verdict, settings_.retry, now_);
  const bool unchanged = change && isNoOp(*change, view_);  // a refresh that found nothing new
  if (!unchanged) write(std::move(change), what);
  noteFollowedByNumericId(observed);
  for (int index : verdict.to_cancel) {
    for (const auto& c : observed.components) {
      if (c.index != index || c.sluid.empty()) continue;
      // Sent every cycle until Slurm hears it; once heard, again only if the component
      // still runs a while later (Slurm may have lost it).
      const std::string key = "#" + std::to_string(index);
      const auto at = plan_.memory.cancel_heard_ms.find(key);
      if (at != plan_.memory.cancel_heard_ms.end() && steady_ - at->second < kCancelRecheckMs) {
        continue;
      }
      plan_.cancel_after.emplace_back(key, c.sluid);
    }
  }
}

// Where the site's REST API takes no SLUID in a path (v0.0.44), an attempt's jobs are
// followed by numeric id, each read and cancel confirmed first (slurm/job_key.h): said once
// per attempt, in an event, as its keys are first stored, so what degrades shows on the job.
void Step::noteFollowedByNumericId(const store::AttemptRecord& observed) {
  if (!plan_.write || !*plan_.write) return;
  if (!followedByNumericId(observed) || followedByNumericId(*stored_)) return;
  store::Change& change = **plan_.write;
  phase::AttemptPhase phase = observed.phase;
  for (const auto& a : change.attempts) {
    if (a.number == observed.number) phase = a.phase;
  }
  change.events.push_back(
      attemptEvent(view_.job.id, observed.number, phase, phase, now_, numericIdNote(observed)));
}

// The verdict on `observed` from Slurm's states; a failure of the user's whose scheduler log
// was never written is the node's (asks for the files when it must know).
AttemptVerdict Step::verdictFor(const store::AttemptRecord& observed) {
  AttemptVerdict verdict = rollUp(observed.components, view_.job.cancel_requested);
  if (verdict.phase == AttemptPhase::kFailed && verdict.cause == phase::EndCause::kUser) {
    if (!facts_.scheduler_log_missing) {
      plan_.read_files = true;
      return verdict;
    }
    std::vector<std::string> missing;
    if (*facts_.scheduler_log_missing && !observed.components.empty()) {
      // The batch script runs in component 0 and writes its log there; the other
      // components' files appear only if a step writes to them, so their absence proves
      // nothing.
      missing.push_back(observed.components.front().pool);
    }
    verdict = noteMissingLogs(std::move(verdict), missing);
  }
  return verdict;
}

}  // namespace tuneplane::control::detail
