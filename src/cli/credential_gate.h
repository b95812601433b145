// The credential rule at serve's start (doctor/credential_checks.h): serve refuses to start
// while a credential file of the site is within the jobs' reach or readable by others —
// the same judgement `tuneplane doctor` reports as credential/<field> — unless the site sets
// slurm.accept_exposed_credentials, when each finding is logged as a warning instead.
#pragma once

#include <vector>

#include "api/server_config.h"
#include "doctor/doctor.h"
#include "pipeline/launch_pipeline.h"

namespace tuneplane::cli {

// The server: section's credential files: server.tls.key and server.db_password_file.
std::vector<doctor::SecretFile> serverSecrets(const api::ServerConfig& config);

// Every credential finding of the site as this host sees it (no slurmrestd is asked, so the
// "this host is a node" finding is doctor's alone). Errors: one per exposed file,
// "serve.exposed_credential" with its field, message and fix — none when the site accepts
// the exposure (then `warnings` holds them).
Errors credentialRefusals(const pipeline::SiteContext& site, const api::ServerConfig& config,
                          std::vector<std::string>& warnings);

}  // namespace tuneplane::cli
