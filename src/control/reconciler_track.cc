// Following submitted jobs (reconciler.h): batched polling by numeric id with reads by
// SLUID only where needed, the lookup by submit token in one listing per cycle, and cancel
// by SLUID. What each answer means is the step's (job_step.h); here it is only gathered.
#include <algorithm>
#include <map>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "control/decisions.h"
#include "control/reconciler.h"
#include "launch/attempt_identity.h"
#include "slurm/sluid.h"

namespace tuneplane::control {

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

std::string Reconciler::listingError() const {
  return listing_ && !*listing_ ? "GET /jobs/ failed: " + listing_->error().describe()
                                : std::string("no listing");
}

std::optional<std::vector<slurm::JobRecord>> Reconciler::byToken(const std::string& token,
                                                                 const store::JobRecord& job) {
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
  // Only the job's own Slurm user's: without PrivateData=jobs every user sees the comments,
  // and any user can put a token on a job of theirs (a decoy TunePlane would adopt, and then
  // cancel the real job as its duplicate).
  const std::string& user = job.run_as.empty() ? launcher_.site().site.slurm.user : job.run_as;
  std::vector<slurm::JobRecord> mine;
  if (const auto found = by_token_->find(token); found != by_token_->end()) {
    for (const auto& record : found->second) {
      if (user.empty() || record.user_name == user) mine.push_back(record);
    }
  }
  return mine;
}

void Reconciler::poll(const std::vector<const store::JobView*>& tracked, std::stop_token stop) {
  retryStrayCancels();
  std::vector<uint64_t> ids;
  for (const store::JobView* view : tracked) {
    for (const auto& c : view->attempts.back().components) {
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
  // A state list that lacks a job (or lies) only makes it read by SLUID: the read decides.
  const int64_t grace_ms = unrunnableGraceMs();
  std::vector<FetchNeed> needs;
  needs.reserve(tracked.size());
  for (const store::JobView* tracked_view : tracked) {
    const store::JobView& view = *tracked_view;
    const store::AttemptRecord& a = view.attempts.back();
    FetchNeed need;
    for (const auto& c : a.components) {
      auto it = state_of.find(c.slurm_job_id);
      if (it == state_of.end() || !states->stateIs(it->second, c.state)) {
        need.why = FetchReason::kChanged;
      }
    }
    const auto remembered = memory_.find(key(a));
    const AttemptMemory* memory = remembered != memory_.end() ? &remembered->second : nullptr;
    if (need.why == FetchReason::kNone && a.phase == phase::AttemptPhase::kReleasing &&
        mustCancelMore(view)) {
      need.why = FetchReason::kMustAct;
    }
    if (need.why == FetchReason::kNone && memory != nullptr && memory->must_read) {
      need.why = FetchReason::kMustAct;
    }
    if (need.why == FetchReason::kNone && a.phase == phase::AttemptPhase::kQueued &&
        memory != nullptr && memory->unrunnable_since_ms &&
        steady_now_ - *memory->unrunnable_since_ms >= grace_ms) {
      // Waited on an unrunnable reason past the grace: read again, then decide.
      need.why = FetchReason::kMustAct;
    }
    if (memory != nullptr) need.verified_ms = memory->verified_ms;
    needs.push_back(need);
  }
  const FetchPlan plan =
      planFetches(needs, steady_now_,
                  {options_.poll_interval.count(), options_.full_refresh_interval.count(),
                   options_.listing_threshold});
  if (plan.fetch.empty()) return;

  if (plan.use_listing) {
    // One listing serves them all, matched by SLUID; one it does not hold is read by SLUID.
    const slurm::JobListing* all = listing();
    if (all == nullptr) return;
    std::unordered_map<std::string, const slurm::JobRecord*> by_sluid;
    for (const auto& record : all->jobs) by_sluid[slurm::Sluid(record.sluid).key()] = &record;
    for (const auto& [index, why] : plan.fetch) {
      if (stop.stop_requested()) return;
      const store::JobView& view = *tracked[index];
      JobFacts facts;
      std::vector<slurm::JobRecord> records;
      for (const auto& c : view.attempts.back().components) {
        auto it = by_sluid.find(slurm::Sluid(c.sluid).key());
        if (it != by_sluid.end()) records.push_back(*it->second);
      }
      // Not all there: not Slurm's word (the step reads it by SLUID).
      if (records.size() == view.attempts.back().components.size()) {
        facts.read = SlurmAnswer::found(std::move(records));
      }
      drive(view, std::move(facts), /*polled=*/true);
    }
    return;
  }
  int fetched = 0;
  for (const auto& [index, why] : plan.fetch) {
    if (stop.stop_requested() || fetched >= options_.max_fetches_per_tick) return;
    ++fetched;
    // Not read yet: the step asks for the read by SLUID.
    drive(*tracked[index], JobFacts{}, /*polled=*/true);
  }
}

CancelHeard Reconciler::cancelOne(const std::string& job_id, const std::string& run_as,
                                  const std::string& sluid) {
  ++report_.cancels;
  auto status = slurm_.as(run_as).cancel(sluid, std::nullopt);
  if (status || status.error().error.code == slurm::kErrAlreadyCompleting) {
    return CancelHeard::kHeard;
  }
  if (status.error().error.code == slurm::kErrJobNotFound) return CancelHeard::kGone;
  ++report_.errors;
  spdlog::warn("reconciler: job {}: DELETE {} failed: {}", job_id, sluid,
               status.error().describe());
  return CancelHeard::kUnheard;
}

void Reconciler::retryStrayCancels() {
  for (auto it = stray_cancels_.begin(); it != stray_cancels_.end();) {
    it = cancelOne(it->second.first, it->second.second, it->first) != CancelHeard::kUnheard
             ? stray_cancels_.erase(it)
             : std::next(it);
  }
}

int64_t Reconciler::unrunnableGraceMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             launcher_.site().site.slurm.unrunnable_grace)
      .count();
}

bool Reconciler::mustCancelMore(const store::JobView& view) const {
  const AttemptVerdict v = rollUp(view.attempts.back().components, view.job.cancel_requested);
  return !v.to_cancel.empty() || !v.requeued.empty() || heldForRequeue(view.attempts.back());
}

}  // namespace tuneplane::control
