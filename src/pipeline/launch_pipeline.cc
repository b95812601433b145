// The launch pipeline shared by validate, render and slurm submit (see launch_pipeline.h).
#include "pipeline/launch_pipeline.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "catalog/artifact_verifier.h"
#include "catalog/site_loader.h"
#include "common/input_file.h"
#include "launch/assembler.h"
#include "launch/attempt_identity.h"
#include "pipeline/error_codes.h"
#include "pipeline/node_exclusion.h"
#include "slurm/script_checks.h"
#include "slurm/script_renderer.h"
#include "slurm/slurm_api.h"
#include "slurm/submit_body.h"
#include "spec/spec_parser.h"
#include "staging/staging_fs.h"
#include "staging/staging_paths.h"
#include "staging/workdir_store.h"

namespace tuneplane::pipeline {
namespace {

// The next command to run when a file a site needs is missing or cannot be read, appended
// to the reader's error (which names the file and the reason).
Error withNextStep(Error error, const std::string& path, const std::string& when_missing) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    error.message += "; " + when_missing;
  } else if (::access(path.c_str(), R_OK) != 0 && errno == EACCES) {
    error.message +=
        "; let the user TunePlane runs as read it (it runs as the site's job user: "
        "`chgrp <that user's group> " +
        path + " && chmod 0640 " + path + "`)";
  }
  return error;
}

}  // namespace

Checked<SiteFile> loadSiteFile(const std::optional<std::string>& site_flag,
                               const SiteEnvironment& env) {
  // An empty flag or variable counts as absent, so `--site ""` cannot mean "the cwd".
  std::optional<std::string> flag = site_flag;
  if (flag && flag->empty()) flag.reset();
  std::optional<std::string> env_site = env.site_file;
  if (env_site && env_site->empty()) env_site.reset();
  if (!flag && !env_site) {
    return failAll({Error{codes::kNoSite, "--site",
                          std::string("no site file: pass --site FILE or set ") + kSiteFileEnv}});
  }
  auto site_path = catalog::siteFilePath(flag, env_site);
  if (!site_path) return failAll({site_path.error()});
  const std::string what =
      flag ? "site file (--site)" : std::string("site file (") + kSiteFileEnv + ")";
  if (auto readable = checkReadableFile(*site_path, "--site", what); !readable) {
    return failAll({withNextStep(readable.error(), *site_path,
                                 "draft one with `tuneplane site init --slurm URL --token-file "
                                 "FILE -o " +
                                     *site_path + "`")});
  }
  auto site = catalog::loadSiteConfigFile(*site_path);
  if (!site) return failAll(site.error());
  // The catalog checks the form of slurm.api_version; which versions exist is slurm's word.
  if (!slurm::isKnownApiVersion(site->slurm.api_version)) {
    return failAll({Error{"site.unsupported_api_version", "slurm.api_version",
                          "TunePlane does not speak REST API '" + site->slurm.api_version +
                              "': set auto (the newest both slurmrestd and TunePlane speak) "
                              "or one of " +
                              slurm::slurmApiNames()}});
  }
  return SiteFile{*site_path, std::move(*site)};
}

Checked<RegistryFile> loadRegistryFile(const catalog::SiteConfig& site,
                                       const SiteEnvironment& env) {
  auto registry_path = catalog::registryPath(site, env.registry_file);
  if (!registry_path) return failAll({registry_path.error()});
  const bool from_env = env.registry_file && !env.registry_file->empty();
  if (auto readable = checkReadableFile(
          *registry_path, from_env ? kRegistryFileEnv : "runtime_registry_file",
          from_env ? std::string("runtime registry (") + kRegistryFileEnv + ")"
                   : std::string("runtime registry (the site's runtime_registry_file)"));
      !readable) {
    return failAll({withNextStep(
        readable.error(), *registry_path,
        "write it: `tuneplane site init … -o SITE` drafts an empty one beside the site file; "
        "list each published image with its `sha256sum` (docs/operators.md, \"Runtime "
        "registry\")")});
  }
  auto registry = catalog::loadRuntimeRegistryFile(*registry_path);
  if (!registry) return failAll(registry.error());
  return RegistryFile{*registry_path, std::move(*registry)};
}

Checked<SiteContext> loadSiteContext(const std::optional<std::string>& site_flag,
                                     const SiteEnvironment& env) {
  auto site = loadSiteFile(site_flag, env);
  if (!site) return failAll(site.error());
  auto registry = loadRegistryFile(site->site, env);
  if (!registry) return failAll(registry.error());
  SiteContext context;
  context.site_path = std::move(site->path);
  context.site = std::move(site->site);
  context.registry_path = std::move(registry->path);
  context.registry = std::move(registry->registry);
  return context;
}

Checked<PreparedLaunch> prepare(const std::string& spec_path, const SiteContext& context,
                                const PrepareOptions& options) {
  catalog::ArtifactVerifier verifier;
  launch::OpenSslRandomSource random;
  return prepare(spec_path, context, options, verifier, random);
}

Checked<PreparedLaunch> prepare(const std::string& spec_path, const SiteContext& context,
                                const PrepareOptions& options, catalog::ArtifactVerifier& verifier,
                                launch::RandomSource& random) {
  if (auto readable = checkReadableFile(spec_path, "-f", "job spec"); !readable) {
    return failAll({readable.error()});
  }
  return prepareParsed(spec::loadPartialJobSpecFile(spec_path), context, options, verifier, random);
}

