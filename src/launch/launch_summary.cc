#include "launch/launch_summary.h"

#include <chrono>

namespace tuneplane::launch {
namespace {

using nlohmann::json;

json minutesOrNull(std::chrono::minutes limit) {
  return limit.count() > 0 ? json(limit.count()) : json(nullptr);
}

}  // namespace

nlohmann::json summaryJson(const LaunchRequest& request) {
  json components = json::array();
  for (const auto& c : request.components) {
    components.push_back({{"pool", c.pool_name},
                          {"partition", c.partition},
                          {"constraint", c.constraint ? json(*c.constraint) : json(nullptr)},
                          {"nodes", c.nodes},
                          {"gpus_per_node", c.gpus_per_node},
                          {"cpus_per_node", c.cpus_per_node},
                          {"memory_mb", c.memory_mb},
                          {"time_limit_minutes", minutesOrNull(c.time_limit)}});
  }
  // Every component gets the job's time limit; none when none is sent.
  const std::chrono::minutes limit =
      request.components.empty() ? std::chrono::minutes(0) : request.components[0].time_limit;
  return {{"valid", true},
          {"job_name", request.job_name},
          {"framework", request.framework},
          {"container_runtime", catalog::toString(request.container_runtime)},
          {"artifact", {{"path", request.artifact.path}, {"sha256", request.artifact.sha256}}},
          {"time_limit",
           {{"minutes", minutesOrNull(limit)}, {"source", toString(request.time_limit_source)}}},
          {"components", std::move(components)},
          {"scheduling",
           {{"account", request.account ? json(*request.account) : json(nullptr)},
            {"qos", request.qos ? json(*request.qos) : json(nullptr)}}}};
}

}  // namespace tuneplane::launch
