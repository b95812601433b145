// `tuneplane doctor --site SITE [-o text|json] [--strict]`: checks a site without submitting
// anything (the checks and how each is judged: src/doctor/). This file only wires the real
// world in — the site file, the registry, a SlurmRestClient, the host (and staging's users
// and filesystem seams), the artifact verifier with a progress bar on a terminal — and
// prints the report.
// Exit codes: 0 every check passed (warnings allowed unless --strict), 1 a check failed or
// could not run (or, with --strict, warned), 2 the site file could not be loaded or a flag
// is wrong.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "api/server_config.h"
#include "catalog/artifact_verifier.h"
#include "catalog/site_loader.h"
#include "cli/commands.h"
#include "cli/credential_gate.h"
#include "cli/site_environment.h"
#include "client_cli/output.h"
#include "client_cli/progress_bar.h"
#include "common/clock.h"
#include "doctor/doctor.h"
#include "doctor/host_probe.h"
#include "pipeline/launch_pipeline.h"
#include "slurm/client_factory.h"
#include "slurm/rest_client.h"
#include "staging/os_users.h"
#include "staging/staging_fs.h"

namespace tuneplane::cli {
namespace {

struct DoctorFlags {
  std::optional<std::string> site;
  std::optional<std::string> db;
  std::string output = "text";
  bool strict = false;
};

// One attempt and one retry: an operator waiting on doctor wants the answer, not the
// reconciler's patience. The retry still rides over a single dropped connection.
constexpr int kDoctorReadAttempts = 2;

// The client and the token source doctor talks through. The token source is the client's
// own (so doctor decodes the token the client sends); when the client cannot be built, a
// second one made the same way stands in, so the token is still judged.
struct SlurmConnection {
  std::unique_ptr<slurm::SlurmRestClient> client;
  std::unique_ptr<slurm::TokenProvider> spare_tokens;
  doctor::SlurmAccess access;
};

SlurmConnection connectToSlurm(const catalog::SiteConfig& site) {
  SlurmConnection c;
  // No client, but a token to judge: the token check still says what it would send.
  const auto without_client = [&](const Error& error) {
    c.access.client_error = error;
    if (auto spare = slurm::makeTokenProvider(site.slurm)) {
      c.spare_tokens = std::move(*spare);
      c.access.tokens = c.spare_tokens.get();
    }
    return std::move(c);
  };
  // Made as serve makes its clients (one factory: the same URL, TLS files, identity and
  // version), with doctor's own patience.
  auto factory = slurm::SlurmClientFactory::fromSite(site.slurm);
  if (!factory) {
    if (factory.error().field == "slurm.api_version") return without_client(factory.error());
    c.access.token_error = factory.error();  // the credential cannot be read
    return c;
  }
  c.access.mechanism = factory->mechanism();
  auto client = factory->make(slurm::ClientRole{kDoctorReadAttempts, std::nullopt});
  if (!client) return without_client(client.error());
  c.client = std::move(*client);
  c.access.client = c.client.get();
  c.access.tokens = &c.client->tokens();
  c.access.negotiate = [client = c.client.get()] { return client->negotiate(); };
  c.access.read_path = [client = c.client.get()](const std::string& path) {
    return client->readPath("doctor", path);
  };
  return c;
}

// The database serve would open: --db, else server.db (password from
// server.db_password_file, as serve takes it). A site without a server: section does not
// run serve, so without --db there is no database to check.
std::optional<doctor::DatabaseTarget> databaseTarget(const DoctorFlags& flags,
                                                     const Checked<api::ServerConfig>& config) {
  doctor::DatabaseTarget target;
  if (!config) {
    // serve would not start either: the database check fails with the first reason.
    target.db = flags.db.value_or("server.db");
    target.config_error = config.error().front();
    return target;
  }
  if (!flags.db && !config->present) return std::nullopt;
  target.db = flags.db.value_or(config->db);
  target.password_file = config->db_password_file;
  return target;
}

void runDoctor(const DoctorFlags& flags) {
  auto format = parseOutputFormat(flags.output);
  if (!format) failWith({format.error()}, OutputFormat::kText, kExitInvalid, std::cout, std::cerr);
  const pipeline::SiteEnvironment env = siteEnvironmentFromProcess();
  auto site = pipeline::loadSiteFile(flags.site, env);
  if (!site) failWith(site.error(), *format, kExitInvalid, std::cout, std::cerr);

  doctor::DoctorInput input;
  input.site = site->site;
  input.registry_path = catalog::registryPath(site->site, env.registry_file).value_or("");
  auto registry = pipeline::loadRegistryFile(site->site, env);
  if (registry) {
    input.registry_path = registry->path;
    input.registry = std::move(registry->registry);
  } else {
    input.registry = failAll(registry.error());
  }

  const char* state_directory = std::getenv("STATE_DIRECTORY");
  const auto server = api::loadServerConfig(
      site->path, {state_directory ? std::optional<std::string>(state_directory) : std::nullopt});
  input.database = databaseTarget(flags, server);
  if (server) {
    input.server_secrets = serverSecrets(*server);
    // per_user: each Unix user a token maps to gets its staging/user/<name> check.
    for (const api::ApiToken& token : server->tokens) input.mapped_users.push_back(token.runAs());
  }

  // The client logs its retries and token refreshes; every outcome is in the report, so
  // only errors of its own are worth a log line here.
  spdlog::set_level(spdlog::level::err);
  SlurmConnection slurm = connectToSlurm(site->site);
  doctor::PosixHostProbe host;
  staging::PosixOsUsers users;
  staging::PosixStagingFs fs;
  catalog::ArtifactVerifier verifier;
  SystemClock clock;
  ProgressBar bar(std::cerr, *format == OutputFormat::kText && ::isatty(STDERR_FILENO) == 1);
  doctor::DoctorEnv doctor_env{slurm.access,
                               host,
                               users,
                               fs,
                               verifier,
                               clock,
                               [&bar](const std::string& id, uint64_t done, uint64_t total) {
                                 bar.update(id, done, total);
                               }};
  const auto checks = doctor::runDoctor(input, doctor_env);
  bar.finish();

  if (*format == OutputFormat::kJson) {
    std::cout << doctor::reportToJson(site->path, checks, flags.strict).dump(2) << "\n";
  } else {
    std::cout << doctor::reportToText(site->path, checks, flags.strict);
  }
  std::cout.flush();
  if (!doctor::passed(checks, flags.strict)) throw CLI::RuntimeError(kExitFailure);
}

}  // namespace

void addDoctorCommand(CLI::App& app) {
  auto flags = std::make_shared<DoctorFlags>();
  CLI::App* cmd = app.add_subcommand(
      "doctor",
      "Check a site without submitting anything: slurmrestd, the API version, the token, "
      "where each credential file lives and who can read it, partitions, GPU-series\n"
      "constraints and GRES, the staging root, every artifact, and the job store's database\n"
      "(read only: reachable, schema version, leader lease)");
  cmd->add_option("--site", flags->site, "Site file (default: $TUNEPLANE_SITE_FILE)");
  cmd->add_option("--db", flags->db,
                  "The job store to check: a SQLite file or a postgresql:// URI without its "
                  "password (default: server.db when the site has a server: section)");
  cmd->add_option("--output,-o", flags->output, "Output format: text or json");
  cmd->add_flag("--strict", flags->strict, "Count warnings as failures (exit 1)");
  cmd->footer(
      "Each check prints ok, warn, fail or skip (skipped: an earlier check failed), with the\n"
      "reason and the fix. Exit codes: 0 no check failed (warnings allowed unless --strict),\n"
      "1 a check failed or was skipped (or warned, with --strict), 2 the site file could not\n"
      "be loaded or an option is wrong.");
  cmd->callback([flags] { runDoctor(*flags); });
}

}  // namespace tuneplane::cli
