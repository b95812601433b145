// `tuneplane doctor`'s gathering layer: asks slurmrestd (through the SlurmClient interface),
// the token source, the host (HostProbe) and the artifact verifier what doctor needs, then
// hands the facts to the pure judgement functions and returns every check in a fixed order:
//
//   slurmrestd → slurmctld → api_version → token → credential/* → partition/*
//   → gpu_series/* → staging/root → staging/user → staging/user/<name> (per_user, one per
//   mapped user) → staging/filesystem → registry
//   → artifact/* → database → database/lease (PostgreSQL)
//
// It submits nothing and changes nothing but one probe file it creates and removes in the
// staging root; the database is only read (no migration, no lease taken). Whether the job user can
// write the attempts is staging's rule (staging::decideJobAccess), asked here exactly as a submit
// asks it. A check that depends on a failed one is reported as skipped, never left out, so the list
// (and the JSON document) always names every check for the site. Thread-safety: one runDoctor call
// at a time per DoctorEnv.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "catalog/artifact_verifier.h"
#include "catalog/runtime_registry.h"
#include "catalog/site_config.h"
#include "common/clock.h"
#include "common/result.h"
#include "doctor/check.h"
#include "doctor/facts.h"
#include "doctor/host_probe.h"
#include "doctor/identity_checks.h"
#include "slurm/slurm_client.h"
#include "slurm/token_provider.h"
#include "staging/os_users.h"
#include "staging/staging_fs.h"

namespace tuneplane::doctor {

// What is checked: the site and its registry as loaded (a registry that failed to load is
// itself a finding, not a reason to stop).
// The job store's database doctor looks at: server.db (or --db) with its password file.
struct DatabaseTarget {
  std::string db;                            // a SQLite path or a postgresql:// URI
  std::optional<std::string> password_file;  // server.db_password_file
  std::optional<Error> config_error;         // the server: section could not be read
};

// A credential file of the site: the slurm section's (jwt_key_file, token_file, client_key,
// found by credentialFiles) and those of the server: section, which the caller adds
// (server.tls.key, server.db_password_file).
struct SecretFile {
  std::string field;
  std::string path;
  CredentialKind kind = CredentialKind::kSecret;
};

struct DoctorInput {
  catalog::SiteConfig site;
  std::string registry_path;                   // empty when none is configured
  Checked<catalog::RuntimeRegistry> registry;  // the registry, or why it could not be loaded
  // Set when the site runs serve (it has a server: section) or --db names a database; the
  // database checks are left out otherwise.
  std::optional<DatabaseTarget> database;
  std::vector<SecretFile> server_secrets;  // server.tls.key, server.db_password_file
  // slurm.identity per_user: the Unix users the site's tokens map to (ApiToken::runAs()),
  // each checked as staging/user/<name>; ignored in shared mode.
  std::vector<std::string> mapped_users = {};
};

// The way to slurmrestd. `tokens` is the client's own token source, so the token doctor
// decodes is the one the client sends. Either is null when it could not be built, and then
// its error says why (an unreadable jwt_key_file; a client the URL or TLS files break).
struct SlurmAccess {
  slurm::SlurmClient* client = nullptr;
  slurm::TokenProvider* tokens = nullptr;
  std::optional<Error> token_error;   // set when tokens is null
  std::optional<Error> client_error;  // set when client is null for another reason
  // The client's REST API version, negotiated if it must be (SlurmRestClient::negotiate);
  // empty: not asked (the version is then judged from the ping alone).
  std::function<slurm::SlurmResult<slurm::ApiChoice>()> negotiate;
  // GET of another route with the client's auth (SlurmRestClient::readPath), for slurmdbd's
  // users and associations; empty: not asked.
  std::function<slurm::SlurmResult<std::string>(const std::string& path)> read_path;
  // How the client acts as another user (slurm.identity per_user); nullopt: no credential.
  std::optional<slurm::IdentityMechanism> mechanism;
};

// Told while a large artifact is hashed: the runtime id, bytes done and the file's size.
using ArtifactProgress =
    std::function<void(const std::string& runtime_id, uint64_t done, uint64_t total)>;

struct DoctorEnv {
  SlurmAccess slurm;
  HostProbe& host;
  staging::OsUsers& users;  // who this process and slurm.user are (staging's seam)
  staging::StagingFs& fs;   // the way down to the staging root, as the job user would walk it
  catalog::ArtifactVerifier& verifier;
  const Clock& clock;
  ArtifactProgress progress;  // optional
};

std::vector<CheckResult> runDoctor(const DoctorInput& input, DoctorEnv& env);

// The gathering steps, exposed for tests with fakes.
SlurmFacts gatherSlurmFacts(const catalog::SiteConfig& site, const SlurmAccess& access);
TokenFacts gatherTokenFacts(const catalog::SiteConfig& site, const SlurmAccess& access,
                            const Clock& clock);
// Slurm as `user` (identity_checks.h): a request as the user, then slurmdbd's record of it.
UserIdentityFacts gatherUserIdentityFacts(const SlurmAccess& access, const std::string& user);
// `mapped_users`: DoctorInput's; per_user, each is asked staging::decideUserAccess.
StagingFacts gatherStagingFacts(const catalog::SiteConfig& site, HostProbe& host,
                                staging::OsUsers& users, staging::StagingFs& fs,
                                const std::vector<std::string>& mapped_users = {});
// Opens the database read-only (store/store_probe.h) and reads its version and lease row.
DatabaseFacts gatherDatabaseFacts(const DatabaseTarget& target);
ArtifactFacts gatherArtifactFacts(const catalog::Runtime& runtime,
                                  catalog::ArtifactVerifier& verifier,
                                  const ArtifactProgress& progress);

// Every credential file of the site: the slurm section's, then `server_secrets`.
std::vector<SecretFile> credentialFiles(const catalog::SiteConfig& site,
                                        const std::vector<SecretFile>& server_secrets);
// The user serve runs as: slurm.user (resolved here) unless the site names staging.group,
// when it is this process's user (doctor is then run as the service account).
staging::OsUser serveUser(const catalog::SiteConfig& site, staging::OsUsers& users);
// Where `file` is and who can read it, against what the jobs reach (credential_checks.h).
// `nodes`: the cluster's node names when known, to tell whether this host is one.
CredentialFacts gatherCredentialFacts(const catalog::SiteConfig& site, const SecretFile& file,
                                      HostProbe& host, staging::OsUsers& users,
                                      const std::vector<std::string>& nodes);
// One check per credential file of the site (credentialFiles), judged by checkCredential:
// the one verdict that both `tuneplane doctor` reports and `serve` enforces at start and at
// every reload (cli/credential_gate.h), so the two cannot disagree. `nodes` as above.
std::vector<CheckResult> credentialChecks(const catalog::SiteConfig& site,
                                          const std::vector<SecretFile>& server_secrets,
                                          HostProbe& host, staging::OsUsers& users,
                                          const std::vector<std::string>& nodes);

// The shared group the site names for attempt output (`staging.group`, issue 11), if any;
// staging/user names it (the rule itself is staging::decideJobAccess's).
std::optional<std::string> stagingGroupOf(const catalog::SiteConfig& site);

}  // namespace tuneplane::doctor
