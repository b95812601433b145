// Rendering a simulated Job as slurmrestd does in a REST API version (sim_api.h): the full
// record of GET /job/{id} and /jobs/ (a copy of that version's real record's shape with this
// job's values), the light entry of /jobs/state/, and output-path patterns. Pure functions
// over plain values.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/cluster.h"
#include "sim/job.h"
#include "sim/sim_api.h"

namespace tuneplane::sim {

nlohmann::json jobRecord(const Job& job, const ClusterConfig& cluster, const SimApi& api);
nlohmann::json jobStateEntry(const Job& job);  // {"job_id": "<id>[+<offset>]", "state": [...]}
nlohmann::json jobStateArray(const Job& job);  // ["COMPLETED", "COMPLETING"]

// Expands %j %x %S %u %N %% (and %A %a %r as Slurm's defaults) in an output pattern; a
// relative result is taken from `cwd`. Empty pattern → "slurm-%j.out".
std::string expandOutputPattern(const std::string& pattern, const Job& job,
                                const std::string& first_node);

// {"set": true, "infinite": false, "number": n}
nlohmann::json noVal(int64_t number, bool set = true);

}  // namespace tuneplane::sim
