// Doctor's judgements of the runtime registry and its artifacts, pure functions:
//   registry            the registry file was found and loaded (its errors otherwise); an
//                       empty registry → warn (no job can run)
//   artifact/<id>       the file exists, is a regular file, is readable, and its SHA-256 is
//                       the registry's (catalog::ArtifactVerifier streamed it, or its cache
//                       knew the unchanged file); a format the site's container runtime
//                       cannot start (sif on Pyxis, sqsh on Apptainer) → warn
#pragma once

#include <string>

#include "catalog/runtime_registry.h"
#include "catalog/site_config.h"
#include "common/result.h"
#include "doctor/check.h"
#include "doctor/facts.h"

namespace tuneplane::doctor {

// `registry_path` is empty when no registry is configured (then `registry` holds why).
CheckResult checkRegistry(const std::string& registry_path,
                          const Checked<catalog::RuntimeRegistry>& registry);
CheckResult checkArtifact(const ArtifactFacts& facts, catalog::ContainerRuntime runtime);

}  // namespace tuneplane::doctor
