// Following submitted jobs (reconciler.h): lost receipts found by their token in one
// listing, batched polling by numeric id with per-job reads by SLUID only where needed,
// and cancel by SLUID.
#include <algorithm>
#include <map>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "control/decisions.h"
#include "control/reconciler.h"
#include "launch/attempt_identity.h"
#include "slurm/sluid.h"

namespace tuneplane::control {
namespace {

// True when a component no longer runs or waits (nothing left for a DELETE to stop).
bool hasEnded(const store::ComponentRecord& c) {
  const ComponentVerdict v = mapComponent(c.state, c.reason, c.exit_code, c.signal, true);
  return v.phase != phase::AttemptPhase::kQueued && v.phase != phase::AttemptPhase::kRunning &&
         v.phase != phase::AttemptPhase::kUnknown;
}

// A DELETE that Slurm heard is sent again only when the component still runs this long after.
constexpr int64_t kCancelRecheckMs = 60'000;

bool cancelWasHeard(const slurm::SlurmStatus& status) {
  return status || status.error().error.code == slurm::kErrJobNotFound ||
         status.error().error.code == slurm::kErrAlreadyCompleting;
}

}  // namespace

const slurm::JobListing* Reconciler::listing() {
  if (!listing_) {
    ++report_.listings;
    listing_ = slurm_.listJobs(std::nullopt);
    if (!*listing_) {
      ++report_.errors;
      spdlog::warn("reconciler: GET /jobs/ failed: {}", listing_->error().describe());
    }
  }
  return *listing_ ? &**listing_ : nullptr;
}

void Reconciler::lookForLostReceipts(const std::vector<store::JobView>& looking) {
  std::vector<const store::JobView*> due;
  for (const auto& view : looking) {
    if (view.attempts.back().next_lookup_ms <= now_) due.push_back(&view);
  }
  if (due.empty()) return;
  for (const store::JobView* view : due) {
    const store::AttemptRecord& attempt = view->attempts.back();
    const auto found = byToken(attempt.submit_token);
    if (!found) return;  // no listing: looked for nothing, the next cycle tries again
    if (!found->empty()) {
      const TokenChoice choice = choose(attempt, *found);
      const std::vector<std::string> unheard = cancelDuplicates(*view, choice);
      store::AttemptRecord observed = attempt;
      applyRecords(observed, choice.adopted, /*by_sluid=*/false);
      observed.missing_polls = 0;
      // Found only after Slurm requeued it (the fault campaign's seed 2107): it ran once.
      AttemptVerdict verdict = requeuedAlready(choice.adopted)
                                   ? requeuedUnderNewSluid(choice.adopted)
                                   : verdictFor(observed, view->job.cancel_requested);
      const std::string duplicates = choice.describe(unheard);
      verdict.reason = "found by its submit token; " +
                       (duplicates.empty() ? std::string() : duplicates + "; ") + verdict.reason;
      const bool ends = phase::isTerminal(verdict.phase);
      if (!settle(*view, observed, verdict, "lost receipt found")) continue;
      verified_ms_[key(observed)] = steady_now_;
      // A lost receipt whose job was to be cancelled is cancelled as soon as it is found.
      if (view->job.cancel_requested && !ends) {
        if (auto fresh = reload(view->job.id); fresh && !phase::isTerminal(fresh->job.phase)) {
          sendCancel(*fresh);
        }
      }
      continue;
    }
    // Not in Slurm's memory. Its sentinels may still prove it ran (and ended).
    std::vector<std::string> pools;
    for (const auto& c : attempt.components) pools.push_back(c.pool);
    const attempt::AttemptSentinels sentinels =
        launcher_.files().sentinels(attempt.staging_dir, pools);
    const bool ended = !sentinels.exit.empty();
    const bool ran_unseen = !sentinels.start.empty() && attempt.lookups + 1 >= kMissingPollsToJudge;
    if (ended || ran_unseen) {
      const AttemptVerdict verdict = judgeFromSentinels(sentinels, view->job.cancel_requested);
      commit(*view, applyVerdict(*view, attempt, verdict, retryOf(*view, verdict), now_),
             "lost receipt judged by sentinels");
    } else {
      commit(*view, markLookupMiss(*view, attempt.number, now_), "lost receipt not found");
    }
  }
}

void Reconciler::poll(const std::vector<store::JobView>& tracked, std::stop_token stop) {
  retryStrayCancels();
  std::vector<uint64_t> ids;
  for (const auto& view : tracked) {
    for (const auto& c : view.attempts.back().components) {
      if (c.slurm_job_id != 0) ids.push_back(c.slurm_job_id);
    }
  }
  report_.state_queries += static_cast<int>((ids.size() + 255) / 256);
  auto states = slurm_.listJobStates(ids);
  if (!states) {
    ++report_.errors;
    spdlog::warn("reconciler: GET /jobs/state/ failed: {}", states.error().describe());
    return;  // nothing is concluded from no answer
  }
  std::unordered_map<uint64_t, size_t> state_of;  // numeric id → entry
  for (size_t i = 0; i < states->size(); ++i) state_of[(*states)[i].numericId()] = i;

  // What each tracked job needs, then one plan (decisions.h, planFetches) says who is read.
  std::vector<FetchNeed> needs;
  needs.reserve(tracked.size());
  for (const auto& view : tracked) {
    const store::AttemptRecord& a = view.attempts.back();
    FetchNeed need;
    for (const auto& c : a.components) {
      auto it = state_of.find(c.slurm_job_id);
      if (it == state_of.end() || !states->stateIs(it->second, c.state)) {
        need.why = FetchReason::kChanged;
      }
    }
    if (need.why == FetchReason::kNone && a.phase == phase::AttemptPhase::kReleasing &&
        mustCancelMore(view)) {
      need.why = FetchReason::kMustAct;
    }
    if (need.why == FetchReason::kNone && must_read_.count(key(a))) {
      need.why = FetchReason::kMustAct;
    }
    if (need.why == FetchReason::kNone && a.phase == phase::AttemptPhase::kQueued) {
      // Waited on an unrunnable reason past the grace: read again, then decide.
      auto since = unrunnable_since_.find(key(a));
      if (since != unrunnable_since_.end() && steady_now_ - since->second >= unrunnableGraceMs()) {
        need.why = FetchReason::kMustAct;
      }
    }
    if (auto verified = verified_ms_.find(key(a)); verified != verified_ms_.end()) {
      need.verified_ms = verified->second;
    }
    needs.push_back(need);
  }
  must_read_.clear();
  const FetchPlan plan =
      planFetches(needs, steady_now_,
                  {options_.poll_interval.count(), options_.full_refresh_interval.count(),
                   options_.listing_threshold});
  std::vector<const store::JobView*> fetch;
  for (const auto& [index, why] : plan.fetch) fetch.push_back(&tracked[index]);
  if (fetch.empty()) return;

  if (plan.use_listing) {
    // One listing serves them all, matched by SLUID.
    const slurm::JobListing* all = listing();
    if (all == nullptr) return;
    std::unordered_map<std::string, const slurm::JobRecord*> by_sluid;
    for (const auto& record : all->jobs) by_sluid[slurm::Sluid(record.sluid).key()] = &record;
    for (const store::JobView* view : fetch) {
      if (stop.stop_requested()) return;
      std::vector<slurm::JobRecord> records;
      for (const auto& c : view->attempts.back().components) {
        auto it = by_sluid.find(slurm::Sluid(c.sluid).key());
        if (it != by_sluid.end()) records.push_back(*it->second);
      }
      observe(*view, records);
    }
    return;
  }
  int fetched = 0;
  for (const store::JobView* view : fetch) {
    if (stop.stop_requested() || fetched >= options_.max_fetches_per_tick) return;
    ++fetched;
    ++report_.fetches;
    // The leader's SLUID answers for every component of a het job.
    auto records = slurm_.getJob(view->attempts.back().components.front().sluid);
    if (records) {
      observe(*view, *records);
    } else if (records.error().error.code == slurm::kErrJobNotFound) {
      observe(*view, {});
    } else {
      ++report_.errors;
      spdlog::warn("reconciler: job {}: GET by SLUID failed: {}", view->job.id,
                   records.error().describe());
    }
  }
}

void Reconciler::observe(const store::JobView& view, const std::vector<slurm::JobRecord>& records) {
  const store::AttemptRecord& stored = view.attempts.back();
  store::AttemptRecord observed = stored;
  if (!applyRecords(observed, records, /*by_sluid=*/true)) {
    // A SLUID Slurm no longer knows: before judging the job vanished, look for it by its
    // token — a requeue gives the job a new SLUID (docs/decisions.md, "Slurm's requeue").
    const auto found = byToken(stored.submit_token);
    const bool any = found && !found->empty();
    if (any && !requeuedAlready(*found)) {
      // Only copies of a doubled submit carry the token (restart_cnt 0: not a requeue); the
      // job itself is gone, purged (the fault campaign's seed 2110). Copies still alive are
      // cancelled; the job is judged as missing, from its sentinels.
      for (const std::string& sluid : liveSluids(*found)) {
        if (!cancelOne(view.job.id, sluid)) stray_cancels_[sluid] = view.job.id;
      }
    } else if (any) {
      const TokenChoice choice = choose(stored, *found);
      cancelDuplicates(view, choice);
      applyRecords(observed, choice.adopted, /*by_sluid=*/false);
      observed.missing_polls = 0;
      verified_ms_[key(observed)] = steady_now_;
      settle(view, observed, requeuedUnderNewSluid(choice.adopted), "requeued job found");
      return;
    }
    judgeMissing(view, countMissing(observed));
    return;
  }
  observed.missing_polls = 0;
  verified_ms_[key(observed)] = steady_now_;
  if (foundClaimedByAnother(observed)) {
    // The job TunePlane holds ran nothing: another Slurm job with the token claimed the
    // attempt first and runs it. Adopt that one, found by the token and logs/claim; with no
    // listing this cycle nothing is concluded, and without a claim the attempt fails below.
    const auto found = byToken(stored.submit_token);
    if (!found) return;
    const TokenChoice choice = choose(stored, *found);
    if (choice.by_claim) {
      cancelDuplicates(view, choice);
      store::AttemptRecord claimant = stored;
      applyRecords(claimant, choice.adopted, /*by_sluid=*/false);
      AttemptVerdict verdict = verdictFor(claimant, view.job.cancel_requested);
      verdict.reason = choice.describe({}) + "; " + verdict.reason;
      settle(view, claimant, verdict, "claimant adopted");
      return;
    }
  }
  settle(view, observed,
         heldForRequeue(stored) ? stillRequeued(observed.components)
                                : verdictFor(observed, view.job.cancel_requested),
         "observation");
}

bool Reconciler::settle(const store::JobView& view, const store::AttemptRecord& observed,
                        AttemptVerdict verdict, const char* what) {
  const std::string k = key(observed);
  if (verdict.phase == phase::AttemptPhase::kQueued && verdict.unrunnable &&
      !view.job.cancel_requested) {
    const int64_t since = unrunnable_since_.emplace(k, steady_now_).first->second;
    if (steady_now_ - since >= unrunnableGraceMs()) {
      bool heard = true;
      for (const auto& c : observed.components) {
        if (!c.sluid.empty() && !cancelOne(view.job.id, c.sluid)) heard = false;
      }
      if (heard) verdict = rejectUnrunnable(verdict, steady_now_ - since);
    }
  } else {
    unrunnable_since_.erase(k);
  }
  if (phase::isTerminal(verdict.phase) && !verdict.requeued.empty()) {
    // "No such job" is not heard here: the SLUID read (from this cycle's listing) may have
    // been replaced since by the requeue's new one, under which the job would run again (the
    // fault campaign's seeds …818 and …832). Held Releasing, the next cycle finds the job by
    // its token under the new SLUID and cancels that.
    bool heard = true;
    for (int index : verdict.requeued) {
      for (const auto& c : observed.components) {
        if (c.index == index && !c.sluid.empty() &&
            !cancelOne(view.job.id, c.sluid, /*gone_is_heard=*/false)) {
          heard = false;
        }
      }
    }
    if (!heard) verdict = holdForCancel(std::move(verdict), "the requeued Slurm job");
  }
  auto change = applyVerdict(view, observed, verdict, retryOf(view, verdict), now_);
  const bool unchanged = change && isNoOp(*change, view);  // a refresh that found nothing new
  if (!unchanged && !commit(view, change, what)) return false;
  if (!verdict.to_cancel.empty()) cancelComponents(observed, verdict.to_cancel);
  return true;
}

std::optional<std::vector<slurm::JobRecord>> Reconciler::byToken(const std::string& token) {
  if (!by_token_) {
    const slurm::JobListing* all = listing();
    if (all == nullptr) return std::nullopt;
    by_token_.emplace();
    for (const auto& record : all->jobs) {
      if (launch::isValidSubmitToken(record.comment)) {
        (*by_token_)[record.comment].push_back(record);
      }
    }
  }
  const auto found = by_token_->find(token);
  return found == by_token_->end() ? std::vector<slurm::JobRecord>() : found->second;
}

TokenChoice Reconciler::choose(const store::AttemptRecord& attempt,
                               const std::vector<slurm::JobRecord>& found) {
  TokenChoice choice = chooseByToken(found);
  if (choice.duplicate_jobs == 0) return choice;
  std::vector<std::string> pools;
  for (const auto& c : attempt.components) pools.push_back(c.pool);
  const auto claimant = launcher_.files().sentinels(attempt.staging_dir, pools).claimed_by;
  return claimant ? chooseByToken(found, claimant) : choice;
}

std::vector<std::string> Reconciler::cancelDuplicates(const store::JobView& view,
                                                      const TokenChoice& choice) {
  std::vector<std::string> unheard;
  for (const auto& r : choice.duplicates) {
    if (r.sluid.empty()) continue;
    if (!cancelOne(view.job.id, r.sluid)) {
      unheard.push_back(r.sluid);
      stray_cancels_[r.sluid] = view.job.id;
    }
  }
  if (choice.duplicate_jobs > 0) {
    spdlog::warn("reconciler: job {}: {}", view.job.id, choice.describe(unheard));
    if (options_.observer != nullptr) {
      options_.observer->duplicates(view.attempts.back(), choice.duplicate_jobs);
    }
  }
  return unheard;
}

bool Reconciler::cancelOne(const std::string& job_id, const std::string& sluid, bool gone_is_heard,
                           bool* found_gone) {
  ++report_.cancels;
  auto status = slurm_.cancel(sluid, std::nullopt);
  const bool gone = !status && status.error().error.code == slurm::kErrJobNotFound;
  if (found_gone != nullptr) *found_gone = gone;
  if (cancelWasHeard(status) && (gone_is_heard || !gone)) return true;
  ++report_.errors;
  spdlog::warn("reconciler: job {}: DELETE {} failed: {}", job_id, sluid,
               status.error().describe());
  return false;
}

void Reconciler::retryStrayCancels() {
  for (auto it = stray_cancels_.begin(); it != stray_cancels_.end();) {
    it = cancelOne(it->second, it->first) ? stray_cancels_.erase(it) : std::next(it);
  }
}

bool Reconciler::mustCancelMore(const store::JobView& view) const {
  const AttemptVerdict v = rollUp(view.attempts.back().components, view.job.cancel_requested);
  return !v.to_cancel.empty() || !v.requeued.empty() || heldForRequeue(view.attempts.back());
}

int64_t Reconciler::unrunnableGraceMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             launcher_.site().site.slurm.unrunnable_grace)
      .count();
}

