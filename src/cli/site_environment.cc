#include "cli/site_environment.h"

#include <cstdlib>
#include <optional>
#include <string>

namespace tuneplane::cli {
namespace {

std::optional<std::string> envValue(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace

pipeline::SiteEnvironment siteEnvironmentFromProcess() {
  return {envValue(pipeline::kSiteFileEnv), envValue(pipeline::kRegistryFileEnv)};
}

}  // namespace tuneplane::cli
