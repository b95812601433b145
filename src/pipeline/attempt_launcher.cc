// See attempt_launcher.h.
#include "pipeline/attempt_launcher.h"

#include <utility>

#include "attempt/error_codes.h"
#include "launch/attempt_identity.h"
#include "spec/spec_parser.h"
#include "staging/job_fence.h"
#include "staging/stager.h"
#include "staging/staging_fs.h"
#include "staging/staging_paths.h"

namespace tuneplane::pipeline {
namespace {

Error invalid(const std::string& dir, const std::string& what) {
  return Error{attempt::codes::kStagedAttemptInvalid, dir,
               "the staged attempt " + dir + " cannot be submitted: " + what};
}

}  // namespace

AttemptLauncher::AttemptLauncher(const SiteContext& site, catalog::ArtifactVerifier& verifier,
                                 launch::RandomSource& random, staging::StagingFs& fs,
                                 staging::JobAccess access, attempt::AttemptReader& files,
                                 staging::OsUsers& users)
    : site_(&site),
      verifier_(verifier),
      random_(random),
      fs_(fs),
      access_(std::move(access)),
      files_(files),
      users_(users) {}

const SiteContext& AttemptLauncher::site() const {
  std::lock_guard<std::mutex> lock(site_mu_);
  return *site_;
}

void AttemptLauncher::replaceRegistry(std::string path, catalog::RuntimeRegistry registry) {
  std::lock_guard<std::mutex> lock(site_mu_);
  auto next = std::make_unique<SiteContext>(*site_);
  next->registry_path = std::move(path);
  next->registry = std::move(registry);
  site_ = next.get();
  reloaded_.push_back(std::move(next));
}

Checked<PreparedLaunch> AttemptLauncher::validate(std::string_view spec_text) {
  return prepareText(spec_text, site(), PrepareOptions{}, verifier_, random_);
}

Result<std::string> AttemptLauncher::newJobId(std::string_view job_name) {
  auto identity = launch::newAttemptIdentity(job_name, 1, random_);
  if (!identity) return tl::unexpected(identity.error());
  return identity->job_id;
}

Result<std::string> AttemptLauncher::newSubmitToken(std::string_view job_name) {
  auto identity = launch::newAttemptIdentity(job_name, 1, random_);
  if (!identity) return tl::unexpected(identity.error());
  return identity->submit_token;
}

Result<std::string> AttemptLauncher::attemptDir(const std::string& job_id, int attempt,
                                                const std::string& run_as) const {
  return staging::attemptDir(site().site.staging_root, job_id, attempt, run_as);
}

Result<staging::JobAccess> AttemptLauncher::accessFor(const std::string& run_as) const {
  // A job with no run_as runs as slurm.user, whose rule is the site's (a per_user site's
  // stages it as kSameUser: TunePlane is slurm.user there).
  if (access_.mode != staging::JobAccessMode::kPerUser || run_as.empty()) return access_;
  auto access = staging::decideUserAccess(access_, site().site.staging_root, run_as, users_, fs_);
  if (!access) return fail(access.error().toError());
  return *access;
}

Checked<StagedSubmit> AttemptLauncher::stageOrLoad(std::string_view spec_text,
                                                   const store::AttemptRecord& attempt,
                                                   const std::string& run_as,
                                                   const std::string& owner) {
  return stageOrLoad(spec::parsePartialJobSpec(spec_text), attempt, run_as, {}, owner);
}

Checked<StagedSubmit> AttemptLauncher::stageOrLoad(const spec::PartialSpec& parsed,
                                                   const store::AttemptRecord& attempt,
                                                   const std::string& run_as,
                                                   const NodeAvoidance& avoidance,
                                                   const std::string& owner) {
  PrepareOptions options;
  options.run_as = run_as;
  options.owner = owner;
  options.avoid_nodes = avoidance.avoid;
  options.nodes = avoidance.inventory;
  options.job_id = attempt.job_id;
  options.attempt = attempt.number;
  options.submit_token = attempt.submit_token;
  options.attempt_dir = attempt.staging_dir;
  // Every rule and the artifact's hash, checked again even when the attempt was staged
  // before (a deferred submit, a restart): the image may have changed since. The verifier's
  // cache makes an unchanged artifact a stat().
  auto prepared = prepareParsed(parsed, site(), options, verifier_, random_);
  if (!prepared) return tl::unexpected(prepared.error());
  // Who the job is and how it gets its files, before anything of it is made.
  auto access = accessFor(run_as);
  if (!access) return failAll({access.error()});
  // The job's fence moves to this attempt before anything of it can be submitted: from here
  // on, no earlier attempt's script runs its command (staging/job_fence.h).
  if (auto marked = staging::markAttemptStaged(launch::fenceDirFor(attempt.staging_dir),
                                               attempt.number, fs_, *access);
      !marked) {
    return failAll({marked.error()});
  }
  if (fs_.exists(attempt.staging_dir)) return load(attempt);
  auto staged = stage(*prepared, *access, fs_);
  if (!staged) return failAll({staged.error()});
  return StagedSubmit{staged->dir, std::move(prepared->submit_body), std::move(prepared->notes)};
}

Checked<StagedSubmit> AttemptLauncher::load(const store::AttemptRecord& attempt) {
  const std::string& dir = attempt.staging_dir;
  auto manifest_text = files_.stagedFile(dir, staging::kManifestFile);
  auto body_text = files_.stagedFile(dir, staging::kSubmitFile);
  if (!manifest_text || !body_text)
    return failAll({invalid(dir, "manifest.json or submit.json unreadable")});
  const auto manifest = nlohmann::json::parse(*manifest_text, nullptr, false);
  const std::string file(staging::kSubmitFile);
  if (!manifest.is_object() || !manifest.contains("files") || !manifest["files"].contains(file) ||
      manifest["files"][file].value("sha256", "") != staging::sha256Hex(*body_text)) {
    return failAll({invalid(dir, "submit.json does not match manifest.json")});
  }
  auto body = nlohmann::json::parse(*body_text, nullptr, false);
  const auto& first = body.contains("jobs") && body["jobs"].is_array() && !body["jobs"].empty()
                          ? body["jobs"][0]
                          : body.value("job", nlohmann::json());
  if (!first.is_object() || first.value("comment", "") != attempt.submit_token) {
    return failAll({invalid(dir, "its submit token is not this attempt's")});
  }
  return StagedSubmit{dir, std::move(body), {}};
}

}  // namespace tuneplane::pipeline
