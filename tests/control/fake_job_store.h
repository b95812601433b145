// FakeJobStore: an in-memory JobStore that keeps the interface's promises — commit() is
// all-or-nothing and never writes the request columns (cancel_*, abandon_*), requests are
// narrow updates — and can be told to fail the next commits (a crash between two steps, a
// full disk). Thread-safe (one mutex), like the real one.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "store/job_store.h"

namespace tuneplane::control::testing {

class FakeJobStore final : public store::JobStore {
 public:
  // After `skip` more commits succeed, the next `count` fail with "store.io" and change
  // nothing.
  void failCommits(int skip, int count) {
    std::lock_guard<std::mutex> lock(mu_);
    skip_commits_ = skip;
    fail_commits_ = count;
  }
  int commits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return commits_;
  }

  // store::JobStore
  Status createJob(const store::JobRecord& job, const store::EventRecord& created) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (jobs_.count(job.id)) return fail("store.job_exists", "id", "job " + job.id + " exists");
    jobs_[job.id].job = job;
    jobs_[job.id].job.version = 0;
    jobs_[job.id].job.change_seq = ++change_seq_;
    appendLocked(created);
    return ok();
  }

  Result<std::optional<store::JobView>> getJob(const std::string& id) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return std::optional<store::JobView>();
    return std::optional<store::JobView>(it->second);
  }

  Result<store::JobPage> listJobs(const store::JobQuery& query) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<const store::JobView*> matching;
    for (const auto& [id, view] : jobs_) {
      const auto& j = view.job;
      if (query.owner && j.owner != *query.owner) continue;
      if (query.phase && j.phase != *query.phase) continue;
      if (query.name && j.name != *query.name) continue;
      if (query.label) {
        auto l = j.labels.find(query.label->first);
        if (l == j.labels.end() || l->second != query.label->second) continue;
      }
      matching.push_back(&view);
    }
    std::sort(matching.begin(), matching.end(), [](const auto* a, const auto* b) {
      return a->job.created_ms != b->job.created_ms ? a->job.created_ms > b->job.created_ms
                                                    : a->job.id > b->job.id;
    });
    const size_t start = query.continue_token.empty() ? 0 : std::stoul(query.continue_token);
    store::JobPage page;
    for (size_t i = start; i < matching.size() && page.jobs.size() < size_t(query.limit); ++i) {
      page.jobs.push_back(matching[i]->job);
      const auto& attempts = matching[i]->attempts;
      store::AttemptSummary summary{static_cast<int>(attempts.size()), {}};
      if (!attempts.empty()) {
        summary.last = attempts.back();
        summary.last->components.clear();
      }
      page.attempts.push_back(std::move(summary));
    }
    if (start + page.jobs.size() < matching.size()) {
      page.continue_token = std::to_string(start + page.jobs.size());
    }
    return page;
  }

  Result<std::vector<store::JobView>> activeJobs() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<store::JobView> out;
    for (const auto& [id, view] : jobs_) {
      if (!phase::isTerminal(view.job.phase)) out.push_back(view);
    }
    return out;
  }

  Result<std::vector<store::EventRecord>> events(const std::string& job_id) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<store::EventRecord> out;
    for (const auto& e : events_) {
      if (e.job_id == job_id) out.push_back(e);
    }
    return out;
  }

  Result<std::map<phase::JobPhase, int64_t>> countJobsByPhase() override {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<phase::JobPhase, int64_t> out;
    for (const auto& [id, view] : jobs_) ++out[view.job.phase];
    return out;
  }

  Result<std::map<std::pair<phase::AttemptPhase, phase::EndCause>, int64_t>> countEndedAttempts()
      override {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<std::pair<phase::AttemptPhase, phase::EndCause>, int64_t> out;
    for (const auto& [id, view] : jobs_) {
      for (const auto& a : view.attempts) {
        if (phase::isTerminal(a.phase)) ++out[{a.phase, a.cause}];
      }
    }
    return out;
  }

  Status commit(const store::Change& change) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (skip_commits_ > 0) {
      --skip_commits_;
    } else if (fail_commits_ > 0) {
      --fail_commits_;
      return fail("store.io", "", "injected commit failure");
    }
    // Validate everything before changing anything: all or nothing.
    if (change.job) {
      auto stored = jobs_.find(change.job->id);
      if (stored != jobs_.end() && stored->second.job.version != change.job->version) {
        return fail("store.stale", "job.version", "job " + change.job->id + " changed");
      }
    }
    for (const auto& a : change.attempts) {
      if (!jobs_.count(a.job_id) && !(change.job && change.job->id == a.job_id)) {
        return fail("store.io", "", "attempt of an unknown job " + a.job_id);
      }
    }
    if (change.job) {
      auto& view = jobs_[change.job->id];
      const store::JobRecord kept = view.job;
      view.job = *change.job;
      view.job.cancel_requested = kept.cancel_requested;
      view.job.cancel_requested_by = kept.cancel_requested_by;
      view.job.version = kept.version + 1;
      view.job.change_seq = ++change_seq_;
    }
    for (const auto& a : change.attempts) {
      auto& attempts = jobs_[a.job_id].attempts;
      auto it = std::find_if(attempts.begin(), attempts.end(),
                             [&](const auto& x) { return x.number == a.number; });
      if (it == attempts.end()) {
        store::AttemptRecord fresh = a;
        fresh.abandon_requested = false;
        fresh.abandoned_by.clear();
        fresh.abandon_reason.clear();
        attempts.push_back(fresh);
        std::sort(attempts.begin(), attempts.end(),
                  [](const auto& x, const auto& y) { return x.number < y.number; });
      } else {
        store::AttemptRecord updated = a;
        updated.abandon_requested = it->abandon_requested;
        updated.abandoned_by = it->abandoned_by;
        updated.abandon_reason = it->abandon_reason;
        *it = updated;
      }
    }
    for (const auto& e : change.events) appendLocked(e);
    ++commits_;
    return ok();
  }

  Status requestCancel(const std::string& job_id, const std::string& actor,
                       int64_t now_ms) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return fail("store.not_found", "id", "no job " + job_id);
    auto& job = it->second.job;
    if (phase::isTerminal(job.phase)) {
      return fail("store.already_terminal", "id", "job " + job_id + " has ended");
    }
    if (job.cancel_requested) return ok();
    job.cancel_requested = true;
    job.cancel_requested_by = actor;
    job.change_seq = ++change_seq_;
    store::EventRecord e;
    e.job_id = job_id;
    e.time_ms = now_ms;
    e.from = e.to = std::string(phase::toString(job.phase));
    e.reason = "cancel requested";
    e.actor = actor;
    appendLocked(e);
    return ok();
  }

  Status requestAbandon(const std::string& job_id, int attempt, const std::string& actor,
                        const std::string& reason, int64_t now_ms) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return fail("store.not_found", "id", "no job " + job_id);
    for (auto& a : it->second.attempts) {
      if (a.number != attempt) continue;
      if (a.phase != phase::AttemptPhase::kSubmitUnknown) {
        return fail("store.not_submit_unknown", "attempt", "attempt is not SubmitUnknown");
      }
      a.abandon_requested = true;
      a.abandoned_by = actor;
      a.abandon_reason = reason;
      ++it->second.job.version;  // as the real store: a decision read before it is stale
      it->second.job.change_seq = ++change_seq_;
      store::EventRecord e;
      e.job_id = job_id;
      e.attempt = attempt;
      e.time_ms = now_ms;
      e.from = e.to = "SubmitUnknown";
      e.reason = "abandon requested: " + reason;
      e.actor = actor;
      appendLocked(e);
      return ok();
    }
    return fail("store.not_found", "attempt", "no attempt " + std::to_string(attempt));
  }

 private:
  void appendLocked(store::EventRecord e) {
    e.seq = ++seq_;
    events_.push_back(std::move(e));
  }

  mutable std::mutex mu_;
  std::map<std::string, store::JobView> jobs_;
  std::vector<store::EventRecord> events_;
  int64_t seq_ = 0;
  int64_t change_seq_ = 0;
  int skip_commits_ = 0;
  int fail_commits_ = 0;
  int commits_ = 0;
};

}  // namespace tuneplane::control::testing
