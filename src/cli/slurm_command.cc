// `tuneplane slurm ping|submit|get|cancel|jobs`: talks to the site's slurmrestd through
// slurm::SlurmRestClient. Output as text or JSON (--output). Exit codes (commands.h): auth → 4,
// a submit whose outcome is unknown → 6, a refusal by Slurm or bad input → 2, else 1.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "catalog/site_loader.h"
#include "cli/commands.h"
#include "cli/site_environment.h"
#include "client_cli/output.h"
#include "pipeline/launch_pipeline.h"
#include "slurm/rest_client.h"

namespace tuneplane::cli {
namespace {

using nlohmann::json;
using slurm::SlurmError;

struct SlurmFlags {
  std::optional<std::string> site;
  std::string output = "text";
  std::optional<std::string> spec;
  std::optional<std::string> job;
  std::optional<std::string> signal;
  std::optional<int64_t> update_time;
};

int exitCodeFor(const SlurmError& e) {
  const std::string& code = e.error.code;
  if (code == slurm::kErrAuthFailed || code == slurm::kErrTokenUnavailable) return kExitAuth;
  if (e.transport == slurm::TransportClass::kUnknown) return kExitUnknownOutcome;
  if (code == slurm::kErrConfig) return kExitInvalid;
  if (code == slurm::kErrRejected || code == slurm::kErrJobNotFound ||
      code == slurm::kErrAlreadyCompleting) {
    return kExitInvalid;
  }
  return kExitFailure;
}

OutputFormat formatOf(const SlurmFlags& flags) {
  auto format = parseOutputFormat(flags.output);
  if (!format) failWith({format.error()}, OutputFormat::kText, kExitInvalid, std::cout, std::cerr);
  return *format;
}

[[noreturn]] void failSlurm(const SlurmError& e, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    json out = errorsToJson({e.error});
    out["transport"] = slurm::toString(e.transport);
    out["http_status"] = e.http_status;
    out["slurm_error_number"] = e.slurm_error_number;
    std::cout << out.dump(2) << "\n";
    throw CLI::RuntimeError(exitCodeFor(e));
  }
  std::cerr << e.describe() << "\n";
  throw CLI::RuntimeError(exitCodeFor(e));
}

std::unique_ptr<slurm::SlurmRestClient> connect(const catalog::SiteConfig& site,
                                                OutputFormat format) {
  auto client = slurm::SlurmRestClient::fromSite(site.slurm);
  if (!client) failWith({client.error()}, format, kExitInvalid, std::cout, std::cerr);
  return std::move(*client);
}

catalog::SiteConfig loadSite(const SlurmFlags& flags, OutputFormat format) {
  const char* env = std::getenv(pipeline::kSiteFileEnv);
  auto path =
      catalog::siteFilePath(flags.site, env ? std::optional<std::string>(env) : std::nullopt);
  if (!path) failWith({path.error()}, format, kExitInvalid, std::cout, std::cerr);
  auto site = catalog::loadSiteConfigFile(*path);
  if (!site) failWith(site.error(), format, kExitInvalid, std::cout, std::cerr);
  return *site;
}

json recordJson(const slurm::JobRecord& j) {
  return {{"job_id", j.job_id},
          {"sluid", j.sluid},
          {"name", j.name},
          {"partition", j.partition},
          {"job_state", j.job_state},
          {"state_reason", j.state_reason},
          {"exit_code", j.exit_code.return_code.value().value_or(-1)},
          {"het_job_id", j.het_job_id.value().value_or(0)},
          {"het_job_offset", j.het_job_offset.value().value_or(0)},
          {"nodes", j.nodes},
          {"comment", j.comment},
          {"standard_output", j.stdout_expanded}};
}

std::string stateText(const std::vector<std::string>& states) {
  std::string out;
  for (const auto& s : states) out += (out.empty() ? "" : ",") + s;
  return out;
}

void printRecords(const std::vector<slurm::JobRecord>& jobs, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    json out = json::array();
    for (const auto& j : jobs) out.push_back(recordJson(j));
    std::cout << json{{"jobs", out}}.dump(2) << "\n";
    return;
  }
  for (const auto& j : jobs) {
    std::cout << fmt::format("{} {} {} {} reason={} nodes={}\n", j.sluid, j.job_id, j.name,
                             stateText(j.job_state), j.state_reason, j.nodes);
  }
}

