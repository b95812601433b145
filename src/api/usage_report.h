// Usage from Slurm's own accounting: slurmdbd's run records (slurm/slurmdb_jobs.h) summed into
// CPU-hours and GPU-hours per user, per team (the Slurm account), per TunePlane owner or per
// TunePlane job over a window, and who may see which runs. Pure: the records, the window,
// "now" and the store's answer about a job all come in as values (GET /v1/usage, `tuneplane
// usage`, the console's usage page and /metrics all use this one function).
//
// The rules (docs/users.md, "Usage"):
//  - Every record is one run; every run is counted once (records repeated in an answer, same
//    cluster, job id, submit and start time, count once). A requeued or preempted job's
//    earlier runs are records of their own (state REQUEUED …) and count like the last one.
//  - A run's seconds are those of [start, end) inside [since, until): a run that began before
//    the window or ends after it counts only its part inside it; a run still running counts
//    up to `now`; a record that never started (start 0, or CANCELLED with its end at its
//    start: cancelled while pending) is no run. Suspended time is not counted:
//    the record gives it only as a total, so a clipped run loses its share of it
//    (seconds × (wall − suspended) / wall).
//  - CPU-seconds = that × tres.allocated cpu (as sacct's CPUTimeRAW); GPU-seconds = that ×
//    tres.allocated gres/gpu. Hours are seconds / 3600.
//  - A run is TunePlane's when its working_directory is an attempt directory under the site's
//    staging_root (<root>/jobs/<id>/attempts/<n>, or <root>/users/<user>/jobs/<id>/attempts/<n>),
//    the store knows that job, and the run ran as the Unix user the job runs as (its run_as;
//    slurm.user in shared mode): anyone can submit with a --chdir that looks like one. Every
//    other run is counted for its Slurm user and team, marked as not TunePlane's.
//  - An administrator sees every run; a user sees the runs of their own TunePlane jobs and,
//    outside TunePlane, the runs of their own Unix user (never those of slurm.user, which
//    belong to no one person).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "slurm/slurmdb_jobs.h"

namespace tuneplane::api {

// [since, until), Unix seconds.
struct UsageWindow {
  int64_t since = 0;
  int64_t until = 0;
};

// The attempt a working directory is, under `staging_root` (staging/staging_paths.h's layout,
// and the per-user one under users/<user>/); nullopt for any other path. A trailing "/" is
// allowed; the job id must be one TunePlane makes (launch::isValidJobId), the attempt a
// positive decimal without leading zeros.
struct AttemptRef {
  std::string job_id = {};
  int attempt = 0;
  bool operator==(const AttemptRef&) const = default;
};
std::optional<AttemptRef> attemptOfDirectory(std::string_view staging_root,
                                             std::string_view working_directory);

// The seconds of `run` inside `window` (the rules above); `now` ends a run still running.
int64_t runSecondsIn(const slurm::AccountingRun& run, const UsageWindow& window, int64_t now);

enum class UsageGrouping {
  kUser,   // Slurm's user of each run (the Unix user it ran as): what sacct shows
  kTeam,   // the run's Slurm account
  kOwner,  // the TunePlane user who owns the job (TunePlane's runs only)
  kJob,    // the TunePlane job (TunePlane's runs only)
};
std::string_view toString(UsageGrouping by);
std::optional<UsageGrouping> parseUsageGrouping(std::string_view text);

// What the store says about a TunePlane job: who owns it and as whom it runs ("" = shared
// mode: slurm.user).
struct JobOwnership {
  std::string owner = {};
  std::string run_as = {};
};
// nullopt: the store has no such job.
using OwnershipLookup = std::function<std::optional<JobOwnership>(const std::string& job_id)>;

// Whose runs the caller sees.
struct UsageScope {
  bool everyone = false;       // an administrator
  std::string user = {};       // else: the TunePlane user …
  std::string unix_user = {};  // … and the Unix user their jobs run as
};

struct UsageFigures {
  int64_t cpu_seconds = 0;
  int64_t gpu_seconds = 0;
  int64_t runs = 0;  // runs that started and overlap the window
  bool operator==(const UsageFigures&) const = default;
};

struct UsageRow {
  std::string key;         // the user, team, owner or job id
  UsageFigures all;        // every run of the row the caller may see
  UsageFigures tuneplane;  // those of TunePlane's jobs
  // kJob rows: the job's owner, the Slurm user and team of its runs (the first run's), and
  // the attempts seen (ascending).
  std::string owner;
  std::string user;
  std::string team;
  std::vector<int> attempts;
};

struct UsageReport {
  UsageWindow window;
  UsageGrouping by = UsageGrouping::kUser;
  bool everyone = false;
  std::vector<UsageRow> rows;  // by key, ascending
  UsageFigures total;          // every run the caller may see (not only the rows' for kOwner/kJob)
  UsageFigures total_tuneplane;
};

struct UsageInput {
  UsageWindow window;
  int64_t now = 0;  // Unix seconds
  UsageGrouping by = UsageGrouping::kUser;
  std::string staging_root = {};
  std::string service_user = {};  // slurm.user
  UsageScope scope = {};
};

// The report of `runs` for `input`. `lookup` is asked once per job id an attempt directory
// names.
UsageReport buildUsageReport(const std::vector<slurm::AccountingRun>& runs, const UsageInput& input,
                             const OwnershipLookup& lookup);

// GET /v1/usage's answer (docs/openapi.json, UsageReport): since/until (RFC 3339), by, scope,
// items (each with user/team/owner/job as `by` says, cpu_hours, gpu_hours, cpu_seconds,
// gpu_seconds, runs, and — for user and team — `tuneplane`, the same figures of TunePlane's
// runs), total (with its `tuneplane`).
nlohmann::json usageReportJson(const UsageReport& report);

// A time of GET /v1/usage's since/until: "2026-12-01" (00:00 UTC), or RFC 3339
// ("2026-12-01T08:00:00Z", "…:00.5+01:00"); Unix seconds. nullopt for anything else.
std::optional<int64_t> parseUsageTime(std::string_view text);

}  // namespace tuneplane::api
