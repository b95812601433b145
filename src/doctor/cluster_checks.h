// Doctor's judgements of the site file against the cluster slurmrestd describes
// (GET /partitions/, /nodes/ and /conf), pure functions:
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

#include <optional>
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

// What a TunePlane job preempted in `partition` gets: not preempted (PreemptType
// preempt/none, or PreemptMode OFF — the partition's own, else the cluster's), suspended
// without warning (SUSPEND), or the site's warning signal and GraceTime s to save where
// PreemptParameters has send_user_signal, else TERM and GraceTime s, none with GraceTime 0
// (slurmctld's preempt.c); TERM when slurm.preemption_warning is off. GraceTime is the
// partition's, or under preempt/qos the job's QOS's, which doctor does not read and says so.
// `conf` is the cluster's settings (GET /conf); without them (v0.0.44, an error) the sentence
// names both outcomes and says why. The partition check's message ends with it
// (docs/operators.md, "Checking a site").
std::string preemptionOutcome(
    const catalog::PreemptionWarning& warning, const slurm::PartitionInfo& partition,
    const std::optional<slurm::SlurmResult<slurm::ControllerConfig>>& conf);

std::vector<CheckResult> checkPartitions(const catalog::SiteConfig& site, const SlurmFacts& facts);
std::vector<CheckResult> checkGpuSeries(const catalog::SiteConfig& site, const SlurmFacts& facts);

}  // namespace tuneplane::doctor
