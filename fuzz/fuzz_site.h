// The site the spec and renderer targets judge specs against: the examples' Pyxis site and
// an Apptainer twin (the same partitions, GPU series and mounts; pinned Ray ports), and the
// examples' runtime registry with a custom runtime in each format. Parsed once, from text
// kept here, so a target reads no file.
#pragma once

#include <string>

#include "catalog/runtime_registry.h"
#include "catalog/site_config.h"
#include "launch/launch_request.h"

namespace tuneplane::fuzz {

struct FuzzSite {
  catalog::SiteConfig pyxis;
  catalog::SiteConfig apptainer;
  catalog::RuntimeRegistry registry;
};

// Aborts (a broken fixture, not a finding) if the texts do not load.
const FuzzSite& fuzzSite();

// Attempt 1 of a job named `name` (a valid metadata.name), with fixed "random" bytes, made by
// launch::newAttemptIdentity as the control loop makes it.
launch::AttemptIdentity fixedIdentity(const std::string& name);

// The attempt directory the pipeline would stage it in on `site`.
std::string attemptDir(const catalog::SiteConfig& site, const launch::AttemptIdentity& identity);
// The job's checkpoint directory the pipeline would give it on `site`.
std::string checkpointDir(const catalog::SiteConfig& site, const launch::AttemptIdentity& identity);

}  // namespace tuneplane::fuzz
