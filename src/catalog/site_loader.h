// Loading the site's facts: the site file (YAML) and the runtime registry (YAML or JSON,
// from TUNEPLANE_RUNTIME_REGISTRY_FILE, else the site's runtime_registry_file). Structural
// problems are all reported, each with its field path and a stable code.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "catalog/runtime_registry.h"
#include "catalog/site_config.h"
#include "common/result.h"

namespace tuneplane::catalog {

Checked<SiteConfig> parseSiteConfig(std::string_view yaml_text);
Checked<SiteConfig> loadSiteConfigFile(const std::string& path);

Checked<RuntimeRegistry> parseRuntimeRegistry(std::string_view text);
Checked<RuntimeRegistry> loadRuntimeRegistryFile(const std::string& path);

// The registry file to use: `env_override` (TUNEPLANE_RUNTIME_REGISTRY_FILE) when set and
// non-empty, else the site's runtime_registry_file; an error when neither is given.
Result<std::string> registryPath(const SiteConfig& site,
                                 const std::optional<std::string>& env_override);

// Site file path: `flag` (--site) when given, else TUNEPLANE_SITE_FILE.
Result<std::string> siteFilePath(const std::optional<std::string>& flag,
                                 const std::optional<std::string>& env_value);

}  // namespace tuneplane::catalog
