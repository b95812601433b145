// Slurm's queue as the API reads it, to say why a pending job waits and until when: each
// pending job's reason, Slurm's own estimate of its start (start_time while PENDING: set by
// the backfill scheduler, or a begin time; 0 while it has none) and its place among its
// partition's pending jobs.
//
// Cost: the control loop stays cheap (GET /jobs/state/, per-job reads only on a change) and
// is not touched. The API reads one full listing (GET /jobs/) on demand — only when a job it
// is asked about waits in Slurm's queue — at most once per `refresh` (30 s: Slurm's default
// backfill interval, so estimates rarely change faster), shared by every request and every
// user; a failed listing is not asked again before `refresh` either. What is kept of it is a
// digest of the pending jobs (a few dozen bytes each), not the records.
//
// The place: 1 + the pending jobs of the same partition that come first in Slurm's order of
// consideration — higher priority, then earlier submit, then lower job id — so "3 of 7" means
// two jobs are ahead of it; a job pending in several partitions counts in each. Backfill may
// still start a later job earlier, when it fits in a gap; the estimate says when.
// Thread-safety: SlurmQueue is safe from any thread; snapshots are immutable values.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "slurm/job_record.h"
#include "slurm/rest_error.h"

namespace tuneplane::api {

// One pending job's place, as the listing told it.
struct QueuePlace {
  std::string partition;         // the one ranked in (the first a multi-partition job names)
  int position = 0;              // 1-based, in `partition`
  int pending_in_partition = 0;  // pending jobs there, this one included
  int64_t estimated_start = 0;   // Unix seconds; 0: Slurm has no estimate
  std::string reason;            // Slurm's state_reason
  bool operator==(const QueuePlace&) const = default;
};

struct QueueSnapshot {
  int64_t as_of_ms = 0;  // wall clock when the listing was read
  std::vector<QueuePlace> places;
  std::unordered_map<std::string, std::size_t> by_sluid;  // upper-case SLUID → places[i]
  std::unordered_map<uint64_t, std::size_t> by_job_id;    // numeric id → places[i]

  // The place of the job with `sluid` (any case), or else numeric `job_id` (0: none).
  const QueuePlace* find(const std::string& sluid, uint64_t job_id) const;
};

// The digest of a listing's PENDING jobs, ranked per partition as above. Pure.
QueueSnapshot queueSnapshot(const std::vector<slurm::JobRecord>& jobs, int64_t as_of_ms);

struct SlurmQueueOptions {
  // How old a snapshot may be before a request asks for a new listing.
  std::chrono::milliseconds refresh{30'000};
  // A caller that needs a listing newer than the snapshot (a job submitted after it was
  // read) may have it read again this soon after the last one.
  std::chrono::milliseconds min_refresh{2'000};
  // How long a request with no snapshot at all waits for the listing another one is reading.
  std::chrono::milliseconds wait{5'000};
};

class SlurmQueue {
 public:
  using Fetch = std::function<slurm::SlurmResult<slurm::JobListing>()>;

  // REQUIRES: `clock` outlives the queue; `fetch` is safe to call from any thread.
  SlurmQueue(Fetch fetch, const Clock& clock, SlurmQueueOptions options = {});

  // The latest snapshot, read again first when it is older than `refresh`, or than
  // `newer_than_ms` (wall clock: a job submitted since) and `min_refresh` — by the first
  // caller to notice: the others use what there is, or wait up to `wait` when there is
  // nothing yet. nullptr while no listing has succeeded.
  std::shared_ptr<const QueueSnapshot> current(int64_t newer_than_ms = 0);

  // Listings asked for so far (each a GET /jobs/), for tests and the bench.
  int fetches() const;

 private:
  Fetch fetch_;
  const Clock& clock_;
  SlurmQueueOptions options_;
  mutable std::mutex mu_;
  std::condition_variable fetched_;
  std::shared_ptr<const QueueSnapshot> snapshot_;
  std::optional<int64_t> last_try_steady_ms_;  // when the last listing was asked for
  bool fetching_ = false;
  int fetches_ = 0;
};

}  // namespace tuneplane::api
