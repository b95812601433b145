// Why a job waits in Slurm's queue, and until when: the `waiting` member of a job in the
// API (GET /v1/jobs/{id}, and each item of GET /v1/jobs) while its current attempt is
// Queued — per component, Slurm's reason as its code and in words (slurm/pending_reasons.h),
// Slurm's own estimate of its start, and its place among its partition's pending jobs
// (slurm_queue.h). From the queue snapshot when it lists the job; else from what the control
// loop last stored of the job's record (the reason, and start_time as Slurm gave it while
// pending) with no place, and `as_of` null to say so. null when the job does not wait in
// Slurm's queue. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/json_text.h"
#include "api/slurm_queue.h"
#include "store/job_store.h"

namespace tuneplane::api {

struct ComponentWaiting {
  std::string pool;    // "" in a list item (its summary has no components): the het leader's
  std::string reason;  // Slurm's state_reason
  std::optional<std::string> partition;  // known from the queue snapshot only
  int64_t estimated_start_ms = 0;        // Slurm's estimate; 0: none
  std::optional<int> position;           // 1-based, in `partition`
  std::optional<int> pending_in_partition;
  bool operator==(const ComponentWaiting&) const = default;
};

struct JobWaiting {
  int attempt = 0;
  int64_t as_of_ms = 0;  // when Slurm's queue was read; 0: only what the control loop stored
  std::vector<ComponentWaiting> components;
  bool operator==(const JobWaiting&) const = default;
};

// Whether the attempt waits in Slurm's queue (it is Queued): when the API asks the queue.
bool waitsInQueue(const store::AttemptRecord& attempt);

// For a job with its attempts: its last attempt's pending components. `snapshot` may be null.
std::optional<JobWaiting> jobWaiting(const store::JobView& view, const QueueSnapshot* snapshot);
// For a list item, whose last attempt comes without components: the het leader's (or the
// single job's) place, by the attempt's numeric Slurm job id.
std::optional<JobWaiting> summaryWaiting(const store::AttemptRecord& last,
                                         const QueueSnapshot* snapshot);

// The `waiting` member (null for nullopt); jobJsonText writes the same with writeWaiting.
nlohmann::json waitingJson(const std::optional<JobWaiting>& waiting);
void writeWaiting(JsonText& out, const std::optional<JobWaiting>& waiting);

}  // namespace tuneplane::api
