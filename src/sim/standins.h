// Stand-ins for the compute-node commands a TunePlane batch script calls — srun (with
// Pyxis' --container-* options), scontrol show hostnames, apptainer exec — as small bash
// scripts. They are SIMULATOR stand-ins: each runs the step locally and says so in its
// header and --help. Written into the simulator's state dir at start and put first on
// each job's PATH, so an installed simulator needs no files beside its binary.
#pragma once

#include <string>

#include "common/result.h"

namespace tuneplane::sim {

// Writes srun, scontrol and apptainer (mode 0755) into `bin_dir`, creating it.
Status writeStandins(const std::string& bin_dir);

// The file the srun stand-in leaves in the job's simulator directory when a signal ended a
// step of a het job's first component: Slurm cancels the whole het job then.
inline constexpr const char* kHetCancelMark = "het_job_cancelled_by_step";

// The scripts' text, for tests and for docs.
std::string srunStandin();
std::string scontrolStandin();
std::string apptainerStandin();

}  // namespace tuneplane::sim
