// LaunchRequest + script → the JSON body of POST /slurm/v0.0.45/job/submit: `job` for one
// component, `jobs[]` for a heterogeneous job (component order = pool order), the script at
// top level. Field names checked against openapi-v0.0.45.json. Pure.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "launch/launch_request.h"

namespace tuneplane::slurm {

// Each component carries: name, comment (the submit token), partition, constraints (when
// set), tres_per_node (GPU components only), cpus_per_task, tasks_per_node 1,
// minimum_nodes = maximum_nodes, memory_per_node (MiB, when > 0), temporary_disk_per_node
// (scratch MiB, when > 0), time_limit (minutes, when > 0), requeue false, current_working_directory
// (attempt_dir), environment (scheduler_environment + TUNEPLANE_JOB_ID + TUNEPLANE_ATTEMPT,
// then SLURM_UMASK=<job_umask> when set (per_user); its own copy per component),
// standard_output/standard_error (<logs_dir>/<pool>.out/.err), account/qos when set, and
// shared ["none"] (sbatch --exclusive) when needsWholeNodes(request).
// REQUIRES: checkRenderable(request) passed (script_checks.h).
nlohmann::json buildSubmitBody(const launch::LaunchRequest& request, const std::string& script);

// True for a Ray (GPU) job whose site pins Ray ports: two such jobs on one node would
// collide on them, so each asks Slurm for its nodes whole.
bool needsWholeNodes(const launch::LaunchRequest& request);

// "gres/gpu:N" or "gres/gpu:TYPE:N". REQUIRES: component.gpus_per_node > 0.
std::string tresPerNode(const launch::Component& component);

// The file Slurm writes a component's stdout (suffix ".out") or stderr (".err") to:
// <logs_dir>/<pool><suffix>, with '%' doubled so Slurm's filename patterns (%j, %x, …)
// leave the name as it is.
std::string schedulerLogPath(const std::string& logs_dir, const std::string& pool,
                             std::string_view suffix);

}  // namespace tuneplane::slurm