Checked<PreparedLaunch> prepareText(std::string_view spec_text, const SiteContext& context,
                                    const PrepareOptions& options,
                                    catalog::ArtifactVerifier& verifier,
                                    launch::RandomSource& random) {
  return prepareParsed(spec::parsePartialJobSpec(spec_text), context, options, verifier, random);
}

// The rest of the pipeline once the spec has been parsed (or failed to).
Checked<PreparedLaunch> prepareParsed(const spec::PartialSpec& parsed, const SiteContext& context,
                                      const PrepareOptions& options,
                                      catalog::ArtifactVerifier& verifier,
                                      launch::RandomSource& random) {
  // Option problems and spec problems are reported together, so one run shows them all.
  Errors errors;
  if (options.attempt < 1) {
    errors.push_back({codes::kInvalidAttempt, "--attempt",
                      "--attempt must be >= 1, not " + std::to_string(options.attempt)});
  }
  if (options.job_id && !launch::isValidJobId(*options.job_id)) {
    errors.push_back({codes::kInvalidJobId, "--job-id",
                      "--job-id '" + *options.job_id +
                          "' is not of the form <dns-label>-<8 lower-case hex digits>"});
  }
  if (options.submit_token && !launch::isValidSubmitToken(*options.submit_token)) {
    errors.push_back({codes::kInvalidSubmitToken, "--submit-token",
                      "--submit-token must be 'tp-' followed by 32 lower-case hex digits"});
  }
  if (options.attempt_dir && !staging::isCleanAbsolutePath(*options.attempt_dir)) {
    errors.push_back({codes::kInvalidAttemptDir, "--attempt-dir",
                      "--attempt-dir '" + *options.attempt_dir +
                          "' must be an absolute path without '.', '..' or empty components"});
  }
  // Structural errors do not hide the backend's rules: each rule whose inputs parsed is
  // judged too (structural first, then the rules), so one run shows every problem.
  Errors problems = launch::judgeSpec(parsed, context.site, context.registry);
  errors.insert(errors.end(), problems.begin(), problems.end());
  if (!errors.empty()) return failAll(std::move(errors));
  const spec::JobSpec& spec = parsed.spec;

  auto fresh = launch::newAttemptIdentity(spec.metadata.name, options.attempt, random);
  if (!fresh) return failAll({fresh.error()});
  // The identity: what the options pin, the rest fresh.
  launch::AttemptIdentity identity = *fresh;
  if (options.job_id) identity.job_id = *options.job_id;
  if (options.submit_token) identity.submit_token = *options.submit_token;

  std::string attempt_dir;
  if (options.attempt_dir) {
    attempt_dir = *options.attempt_dir;
  } else {
    auto built = staging::attemptDir(context.site.staging_root, identity.job_id, identity.attempt,
                                     options.run_as);
    if (!built) return failAll({built.error()});
    attempt_dir = *built;
  }

  // The job's checkpoint directory is the job's, wherever --attempt-dir puts the attempt.
  auto checkpoint_dir =
      staging::checkpointDir(context.site.staging_root, identity.job_id, options.run_as);
  if (!checkpoint_dir) return failAll({checkpoint_dir.error()});

  auto request = launch::prepareLaunch(spec, context.site, context.registry, identity, attempt_dir,
                                       *checkpoint_dir, verifier);
  if (!request) return failAll(request.error());
  if (request->workdir && !options.owner.empty()) {
    auto source = staging::workdirUploadDir(context.site.staging_root, options.owner,
                                            request->workdir->sha256);
    if (!source) return failAll({source.error()});
    request->workdir->source = std::move(*source);
  }
  std::vector<std::string> notes = applyExclusions(*request, options.avoid_nodes, options.nodes);
  // The renderer's own limits (it would otherwise render a script that refuses to run).
  if (auto renderable = slurm::checkRenderable(*request); !renderable) {
    return failAll(renderable.error());
  }

  PreparedLaunch prepared;
  prepared.script = slurm::renderBatchScript(*request);
  prepared.submit_body = slurm::buildSubmitBody(*request, prepared.script);
  prepared.request = std::move(*request);
  prepared.notes = std::move(notes);
  return prepared;
}

Result<staging::JobAccess> checkJobAccess(const SiteContext& context) {
  staging::PosixOsUsers users;
  staging::PosixStagingFs fs;
  return checkJobAccess(context, users, fs);
}

Result<staging::JobAccess> checkJobAccess(const SiteContext& context, staging::OsUsers& users,
                                          staging::StagingFs& fs) {
  auto access = staging::decideJobAccess(context.site, users, fs);
  if (!access) return fail(access.error().toError());
  return *access;
}

Result<staging::StagedAttempt> stage(const PreparedLaunch& prepared,
                                     const staging::JobAccess& access) {
  staging::PosixStagingFs fs;
  return stage(prepared, access, fs);
}

Result<staging::StagedAttempt> stage(const PreparedLaunch& prepared,
                                     const staging::JobAccess& access, staging::StagingFs& fs) {
  return staging::stageAttempt(prepared.request, prepared.script, prepared.submit_body, access, fs);
}

}  // namespace tuneplane::pipeline
