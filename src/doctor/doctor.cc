#include "doctor/doctor.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "catalog/error_codes.h"
#include "doctor/artifact_checks.h"
#include "doctor/cluster_checks.h"
#include "doctor/credential_checks.h"
#include "doctor/database_checks.h"
#include "doctor/slurm_checks.h"
#include "doctor/staging_checks.h"
#include "store/open_store.h"
#include "store/postgres_job_store.h"

namespace tuneplane::doctor {

std::optional<std::string> stagingGroupOf(const catalog::SiteConfig& site) {
  return site.staging.group;
}

SlurmFacts gatherSlurmFacts(const catalog::SiteConfig& site, const SlurmAccess& access) {
  SlurmFacts facts;
  facts.url = site.slurm.url;
  facts.api_version = site.slurm.api_version;
  if (access.client == nullptr) {
    if (access.tokens == nullptr && access.token_error) {
      facts.no_token = true;
    } else {
      facts.client_error = access.client_error.value_or(
          Error{"doctor.no_client", "slurm.url", "no slurmrestd client could be built"});
    }
    return facts;
  }
  if (access.negotiate) facts.api = access.negotiate();
  facts.ping = access.client->ping();
  // Only a successful ping says the token works and the route exists: asking more of a
  // server that refused it would only repeat the refusal (and its retries).
  if (*facts.ping) {
    facts.partitions = access.client->listPartitions();
    facts.nodes = access.client->listNodes();
    facts.conf = access.client->controllerConfig();
  }
  return facts;
}

TokenFacts gatherTokenFacts(const catalog::SiteConfig& site, const SlurmAccess& access,
                            const Clock& clock) {
  TokenFacts facts;
  const bool from_file = site.slurm.token_file && !site.slurm.token_file->empty();
  facts.source = from_file ? TokenSource::kTokenFile : TokenSource::kJwtKey;
  facts.path = from_file ? *site.slurm.token_file : site.slurm.jwt_key_file.value_or("");
  facts.site_user = site.slurm.user;
  facts.lifespan = site.slurm.token_lifespan;
  facts.now_unix = clock.nowMs() / 1000;
  if (access.tokens == nullptr) {
    facts.unavailable = access.token_error.value_or(
        Error{"doctor.no_token", "slurm", "no token source could be set up"});
    return facts;
  }
  auto token = access.tokens->token();
  if (!token) {
    facts.unavailable = token.error();
    return facts;
  }
  // Decoded for reporting only; the token itself goes no further than this function.
  if (auto claims = slurm::unverifiedClaims(*token)) {
    facts.decoded = true;
    facts.subject = claims->user;
    facts.expires_at = claims->expires_at;
  }
  return facts;
}

StagingFacts gatherStagingFacts(const catalog::SiteConfig& site, HostProbe& host,
                                staging::OsUsers& users, staging::StagingFs& fs,
                                const std::vector<std::string>& mapped_users) {
  StagingFacts facts;
  facts.root = site.staging_root;
  facts.root_info = host.inspect(site.staging_root);
  if (facts.root_info.exists && facts.root_info.is_directory) {
    facts.probe = host.probeWrite(site.staging_root);
    facts.fs_type = host.filesystemType(site.staging_root);
  }
  auto me = staging::effectiveUser(users);
  facts.process_user =
      me ? *me
         : staging::OsUser{"uid " + std::to_string(users.effectiveUid()), users.effectiveUid(), 0};
  facts.job_user_name = site.slurm.user;
  facts.group_name = stagingGroupOf(site);
  facts.access = staging::decideJobAccess(site, users, fs);
  if (site.slurm.identity == catalog::IdentityMode::kPerUser) {
    for (const std::string& name : mapped_users) {
      const bool seen = std::any_of(facts.users.begin(), facts.users.end(),
                                    [&](const UserStagingFacts& u) { return u.name == name; });
      if (seen) continue;
      UserStagingFacts user{name, std::nullopt, std::nullopt};
      if (*facts.access) {
        user.access = staging::decideUserAccess(**facts.access, site.staging_root, name, users, fs);
      }
      facts.users.push_back(std::move(user));
    }
  }
  return facts;
}

std::vector<SecretFile> credentialFiles(const catalog::SiteConfig& site,
                                        const std::vector<SecretFile>& server_secrets) {
  std::vector<SecretFile> files;
  const catalog::SlurmSite& slurm = site.slurm;
  if (slurm.jwt_key_file) {
    files.push_back({"slurm.jwt_key_file", *slurm.jwt_key_file, CredentialKind::kSigningKey});
  }
  if (slurm.token_file)
    files.push_back({"slurm.token_file", *slurm.token_file, CredentialKind::kToken});
  if (slurm.client_key)
    files.push_back({"slurm.client_key", *slurm.client_key, CredentialKind::kSecret});
  files.insert(files.end(), server_secrets.begin(), server_secrets.end());
  return files;
}

staging::OsUser serveUser(const catalog::SiteConfig& site, staging::OsUsers& users) {
  if (!site.staging.group) {
    if (auto job_user = users.userByName(site.slurm.user); job_user && *job_user) return **job_user;
  }
  if (auto me = staging::effectiveUser(users)) return *me;
  return staging::OsUser{"uid " + std::to_string(users.effectiveUid()), users.effectiveUid(), 0};
}

CredentialFacts gatherCredentialFacts(const catalog::SiteConfig& site, const SecretFile& file,
                                      HostProbe& host, staging::OsUsers& users,
                                      const std::vector<std::string>& nodes) {
  CredentialFacts facts;
  facts.field = file.field;
  facts.path = file.path;
  facts.kind = file.kind;
  facts.file = host.fileInfo(file.path);
  if (facts.file.exists) facts.fs_type = host.filesystemType(file.path);
  facts.serve_user = serveUser(site, users);
  facts.job_user = site.slurm.user;
  const FileInfo root = host.fileInfo(site.staging_root);
  facts.staging_root = root.exists ? root.canonical : site.staging_root;
  if (root.exists) {
    facts.staging_device = root.device;
    facts.staging_fs_type = host.filesystemType(site.staging_root);
  }
  for (std::size_t i = 0; i < site.mounts.size(); ++i) {
    const FileInfo source = host.fileInfo(site.mounts[i].source);
    facts.mount_sources.emplace_back("mounts[" + std::to_string(i) + "].source",
                                     source.exists ? source.canonical : site.mounts[i].source);
  }
  const std::string me = host.hostName();
  for (const std::string& node : nodes) {
    if (!me.empty() && node == me) facts.host_node = node;
  }
  facts.accepted = site.slurm.accept_exposed_credentials;
  return facts;
}

std::vector<CheckResult> credentialChecks(const catalog::SiteConfig& site,
                                          const std::vector<SecretFile>& server_secrets,
                                          HostProbe& host, staging::OsUsers& users,
                                          const std::vector<std::string>& nodes) {
  std::vector<CheckResult> checks;
  for (const SecretFile& file : credentialFiles(site, server_secrets)) {
    checks.push_back(checkCredential(gatherCredentialFacts(site, file, host, users, nodes)));
  }
  return checks;
}

UserIdentityFacts gatherUserIdentityFacts(const SlurmAccess& access, const std::string& user) {
  UserIdentityFacts f;
  f.user = user;
  if (access.mechanism) f.mechanism = *access.mechanism;
  if (access.client == nullptr) return f;
  f.asked = true;
  // A cheap read as the user: slurmrestd refuses it when the token may not act as them.
  if (auto partitions = access.client->as(user).listPartitions(); !partitions) {
    f.acting = partitions.error();
    return f;
  }
  if (!access.read_path || !access.negotiate) return f;
  auto choice = access.negotiate();
  if (!choice) return f;
  const std::string base = "/slurmdb/" + std::string(choice->api->name);
  const auto read = [&](const std::string& path,
                        const char* list) -> std::optional<nlohmann::json> {
    auto text = access.read_path(path);
    if (!text) {
      f.accounting = text.error().http_status == 404 ? UserIdentityFacts::Accounting::kUnavailable
                                                     : UserIdentityFacts::Accounting::kError;
      f.accounting_error = text.error().describe();
      return std::nullopt;
    }
    auto body = nlohmann::json::parse(*text, nullptr, false);
    if (!body.is_object() || !body.contains(list) || !body[list].is_array()) {
      f.accounting = UserIdentityFacts::Accounting::kError;
      f.accounting_error = std::string("the answer has no ") + list + " list";
      return std::nullopt;
    }
    return body[list];
  };
  auto users = read(base + "/user/" + user, "users");
  if (!users) return f;
  if (users->empty()) {
    f.accounting = UserIdentityFacts::Accounting::kUnknownUser;
    return f;
  }
  auto associations = read(base + "/associations/?user=" + user, "associations");
  if (!associations) return f;
  f.accounting = UserIdentityFacts::Accounting::kKnown;
  for (const auto& a : *associations) {
    if (a.is_object() && a.contains("account") && a["account"].is_string()) {
      f.accounts.push_back(a["account"].get<std::string>());
    }
  }
  return f;
}

DatabaseFacts gatherDatabaseFacts(const DatabaseTarget& target) {
  DatabaseFacts facts;
  facts.db = store::describeDb(target.db);
  facts.postgres = store::PostgresJobStore::isUri(target.db);
  if (target.config_error) {
    facts.unavailable = target.config_error;
    return facts;
  }
  struct stat st {};
  if (!facts.postgres && !target.password_file && ::stat(target.db.c_str(), &st) != 0 &&
      errno == ENOENT) {
    facts.exists = false;  // serve creates it; opening it read-only would not
    return facts;
  }
  auto probe = store::probeStore(target.db, target.password_file, store::kDbPasswordField);
  if (probe) {
    facts.probe = std::move(*probe);
  } else {
    facts.unavailable = probe.error();
  }
  return facts;
}

ArtifactFacts gatherArtifactFacts(const catalog::Runtime& runtime,
                                  catalog::ArtifactVerifier& verifier,
                                  const ArtifactProgress& progress) {
  ArtifactFacts facts;
  facts.runtime = runtime;
  struct stat st {};
  if (::stat(runtime.path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    facts.size_bytes = static_cast<uint64_t>(st.st_size);
  }
  catalog::ArtifactVerifier::Progress report;
  if (progress) {
    report = [&](uint64_t done, uint64_t total) { progress(runtime.id, done, total); };
  }
  facts.verified = verifier.verify(runtime.path, runtime.sha256, "runtimes." + runtime.id, report);
  if (!facts.verified && facts.verified.error().code == catalog::codes::kArtifactSha256Mismatch) {
    // The verifier just read the file; its cache answers this without a second read
    // (unless the file is changing under us, which the digest then shows too).
    if (auto actual = verifier.sha256Of(runtime.path)) facts.actual_sha256 = *actual;
  }
  return facts;
}

std::vector<CheckResult> runDoctor(const DoctorInput& input, DoctorEnv& env) {
  const catalog::SiteConfig& site = input.site;
  const TokenFacts token = gatherTokenFacts(site, env.slurm, env.clock);
  const SlurmFacts slurm = gatherSlurmFacts(site, env.slurm);

  std::vector<CheckResult> checks;
  checks.push_back(checkSlurmrestd(slurm));
  checks.push_back(checkControllers(slurm));
  checks.push_back(checkApiVersion(slurm));
  checks.push_back(checkToken(token, slurm));
  std::vector<std::string> node_names;
  if (slurm.nodes && *slurm.nodes) {
    for (const auto& node : **slurm.nodes) node_names.push_back(node.name);
  }
  for (auto& c : credentialChecks(site, input.server_secrets, env.host, env.users, node_names)) {
    checks.push_back(std::move(c));
  }
  checks.push_back(checkIdentity(site, env.slurm.mechanism));
  if (site.slurm.identity == catalog::IdentityMode::kPerUser) {
    std::set<std::string> asked;  // a user with several tokens is checked once
    for (const std::string& user : input.mapped_users) {
      if (!asked.insert(user).second) continue;
      checks.push_back(checkUserIdentity(gatherUserIdentityFacts(env.slurm, user)));
    }
  }
  for (auto& c : checkPartitions(site, slurm)) checks.push_back(std::move(c));
  for (auto& c : checkGpuSeries(site, slurm)) checks.push_back(std::move(c));

  const StagingFacts staging =
      gatherStagingFacts(site, env.host, env.users, env.fs, input.mapped_users);
  checks.push_back(checkStagingRoot(staging));
  checks.push_back(checkStagingUser(staging));
  for (const UserStagingFacts& user : staging.users) {
    checks.push_back(checkUserStaging(user, staging));
  }
  checks.push_back(checkStagingFilesystem(staging));

  checks.push_back(checkRegistry(input.registry_path, input.registry));
  if (input.registry) {
    for (const auto& runtime : input.registry->runtimes) {
      checks.push_back(checkArtifact(gatherArtifactFacts(runtime, env.verifier, env.progress),
                                     site.container_runtime));
    }
  }
  if (input.database) {
    const DatabaseFacts database = gatherDatabaseFacts(*input.database);
    checks.push_back(checkDatabase(database));
    if (database.postgres) checks.push_back(checkDatabaseLease(database));
  }
  return checks;
}

}  // namespace tuneplane::doctor
