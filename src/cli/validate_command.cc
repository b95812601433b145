// `tuneplane validate`: checks a job spec against a site (structure, the backend's rules,
// the runtime artifact's hash, and whether the job user could write an attempt staged from
// this host) and prints a short summary. Exit 0 valid, 2 invalid.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "catalog/site_config.h"
#include "cli/commands.h"
#include "cli/site_environment.h"
#include "client_cli/output.h"
#include "client_cli/server_commands.h"
#include "client_cli/validation_summary.h"
#include "launch/launch_summary.h"
#include "pipeline/launch_pipeline.h"

namespace tuneplane::cli {
namespace {

struct ValidateFlags {
  std::optional<std::string> spec_file;
  std::optional<std::string> site_file;  // the offline check
  ServerFlags server;                    // --server, --token, -o/--output
};

nlohmann::json accessJson(const staging::JobAccess& access) {
  const bool shared = access.mode == staging::JobAccessMode::kSharedGroup && access.group;
  return {{"mode", shared ? "shared_group" : "same_user"},
          {"job_user", access.job_user.name},
          {"tuneplane_user", access.process_user.name},
          {"group", shared ? nlohmann::json(access.group->name) : nullptr}};
}

// The one summary of a valid job (launch/launch_summary.h, shared with POST /v1/validate),
// and what this host checked: the job access.
nlohmann::json summaryJson(const launch::LaunchRequest& request, const staging::JobAccess& access) {
  nlohmann::json summary = launch::summaryJson(request);
  summary["job_access"] = accessJson(access);
  return summary;
}

// The summary as the server's validation prints it (validation_summary.h), then what only a
// check on this host knows: what TunePlane runs for a first-class framework, the
// checkpoints, who writes logs/.
void printSummary(std::ostream& out, const launch::LaunchRequest& request,
                  const staging::JobAccess& access) {
  printValidationSummary(out, client::Json(launch::summaryJson(request)));
  if (!request.inputs.empty()) {
    // A first-class framework: what TunePlane runs for it (render --what config: the file).
    int gpus = 0;
    for (const auto& c : request.components) gpus += c.nodes * c.gpus_per_node;
    std::string command;
    for (const auto& word : request.command) command += (command.empty() ? "" : " ") + word;
    out << "  launch: " << command << " as the Ray driver, ray_num_workers " << gpus
        << ", Ray told at least " << request.ray_min_cpus_per_gpu << " CPUs per GPU\n";
  }
  if (!request.checkpoint_dir.empty()) {
    out << "  checkpoints: " << request.checkpoint_dir
        << " (TUNEPLANE_CHECKPOINT_DIR, the same for every attempt)\n";
  }
  out << "  logs and output: " << access.describe() << "\n";
}

// Whether this run checks offline, on this host: --site names a site file, or no server is
// configured (then the site comes from $TUNEPLANE_SITE_FILE, as before there was a server to
// ask). A configuration that names a server but cannot be read is the server's way: its
// errors are printed rather than silently checking against some other site.
bool checksOffline(const ValidateFlags& flags, const client::ClientEnvironment& env) {
  if (flags.site_file) return true;
  auto config = client::resolveClientConfig({flags.server.server, flags.server.token}, env);
  if (config) return false;
  for (const Error& e : config.error()) {
    if (e.code != client::kErrNoServer) return false;
  }
  return true;
}

void runValidate(const ValidateFlags& flags) {
  CommandIo& io = processIo();
  if (!checksOffline(flags, io.env)) {
    if (!flags.spec_file) {
      auto session = ServerSession::open(flags.server, io);
      if (!session) throw CLI::RuntimeError(session.error());
      throw CLI::RuntimeError(
          session->fail({requireOption(flags.spec_file, "-f").error()}, kExitInvalid));
    }
    const int code = runValidateOnServer({flags.server, *flags.spec_file}, io);
    if (code != kExitOk) throw CLI::RuntimeError(code);
    return;
  }
  auto format = parseOutputFormat(flags.server.output);
  if (!format) failWith({format.error()}, OutputFormat::kText, kExitInvalid, std::cout, std::cerr);
  auto spec_file = requireOption(flags.spec_file, "-f");
  if (!spec_file) failWith({spec_file.error()}, *format, kExitInvalid, std::cout, std::cerr);

  auto context = pipeline::loadSiteContext(flags.site_file, siteEnvironmentFromProcess());
  if (!context) failWith(context.error(), *format, kExitInvalid, std::cout, std::cerr);
  // What `slurm submit` from this host would refuse: the job user's access, and the spec.
  Errors errors;
  auto access = pipeline::checkJobAccess(*context);
  if (!access) errors.push_back(access.error());
  // A throwaway identity: validation needs one to assemble, nothing is staged.
  auto prepared = pipeline::prepare(*spec_file, *context, pipeline::PrepareOptions{});
  if (!prepared) errors.insert(errors.end(), prepared.error().begin(), prepared.error().end());
  if (!errors.empty()) failWith(errors, *format, kExitInvalid, std::cout, std::cerr);

  if (*format == OutputFormat::kJson) {
    std::cout << summaryJson(prepared->request, *access).dump(2) << '\n';
  } else {
    printSummary(std::cout, prepared->request, *access);
  }
}

}  // namespace

void addValidateCommand(CLI::App& app) {
  auto flags = std::make_shared<ValidateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Check a job spec without submitting it. With a server configured (--server,\n"
      "$TUNEPLANE_SERVER or the config file) and no --site, the server judges it exactly as\n"
      "submit would (POST /v1/validate, with your token): no site file needed. With --site\n"
      "(or no server and $TUNEPLANE_SITE_FILE), it is checked on this host: structure, the\n"
      "Slurm backend's rules, the runtime artifact's SHA-256, and whether the job user\n"
      "(slurm.user) could write the attempt staged from here (see staging.group). Prints a\n"
      "summary (job, framework, which time limit applies and where it comes from,\n"
      "components). Nothing is staged or submitted. Every problem is reported in one run.\n"
      "Exit codes: 0 valid; 2 invalid or a file missing/unreadable (every error on stderr as\n"
      "'field: message [code]', or as JSON on stdout with -o json); 4 the token refused;\n"
      "5 the server unreachable.");
  cmd->add_option("-f,--file", flags->spec_file, "Job spec file, YAML or JSON (required)");
  cmd->add_option("--site", flags->site_file,
                  std::string("Check offline against this site file (YAML); default without a "
                              "server: $") +
                      pipeline::kSiteFileEnv + ". The runtime registry is $" +
                      pipeline::kRegistryFileEnv + ", else the site's runtime_registry_file");
  addServerFlags(*cmd, flags->server);
  cmd->callback([flags] { runValidate(*flags); });
}

}  // namespace tuneplane::cli
