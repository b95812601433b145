// The credential rule at serve's start (doctor/credential_checks.h): serve refuses to start
// while a credential file of the site is within the jobs' reach or readable by others —
// the same judgement `tuneplane doctor` reports as credential/<field> (doctor::credentialChecks,
// one set of rules for both) — unless the site sets slurm.accept_exposed_credentials, when
// each finding is logged as a warning instead. Checked again at every reload.
#pragma once

#include <string>
#include <vector>

#include "api/server_config.h"
#include "doctor/doctor.h"
#include "pipeline/launch_pipeline.h"

namespace tuneplane::cli {

// The server: section's credential files: server.tls.key and server.db_password_file.
std::vector<doctor::SecretFile> serverSecrets(const api::ServerConfig& config);

// The cluster's node names as slurmrestd lists them (GET /nodes, one retry), which tell
// whether this host is a compute node: what doctor asks, asked the same way. Errors: the
// client's ("slurm.*"), or the token source's when it cannot be built.
Result<std::vector<std::string>> clusterNodeNames(const catalog::SiteConfig& site);

// Every credential finding of the site as this host sees it, this host judged a node when
// its name is one of `nodes` (clusterNodeNames; empty when slurmrestd could not be asked).
// Errors: one per exposed file, "serve.exposed_credential" with its field, message and fix —
// none when the site accepts the exposure (then `warnings` holds them).
Errors credentialRefusals(const pipeline::SiteContext& site, const api::ServerConfig& config,
                          const std::vector<std::string>& nodes,
                          std::vector<std::string>& warnings);

}  // namespace tuneplane::cli
