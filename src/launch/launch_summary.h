// The summary of a valid job, as JSON: what `tuneplane validate -o json` prints and what
// POST /v1/validate answers (each adds its own fields: the CLI the job access it checked on
// this host, the API its warnings). One rendering for both, so they cannot disagree: the
// time limit is the job's (every component gets the same one) in minutes, null when none is
// sent (the partition's default applies), with where it came from. Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "launch/launch_request.h"

namespace tuneplane::launch {

// {"valid": true, "job_name", "framework", "container_runtime", "artifact": {path, sha256},
//  "time_limit": {"minutes": N|null, "source"}, "components": [{pool, partition, constraint,
//  nodes, gpus_per_node, cpus_per_node, memory_mb, time_limit_minutes}]}
nlohmann::json summaryJson(const LaunchRequest& request);

}  // namespace tuneplane::launch
