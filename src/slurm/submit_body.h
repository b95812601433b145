// LaunchRequest + script → the JSON body of POST /slurm/v0.0.45/job/submit: `job` for one
// component, `jobs[]` for a heterogeneous job (component order = pool order), the script at
// top level. Field names checked against openapi-v0.0.45.json. Pure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "launch/launch_request.h"

namespace tuneplane::slurm {

nlohmann::json buildSubmitBody(const launch::LaunchRequest& request, const std::string& script);

}  // namespace tuneplane::slurm
