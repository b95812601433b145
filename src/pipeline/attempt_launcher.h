// AttemptLauncher: the control loop's and the job service's door to the launch pipeline
// (launch_pipeline.h). It validates a spec exactly as `tuneplane validate` does, hands out
// job ids and submit tokens, and stages an attempt — or, when a run that stopped before
// sending already staged it, loads what was staged (submit.json, checked against the
// manifest), so an attempt is staged once and what was staged is what is submitted.
// Thread-safety: every method may be called from several threads at once (the API's
// handlers validate, the launch stage stages several attempts — each its own directory) when
// the verifier, the random source, the StagingFs and the AttemptReader allow it, as the real
// ones (ArtifactVerifier, OpenSslRandomSource, PosixStagingFs, posixAttemptReader) do.
// replaceRegistry (serve's SIGHUP) may run at the same time as all of them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attempt/attempt_files.h"
#include "common/result.h"
#include "pipeline/launch_pipeline.h"
#include "staging/os_users.h"
#include "store/job_store.h"

namespace tuneplane::pipeline {

struct StagedSubmit {
  std::string dir;
  nlohmann::json body;             // POST /job/submit, as staged in submit.json
  std::vector<std::string> notes;  // staged now: which nodes were kept out, or why not
};

// Nodes an earlier attempt failed on (node → why) and Slurm's node list, for a new stage
// (node_exclusion.h); a loaded attempt keeps what was staged.
struct NodeAvoidance {
  std::map<std::string, std::string> avoid;
  std::optional<std::vector<slurm::NodeInfo>> inventory;
};

class AttemptLauncher {
 public:
  // REQUIRES: every reference outlives the launcher. `access` is how the job user writes
  // the attempts (checkJobAccess, decided once at start); the default, TunePlane running as
  // slurm.user, is what tests with a fake filesystem want. `files` is how an attempt's files
  // are read back (what was staged, the sentinels, the logs) by the launcher and the
  // reconciler: the shared filesystem unless a test hands in another. `users` is who the
  // job users are (slurm.identity per_user: each job's rule, staging::decideUserAccess).
  AttemptLauncher(const SiteContext& site, catalog::ArtifactVerifier& verifier,
                  launch::RandomSource& random, staging::StagingFs& fs,
                  staging::JobAccess access = {},
                  attempt::AttemptReader& files = attempt::posixAttemptReader(),
                  staging::OsUsers& users = staging::posixOsUsers());

  // The site and the runtime registry in force. A reload (replaceRegistry) puts a new one in
  // force; a reference taken before stays valid for the launcher's life (every generation is
  // kept: a reload is an operator's act, and a registry is small).
  const SiteContext& site() const;
  // From now on: the registry read from `path` (the site file itself is not re-read). A
  // validate or stage already under way finishes with the registry it started with.
  void replaceRegistry(std::string path, catalog::RuntimeRegistry registry);
  // How an attempt's files are read (the reconciler reads its sentinels through it too).
  attempt::AttemptReader& files() const { return files_; }

  // Every rule `tuneplane validate` checks (structure, the backend's rules, the artifact's
  // hash), with a throwaway identity; nothing is staged. Errors: prepareText's.
  Checked<PreparedLaunch> validate(std::string_view spec_text);

  // A fresh "<name>-<8 hex>" job id. Errors: launch::newAttemptIdentity's.
  Result<std::string> newJobId(std::string_view job_name);
  // A fresh "tp-<32 hex>" submit token. Errors: launch::newAttemptIdentity's.
  Result<std::string> newSubmitToken(std::string_view job_name);
  // <staging_root>[/users/<run_as>]/jobs/<job_id>/attempts/<n>: `run_as` is the job's
  // store::JobRecord::run_as ("" in shared mode). Errors: staging::attemptDir's.
  Result<std::string> attemptDir(const std::string& job_id, int attempt,
                                 const std::string& run_as) const;

  // How a job run as `run_as` gets its files (staging/job_access.h): the site's rule, or
  // under slurm.identity per_user with a run_as, that user's (staging::decideUserAccess:
  // the user, its group and its users/<run_as> directory). A stage asks it first; a submit
  // may ask it to refuse early. Errors: decideUserAccess's (its refusal's toError()).
  Result<staging::JobAccess> accessFor(const std::string& run_as) const;

  // The attempt's submit body: staged now from `spec_text`, or loaded when its directory
  // already exists — after checking `spec_text` against the site and the artifact's hash
  // again either way (through the verifier's cache: a stat when the file is unchanged).
  // `run_as` as for attemptDir: it picks the checkpoint dir and the job's rule (accessFor).
  // `owner`: the job's API user, whose upload a spec.workdir names (PrepareOptions::owner).
  // Errors: accessFor's, prepareText's, stage's, and "control.staged_attempt_invalid" when an
  // existing directory is not this attempt's (manifest, token) — never overwritten.
  Checked<StagedSubmit> stageOrLoad(std::string_view spec_text, const store::AttemptRecord& attempt,
                                    const std::string& run_as, const std::string& owner = "");
  // The same from the spec parsed already (spec::parsePartialJobSpec of the stored text).
  Checked<StagedSubmit> stageOrLoad(const spec::PartialSpec& parsed,
                                    const store::AttemptRecord& attempt, const std::string& run_as,
                                    const NodeAvoidance& avoidance = {},
                                    const std::string& owner = "");

 private:
  Checked<StagedSubmit> load(const store::AttemptRecord& attempt);

  mutable std::mutex site_mu_;
  const SiteContext* site_;  // the one in force: the constructor's, or the newest of reloaded_
  std::vector<std::unique_ptr<const SiteContext>> reloaded_;
  catalog::ArtifactVerifier& verifier_;
  launch::RandomSource& random_;
  staging::StagingFs& fs_;
  staging::JobAccess access_;
  attempt::AttemptReader& files_;
  staging::OsUsers& users_;
};

}  // namespace tuneplane::pipeline
