// LaunchRequest → the batch script (bash) that slurmrestd runs on the first node of
// component 0. Pure. Every user-controlled string is single-quoted by shellQuote(), so no
// value can become shell syntax. See docs/developers.md ("The script, top to bottom") for the
// script's structure.
#pragma once

#include <string>
#include <string_view>

#include "launch/launch_request.h"

namespace tuneplane::slurm {

// Exit codes of the batch script itself; any other code is the entrypoint's own (a GPU job
// exits with the driver's code, a CPU job with its command's).
inline constexpr int kExitUnrenderable = 64;      // checkRenderable() failed; nothing ran
inline constexpr int kExitArtifactMismatch = 65;  // image's SHA-256 differs from the expected
inline constexpr int kExitArtifactMissing = 66;   // image file missing or unreadable
inline constexpr int kExitRayJoinTimeout = 67;    // the Ray cluster did not reach all nodes
inline constexpr int kExitNoHeadAddress = 68;     // no usable IP address for the Ray head
inline constexpr int kExitRayHeadFailed = 69;     // the Ray head stopped or gave no address
inline constexpr int kExitRestartRefused = 70;    // Slurm started the job again; nothing ran
inline constexpr int kExitAlreadyClaimed = 71;    // another Slurm job claimed the attempt first
// The claim or the job's fence unreadable at the start (nothing ran), or the fence unreadable
// for kFenceUnreadableSeconds while the attempt ran (its steps were stopped).
inline constexpr int kExitCannotClaim = 72;
// A later attempt of the job was staged: at the start (nothing ran), or while the attempt ran
// (its steps were stopped).
inline constexpr int kExitSuperseded = 73;

// Sentinels: the script writes <logs_dir>/start-<pool>.json for every component when it
// begins ({"version":1,"node":N,"time":T}) and <logs_dir>/exit-<pool>.json when it ends by
// itself ({"version":1,"node":N,"exit_code":C,"start_time":T0,"end_time":T1}; Unix seconds),
// each written to a temporary file and renamed, so a reader sees it whole or not at all.
// A script killed by a signal (cancel, time limit, node loss) writes no exit sentinel.
// Before either, the script claims the attempt: it creates <logs_dir>/claim exclusively,
// holding its SLURM_JOB_ID and a newline, and exits kExitAlreadyClaimed when another Slurm job
// made it first (a submit carried out twice), before any sentinel or step; then it checks the
// job's fence (staging/job_fence.h) and exits kExitSuperseded when a later attempt of the job
// was staged. Both fail closed: what it cannot create or read exits kExitCannotClaim.
inline constexpr std::string_view kClaimFile = "claim";
inline constexpr std::string_view kStartSentinel = "start";
inline constexpr std::string_view kExitSentinel = "exit";
// "<kind>-<pool>.json", the file name inside logs_dir. REQUIRES: pool passed checkRenderable.
std::string sentinelFileName(std::string_view kind, std::string_view pool);

// While the attempt runs, the script keeps obeying the fence (docs/decisions.md, "A running
// attempt obeys the job's fence"): a watcher reads it every kFencePollSeconds (P; each read
// bounded by P). A later attempt's mark stops the attempt's steps — TERM, then KILL after
// kFenceGraceSeconds (G) — and the script exits kExitSuperseded; a fence unreadable at every
// read for kFenceUnreadableSeconds (U) stops them too, exiting kExitCannotClaim. Stopped so,
// the script writes no exit sentinel: the attempt did not end by itself. An attempt after the
// first whose earlier attempt started and did not end by itself (no exit sentinel) starts its
// command fenceHandoffSeconds(P, G) after it read its own mark: by then a superseded attempt
// that reads the fence has stopped. The batch step's environment may set P, G and U (the
// kFence*Env names, whole seconds from 1 to 9999: the site's slurm.job_environment, or tests).
inline constexpr int kFencePollSeconds = 10;
inline constexpr int kFenceGraceSeconds = 10;
inline constexpr int kFenceUnreadableSeconds = 180;  // below Slurm's default SlurmdTimeout, 300
inline constexpr std::string_view kFencePollEnv = "TUNEPLANE_FENCE_POLL_SECONDS";
inline constexpr std::string_view kFenceGraceEnv = "TUNEPLANE_FENCE_GRACE_SECONDS";
inline constexpr std::string_view kFenceUnreadableEnv = "TUNEPLANE_FENCE_UNREADABLE_SECONDS";
// The longest a superseded attempt that reads the fence takes to stop its steps once a later
// mark is there: a read that just missed it and the next one (each up to P, one every P), the
// script's own read (up to P), then the grace.
constexpr int fenceHandoffSeconds(int poll, int grace) {
  return 3 * poll + grace;
}

// REQUIRES nothing: a request that fails checkRenderable() (script_checks.h) renders as a
// script that only prints the problems and exits kExitUnrenderable, so nothing half-safe
// can ever reach a node. Deterministic: the same request gives the same bytes.
std::string renderBatchScript(const launch::LaunchRequest& request);

// One shell word: single-quoted, with embedded single quotes as '\''. Safe for any bytes.
std::string shellQuote(std::string_view value);

// Text for a `#` comment line: control characters (a newline would start a new script line)
// become '?'. Comments cannot be quoted, so this is how values reach #SBATCH lines.
std::string commentSafe(std::string_view value);

}  // namespace tuneplane::slurm
