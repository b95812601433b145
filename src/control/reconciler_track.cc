// Following submitted jobs (reconciler.h): lost receipts found by their token in one
// listing, batched polling by numeric id with per-job reads by SLUID only where needed,
// and cancel by SLUID.
#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "control/decisions.h"
#include "control/reconciler.h"
#include "launch/attempt_identity.h"

namespace tuneplane::control {
namespace {

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// True when a component no longer runs or waits (nothing left for a DELETE to stop).
bool hasEnded(const store::ComponentRecord& c) {
  const ComponentVerdict v = mapComponent(c.state, c.reason, c.exit_code, c.signal, true);
  return v.phase != store::AttemptPhase::kQueued && v.phase != store::AttemptPhase::kRunning &&
         v.phase != store::AttemptPhase::kUnknown;
}

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
  const slurm::JobListing* all = listing();
  if (all == nullptr) return;  // looked for nothing: the next cycle tries again
  std::unordered_map<std::string, std::vector<slurm::JobRecord>> by_token;
  for (const auto& record : all->jobs) {
    if (launch::isValidSubmitToken(record.comment)) by_token[record.comment].push_back(record);
  }
  for (const store::JobView* view : due) {
    const store::AttemptRecord& attempt = view->attempts.back();
    auto found = by_token.find(attempt.submit_token);
    if (found != by_token.end()) {
      store::AttemptRecord observed = attempt;
      applyRecords(observed, found->second, /*by_sluid=*/false);
      observed.missing_polls = 0;
      AttemptVerdict verdict = verdictFor(observed, view->job.cancel_requested);
      verdict.reason = "found by its submit token; " + verdict.reason;
      if (!commit(*view, applyVerdict(*view, observed, verdict, retryOf(*view, verdict), now_),
                  "lost receipt found")) {
        continue;
      }
      verified_ms_[key(observed)] = now_;
      if (!verdict.to_cancel.empty()) cancelComponents(observed, verdict.to_cancel);
      // A lost receipt whose job was to be cancelled is cancelled as soon as it is found.
      if (view->job.cancel_requested && !store::isTerminal(verdict.phase)) {
        if (auto fresh = reload(view->job.id)) sendCancel(*fresh);
      }
      continue;
    }
    // Not in Slurm's memory. Its sentinels may still prove it ran (and ended).
    std::vector<std::string> pools;
    for (const auto& c : attempt.components) pools.push_back(c.pool);
    const AttemptSentinels sentinels = readSentinels(attempt.staging_dir, pools);
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

  // Who needs a read by SLUID: changed or vanished first, then not yet verified by this
  // process, then the oldest slow refreshes (a bounded share per tick).
  std::vector<const store::JobView*> urgent, unverified;
  std::vector<std::pair<int64_t, const store::JobView*>> due;
  for (const auto& view : tracked) {
    const store::AttemptRecord& a = view.attempts.back();
    bool changed = false;
    for (const auto& c : a.components) {
      auto it = state_of.find(c.slurm_job_id);
      if (it == state_of.end() || !states->stateIs(it->second, c.state)) changed = true;
    }
    auto verified = verified_ms_.find(key(a));
    if (changed) {
      urgent.push_back(&view);
    } else if (verified == verified_ms_.end()) {
      unverified.push_back(&view);
    } else if (now_ - verified->second >= options_.full_refresh_interval.count()) {
      due.emplace_back(verified->second, &view);
    }
  }
  std::sort(due.begin(), due.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  const int64_t refresh_budget =
      1 + static_cast<int64_t>(tracked.size()) * options_.poll_interval.count() /
              std::max<int64_t>(1, options_.full_refresh_interval.count());
  std::vector<const store::JobView*> fetch = urgent;
  fetch.insert(fetch.end(), unverified.begin(), unverified.end());
  for (size_t i = 0; i < due.size() && static_cast<int64_t>(i) < refresh_budget; ++i) {
    fetch.push_back(due[i].second);
  }
  if (fetch.empty()) return;

  if (static_cast<int>(fetch.size()) > options_.listing_threshold) {
    // One listing serves them all, matched by SLUID.
    const slurm::JobListing* all = listing();
    if (all == nullptr) return;
    std::unordered_map<std::string, const slurm::JobRecord*> by_sluid;
    for (const auto& record : all->jobs) by_sluid[upper(record.sluid)] = &record;
    for (const store::JobView* view : fetch) {
      if (stop.stop_requested()) return;
      std::vector<slurm::JobRecord> records;
      for (const auto& c : view->attempts.back().components) {
        auto it = by_sluid.find(upper(c.sluid));
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
    judgeMissing(view, countMissing(observed));
    return;
  }
  observed.missing_polls = 0;
  verified_ms_[key(observed)] = now_;
  const AttemptVerdict verdict = verdictFor(observed, view.job.cancel_requested);
  auto change = applyVerdict(view, observed, verdict, retryOf(view, verdict), now_);
  // A refresh that found nothing new writes nothing.
  const bool unchanged = change && change->events.empty() && change->attempts.size() == 1 &&
                         change->attempts.front() == stored &&
                         change->job->phase == view.job.phase &&
                         change->job->reason == view.job.reason;
  if (!unchanged) commit(view, change, "observation");
  if (!verdict.to_cancel.empty()) cancelComponents(observed, verdict.to_cancel);
}

bool Reconciler::sendCancel(const store::JobView& view) {
  const store::AttemptRecord& attempt = view.attempts.back();
  bool heard = true;
  for (const auto& c : attempt.components) {
    if (c.sluid.empty() || hasEnded(c)) continue;
    ++report_.cancels;
    auto status = slurm_.cancel(c.sluid, std::nullopt);
    if (!cancelWasHeard(status)) {
      heard = false;
      ++report_.errors;
      spdlog::warn("reconciler: job {}: DELETE {} failed: {}", view.job.id, c.sluid,
                   status.error().describe());
    }
  }
  if (!heard) return false;  // sent again next tick
  return commit(view, markCancelSent(view, attempt.number, now_), "cancel sent");
}

void Reconciler::cancelComponents(const store::AttemptRecord& attempt,
                                  const std::vector<int>& indices) {
  for (int index : indices) {
    for (const auto& c : attempt.components) {
      if (c.index != index || c.sluid.empty()) continue;
      const std::string sent = key(attempt) + "/" + std::to_string(index);
      if (cancel_sent_.count(sent)) continue;
      ++report_.cancels;
      if (cancelWasHeard(slurm_.cancel(c.sluid, std::nullopt))) cancel_sent_.insert(sent);
    }
  }
}

}  // namespace tuneplane::control
