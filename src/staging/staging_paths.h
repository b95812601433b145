// Where an attempt lives on the shared filesystem. Pure path builders: no I/O. Every id
// that becomes a path component is validated here, so nothing can traverse out of the
// staging root ("..", "/", empty components).
//
//   <staging_root>/
//   ├── jobs/                          slurm.identity shared (and a job with no run_as)
//   │   └── <job_id>/                  e.g. hello-tuneplane-1a2b3c4d (launch::isValidJobId)
//   │       ├── checkpoints/           the job's checkpoints (TUNEPLANE_CHECKPOINT_DIR): made
//   │       │                          with the first attempt, writable like logs/, never
//   │       │                          replaced; each attempt resumes from what it holds
//   │       ├── fence/                 the attempts staged so far (job_fence.h)
//   │       └── attempts/
//   │           ├── .<n>.staging-XXXXXX  a stage in progress (removed on error; never read)
//   │           └── <n>/               1-based; written once, then read-only (0555)
//   │               ├── launch.json    the LaunchRequest snapshot (0444)
//   │               ├── job.sh         the rendered batch script (0444)
//   │               ├── submit.json    the slurmrestd submit body (0444)
//   │               ├── llamafactory.yaml  a llamafactory job's config (0444; launch::StagedInput)
//   │               ├── workdir/       the job's code (spec.workdir), copied from workdirs/:
//   │               │                  files 0444 (0555 executable), folders 0555
//   │               ├── manifest.json  sha256 + size of each file above (0444)
//   │               ├── logs/          writable by the job user (job_access.h): 0755, or
//   │               │   │              staging.group's 02775
//   │               │   ├── <pool>.out Slurm writes each component's stdout here
//   │               │   └── <pool>.err … and its stderr (attempt/log_tail.h reads both)
//   │               └── output/        the job's results (writable, like logs/)
//   ├── workdirs/<user>/<sha256>/      uploaded code, serve's alone (workdir_store.h)
//   └── users/                         slurm.identity per_user (job_access.h)
//       └── <unix_user>/               the job's run_as; made once by root: owner serve's
//           │                          user, group the user's primary group, 02750
//           └── jobs/<job_id>/         the same tree as above, with the modes of per_user:
//                                      directories 02750 (setgid, inherited), files 0440,
//                                      the attempt dir 0550, logs/ output/ checkpoints/ 02770
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace tuneplane::staging {

inline constexpr std::string_view kJobsDir = "jobs";
inline constexpr std::string_view kUsersDir = "users";
inline constexpr std::string_view kAttemptsDir = "attempts";
inline constexpr std::string_view kLaunchFile = "launch.json";
inline constexpr std::string_view kScriptFile = "job.sh";
inline constexpr std::string_view kSubmitFile = "submit.json";
inline constexpr std::string_view kManifestFile = "manifest.json";
inline constexpr std::string_view kLogsDir = "logs";
inline constexpr std::string_view kOutputDir = "output";
inline constexpr std::string_view kCheckpointsDir = "checkpoints";

// True when `path` is absolute and has no empty, "." or ".." component (a trailing "/" is
// not allowed either), so joining a validated component to it cannot escape it.
bool isCleanAbsolutePath(std::string_view path);

// `run_as` below is the job's Unix user under slurm.identity per_user (store::JobRecord's
// run_as), "" otherwise: "" keeps the shared layout, <root>/jobs/…; a user puts the job under
// <root>/users/<run_as>/jobs/….

// <root>/users/<user>: a per_user job user's directory. Errors: "staging.invalid_root",
// "staging.invalid_user" (not a Unix user name: common/text_checks.h).
Result<std::string> userDir(std::string_view staging_root, std::string_view user);

// <root>[/users/<run_as>]/jobs/<job_id>. Errors: "staging.invalid_root",
// "staging.invalid_user", "staging.invalid_job_id".
Result<std::string> jobDir(std::string_view staging_root, std::string_view job_id,
                           std::string_view run_as = {});

// <job dir>/checkpoints. Errors: those of jobDir.
Result<std::string> checkpointDir(std::string_view staging_root, std::string_view job_id,
                                  std::string_view run_as = {});

// <job dir>/attempts/<attempt>. Errors: those of jobDir, "staging.invalid_attempt".
Result<std::string> attemptDir(std::string_view staging_root, std::string_view job_id, int attempt,
                               std::string_view run_as = {});

// <attempt_dir>/<name>; REQUIRES: attempt_dir came from attemptDir or passed
// isCleanAbsolutePath, and name is one of the constants above.
std::string attemptFile(std::string_view attempt_dir, std::string_view name);

// Prefix of the temporary sibling a stage is built in: ".<basename>.staging-". Temporary
// directories start with "." so they never look like an attempt number.
std::string stagingTempPrefix(std::string_view attempt_dir);

// The parent directory of a clean absolute path ("/a/b" → "/a"; "/a" → "/").
std::string parentDir(std::string_view path);

}  // namespace tuneplane::staging
