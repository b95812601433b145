// The step of job_step.h. Each path follows one attempt phase; every branch that needs a fact
// asks for it and returns, so a branch only ever decides from facts it holds.
#include "control/job_step.h"

#include <algorithm>

#include "control/retry_policy.h"
#include "control/state_machine.h"
#include "control/status_mapping.h"
#include "slurm/job_key.h"

namespace tuneplane::control {
namespace {

using phase::AttemptPhase;

// A DELETE that Slurm heard is sent again only when the component still runs this long after.
constexpr int64_t kCancelRecheckMs = 60'000;

// True when a component no longer runs or waits (nothing left for a DELETE to stop).
bool hasEnded(const store::ComponentRecord& c) {
  const ComponentVerdict v = mapComponent(c.state, c.reason, c.exit_code, c.signal, true);
  return v.phase != AttemptPhase::kQueued && v.phase != AttemptPhase::kRunning &&
         v.phase != AttemptPhase::kUnknown;
}

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

// Where one DELETE stands in this cycle (Step::deleteOf).
enum class Delete {
  kAsked,    // no answer yet: asked for; it goes out before the step runs again
  kHeard,    // Slurm took it, or said the job is already completing
  kGone,     // Slurm holds no such job, taken as heard (gone_is_heard)
  kUnheard,  // no answer, a refusal, or "no such job" not taken as heard: sent again later
};

// One job's step, with the plan it builds. The methods follow the attempt's phase.
class Step {
 public:
  Step(const store::JobView& view, const JobFacts& facts, const AttemptMemory& memory,
       const StepSettings& settings, int64_t now_ms, int64_t steady_ms)
      : view_(view),
        facts_(facts),
        settings_(settings),
        now_(now_ms),
        steady_(steady_ms),
        stored_(view.attempts.empty() ? nullptr : &view.attempts.back()) {
    plan_.memory = memory;
  }

