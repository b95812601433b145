// What the control loop reads from an attempt's logs/ folder: the start and exit sentinels
// the batch script writes (slurm/script_renderer.h) and whether a component's scheduler log
// exists. The job owns logs/ and can plant anything there, so every file is opened with
// O_NOFOLLOW, relative to descriptors of the attempt dir and of logs/ (opened O_NOFOLLOW
// too), must be a regular file, and is read only up to kMaxSentinelBytes. Parsing is pure.
// Thread-safety: free functions.
//
//   <attempt_dir>/logs/
//   ├── claim               "<SLURM_JOB_ID>\n": the Slurm job that claimed the attempt
//   ├── start-<pool>.json   {"version":1,"node":N,"time":T}
//   ├── exit-<pool>.json    {"version":1,"node":N,"exit_code":C,"start_time":T0,"end_time":T1}
//   ├── resume.json         {"version":1,"step":N}: the step the attempt started from, when
//   │                       its framework says (slurm/resume_record.h)
//   └── <pool>.out, <pool>.err   Slurm's stdout/stderr of the component
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace tuneplane::attempt {

inline constexpr std::size_t kMaxSentinelBytes = 4096;

struct StartSentinel {
  std::string node;
  int64_t time = 0;  // Unix seconds
  bool operator==(const StartSentinel&) const = default;
};

struct ExitSentinel {
  std::string node;
  int exit_code = 0;
  int64_t start_time = 0;
  int64_t end_time = 0;
  bool operator==(const ExitSentinel&) const = default;
};

// The sentinels found for an attempt, by pool. A file that is missing is simply absent; one
// that is unsafe or unreadable is absent too, and named in `problems`.
struct AttemptSentinels {
  std::map<std::string, StartSentinel> start;
  std::map<std::string, ExitSentinel> exit;
  // The numeric id in logs/claim: the Slurm job that started the attempt first (of two
  // jobs a doubled submit made, the other ran nothing). Absent while nothing claimed it, or
  // while the claimant has created the file but not written it yet.
  std::optional<uint64_t> claimed_by;
  std::vector<std::string> problems;

  bool any() const { return !start.empty() || !exit.empty(); }
};

// Errors: "control.bad_sentinel" naming what is wrong.
Result<StartSentinel> parseStartSentinel(std::string_view text);
Result<ExitSentinel> parseExitSentinel(std::string_view text);
// logs/claim's text: a Slurm job id (at most 10 digits, not 0) and a newline; nullopt for
// anything else (empty too).
std::optional<uint64_t> parseClaim(std::string_view text);

// logs/resume.json's text: {"version":1,"step":N} with 0 <= N. Errors: "control.bad_sentinel".
Result<int64_t> parseResumeRecord(std::string_view text);

// The step the attempt started from, as its batch script recorded it (logs/resume.json,
// opened as safely as the sentinels); nullopt when there is none — the framework does not say,
// the attempt has not reached its driver — or when the file is unsafe or malformed (it is
// the job's to write, so it decides nothing: `describe` then just does not say).
// REQUIRES: attempt_dir is a clean absolute path.
std::optional<int64_t> readResumeStep(const std::string& attempt_dir);

// REQUIRES: attempt_dir is a clean absolute path; pools are the attempt's pool names.
AttemptSentinels readSentinels(const std::string& attempt_dir,
                               const std::vector<std::string>& pools);

// True when logs/<pool>.out exists as a regular file (a symlink does not count).
bool schedulerLogExists(const std::string& attempt_dir, const std::string& pool);

// Reads a file TunePlane staged into the attempt dir (manifest.json, submit.json), whole.
// Errors: "control.staged_attempt_invalid" when it cannot be read.
Result<std::string> readStagedFile(const std::string& attempt_dir, std::string_view name);

// How the control loop reads an attempt's files: the seam between its decisions and the
// shared filesystem, as staging::StagingFs is for writing. The reconciler and the
// AttemptLauncher read only through it, so tests hand them an in-memory or failing one.
// Thread-safety: the implementations here are stateless; a test double decides its own.
class AttemptReader {
 public:
  virtual ~AttemptReader() = default;
  virtual AttemptSentinels sentinels(const std::string& attempt_dir,
                                     const std::vector<std::string>& pools) = 0;
  virtual bool schedulerLogExists(const std::string& attempt_dir, const std::string& pool) = 0;
  virtual Result<std::string> stagedFile(const std::string& attempt_dir, std::string_view name) = 0;
};

// The shared filesystem, through the functions above.
class PosixAttemptReader final : public AttemptReader {
 public:
  // AttemptReader
  AttemptSentinels sentinels(const std::string& attempt_dir,
                             const std::vector<std::string>& pools) override;
  bool schedulerLogExists(const std::string& attempt_dir, const std::string& pool) override;
  Result<std::string> stagedFile(const std::string& attempt_dir, std::string_view name) override;
};

// One process-wide PosixAttemptReader (it holds no state), the default where none is given.
AttemptReader& posixAttemptReader();

}  // namespace tuneplane::attempt
