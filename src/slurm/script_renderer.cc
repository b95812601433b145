// See script_renderer.h. The script's parts, in order: header and #SBATCH mirror, strict
// mode, the artifact check, the job-environment exporter, the container prefix, then either
// the one CPU step or the Ray bring-up (script_ray.cc) and the driver.
#include "slurm/script_renderer.h"

#include <string>
#include <vector>

#include "slurm/script_checks.h"
#include "slurm/script_parts.h"
#include "slurm/submit_body.h"

namespace tuneplane::slurm {
namespace {

using launch::Component;
using launch::LaunchRequest;

void renderHeader(std::string& out, const LaunchRequest& request) {
  out += "#!/bin/bash\n";
  // Before the first command, so it holds for the whole file. SC2317: functions that only
  // traps call (tp_on_exit, tp_stop_background) look unreachable to shellcheck.
  out +=
      "# shellcheck disable=SC2016,SC1003,SC2317 # values are single-quoted on purpose: never "
      "expanded; trap handlers\n";
  out += "# TunePlane batch script: job " + commentSafe(request.identity.job_id) + " (" +
         commentSafe(request.job_name) + "), attempt " + std::to_string(request.identity.attempt) +
         ". Rendered; do not edit.\n";
  out +=
      "# The #SBATCH lines only mirror the submit request for people: slurmrestd does not read\n"
      "# them, every option is in the request's JSON. Values in them are shown with control\n"
      "# characters replaced by '?'.\n";
  for (std::size_t i = 0; i < request.components.size(); ++i) {
    const Component& c = request.components[i];
    if (i > 0) out += "#SBATCH hetjob\n";
    const auto line = [&out](const std::string& text) { out += "#SBATCH " + text + "\n"; };
    line("--job-name=" + commentSafe(request.job_name));
    line("--comment=" + commentSafe(request.identity.submit_token));
    line("--partition=" + commentSafe(c.partition));
    if (c.constraint) line("--constraint=" + commentSafe(*c.constraint));
    line("--nodes=" + std::to_string(c.nodes));
    line("--ntasks-per-node=1");
    line("--cpus-per-task=" + std::to_string(c.cpus_per_node));
    if (c.memory_mb > 0) line("--mem=" + std::to_string(c.memory_mb) + "M");
    if (c.scratch_mb > 0) line("--tmp=" + std::to_string(c.scratch_mb) + "M");
    if (c.gpus_per_node > 0)
      line("--gres=" + commentSafe(tresPerNode(c).substr(5)));  // minus "gres/"
    if (c.time_limit.count() > 0) {
      line("--time=" + std::to_string(c.time_limit.count()));
    } else {
      out += "# (no --time: the partition's default time limit applies)\n";
    }
    if (!c.excluded_nodes.empty()) {
      std::string nodes;
      for (const auto& n : c.excluded_nodes) nodes += (nodes.empty() ? "" : ",") + n;
      line("--exclude=" + commentSafe(nodes));
    }
    if (needsWholeNodes(request)) line("--exclusive");
    line("--no-requeue");
    if (request.preemption_warning) {
      line("--signal=" + request.preemption_warning->signal + "@" +
           std::to_string(request.preemption_warning->before_end.count()));
    }
    line("--open-mode=append");
    line("--chdir=" + commentSafe(request.attempt_dir));
    line("--output=" + commentSafe(schedulerLogPath(request.logs_dir, c.pool_name, ".out")));
    line("--error=" + commentSafe(schedulerLogPath(request.logs_dir, c.pool_name, ".err")));
    if (request.account) line("--account=" + commentSafe(*request.account));
    if (request.qos) line("--qos=" + commentSafe(*request.qos));
  }
}

// The start and exit sentinels (script_renderer.h): written first and last, so a job that
// Slurm no longer remembers can still be judged. The node name is reduced to [A-Za-z0-9._-]
// and the values are numbers, so the JSON needs no escaping; a pool name (no '/', checked by
// checkRenderable) only names the file. A failed write (logs/ not writable) never fails the
// job. Killed by a signal, or stopped by the job's fence after its start (script_fence.cc), the
// script writes no exit sentinel: it did not end by itself.
// Only the script's own shell writes it: a command substitution that a SIGTERM reaches while
// bash forks it can run the EXIT trap itself, with status 0 (seen under load with bash 5.2:
// a killed job would have looked like one that succeeded).
void renderSentinels(std::string& out, const LaunchRequest& request) {
  out +=
      "\n# Sentinels for TunePlane: logs/start-<pool>.json now, logs/exit-<pool>.json when this\n";
  out += "# script ends by itself (not when a signal or the job's fence stops it). Written whole\n";
  out += "# or not at all.\n";
  out += "tp_logs_dir=" + shellQuote(request.logs_dir) + "\n";
  out += "tp_sentinel_pools=(";
  for (std::size_t i = 0; i < request.components.size(); ++i) {
    out += (i ? " " : "") + shellQuote(request.components[i].pool_name);
  }
  out += ")\n";
  out += R"(
# One Slurm job runs the attempt. A submit that reached Slurm twice (a proxy sending it again)
# makes two jobs of this script, which can start at once; the first creates logs/claim (an
# exclusive create, atomic on NFS too), and any other exits 71 having run nothing. Fails
# closed: a claim that cannot be made for any other reason (permissions, a full or stale
# filesystem), or that stays empty (its write failed; the other copy writes its id right after
# creating it, so a few reads are waited for) exits 72, and nothing runs.
if ! (set -C && printf '%s\n' "${SLURM_JOB_ID:-}" >"$tp_logs_dir/claim") 2>/dev/null; then
  if [[ ! -e $tp_logs_dir/claim ]]; then
    printf 'tuneplane: cannot create %s, so this job (%s) runs nothing\n' \
      "$tp_logs_dir/claim" "${SLURM_JOB_ID:-}" >&2
    exit 72
  fi
  for tp_try in 1 2 3 4 5 6; do
    tp_claimant=$(head -c 32 "$tp_logs_dir/claim" 2>/dev/null) || true
    tp_claimant=${tp_claimant//[^0-9]/}
    [[ -n $tp_claimant || $tp_try == 6 ]] && break
    sleep 0.5
  done
  if [[ -z $tp_claimant ]]; then
    printf 'tuneplane: %s is empty or unreadable, so this job (%s) runs nothing\n' \
      "$tp_logs_dir/claim" "${SLURM_JOB_ID:-}" >&2
    exit 72
  fi
  printf 'tuneplane: Slurm job %s already runs this attempt, so this one (%s) runs nothing\n' \
    "$tp_claimant" "${SLURM_JOB_ID:-}" >&2
  exit 71
fi
)";
  renderFenceCheck(out, request);
  out += R"(
# Sentinels, written whole or not at all.
printf -v tp_start_time '%(%s)T' -1
tp_node=${SLURMD_NODENAME:-$(hostname 2>/dev/null || echo unknown)}
tp_node=${tp_node//[^A-Za-z0-9._-]/_}
tp_write_sentinels() { # KIND JSON-MEMBERS
  local pool tmp
  for pool in "${tp_sentinel_pools[@]}"; do
    tmp="$tp_logs_dir/.$1-$pool.json.$$"
    { printf '{"version":1,%s}\n' "$2" >"$tmp" && mv -f "$tmp" "$tp_logs_dir/$1-$pool.json"; } \
      2>/dev/null || rm -f "$tmp" 2>/dev/null || true
  done
}
# What the EXIT trap stops: the step the script waits for (tp_wait_step), the steps that run
# beside it (the Ray head and workers), the fence's watcher and the hand-off's wait.
tp_step_pid=""
tp_background_pids=()
tp_fence_watcher_pid=""
tp_handoff_pid=""
tp_killed=0 # a signal ended the script: no exit sentinel
tp_fenced=0 # the job's fence stopped the attempt after its start (72, 73): no exit sentinel
tp_exiting=0
tp_woken=0 # a trap that returned (tp_on_fence_alarm) ended a `wait` early
tp_on_exit() { # STATUS
  [[ $BASHPID == "$$" ]] || return 0 # a subshell (bash can run it in one killed as it forks)
  tp_exiting=1
  local pid
  for pid in "$tp_fence_watcher_pid" "$tp_handoff_pid"; do
    if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; fi
  done
  if [[ $tp_fenced == 1 ]]; then
    tp_stop_steps_now
  elif [[ -n $tp_step_pid ]]; then
    kill "$tp_step_pid" 2>/dev/null || true # a signal ended the script while it waited for it
  fi
  if declare -F tp_stop_background >/dev/null; then tp_stop_background; fi
  if [[ $tp_killed == 0 && $tp_fenced == 0 ]]; then
    local end_time
    printf -v end_time '%(%s)T' -1
    tp_write_sentinels exit "\"node\":\"$tp_node\",\"exit_code\":$1,\"start_time\":$tp_start_time,\"end_time\":$end_time"
  fi
}
trap 'tp_on_exit "$?"' EXIT
trap 'tp_killed=1; exit 143' TERM
trap 'tp_killed=1; exit 130' INT
tp_write_sentinels start "\"node\":\"$tp_node\",\"time\":$tp_start_time"

# Every step runs in the background and is waited for: bash runs a trap (a cancel's TERM, the
# fence's USR2) only between commands, and `wait` is the one a trapped signal interrupts. A trap
# that returns ends the `wait` too, with the step still running: wait again (a step that ended
# meanwhile keeps its status for it).
tp_wait_step() { # PID: returns the step's status
  local status
  tp_step_pid=$1
  while :; do
    tp_woken=0
    status=0
    wait "$1" || status=$?
    ((tp_woken == 1)) || break
  done
  tp_step_pid=""
  return "$status"
}
)";
  renderFenceWatch(out, request);
}

// The text above and below exits 71 for a second copy, 70 for a restarted job.
static_assert(kExitRestartRefused == 70);
static_assert(kExitAlreadyClaimed == 71);
static_assert(kExitCannotClaim == 72);
static_assert(kExitSuperseded == 73);
static_assert(kClaimFile == "claim");

void renderPrologue(std::string& out, const LaunchRequest& request) {
  out += R"(set -euo pipefail

# Exit codes of this script itself (any other code is the entrypoint's own):
#   64 the request could not be rendered safely    65 artifact SHA-256 mismatch
#   66 artifact missing or unreadable               67 not every node joined Ray in time
#   68 no usable IP address for the Ray head        69 the Ray head did not start
#   70 Slurm started this job again (a requeue); nothing ran the second time
#   71 another Slurm job (a submit that reached Slurm twice) claimed this attempt first
#   72 the attempt's claim or the job's fence could not be made or read (nothing ran), or the
#      fence stayed unreadable while the attempt ran (its steps were stopped)
#   73 a later attempt of this job was staged: this one is superseded (nothing ran, or its
#      steps were stopped)

# An attempt runs once. Slurm starts a requeued job's script again (an administrator's
# requeue, ForceRequeueOnFail) as soon as its BeginTime passes, which TunePlane may not see
# in time: then this start does nothing, before it touches a sentinel or a file.
if [[ ${SLURM_RESTART_COUNT:-0} != 0 ]]; then
  printf 'tuneplane: Slurm started this job again (SLURM_RESTART_COUNT=%s); an attempt runs once, so nothing runs now\n' \
    "$SLURM_RESTART_COUNT" >&2
  exit 70
fi
)";
  renderSentinels(out, request);
  out += R"(
# srun is found before any job variable is exported: a user's PATH must not pick it.
tp_srun=$(command -v srun) || { echo 'tuneplane: srun not found on PATH' >&2; exit 1; }
)";
}