void runPing(const SlurmFlags& flags) {
  OutputFormat format = formatOf(flags);
  auto client = connect(loadSite(flags, format), format);
  auto ping = client->ping();
  if (!ping) failSlurm(ping.error(), format);
  if (format == OutputFormat::kJson) {
    json controllers = json::array();
    for (const auto& c : ping->controllers) {
      controllers.push_back({{"hostname", c.hostname},
                             {"responding", c.responding},
                             {"primary", c.primary},
                             {"status", c.status}});
    }
    std::cout << json{{"release", ping->release},
                      {"cluster", ping->cluster},
                      {"data_parser", ping->data_parser},
                      {"controllers", controllers}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << fmt::format("cluster {} slurm {} ({})\n", ping->cluster, ping->release,
                             ping->data_parser);
    for (const auto& c : ping->controllers) {
      std::cout << fmt::format("  {} {} {}\n", c.hostname, c.responding ? "UP" : "DOWN", c.status);
    }
  }
  if (!ping->anyResponding()) throw CLI::RuntimeError(kExitFailure);
}

void runSubmit(const SlurmFlags& flags) {
  OutputFormat format = formatOf(flags);
  auto spec = requireOption(flags.spec, "-f");
  if (!spec) failWith({spec.error()}, format, kExitInvalid, std::cout, std::cerr);
  auto context = pipeline::loadSiteContext(flags.site, siteEnvironmentFromProcess());
  if (!context) failWith(context.error(), format, kExitInvalid, std::cout, std::cerr);
  // A job whose user cannot write the attempt fails with an empty logs/: refuse it here,
  // before anything is staged or sent, together with any problem of the spec.
  Errors errors;
  auto access = pipeline::checkJobAccess(*context);
  if (!access) errors.push_back(access.error());
  auto prepared = pipeline::prepare(*spec, *context, pipeline::PrepareOptions{});
  if (!prepared) errors.insert(errors.end(), prepared.error().begin(), prepared.error().end());
  if (!errors.empty()) failWith(errors, format, kExitInvalid, std::cout, std::cerr);
  auto staged = pipeline::stage(*prepared, *access);
  if (!staged) failWith({staged.error()}, format, kExitFailure, std::cout, std::cerr);
  auto client = connect(context->site, format);
  auto receipt = client->submit(prepared->submit_body);
  if (!receipt) {
    if (receipt.error().transport == slurm::TransportClass::kUnknown) {
      // The job may exist. Say how to find it rather than inviting a second submit.
      std::cerr << fmt::format(
          "the submit may have reached slurmrestd; do not submit again. Find the job by its "
          "comment {} (attempt dir {})\n",
          prepared->request.identity.submit_token, staged->dir);
    }
    failSlurm(receipt.error(), format);
  }
  // The numeric id is used once, to learn the SLUID; every later call uses the SLUID.
  auto jobs = client->getJob(std::to_string(receipt->job_id));
  std::string sluid = jobs && !jobs->empty() ? jobs->front().sluid : "";
  if (format == OutputFormat::kJson) {
    json warnings = json::array();
    for (const auto& w : receipt->warnings) warnings.push_back(w.description);
    std::cout << json{{"job_id", receipt->job_id},
                      {"sluid", sluid},
                      {"step_id", receipt->step_id},
                      {"job_submit_user_msg", receipt->job_submit_user_msg},
                      {"warnings", warnings},
                      {"attempt_dir", staged->dir},
                      {"submit_token", prepared->request.identity.submit_token}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << fmt::format("submitted job {} (SLUID {}), attempt dir {}\n", receipt->job_id,
                             sluid.empty() ? "unknown" : sluid, staged->dir);
    for (const auto& w : receipt->warnings) std::cout << "warning: " << w.description << "\n";
  }
  if (!jobs) failSlurm(jobs.error(), format);
}

void runGet(const SlurmFlags& flags) {
  OutputFormat format = formatOf(flags);
  auto client = connect(loadSite(flags, format), format);
  auto jobs = client->getJob(*flags.job);
  if (!jobs) failSlurm(jobs.error(), format);
  printRecords(*jobs, format);
}

void runCancel(const SlurmFlags& flags) {
  OutputFormat format = formatOf(flags);
  auto client = connect(loadSite(flags, format), format);
  auto done = client->cancel(*flags.job, flags.signal);
  if (!done) failSlurm(done.error(), format);
  if (format == OutputFormat::kJson) {
    std::cout << json{{"cancelled", *flags.job}}.dump(2) << "\n";
  } else {
    std::cout << "cancel requested for " << *flags.job << "\n";
  }
}

void runJobs(const SlurmFlags& flags) {
  OutputFormat format = formatOf(flags);
  auto client = connect(loadSite(flags, format), format);
  auto states = client->listJobStates({});
  if (!states) failSlurm(states.error(), format);
  if (format == OutputFormat::kJson) {
    json out = json::array();
    for (size_t i = 0; i < states->size(); ++i) {
      out.push_back({{"job_id", states->jobId(i)}, {"state", states->stateNames(i)}});
    }
    std::cout << json{{"jobs", out}}.dump(2) << "\n";
  } else {
    for (size_t i = 0; i < states->size(); ++i) {
      std::cout << states->jobId(i) << " " << stateText(states->stateNames(i)) << "\n";
    }
  }
}

}  // namespace

void addSlurmCommand(CLI::App& app) {
  auto flags = std::make_shared<SlurmFlags>();
  CLI::App* slurm = app.add_subcommand("slurm", "Talk to the site's slurmrestd (REST API v0.0.45)");
  slurm->require_subcommand(1);
  auto common = [flags](CLI::App* sub) {
    sub->add_option("--site", flags->site, "Site file (default: $TUNEPLANE_SITE_FILE)");
    sub->add_option("--output,-o", flags->output, "Output format: text or json");
  };
  CLI::App* ping = slurm->add_subcommand("ping", "Check that slurmrestd and slurmctld answer");
  common(ping);
  ping->callback([flags] { runPing(*flags); });

  CLI::App* submit =
      slurm->add_subcommand("submit", "Stage an attempt from a job spec and submit it");
  common(submit);
  submit->add_option("-f,--file", flags->spec, "Job spec (YAML or JSON)");
  submit->callback([flags] { runSubmit(*flags); });

  CLI::App* get = slurm->add_subcommand("get", "Show a job's records (every het component)");
  common(get);
  get->add_option("job", flags->job,
                  "The job's key (its SLUID; <SLUID>@<id> on REST API v0.0.44) or numeric id")
      ->required();
  get->callback([flags] { runGet(*flags); });

  CLI::App* cancel = slurm->add_subcommand("cancel", "Cancel a job by its key");
  common(cancel);
  cancel
      ->add_option("sluid", flags->job,
                   "The job's key: its SLUID, or <SLUID>@<id> on REST API v0.0.44 (the job is "
                   "confirmed by that SLUID before it is cancelled by id)")
      ->required();
  cancel->add_option("--signal", flags->signal, "Signal to send instead of cancelling");
  cancel->callback([flags] { runCancel(*flags); });

  CLI::App* jobs = slurm->add_subcommand("jobs", "List every job's id and state");
  common(jobs);
  jobs->callback([flags] { runJobs(*flags); });
}

}  // namespace tuneplane::cli
