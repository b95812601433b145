// The process environment the launch pipeline's site loading consults
// (TUNEPLANE_SITE_FILE, TUNEPLANE_RUNTIME_REGISTRY_FILE), read once by the command that
// loads a site; the pipeline itself reads no process state.
#pragma once

#include "pipeline/launch_pipeline.h"

namespace tuneplane::cli {

pipeline::SiteEnvironment siteEnvironmentFromProcess();  // reads getenv

}  // namespace tuneplane::cli
