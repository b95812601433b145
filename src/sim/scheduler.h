// Node selection for the simulator's FIFO scheduler: which nodes of a partition can take
// one component now, given what running jobs already hold. Pure: no clock, no I/O.
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

}  // namespace tuneplane::sim
