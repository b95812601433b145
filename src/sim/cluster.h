// The simulated cluster: nodes (CPUs, memory, GPUs, features) and partitions, the users its
// hosts know (identity.h) and, optionally, its associations (accounting.h). The default is the
// shape of the project's real test cluster (gpu1 h100 ×2, gpu2 a100 ×2, cpu1; partitions gpu
// and cpu, cpu default; cluster "tp"; users tpuser, alice, bob; no accounting). `loadCluster` reads
// the same shape from YAML or JSON (format documented in docs/developers.md, "tuneplane-slurmsim").
// Plain values; pure except the file read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "sim/accounting.h"
#include "sim/identity.h"

namespace tuneplane::sim {

struct NodeConfig {
  std::string name;
  int cpus = 4;
  int64_t memory_mb = 4096;
  int gpus = 0;
  std::string gpu_type;               // "h100": gres gpu:h100:N
  std::vector<std::string> features;  // matched by `constraints`
};

struct PartitionConfig {
  std::string name;
  std::vector<std::string> nodes;
  bool is_default = false;
};

// The cluster's preemption settings as slurmctld reports them (GET /conf). The simulator
// preempts nothing by itself (a preemption is only ever a fault a test injects), so it reports
// none: PreemptType preempt/none, PreemptMode OFF (Slurm's enum names it "DISABLED").
struct PreemptionSettings {
  std::string type = "preempt/none";
  std::vector<std::string> mode = {"DISABLED"};
  std::vector<std::string> parameters;
};

struct ClusterConfig {
  std::string name = "tp";
  uint16_t cluster_id = 3168;       // the 12-bit id inside SLUIDs (the real "tp" has 3168)
  int64_t default_memory_mb = 100;  // DefMemPerNode of the test cluster
  std::vector<NodeConfig> nodes;
  std::vector<PartitionConfig> partitions;
  // Users known before the host's database is asked (lookupUnixUser).
  std::vector<UnixUser> users;
  // Associations enforced at submit; absent: none (a cluster without slurmdbd).
  std::optional<AccountingConfig> accounting;
  PreemptionSettings preemption;

  const NodeConfig* node(const std::string& name) const;
  const PartitionConfig* partition(const std::string& name) const;
  const PartitionConfig* defaultPartition() const;
};

ClusterConfig defaultCluster();
Result<ClusterConfig> parseCluster(const std::string& text);  // YAML or JSON
Result<ClusterConfig> loadCluster(const std::string& path);

// Slurm host lists: "gpu[1-2],cpu1" ⇄ {"gpu1","gpu2","cpu1"}.
std::vector<std::string> expandHostlist(const std::string& list);
std::string compressHostlist(const std::vector<std::string>& names);

}  // namespace tuneplane::sim