  StepPlan run() {
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

  StepPlan runPolled() {
    if (stored_ != nullptr) track();
    return std::move(plan_);
  }

 private:
  void write(Result<store::Change> change, const char* what) {
    plan_.write = std::move(change);
    plan_.what = what;
  }

  // Pending (no attempt) or Retrying: cancelled, or the next attempt once it is due and every
  // earlier attempt's Slurm jobs have ended or been cancelled with Slurm's answer heard.
  void nextAttempt() {
    const store::JobRecord& job = view_.job;
    if (job.cancel_requested) {
      write(cancelBeforeSubmit(view_, now_), "cancel");
      return;
    }
    if (stored_ != nullptr && now_ < job.next_attempt_ms) return;
    std::vector<std::string> unheard;
    auto endFirst = [&](const std::string& sluid) {
      if (deleteOf(sluid) == Delete::kUnheard) unheard.push_back(sluid);
    };
    for (const auto& earlier : view_.attempts) {
      for (const auto& c : earlier.components) {
        if (!c.sluid.empty() && !hasEnded(c)) endFirst(c.sluid);
      }
    }
    if (stored_ != nullptr) {
      // A copy of the last attempt's submit that the attempt never adopted (a doubled
      // submit) carries its token: Slurm's listing must show none still waiting or running.
      if (!tokenAnswered()) return;
      for (const std::string& sluid : liveSluids(facts_.token.records)) endFirst(sluid);
    }
    if (!plan_.cancel_now.empty()) return;
    if (!unheard.empty()) {
      plan_.note = "the next attempt waits until Slurm confirms that the earlier attempt's job " +
                   unheard.front() + " ended (its DELETE was not heard)";
      return;
    }
    plan_.launch = LaunchKind::kFresh;
  }

  // Submitted: the receipt's numeric id, read once to check it is ours and take its SLUIDs.
  void receipt() {
    const SlurmAnswer& read = facts_.read;
    if (read.heard == Heard::kNotAsked) {
      plan_.read_receipt = true;
      return;
    }
    if (read.heard == Heard::kNoAnswer) {
      plan_.note =
          "cannot read Slurm job " + std::to_string(stored_->slurm_job_id) + " yet: " + read.why;
      return;
    }
    if (read.heard == Heard::kFound) {
      for (const auto& r : read.records) {
        if (r.comment != stored_->submit_token) {
          // Not ours (an id reused already?): find ours by its token instead.
          write(markSubmitUnknown(view_, stored_->number,
                                  "Slurm job " + std::to_string(r.job_id) +
                                      " does not carry this attempt's submit token",
                                  now_),
                "receipt not ours");
          return;
        }
      }
      store::AttemptRecord observed = *stored_;
      applyRecords(observed, read.records, /*by_sluid=*/false);
      observed.missing_polls = 0;
      const AttemptVerdict verdict = requeuedAlready(read.records)
                                         ? requeuedUnderNewSluid(read.records)
                                         : verdictFor(observed);
      if (plan_.needsFacts()) return;
      plan_.memory.verified_ms = steady_;
      settle(observed, verdict, "SLUIDs");
      return;
    }
    // Slurm's "invalid job id" for the receipt's id: counts as missing only with a listing
    // that succeeded without the token; found by the token, it is adopted.
    if (!tokenAnswered()) return;
    if (!facts_.token.records.empty()) {
      adoptFound("lost receipt found");
      return;
    }
    judgeMissing(countMissing(*stored_));
  }

  // SubmitUnknown: looked for by its token on a backoff; adopted when found; judged from its
  // sentinels, or submitted again as the same attempt, when Slurm's listing proves it absent.
  void lostReceipt() {
    if (stored_->abandon_requested) {
      write(markAbandoned(view_, stored_->number, now_), "abandon");
      return;
    }
    if (stored_->next_lookup_ms > now_) return;
    if (!tokenAnswered()) return;
    if (!facts_.token.records.empty()) {
      adoptFound("lost receipt found");
      return;
    }
    if (!filesRead()) return;
    const attempt::AttemptSentinels& sentinels = *facts_.sentinels;
    const int lookups = stored_->lookups + 1;
    const bool ended = !sentinels.exit.empty();
    const bool ran_unseen = !sentinels.start.empty() && lookups >= kMissingPollsToJudge;
    if (ended || ran_unseen) {
      const AttemptVerdict verdict = judgeFromSentinels(sentinels, view_.job.cancel_requested);
      write(applyVerdict(view_, *stored_, verdict, settings_.retry, now_),
            "lost receipt judged by sentinels");
      return;
    }
    // The listing answered without the token this many times, long enough after the submit,
    // and the attempt left no trace on the node: the submit never made a job.
    if (sentinels.start.empty() && !sentinels.claimed_by && lookups >= kLookupsBeforeResend &&
        now_ - stored_->submitted_ms >= kResendSettleMs) {
      write(markNeverSubmitted(view_, stored_->number, lookups, now_), "lost receipt never made");
      return;
    }
    write(markLookupMiss(view_, stored_->number, now_), "lost receipt not found");
  }

  // Queued, Running or Unknown with a cancel requested: a DELETE of every live component;
  // Cancelling once Slurm heard them all.
  void cancel() {
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
  void cancelAgain() {
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

  // A tracked attempt (SLUIDs known), read this cycle by SLUID or in the listing.
  void track() {
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
  void vanished(const store::AttemptRecord& observed) {
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

  // A lost receipt (or a receipt Slurm does not know) found by its token: exactly one record
  // per het component adopted, every other copy cancelled.
  void adoptFound(const char* what) {
    TokenChoice choice;
    if (!choose(choice)) return;
    const std::vector<std::string> unheard = cancelDuplicatesUnheard(choice);
    if (!plan_.cancel_now.empty()) return;
    store::AttemptRecord observed = *stored_;
    applyRecords(observed, choice.adopted, /*by_sluid=*/false);
    observed.missing_polls = 0;
    // Found only after Slurm requeued it (the fault campaign's seed 2107): it ran once.
    AttemptVerdict verdict = requeuedAlready(choice.adopted) ? requeuedUnderNewSluid(choice.adopted)
                                                             : verdictFor(observed);
    if (plan_.needsFacts()) return;
    const std::string duplicates = choice.describe(unheard);
    verdict.reason = "found by its submit token; " +
                     (duplicates.empty() ? std::string() : duplicates + "; ") + verdict.reason;
    plan_.memory.verified_ms = steady_;
    // A lost receipt whose job was to be cancelled is cancelled as soon as it is found: the
    // DELETEs go out first, and Cancelling is stored with the observation.
    const bool cancel_now = view_.job.cancel_requested && !phase::isTerminal(verdict.phase);
    if (cancel_now) {
      bool heard = true;
      for (const auto& c : observed.components) {
        if (c.sluid.empty() || hasEnded(c)) continue;
        const Delete d = deleteOf(c.sluid);
        if (d == Delete::kUnheard) {
          heard = false;
        } else if (Step::heard(d)) {
          plan_.memory.cancel_heard_ms[c.sluid] = steady_;
        }
      }
      if (!plan_.cancel_now.empty()) return;
      if (heard) {
        settle(observed, verdict, what);
        if (plan_.write && *plan_.write) {
          const store::JobView after = afterChange(view_, **plan_.write);
          auto sent = markCancelSent(after, observed.number, now_);
          if (sent) {
            plan_.write = mergeChanges(**plan_.write, *sent);
          } else {
            plan_.write = std::move(sent);
          }
        }
        return;
      }
    }
    settle(observed, verdict, what);
  }

  // Slurm had no record this cycle, with Slurm's word for it: counted, and judged at
  // kMissingPollsToJudge — slurmctld forgot the job (MinJobAge, e.g. while serve was down).
  // The job's own exit sentinel says how it ended; without one, slurmdbd's record of its run
  // does (a node failure, a time limit, a cancel: ends that leave no sentinel); without
  // either, the start sentinel (ended unobserved) or nothing (lost).
  void judgeMissing(const store::AttemptRecord& observed) {
    if (observed.missing_polls < kMissingPollsToJudge) {
      write(recordObservation(view_, observed, now_), "missing record");
      return;
    }
    if (!filesRead()) return;
    if (facts_.sentinels->exit.empty()) {
      if (!accountingRead()) return;
      if (auto recorded =
              judgeFromAccounting(observed, *facts_.accounting, view_.job.cancel_requested)) {
        write(applyVerdict(view_, observed, *recorded, settings_.retry, now_),
              "judged by slurmdbd's record");
        return;
      }
    }
    const AttemptVerdict verdict =
        judgeFromSentinels(*facts_.sentinels, view_.job.cancel_requested);
    write(applyVerdict(view_, observed, verdict, settings_.retry, now_), "judged by sentinels");
  }

  // The one way an observation is recorded (receipt resolved, found by token, polled): holds
  // an ending attempt until its requeued job is cancelled, rejects a job Slurm can never start
  // once the grace has passed, writes what changed, cancels het survivors.
  void settle(const store::AttemptRecord& observed, AttemptVerdict verdict, const char* what) {
    if (verdict.phase == AttemptPhase::kQueued && verdict.unrunnable &&
        !view_.job.cancel_requested) {
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
  void noteFollowedByNumericId(const store::AttemptRecord& observed) {
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
  AttemptVerdict verdictFor(const store::AttemptRecord& observed) {
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

  // chooseByToken over this cycle's records; with more than one Slurm job, logs/claim is read
  // first, so the job that started the attempt is the one kept. False: the files are asked for.
  bool choose(TokenChoice& choice) {
    choice = chooseByToken(facts_.token.records);
    if (choice.duplicate_jobs == 0) return true;
    if (!filesRead()) return false;
    if (facts_.sentinels->claimed_by) {
      choice = chooseByToken(facts_.token.records, facts_.sentinels->claimed_by);
    }
    return true;
  }

  // Cancels every duplicate of `choice` (the DELETEs first); the SLUIDs whose cancel Slurm did
  // not hear become strays, sent again every cycle. The decision does not wait on them.
  std::vector<std::string> cancelDuplicatesUnheard(const TokenChoice& choice) {
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
  bool cancelDuplicates(const TokenChoice& choice) {
    cancelDuplicatesUnheard(choice);
    return plan_.cancel_now.empty();
  }

  // Whether this cycle's lookup by token answered; asks for it when it was not made.
  bool tokenAnswered() {
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

  // The one way a step cancels a Slurm job and hears the answer: the DELETE of `sluid` is
  // asked for until this cycle holds Slurm's answer, then told apart. Slurm's "no such job"
  // counts as heard unless `gone_is_heard` is false (a requeued job's SLUID changes: the job
  // may pend under its new one). Callers return while any DELETE is asked for.
  Delete deleteOf(const std::string& sluid, bool gone_is_heard = true) {
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
  // Heard (or gone, where that counts): remembered, so it is not sent again for a while.
  static bool heard(Delete d) { return d == Delete::kHeard || d == Delete::kGone; }

  bool filesRead() {
    if (facts_.sentinels && facts_.scheduler_log_missing) return true;
    plan_.read_files = true;
    return false;
  }

  // slurmdbd's runs, once read; a read that failed this cycle concludes nothing.
  bool accountingRead() {
    if (facts_.accounting) return true;
    if (!facts_.accounting_unanswered.empty()) {
      plan_.note = "slurmdbd's record could not be read this cycle (" +
                   facts_.accounting_unanswered + "): nothing is concluded";
      return false;
    }
    plan_.read_accounting = true;
    return false;
  }

  const store::JobView& view_;
  const JobFacts& facts_;
  const StepSettings& settings_;
  const int64_t now_;
  const int64_t steady_;
  const store::AttemptRecord* stored_;
  StepPlan plan_;
};

}  // namespace

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
  return Step(view, facts, memory, settings, now_ms, steady_ms).run();
}

StepPlan stepPolled(const store::JobView& view, const JobFacts& facts, const AttemptMemory& memory,
                    const StepSettings& settings, int64_t now_ms, int64_t steady_ms) {
  return Step(view, facts, memory, settings, now_ms, steady_ms).runPolled();
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
