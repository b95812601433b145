// Stages one attempt: writes launch.json, job.sh, submit.json, the request's inputs (a
// framework's config) and manifest.json plus the writable logs/ and output/ folders (layout
// in staging_paths.h) into a temporary sibling,
// fsyncs them, makes the files 0444 and the attempt dir 0555, then renames it into place.
// A crash or an error therefore leaves no half-written attempt, and an existing attempt is
// never overwritten. Credentials never reach a staged file: a LaunchRequest holds none.
// Who may write logs/ and output/ follows the site's JobAccess (job_access.h): 0755 when
// TunePlane runs as the job user, or staging.group's, 02775, checked before anything is made.
// A per_user job (JobAccess::perUserJob, its rule from decideUserAccess) is staged into its
// users/<U> tree with that mode's modes: every directory made by mkdir alone, inheriting the
// user's group and setgid (02750; logs/ output/ checkpoints/ 02770), files 0440, the sealed
// attempt dir 0550 — no chown, and no chmod but the seal.
// The job's checkpoint directory (request.checkpoint_dir, beside the attempts) is made the
// same way when it does not exist yet, before the attempt appears; an existing one is never
// touched, so attempt N+1 finds what attempt N saved there.
// A job that ships its code (request.workdir) gets a copy of its upload in workdir/, read back
// from serve's store and its hash checked first (workdir_store.h), then written with the
// attempt's modes and sealed with it: every attempt of the job holds the same bytes, and the
// manifest names them by the tree's SHA-256 ("workdir": {"sha256", "bytes"}).
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "launch/launch_request.h"
#include "staging/job_access.h"
#include "staging/staging_fs.h"

namespace tuneplane::staging {

// The modes of the shared layout (per_user's: job_access.h).
inline constexpr mode_t kFileMode = 0444;
inline constexpr mode_t kAttemptDirMode = 0555;
inline constexpr mode_t kParentDirMode = 0755;  // jobs/<id>/attempts/ when created

struct StagedFile {
  std::string sha256;  // lower-case hex
  std::size_t bytes = 0;
};

struct StagedAttempt {
  std::string dir;                          // the attempt dir, now read-only
  std::map<std::string, StagedFile> files;  // name → digest; what manifest.json holds
};

// `access` comes from resolveJobAccess for the site the request was assembled for, or from
// decideUserAccess for a per_user job (whose request's paths are under users/<U>).
// REQUIRES: request.attempt_dir is a clean absolute path (isCleanAbsolutePath).
// Errors: "staging.invalid_attempt_dir", "staging.attempt_exists", "staging.not_traversable",
// "staging.invalid_input" (an input's name), "staging.invalid_checkpoint_dir" (not a clean
// absolute path, or not a directory) (nothing made), "workdir.unknown" and "workdir.mismatch"
// (the job's code cannot be had as its name says; nothing made), "staging.io".
Result<StagedAttempt> stageAttempt(const launch::LaunchRequest& request, const std::string& script,
                                   const nlohmann::json& submit_body, const JobAccess& access,
                                   StagingFs& fs);

// The manifest as written: {"version":1,"files":{"job.sh":{"sha256":…,"bytes":…},…}}.
nlohmann::json manifestJson(const StagedAttempt& attempt);

// Lower-case hex SHA-256 of `data`.
std::string sha256Hex(const std::string& data);

}  // namespace tuneplane::staging
