// `tuneplane render`: prints what would be submitted for a job spec — the batch script or
// the slurmrestd submit body — without staging or submitting anything. Exit 0, or 2 when
// the spec is refused (every error on stderr).
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/site_environment.h"
#include "client_cli/output.h"
#include "pipeline/launch_pipeline.h"

namespace tuneplane::cli {
namespace {

struct RenderFlags {
  std::optional<std::string> spec_file;
  std::optional<std::string> site_file;
  std::optional<std::string> attempt_dir;
  std::string what = "script";
  std::optional<std::string> job_id;
  std::string attempt = "1";
  std::optional<std::string> submit_token;
};

void runRender(const RenderFlags& flags) {
  const auto invalid = [](const Errors& errors) {
    failWith(errors, OutputFormat::kText, kExitInvalid, std::cout, std::cerr);
  };
  Errors errors;
  if (flags.what != "script" && flags.what != "request" && flags.what != "config") {
    errors.push_back({"cli.invalid_what", "--what",
                      "--what must be 'script', 'request' or 'config', not '" + flags.what + "'"});
  }
  int attempt = 0;
  const char* end = flags.attempt.data() + flags.attempt.size();
  if (auto [ptr, ec] = std::from_chars(flags.attempt.data(), end, attempt);
      ec != std::errc() || ptr != end) {
    errors.push_back({"cli.invalid_attempt", "--attempt",
                      "--attempt must be a whole number >= 1, not '" + flags.attempt + "'"});
  }
  auto spec_file = requireOption(flags.spec_file, "-f");
  if (!spec_file) errors.push_back(spec_file.error());
  if (!errors.empty()) invalid(errors);

  auto context = pipeline::loadSiteContext(flags.site_file, siteEnvironmentFromProcess());
  if (!context) invalid(context.error());
  pipeline::PrepareOptions options;
  options.job_id = flags.job_id;
  options.attempt = attempt;
  options.submit_token = flags.submit_token;
  options.attempt_dir = flags.attempt_dir;
  auto prepared = pipeline::prepare(*spec_file, *context, options);
  if (!prepared) invalid(prepared.error());
  // Rendering is for looking, possibly on another host than the one that submits: a job
  // user who could not write the attempt is a warning here, and a refusal at submit.
  if (auto access = pipeline::checkJobAccess(*context); !access) {
    std::cerr << "warning: `tuneplane slurm submit` from this host would refuse this site: "
              << access.error().describe() << "\n";
  }

  if (flags.what == "script") {
    std::cout << prepared->script;
  } else if (flags.what == "config") {
    // The files staged for the framework (a llamafactory job's llamafactory.yaml), as written.
    if (prepared->request.inputs.empty()) {
      invalid({{"cli.no_config", "--what",
                "a '" + prepared->request.framework +
                    "' job stages no framework config: it runs spec.framework.command"}});
    }
    for (const auto& input : prepared->request.inputs) std::cout << input.content;
  } else {
    std::cout << prepared->submit_body.dump(2) << '\n';
  }
  std::cout.flush();
}

}  // namespace

void addRenderCommand(CLI::App& app) {
  auto flags = std::make_shared<RenderFlags>();
  CLI::App* cmd = app.add_subcommand(
      "render",
      "Print what would be submitted for a job spec: the batch script (default), the\n"
      "JSON body of POST /slurm/v0.0.45/job/submit, or the config TunePlane writes for a\n"
      "llamafactory job (llamafactory.yaml). Validates like `validate` first; stages\n"
      "and submits nothing. Exit codes: 0 printed; 2 refused or a file missing/unreadable\n"
      "(every error on stderr as 'field: message [code]'). A job user who could not write\n"
      "the attempt from this host (see `validate`) is a warning on stderr, not a failure.");
  cmd->add_option("-f,--file", flags->spec_file, "Job spec file, YAML or JSON (required)");
  cmd->add_option("--site", flags->site_file,
                  std::string("Site file (YAML); default: $") + pipeline::kSiteFileEnv);
  cmd->add_option("--what", flags->what,
                  "script (default), request (the submit body) or config (llamafactory.yaml)");
  cmd->add_option("--attempt-dir", flags->attempt_dir,
                  "Attempt directory to render for (absolute); default: "
                  "<staging_root>/jobs/<job-id>/attempts/<attempt>");
  cmd->add_option("--job-id", flags->job_id,
                  "Job id (<name>-<8 hex>); default: a fresh one from the spec's name");
  cmd->add_option("--attempt", flags->attempt, "Attempt number, >= 1 (default 1)");
  cmd->add_option("--submit-token", flags->submit_token,
                  "Submit token (tp-<32 hex>); default: a fresh random one");
  cmd->callback([flags] { runRender(*flags); });
}

}  // namespace tuneplane::cli
