// The launch pipeline: the one path from a spec to a staged attempt, shared by the CLI
// (validate, render, slurm submit), the reconciler (every attempt) and the job service
// (validation at submit time):
//   site file + registry  ─► loadSiteContext
//   spec file or text     ─► prepare / prepareText: parse + judge every rule, identity,
//     + context              attempt dir, assemble + verify the artifact, render the script
//                            and the submit body
//   site + this host      ─► checkJobAccess: can the job user write what TunePlane stages?
//   PreparedLaunch        ─► stage: write the immutable attempt dir (staging/stager.h)
// Every step reports all the problems it finds (Checked<>); nothing is rendered unless the
// spec and the artifact pass. The error codes keep their "cli." prefix: they are stable and
// scripts match on them (error_codes.h). Thread-safety: free functions; a shared
// ArtifactVerifier must be safe to share (catalog/artifact_verifier.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/runtime_registry.h"
#include "catalog/site_config.h"
#include "common/result.h"
#include "launch/launch_request.h"
#include "slurm/job_record.h"
#include "spec/partial_spec.h"
#include "staging/job_access.h"
#include "staging/stager.h"

namespace tuneplane::catalog {
class ArtifactVerifier;
}
namespace tuneplane::launch {
class RandomSource;
}

namespace tuneplane::pipeline {

inline constexpr const char* kSiteFileEnv = "TUNEPLANE_SITE_FILE";
inline constexpr const char* kRegistryFileEnv = "TUNEPLANE_RUNTIME_REGISTRY_FILE";

// The site's facts, loaded once per command.
struct SiteContext {
  std::string site_path;
  catalog::SiteConfig site;
  std::string registry_path;
  catalog::RuntimeRegistry registry;
};

// The environment variables loadSiteContext consults, read by the caller (the CLI:
// cli/site_environment.h), so the pipeline reads no process state and tests need no setenv.
struct SiteEnvironment {
  std::optional<std::string> site_file;      // TUNEPLANE_SITE_FILE
  std::optional<std::string> registry_file;  // TUNEPLANE_RUNTIME_REGISTRY_FILE
};

// Site file from `site_flag` (--site) else TUNEPLANE_SITE_FILE; registry from
// TUNEPLANE_RUNTIME_REGISTRY_FILE else the site's runtime_registry_file.
// Errors: those of catalog::siteFilePath/registryPath and the loaders, and
// "cli.file_unreadable" (field "--site" or "runtime_registry_file") naming the file.
Checked<SiteContext> loadSiteContext(const std::optional<std::string>& site_flag,
                                     const SiteEnvironment& env);

// The two halves of loadSiteContext, for a command (doctor) that reports a broken registry
// instead of stopping at it.
struct SiteFile {
  std::string path;
  catalog::SiteConfig site;
};
// Errors: "cli.no_site", "cli.file_unreadable" (field "--site"), the site loader's.
Checked<SiteFile> loadSiteFile(const std::optional<std::string>& site_flag,
                               const SiteEnvironment& env);
struct RegistryFile {
  std::string path;
  catalog::RuntimeRegistry registry;
};
// Errors: catalog::registryPath's, "cli.file_unreadable" (field "runtime_registry_file" or
// TUNEPLANE_RUNTIME_REGISTRY_FILE), the registry loader's.
Checked<RegistryFile> loadRegistryFile(const catalog::SiteConfig& site, const SiteEnvironment& env);

struct PrepareOptions {
  std::optional<std::string> job_id;        // else a fresh "<name>-<8 hex>"
  int attempt = 1;                          // >= 1
  std::optional<std::string> submit_token;  // else a fresh "tp-<32 hex>"
  std::optional<std::string> attempt_dir;   // else <staging_root>/jobs/<id>/attempts/<n>
  // slurm.identity per_user: the Unix user the job runs as (store::JobRecord::run_as); its
  // attempt and checkpoint dirs are then under <staging_root>/users/<run_as>/ (staging_paths.h).
  // "": the shared layout.
  std::string run_as;
  // The API user whose uploads a spec.workdir names (store::JobRecord::owner): the attempt's
  // code is copied from <staging_root>/workdirs/<owner>/<sha256> (staging/workdir_store.h).
  // "": none known (offline validate and render), and a spec with a workdir cannot be staged.
  std::string owner;
  // Retries that learn (node_exclusion.h): nodes an earlier attempt failed on (node → why)
  // and Slurm's node list, to keep them out where the pools still fit without them.
  std::map<std::string, std::string> avoid_nodes;
  std::optional<std::vector<slurm::NodeInfo>> nodes;
};

struct PreparedLaunch {
  launch::LaunchRequest request;
  std::string script;              // the batch script (slurm::renderBatchScript)
  nlohmann::json submit_body;      // POST /slurm/v0.0.45/job/submit (slurm::buildSubmitBody)
  std::vector<std::string> notes;  // for people: which nodes were kept out, or why not
};

// Errors, all found in one pass and in this order: the options' ("cli.invalid_attempt",
// "cli.invalid_job_id", "cli.invalid_submit_token", "cli.invalid_attempt_dir"), then
// launch::judgeSpec's (the spec parser's, then every backend rule it can judge). Only when
// there are none: the staging path builder's, then launch::prepareLaunch's (the attempt
// dir, then the artifact check, which may read gigabytes), then slurm::checkRenderable's.
// A missing spec file is "cli.file_unreadable" (field "-f"), alone.
Checked<PreparedLaunch> prepare(const std::string& spec_path, const SiteContext& context,
                                const PrepareOptions& options);
// The same with the collaborators injected (tests; a daemon keeps one verifier for its cache).
Checked<PreparedLaunch> prepare(const std::string& spec_path, const SiteContext& context,
                                const PrepareOptions& options, catalog::ArtifactVerifier& verifier,
                                launch::RandomSource& random);
// The same from spec text (YAML or JSON) held in memory: a job's spec as stored, or as an
// API client sent it. Errors: those of prepare() except "cli.file_unreadable".
Checked<PreparedLaunch> prepareText(std::string_view spec_text, const SiteContext& context,
                                    const PrepareOptions& options,
                                    catalog::ArtifactVerifier& verifier,
                                    launch::RandomSource& random);
// The same from a spec parsed already (spec::parsePartialJobSpec), complete or not: the
// reconciler parses a stored spec once per attempt, not once per step.
Checked<PreparedLaunch> prepareParsed(const spec::PartialSpec& parsed, const SiteContext& context,
                                      const PrepareOptions& options,
                                      catalog::ArtifactVerifier& verifier,
                                      launch::RandomSource& random);

// How the site's job user (slurm.user) will write the attempts TunePlane stages from this
// host (staging/job_access.h): the users and staging.group resolved here, and the way down
// to the staging root checked. A submit refuses before staging anything when this fails.
// Errors: those of staging::decideJobAccess (resolveJobAccess, then checkJobCanReach).
Result<staging::JobAccess> checkJobAccess(const SiteContext& context);
Result<staging::JobAccess> checkJobAccess(const SiteContext& context, staging::OsUsers& users,
                                          staging::StagingFs& fs);

// Stages prepared.request.attempt_dir with the real filesystem (staging::stageAttempt).
// Errors: "staging.attempt_exists", "staging.invalid_attempt_dir", "staging.not_traversable",
// "staging.io".
Result<staging::StagedAttempt> stage(const PreparedLaunch& prepared,
                                     const staging::JobAccess& access);
// The same through an injected filesystem seam (tests inject failures).
Result<staging::StagedAttempt> stage(const PreparedLaunch& prepared,
                                     const staging::JobAccess& access, staging::StagingFs& fs);

}  // namespace tuneplane::pipeline
