// Doctor's judgements of the site file against the cluster slurmrestd describes
// (GET /partitions/ and /nodes/), pure functions:
//   partition/<name>   each partition the site names exists (state UP, with nodes → ok;
//                      another state or no nodes → warn; missing → fail, or warn for a
//                      GPU partition of a site that defines no GPU series)
//   gpu_series/<name>  the series' slurm_constraint (constraint.h) names features some node
//                      has and is satisfied by at least one node of the partitions that take
//                      the series; those nodes carry GRES gpu:<gres_type> with at least
//                      gpus_per_node GPUs. No constraint → warn (legal, but the series cannot
//                      run: launch refuses its pools). Matching nodes only in another
//                      partition, or all unavailable (DOWN, DRAIN, …) → warn.
#pragma once

#include <string>
#include <vector>

#include "catalog/site_config.h"
#include "doctor/check.h"
#include "doctor/facts.h"

namespace tuneplane::doctor {

// A partition the site names, and which settings name it ("partitions.gpu", …).
struct ConfiguredPartition {
  std::string name;
  std::vector<std::string> named_by;
};

// Every partition the site names, in the order first named, each once.
std::vector<ConfiguredPartition> configuredPartitions(const catalog::SiteConfig& site);

// The partitions a pool of `series` lands in unless the spec names another one.
std::vector<std::string> partitionsForSeries(const catalog::SiteConfig& site,
                                             const catalog::GpuSeries& series);

// What a TunePlane job preempted in `partition` gets, by the partition's PreemptMode and
// GraceTime as slurmrestd reports them and the site's slurm.preemption_warning: a warning of
// N s, or none, or "not known" where the record lacks them. slurmctld (preempt.c) gives a job
// selected for preemption GraceTime s, sending it the job's warning signal at once where
// PreemptParameters has send_user_signal, else SIGTERM; /partitions/ carries neither
// PreemptType nor PreemptParameters, so the sentence names both outcomes. The partition
// check's message ends with it (docs/operators.md, "Checking a site").
std::string preemptionOutcome(const catalog::PreemptionWarning& warning,
                              const slurm::PartitionInfo& partition);

std::vector<CheckResult> checkPartitions(const catalog::SiteConfig& site, const SlurmFacts& facts);
std::vector<CheckResult> checkGpuSeries(const catalog::SiteConfig& site, const SlurmFacts& facts);

}  // namespace tuneplane::doctor
