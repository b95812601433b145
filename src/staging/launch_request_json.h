// launch.json: a faithful JSON form of launch::LaunchRequest, so a staged attempt records
// exactly what was launched, and a later reader (retry, describe) can load it back.
// Enums are written as their names ("pyxis", "sqsh"); environment pairs keep their order.
#pragma once

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "launch/launch_request.h"

namespace tuneplane::staging {

// 2: the Ray ports became optional (null = chosen free at run time); dashboard,
// ray_client_server_port and dashboard_agent_listen_port were added.
// 3: inputs, checkpoint_dir, container_checkpoint_dir, resume_record and
// ray_min_cpus_per_gpu were added (issue 38: LlamaFactory, checkpoints that retries resume).
inline constexpr int kLaunchJsonVersion = 3;

nlohmann::json launchRequestToJson(const launch::LaunchRequest& request);

// Errors: "staging.bad_launch_json" with the offending field in `field`.
Result<launch::LaunchRequest> launchRequestFromJson(const nlohmann::json& json);

}  // namespace tuneplane::staging
