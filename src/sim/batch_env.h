// The environment a simulated batch step gets: the submitted `environment`, then the
// SLURM_* variables a real REST-submitted batch step has (and not those only the sbatch
// client exports, such as SLURM_CPUS_PER_TASK), with the stand-ins' bin directory first on
// PATH. Pure: built from the job records alone.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster.h"
#include "sim/job.h"

namespace tuneplane::sim {

// `components`: the job, or every component of a het job in offset order (leader first).
// `job_dir`: the job's private directory in the state dir (srun's step counter lives there).
// `with_sluid`: SLURM_JOB_SLUID is set (Slurm 26.05; 25.11 leaves it out).
std::vector<std::string> batchEnvironment(const std::vector<const Job*>& components,
                                          const std::string& cluster_name,
                                          const std::string& bin_dir, const std::string& job_dir,
                                          bool with_sluid = true);

// SLURM_UMASK of a submitted environment (octal, as Slurm reads it: "0077", "22"); nullopt
// when absent or not an octal mode.
std::optional<mode_t> submittedUmask(const std::vector<std::string>& environment);

}  // namespace tuneplane::sim
