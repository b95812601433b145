// See slurm_queue.h.
#include "api/slurm_queue.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <exception>
#include <map>

namespace tuneplane::api {
namespace {

std::string upperSluid(std::string sluid) {
  for (char& c : sluid) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return sluid;
}

// A pending job as the ranking needs it.
struct Pending {
  const slurm::JobRecord* record;
  int64_t priority;
  int64_t submit;
};

// Slurm's order of consideration within a partition: higher priority, earlier submit,
// lower id.
bool comesFirst(const Pending& a, const Pending& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.submit != b.submit) return a.submit < b.submit;
  return a.record->job_id < b.record->job_id;
}

std::vector<std::string> partitionsOf(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::size_t end = comma == std::string::npos ? list.size() : comma;
    if (end > start) out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

const QueuePlace* QueueSnapshot::find(const std::string& sluid, uint64_t job_id) const {
  if (!sluid.empty()) {
    if (auto it = by_sluid.find(upperSluid(sluid)); it != by_sluid.end())
      return &places[it->second];
  }
  if (job_id != 0) {
    if (auto it = by_job_id.find(job_id); it != by_job_id.end()) return &places[it->second];
  }
  return nullptr;
}

QueueSnapshot queueSnapshot(const std::vector<slurm::JobRecord>& jobs, int64_t as_of_ms) {
  std::map<std::string, std::vector<Pending>> by_partition;
  for (const slurm::JobRecord& job : jobs) {
    if (job.baseState() != "PENDING") continue;
    const Pending pending{&job, job.priority.value().value_or(0),
                          job.submit_time.value().value_or(0)};
    for (const std::string& partition : partitionsOf(job.partition)) {
      by_partition[partition].push_back(pending);
    }
  }
  QueueSnapshot out;
  out.as_of_ms = as_of_ms;
  for (auto& [partition, pending] : by_partition) {
    std::sort(pending.begin(), pending.end(), comesFirst);
    for (std::size_t i = 0; i < pending.size(); ++i) {
      const slurm::JobRecord& job = *pending[i].record;
      // A multi-partition job is placed in the first partition it names.
      if (partitionsOf(job.partition).front() != partition) continue;
      out.places.push_back({partition, static_cast<int>(i + 1), static_cast<int>(pending.size()),
                            job.start_time.value().value_or(0), job.state_reason});
      const std::size_t index = out.places.size() - 1;
      if (!job.sluid.empty()) out.by_sluid.emplace(upperSluid(job.sluid), index);
      if (job.job_id != 0) out.by_job_id.emplace(job.job_id, index);
    }
  }
  return out;
}

SlurmQueue::SlurmQueue(Fetch fetch, const Clock& clock, SlurmQueueOptions options)
    : fetch_(std::move(fetch)), clock_(clock), options_(options) {}

std::shared_ptr<const QueueSnapshot> SlurmQueue::current(int64_t newer_than_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t now = clock_.steadyMs();
  const int64_t since = last_try_steady_ms_ ? now - *last_try_steady_ms_ : INT64_MAX;
  const bool outdated = snapshot_ && snapshot_->as_of_ms < newer_than_ms;
  const bool due =
      since >= options_.refresh.count() || (outdated && since >= options_.min_refresh.count());
  if (!due) return snapshot_;
  if (fetching_) {
    // Another request is reading the listing: use what there is, or wait for it (bounded).
    if (!snapshot_) {
      fetched_.wait_for(lock, options_.wait, [this] { return !fetching_; });
    }
    return snapshot_;
  }
  fetching_ = true;
  last_try_steady_ms_ = now;
  ++fetches_;
  lock.unlock();
  std::shared_ptr<const QueueSnapshot> fresh;
  try {
    auto listing = fetch_();  // outside the lock: other requests go on meanwhile
    if (listing) {
      fresh = std::make_shared<const QueueSnapshot>(queueSnapshot(listing->jobs, clock_.nowMs()));
    }
  } catch (const std::exception&) {
    // (bad_alloc) a failed listing: the flag below must not stay set.
  }
  lock.lock();
  if (fresh) snapshot_ = std::move(fresh);  // a failure keeps the last one (its as_of says how old)
  fetching_ = false;
  fetched_.notify_all();
  return snapshot_;
}

int SlurmQueue::fetches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetches_;
}

}  // namespace tuneplane::api
