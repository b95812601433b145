// Assembly: a structurally valid spec + the site catalog → an explicit LaunchRequest.
// This is where the backend's rules are enforced, fail-closed (see the rule list in the
// README): refused kinds and volumes, OCI images, GPU series without a constraint, CPU-only
// custom job rules, runtime id/format/framework checks. Every violation is reported, each
// with its field path and stable code. Pure: no I/O.
#pragma once

#include <string>

#include "catalog/runtime_registry.h"
#include "catalog/site_config.h"
#include "common/result.h"
#include "launch/launch_request.h"
#include "spec/job_spec.h"

namespace tuneplane::catalog {
class ArtifactVerifier;
}

namespace tuneplane::launch {

// REQUIRES: attempt_dir is absolute (the attempt's directory on the shared filesystem).
Checked<LaunchRequest> assembleLaunch(const spec::JobSpec& spec, const catalog::SiteConfig& site,
                                      const catalog::RuntimeRegistry& registry,
                                      const AttemptIdentity& identity,
                                      const std::string& attempt_dir);

// assembleLaunch, then the artifact check (file exists, SHA-256 matches the registry) —
// nothing may be rendered for submission before both pass.
Checked<LaunchRequest> prepareLaunch(const spec::JobSpec& spec, const catalog::SiteConfig& site,
                                     const catalog::RuntimeRegistry& registry,
                                     const AttemptIdentity& identity,
                                     const std::string& attempt_dir,
                                     catalog::ArtifactVerifier& verifier);

}  // namespace tuneplane::launch