bool Reconciler::sendCancel(const store::JobView& view) {
  const store::AttemptRecord& attempt = view.attempts.back();
  bool heard = true;
  for (const auto& c : attempt.components) {
    if (c.sluid.empty() || hasEnded(c)) continue;
    bool gone = false;
    if (cancelOne(view.job.id, c.sluid, /*gone_is_heard=*/true, &gone)) {
      cancel_sent_[key(attempt) + "/" + c.sluid] = steady_now_;
    } else {
      heard = false;
    }
    if (gone) must_read_.insert(key(attempt));
  }
  if (!heard) return false;  // sent again next tick
  return commit(view, markCancelSent(view, attempt.number, now_), "cancel sent");
}

void Reconciler::cancelAgain(const store::JobView& view) {
  const store::AttemptRecord& attempt = view.attempts.back();
  for (const auto& c : attempt.components) {
    if (c.sluid.empty() || hasEnded(c)) continue;
    const std::string sent = key(attempt) + "/" + c.sluid;
    const auto at = cancel_sent_.find(sent);
    if (at != cancel_sent_.end() && steady_now_ - at->second < kCancelRecheckMs) continue;
    bool gone = false;
    if (cancelOne(view.job.id, c.sluid, /*gone_is_heard=*/true, &gone))
      cancel_sent_[sent] = steady_now_;
    if (gone) must_read_.insert(key(attempt));
  }
}

void Reconciler::cancelComponents(const store::AttemptRecord& attempt,
                                  const std::vector<int>& indices) {
  for (int index : indices) {
    for (const auto& c : attempt.components) {
      if (c.index != index || c.sluid.empty()) continue;
      // Sent every cycle until Slurm hears it; once heard, again only if the component
      // still runs a while later (Slurm may have lost it).
      const std::string sent = key(attempt) + "/" + std::to_string(index);
      auto at = cancel_sent_.find(sent);
      if (at != cancel_sent_.end() && steady_now_ - at->second < kCancelRecheckMs) continue;
      if (cancelOne(attempt.job_id, c.sluid)) cancel_sent_[sent] = steady_now_;
    }
  }
}

}  // namespace tuneplane::control
