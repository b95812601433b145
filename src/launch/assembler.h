// Assembly: a structurally valid spec + the site catalog → an explicit LaunchRequest.
// This is where the backend's rules are enforced, fail-closed (see the rule list in
// docs/users.md, "Launch rules"): refused kinds and volumes, OCI images, GPU series without a
// constraint, CPU-only custom job rules, runtime id/format/framework checks, and which time limit
// applies. Every violation is reported, each with its field path and stable code; judgeSpec does
// the same for a spec that did not fully parse. Pure: no I/O (prepareLaunch reads the artifact).
#pragma once

#include <string>

#include "catalog/runtime_registry.h"
#include "catalog/site_config.h"
#include "common/result.h"
#include "launch/launch_request.h"
#include "spec/job_spec.h"
#include "spec/partial_spec.h"

namespace tuneplane::catalog {
class ArtifactVerifier;
}

namespace tuneplane::launch {

// Every problem of a spec as far as it parsed, in a stable order: its structural errors
// (spec.*, as the parser found them, in document order), then every backend rule (launch.*)
// whose inputs were read cleanly, in rule order: the refusals (kind, volumes, image), the
// runtime, the time limit, then the pools (job-wide rules, then each pool in order).
// A rule with an input that is missing or has a structural error is skipped, so one
// problem gives one error. Empty: the spec is complete and passes every rule; only the
// attempt directory and the artifact are left, to assembleLaunch and prepareLaunch.
Errors judgeSpec(const spec::PartialSpec& spec, const catalog::SiteConfig& site,
                 const catalog::RuntimeRegistry& registry);

// `attempt_dir`: the attempt's directory on the shared filesystem; `checkpoint_dir`: the
// job's checkpoint directory beside its attempts (staging::checkpointDir), mounted writable and
// named by TUNEPLANE_CHECKPOINT_DIR, or empty for none. Both are checked as mount paths
// (launch.invalid_attempt_dir, launch.invalid_checkpoint_dir). A llamafactory job gets
// TunePlane's command, config file and environment (framework_launch.h).
Checked<LaunchRequest> assembleLaunch(const spec::JobSpec& spec, const catalog::SiteConfig& site,
                                      const catalog::RuntimeRegistry& registry,
                                      const AttemptIdentity& identity,
                                      const std::string& attempt_dir,
                                      const std::string& checkpoint_dir);

// assembleLaunch, then the artifact check (file exists, SHA-256 matches the registry) —
// nothing may be rendered for submission before both pass.
Checked<LaunchRequest> prepareLaunch(const spec::JobSpec& spec, const catalog::SiteConfig& site,
                                     const catalog::RuntimeRegistry& registry,
                                     const AttemptIdentity& identity,
                                     const std::string& attempt_dir,
                                     const std::string& checkpoint_dir,
                                     catalog::ArtifactVerifier& verifier);

}  // namespace tuneplane::launch
