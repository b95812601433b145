// Node selection for the simulator's FIFO scheduler: which nodes of a partition can take
// one component now, given what running jobs already hold; and when a job that cannot
// start now could, as Slurm's backfill scheduler estimates it. Pure: no clock, no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/job.h"

namespace tuneplane::sim {

struct NodeUsage {
  int cpus = 0;
  int64_t memory_mb = 0;
  int gpus = 0;
};
using ClusterUsage = std::map<std::string, NodeUsage>;

struct Allocation {
  std::vector<std::string> nodes;
  int cpus_per_node = 0;
  int64_t memory_per_node_mb = 0;
  int gpus_per_node = 0;
};

// What one node's share of `request` needs.
Allocation perNodeNeed(const JobRequest& request, const ClusterConfig& cluster);
// The first `request.nodes` nodes of its partition (in configuration order) that match its
// constraints and GPU type and have room; nullopt when they are not free now.
std::optional<Allocation> allocate(const JobRequest& request, const ClusterConfig& cluster,
                                   const ClusterUsage& usage);
void addUsage(ClusterUsage& usage, const Allocation& allocation);

// What a job holds, and until when it may (its end_time: start + time limit, Unix seconds;
// 0 when it has no time limit, so nothing can count on its release).
struct HeldAllocation {
  Allocation allocation;
  int64_t end_time = 0;
};

// Slurm's backfill estimate of when `components` (a job, or a het job's components) could
// all start: the earliest end of a held allocation after which, every held allocation
// assumed to run to its end, they fit — as slurmctld sets a pending job's start_time —
// and the nodes they would get then. An allocation due to end by `now` (its epilog runs)
// counts as released at now + 1. start 0 when they fit only once a job without an end
// releases its share: Slurm has no estimate then.
struct StartEstimate {
  int64_t start = 0;
  std::vector<Allocation> allocations;  // one per component, when start > 0
};
StartEstimate estimateStart(const std::vector<const JobRequest*>& components,
                            const ClusterConfig& cluster, std::vector<HeldAllocation> held,
                            int64_t now);

}  // namespace tuneplane::sim
