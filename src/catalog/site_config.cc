#include "catalog/site_config.h"

#include <algorithm>

namespace tuneplane::catalog {

std::vector<std::pair<std::string, int>> RayConfig::pinnedPorts() const {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& [name, value] :
       {std::pair{"port", port}, std::pair{"node_manager_port", node_manager_port},
        std::pair{"object_manager_port", object_manager_port},
        std::pair{"min_worker_port", min_worker_port},
        std::pair{"max_worker_port", max_worker_port},
        std::pair{"ray_client_server_port", ray_client_server_port},
        std::pair{"dashboard_agent_listen_port", dashboard_agent_listen_port},
        std::pair{"dashboard_port", dashboard_port}}) {
    if (value) out.emplace_back(name, *value);
  }
  return out;
}

bool Partitions::accepts(const std::string& name) const {
  if (!allowed || name == gpu || name == cpu) return true;
  return std::find(allowed->begin(), allowed->end(), name) != allowed->end();
}

std::vector<std::string> Partitions::known() const {
  if (!allowed) return {};
  std::vector<std::string> names = {gpu};
  if (cpu != gpu) names.push_back(cpu);
  for (const std::string& name : *allowed) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

const GpuSeries* SiteConfig::findGpuSeries(const std::string& name) const {
  for (const GpuSeries& series : gpu_series) {
    if (series.name == name) return &series;
  }
  return nullptr;
}

const char* toString(IdentityMode mode) {
  switch (mode) {
    case IdentityMode::kShared:
      return "shared";
    case IdentityMode::kPerUser:
      return "per_user";
  }
  return "?";
}

const char* toString(ContainerRuntime runtime) {
  switch (runtime) {
    case ContainerRuntime::kPyxis:
      return "pyxis";
    case ContainerRuntime::kApptainer:
      return "apptainer";
  }
  return "?";
}

}  // namespace tuneplane::catalog
