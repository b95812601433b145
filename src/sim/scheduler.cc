#include "sim/scheduler.h"

#include <algorithm>

#include "sim/submit_request.h"

namespace tuneplane::sim {

Allocation perNodeNeed(const JobRequest& r, const ClusterConfig& cluster) {
  Allocation a;
  const int tasks_per_node =
      std::max(1, r.tasks_per_node > 0 ? r.tasks_per_node : (r.tasks + r.nodes - 1) / r.nodes);
  a.cpus_per_node = r.cpus_per_task * tasks_per_node;
  a.memory_per_node_mb = r.memory_per_node_mb.value_or(
      r.memory_per_cpu_mb ? *r.memory_per_cpu_mb * a.cpus_per_node : cluster.default_memory_mb);
  a.gpus_per_node = r.gpus_per_node;
  return a;
}

std::optional<Allocation> allocate(const JobRequest& r, const ClusterConfig& cluster,
                                   const ClusterUsage& usage) {
  Allocation a = perNodeNeed(r, cluster);
  const PartitionConfig* part = cluster.partition(r.partition);
  if (!part) return std::nullopt;
  for (const auto& name : part->nodes) {
    const NodeConfig* n = cluster.node(name);
    if (!n || !featuresMatch(r.constraints, n->features)) continue;
    if (std::find(r.excluded_nodes.begin(), r.excluded_nodes.end(), name) !=
        r.excluded_nodes.end()) {
      continue;  // the job asked Slurm to keep it off this node
    }
    if (a.gpus_per_node > 0 && !r.gpu_type.empty() && r.gpu_type != n->gpu_type) continue;
    NodeUsage used;
    if (const auto it = usage.find(name); it != usage.end()) used = it->second;
    if (used.cpus + a.cpus_per_node > n->cpus) continue;
    if (used.memory_mb + a.memory_per_node_mb > n->memory_mb) continue;
    if (used.gpus + a.gpus_per_node > n->gpus) continue;
    a.nodes.push_back(name);
    if (static_cast<int>(a.nodes.size()) == r.nodes) return a;
  }
  return std::nullopt;
}

void addUsage(ClusterUsage& usage, const Allocation& a) {
  for (const auto& name : a.nodes) {
    NodeUsage& u = usage[name];
    u.cpus += a.cpus_per_node;
    u.memory_mb += a.memory_per_node_mb;
    u.gpus += a.gpus_per_node;
  }
}

StartEstimate estimateStart(const std::vector<const JobRequest*>& components,
                            const ClusterConfig& cluster, std::vector<HeldAllocation> held,
                            int64_t now) {
  for (auto& h : held) {
    if (h.end_time != 0 && h.end_time <= now) h.end_time = now + 1;
  }
  // Those without an end first (never released), then the latest end first, so that
  // releasing from the back releases the soonest end first.
  std::sort(held.begin(), held.end(), [](const HeldAllocation& a, const HeldAllocation& b) {
    if ((a.end_time == 0) != (b.end_time == 0)) return a.end_time == 0;
    return a.end_time > b.end_time;
  });
  // The components' allocations while held[0, kept) still hold their share, if they fit.
  const auto fitWith = [&](std::size_t kept) -> std::optional<std::vector<Allocation>> {
    ClusterUsage usage;
    for (std::size_t i = 0; i < kept; ++i) addUsage(usage, held[i].allocation);
    std::vector<Allocation> out;
    for (const JobRequest* c : components) {
      auto a = allocate(*c, cluster, usage);
      if (!a) return std::nullopt;
      addUsage(usage, *a);
      out.push_back(std::move(*a));
    }
    return out;
  };
  for (std::size_t kept = held.size(); kept > 0; --kept) {
    const HeldAllocation& released = held[kept - 1];
    if (released.end_time == 0) return {};  // what is left never ends
    if (auto allocations = fitWith(kept - 1)) return {released.end_time, std::move(*allocations)};
  }
  return {};
}

}  // namespace tuneplane::sim