// Hashes stdin rather than naming the file: GNU sha256sum escapes odd file names in its
// output (a leading '\'), which would corrupt the parsed digest.
void renderArtifactCheck(std::string& out, const LaunchRequest& request) {
  out += "\n# The image is verified here, once, before any container starts.\n";
  out += "tp_artifact=" + shellQuote(request.artifact.path) + "\n";
  out += "tp_artifact_sha256=" + shellQuote(request.artifact.sha256) + "\n";
  out += "if [[ ! -f $tp_artifact ]] || ! tp_actual_sha256=$(sha256sum <\"$tp_artifact\"); then\n";
  out +=
      "  printf 'tuneplane: artifact missing or unreadable: %s (expected sha256 %s)\\n' \\\n"
      "    \"$tp_artifact\" \"$tp_artifact_sha256\" >&2\n";
  out += "  exit " + std::to_string(kExitArtifactMissing) + "\n";
  out += "fi\n";
  out += "tp_actual_sha256=${tp_actual_sha256%% *}\n";
  out += "if [[ $tp_actual_sha256 != \"$tp_artifact_sha256\" ]]; then\n";
  out +=
      "  printf 'tuneplane: artifact sha256 mismatch: %s (expected %s, actual %s)\\n' \\\n"
      "    \"$tp_artifact\" \"$tp_artifact_sha256\" \"$tp_actual_sha256\" >&2\n";
  out += "  exit " + std::to_string(kExitArtifactMismatch) + "\n";
  out += "fi\n";
}

