// Retries that learn (issue 38): an attempt after one that failed on a node asks Slurm to keep
// that node out (each component's excluded_nodes) — but never so many that a pool can no
// longer fit: a component whose partition has too few other nodes with its constraint runs
// without the exclusion, and the note says so. Pure: the nodes to avoid (node → why, from the
// earlier attempts: control/decisions.h, nodesToAvoid) and Slurm's node list are given.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launch/launch_request.h"
#include "slurm/job_record.h"

namespace tuneplane::pipeline {

// Sets each component's excluded_nodes to the avoided nodes it could be given (its partition
// and constraint), when at least `nodes` others could; returns one line per decision, for the
// attempt's event. `inventory` nullopt (Slurm's node list could not be read): nothing is
// excluded, and a note says why.
std::vector<std::string> applyExclusions(
    launch::LaunchRequest& request, const std::map<std::string, std::string>& avoid,
    const std::optional<std::vector<slurm::NodeInfo>>& inventory);

}  // namespace tuneplane::pipeline
