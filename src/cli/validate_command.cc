// `tuneplane validate`: checks a job spec against a site (structure, the backend's rules,
// the runtime artifact's hash, and whether the job user could write an attempt staged from
// this host) and prints a short summary. Exit 0 valid, 2 invalid.
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "catalog/site_config.h"
#include "cli/commands.h"
#include "cli/site_environment.h"
#include "client_cli/output.h"
#include "launch/launch_summary.h"
#include "pipeline/launch_pipeline.h"

namespace tuneplane::cli {
namespace {

struct ValidateFlags {
  std::optional<std::string> spec_file;
  std::optional<std::string> site_file;
  std::string output = "text";
};

nlohmann::json accessJson(const staging::JobAccess& access) {
  const bool shared = access.mode == staging::JobAccessMode::kSharedGroup && access.group;
  return {{"mode", shared ? "shared_group" : "same_user"},
          {"job_user", access.job_user.name},
          {"tuneplane_user", access.process_user.name},
          {"group", shared ? nlohmann::json(access.group->name) : nullptr}};
}

// Every component gets the job's time limit; 0 when none is sent.
std::chrono::minutes jobTimeLimit(const launch::LaunchRequest& request) {
  return request.components.empty() ? std::chrono::minutes(0) : request.components[0].time_limit;
}

// Which time limit applies and where it came from.
std::string timeLimitText(const launch::LaunchRequest& request) {
  const std::string minutes = std::to_string(jobTimeLimit(request).count()) + " min";
  switch (request.time_limit_source) {
    case launch::TimeLimitSource::kSpec:
      return minutes + " (from spec.resources.time_limit)";
    case launch::TimeLimitSource::kSiteDefault:
      return minutes + " (the site's default_time_limit; the spec sets none)";
    case launch::TimeLimitSource::kPartitionDefault:
      break;
  }
  return "the partition's default (neither the spec nor the site sets one; none is sent)";
}

// The one summary of a valid job (launch/launch_summary.h, shared with POST /v1/validate),
// and what this host checked: the job access.
nlohmann::json summaryJson(const launch::LaunchRequest& request, const staging::JobAccess& access) {
  nlohmann::json summary = launch::summaryJson(request);
  summary["job_access"] = accessJson(access);
  return summary;
}

void printSummary(std::ostream& out, const launch::LaunchRequest& request,
                  const staging::JobAccess& access) {
  out << "valid: " << request.job_name << " (" << request.framework << ")\n";
  out << "  runtime: " << catalog::toString(request.container_runtime) << ", "
      << request.artifact.path << " (sha256 verified)\n";
  out << "  time limit: " << timeLimitText(request) << "\n";
  for (std::size_t i = 0; i < request.components.size(); ++i) {
    const auto& c = request.components[i];
    out << "  component " << i << ": pool " << c.pool_name << ", " << c.nodes << " node(s) x "
        << c.gpus_per_node << " GPU(s), " << c.cpus_per_node << " CPU(s), " << c.memory_mb
        << " MiB, partition " << c.partition;
    if (c.constraint) out << ", constraint " << *c.constraint;
    out << "\n";
  }
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

void runValidate(const ValidateFlags& flags) {
  auto format = parseOutputFormat(flags.output);
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
      "Check a job spec against a site: structure, the Slurm backend's rules, the runtime\n"
      "artifact's SHA-256, and whether the job user (slurm.user) could write the attempt\n"
      "staged from this host (see staging.group). Prints a summary (job, framework, which\n"
      "time limit applies and where it comes from, components, who writes logs/). Nothing is\n"
      "staged or submitted. Every problem is reported in one run. Exit codes: 0 valid; 2\n"
      "invalid or a file missing/unreadable (every\n"
      "error on stderr as 'field: message [code]', or as JSON on stdout with --output json).");
  cmd->add_option("-f,--file", flags->spec_file, "Job spec file, YAML or JSON (required)");
  cmd->add_option("--site", flags->site_file,
                  std::string("Site file (YAML); default: $") + pipeline::kSiteFileEnv +
                      ". The runtime registry is $" + pipeline::kRegistryFileEnv +
                      ", else the site's runtime_registry_file");
  cmd->add_option("--output", flags->output,
                  "text (default) or json: {\"valid\":true,…} on success, or "
                  "{\"code\",\"field\",\"message\",\"errors\":[…]} on failure");
  cmd->callback([flags] { runValidate(*flags); });
}

}  // namespace tuneplane::cli