void renderEnvFunction(std::string& out, const LaunchRequest& request) {
  const bool pyxis = request.container_runtime == catalog::ContainerRuntime::kPyxis;
  out += "\n# The job's environment. Exported only in each step's subshell, so user values never\n";
  if (pyxis) {
    out += "# change this script's own environment. Pyxis: --container-env lists these names so\n";
    out += "# they win over the image's.\n";
  } else {
    out += "# change this script's own environment. Apptainer sets NAME in the container from\n";
    out += "# APPTAINERENV_NAME, over the image's value, whatever bytes it holds.\n";
  }
  out += "tp_export_job_env() {\n";
  if (request.environment.empty()) out += "  :\n";
  for (const auto& [name, value] : request.environment) {
    out += "  export " + containerEnvName(request, name) + "=" + shellQuote(value) + "\n";
  }
  out += "}\n";
}

// slurm.preemption_warning: Slurm sends the warning to every process of every step (its
// time limit's before_end, or a preemption's GraceTime). A process that neither handles nor
// ignores it would end, so each step's command starts with it ignored, which exec and fork
// pass on: a program that installs its own handler gets the warning, and one that knows
// nothing of it (Ray's own processes included) runs on as it would without a warning. Inside
// the container, where the command runs (under Pyxis nothing runs between slurmstepd and it),
// by the image's /bin/sh (docs/decisions.md, "The preemption warning").
void renderStepStart(std::string& out, const LaunchRequest& request) {
  if (!request.preemption_warning) return;
  out +=
      "\n# Each step's command starts with Slurm's warning signal ignored (exec passes that on);\n";
  out += "# a program that wants the warning installs a handler for $TUNEPLANE_PREEMPT_SIGNAL.\n";
  out += "tp_step_start=(sh -c " +
         shellQuote("trap \"\" " + request.preemption_warning->signal + "; exec \"$@\"") +
         " tuneplane-step)\n";
}

void renderContainer(std::string& out, const LaunchRequest& request) {
  out += "\n# The container every step runs in.\n";
  out += "tp_container=(\n";
  if (request.container_runtime == catalog::ContainerRuntime::kPyxis) {
    out += "  --container-image=" + shellQuote(request.artifact.path) + "\n";
    if (!request.mounts.empty()) {
      std::string mounts;
      for (const auto& m : request.mounts) {
        if (!mounts.empty()) mounts += ",";
        mounts += m.source + ":" + m.target + (m.read_only ? ":ro" : "");
      }
      out += "  --container-mounts=" + shellQuote(mounts) + "\n";
    }
    // The working directory is the writable output dir: frameworks that write relative
    // paths (checkpoints, caches) must not fail on the read-only attempt dir.
    if (!request.container_output_dir.empty()) {
      out += "  --container-workdir=" + shellQuote(request.container_output_dir) + "\n";
    }
    out += "  --no-container-mount-home\n";
  } else {
    out += "  apptainer exec\n";
    out += "  --no-home\n";
    for (const auto& m : request.mounts) {
      out +=
          "  --bind " + shellQuote(m.source + ":" + m.target + (m.read_only ? ":ro" : "")) + "\n";
    }
    if (request.uses_gpus) out += "  --nv\n";
    if (!request.container_output_dir.empty()) {
      out += "  --pwd " + shellQuote(request.container_output_dir) + "\n";
    }
    out += "  " + shellQuote(request.artifact.path) + "\n";
  }
  out += ")\n";
  renderStepStart(out, request);
}

void renderCpuJob(std::string& out, const LaunchRequest& request) {
  const Component& c = request.components.front();
  out += "\n# CPU-only: the command runs directly as one task on one node; no Ray, no GPUs.\n";
  Step step;
  step.srun_options = {"--nodes=1", "--ntasks=1",
                       "--cpus-per-task=" + std::to_string(c.cpus_per_node)};
  for (const auto& arg : request.command) step.command.push_back(shellQuote(arg));
  renderBeforeCommand(out, request);
  out += renderStep(request, step) + " &\n";
  out += "tp_wait_step \"$!\"\n";
}

std::string renderUnrenderable(const Errors& errors) {
  std::string out = "#!/bin/bash\n";
  out += "# TunePlane could not render this request safely, so this script runs nothing.\n";
  for (const Error& e : errors) {
    out += "echo " + shellQuote("tuneplane: cannot render: " + e.describe()) + " >&2\n";
  }
  out += "exit " + std::to_string(kExitUnrenderable) + "\n";
  return out;
}

}  // namespace

std::string shellQuote(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

std::string commentSafe(std::string_view value) {
  std::string out(value);
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) c = '?';
  }
  return out;
}

std::string sentinelFileName(std::string_view kind, std::string_view pool) {
  return std::string(kind) + "-" + std::string(pool) + ".json";
}

namespace {

// slurm.identity per_user (LaunchRequest::job_umask): before anything the script writes (the
// claim, the sentinels, what the job makes), so that TunePlane — not in the job user's group
// — reads it through the "other" bits; the user's staging directory keeps everyone else out.
void renderUmask(std::string& out, const LaunchRequest& request) {
  if (request.job_umask.empty()) return;
  out +=
      "\n# Files stay readable for TunePlane, which is not in this user's group; the user's\n"
      "# staging directory keeps every other user out (slurm.identity per_user).\n";
  out += "umask " + request.job_umask + "\n";
}

}  // namespace

std::string renderBatchScript(const LaunchRequest& request) {
  if (auto checked = checkRenderable(request); !checked) {
    return renderUnrenderable(checked.error());
  }
  std::string out;
  renderHeader(out, request);
  renderUmask(out, request);
  renderPrologue(out, request);
  renderArtifactCheck(out, request);
  renderEnvFunction(out, request);
  renderContainer(out, request);
  if (request.uses_gpus) {
    renderRayJob(out, request);
  } else {
    renderCpuJob(out, request);
  }
  return out;
}

}  // namespace tuneplane::slurm
