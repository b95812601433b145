#!/bin/bash
# shellcheck disable=SC2016,SC1003,SC2317 # values are single-quoted on purpose: never expanded; trap handlers
# TunePlane batch script: job job-cpu-apptainer (tabular-baseline), attempt 1. Rendered; do not edit.
# The #SBATCH lines only mirror the submit request for people: slurmrestd does not read
# them, every option is in the request's JSON. Values in them are shown with control
# characters replaced by '?'.
#SBATCH --job-name=tabular-baseline
#SBATCH --comment=tp-job-cpu-apptainer-a1-7f3c9e
#SBATCH --partition=cpu
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=8
#SBATCH --mem=16384M
#SBATCH --time=90
#SBATCH --no-requeue
#SBATCH --open-mode=append
#SBATCH --chdir=/shared/tuneplane/jobs/job-cpu-apptainer/attempts/1
#SBATCH --output=/shared/tuneplane/jobs/job-cpu-apptainer/attempts/1/logs/cpu.out
#SBATCH --error=/shared/tuneplane/jobs/job-cpu-apptainer/attempts/1/logs/cpu.err
#SBATCH --account=ml-research
set -euo pipefail

# Exit codes of this script itself (any other code is the entrypoint's own):
#   64 the request could not be rendered safely    65 artifact SHA-256 mismatch
#   66 artifact missing or unreadable               67 not every node joined Ray in time
#   68 no usable IP address for the Ray head        69 the Ray head did not start
#   70 Slurm started this job again (a requeue); nothing ran the second time
#   71 another Slurm job (a submit that reached Slurm twice) claimed this attempt first
#   72 the attempt's claim or the job's fence could not be made or read (nothing ran)
#   73 a later attempt of this job was staged: this one is superseded (nothing ran)

# An attempt runs once. Slurm starts a requeued job's script again (an administrator's
# requeue, ForceRequeueOnFail) as soon as its BeginTime passes, which TunePlane may not see
# in time: then this start does nothing, before it touches a sentinel or a file.
if [[ ${SLURM_RESTART_COUNT:-0} != 0 ]]; then
  printf 'tuneplane: Slurm started this job again (SLURM_RESTART_COUNT=%s); an attempt runs once, so nothing runs now\n' \
    "$SLURM_RESTART_COUNT" >&2
  exit 70
fi

# Sentinels for TunePlane: logs/start-<pool>.json now, logs/exit-<pool>.json when this
# script ends by itself (not when a signal kills it). Written whole or not at all.
tp_logs_dir='/shared/tuneplane/jobs/job-cpu-apptainer/attempts/1/logs'
tp_sentinel_pools=('cpu')

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

# The job's fence: a later attempt staged means this one is superseded (73).
tp_fence_dir='/shared/tuneplane/jobs/job-cpu-apptainer/fence'
tp_attempt=1
if [[ ! -e $tp_fence_dir/$tp_attempt ]] || ! tp_fence=$(ls -1A -- "$tp_fence_dir" 2>&1); then
  printf 'tuneplane: cannot read the job fence %s, so this job (%s) runs nothing\n' \
    "$tp_fence_dir" "${SLURM_JOB_ID:-}" >&2
  exit 72
fi
while IFS= read -r tp_mark; do
  if [[ $tp_mark =~ ^[0-9]{1,9}$ ]] && ((10#$tp_mark > tp_attempt)); then
    printf 'tuneplane: attempt %s of this job was staged after this one (%s), so this job (%s) runs nothing\n' \
      "$tp_mark" "$tp_attempt" "${SLURM_JOB_ID:-}" >&2
    exit 73
  fi
done <<<"$tp_fence"

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
tp_killed=0
tp_on_exit() { # STATUS
  [[ $BASHPID == "$$" ]] || return 0 # a subshell (bash can run it in one killed as it forks)
  if declare -F tp_stop_background >/dev/null; then tp_stop_background; fi
  if [[ $tp_killed == 0 ]]; then
    local end_time
    printf -v end_time '%(%s)T' -1
    tp_write_sentinels exit "\"node\":\"$tp_node\",\"exit_code\":$1,\"start_time\":$tp_start_time,\"end_time\":$end_time"
  fi
}
trap 'tp_on_exit "$?"' EXIT
trap 'tp_killed=1; exit 143' TERM
trap 'tp_killed=1; exit 130' INT
tp_write_sentinels start "\"node\":\"$tp_node\",\"time\":$tp_start_time"

# srun is found before any job variable is exported: a user's PATH must not pick it.
tp_srun=$(command -v srun) || { echo 'tuneplane: srun not found on PATH' >&2; exit 1; }

# The image is verified here, once, before any container starts.
tp_artifact='/shared/runtimes/custom-sklearn-1.4.sif'
tp_artifact_sha256='9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'
if [[ ! -f $tp_artifact ]] || ! tp_actual_sha256=$(sha256sum <"$tp_artifact"); then
  printf 'tuneplane: artifact missing or unreadable: %s (expected sha256 %s)\n' \
    "$tp_artifact" "$tp_artifact_sha256" >&2
  exit 66
fi
tp_actual_sha256=${tp_actual_sha256%% *}
if [[ $tp_actual_sha256 != "$tp_artifact_sha256" ]]; then
  printf 'tuneplane: artifact sha256 mismatch: %s (expected %s, actual %s)\n' \
    "$tp_artifact" "$tp_artifact_sha256" "$tp_actual_sha256" >&2
  exit 65
fi

# The job's environment. Exported only in each step's subshell, so user values never
# change this script's own environment. Apptainer sets NAME in the container from
# APPTAINERENV_NAME, over the image's value, whatever bytes it holds.
tp_export_job_env() {
  export APPTAINERENV_SEED='42'
  export APPTAINERENV_TUNEPLANE_JOB_ID='job-cpu-apptainer'
  export APPTAINERENV_TUNEPLANE_ATTEMPT='1'
  export APPTAINERENV_TUNEPLANE_OUTPUT_DIR='/tuneplane/output'
}

# The container every step runs in.
tp_container=(
  apptainer exec
  --no-home
  --bind '/datasets:/datasets:ro'
  --bind '/shared/tuneplane/jobs/job-cpu-apptainer/attempts/1:/tuneplane/attempt:ro'
  --bind '/shared/tuneplane/jobs/job-cpu-apptainer/output:/tuneplane/output'
  --pwd '/tuneplane/output'
  '/shared/runtimes/custom-sklearn-1.4.sif'
)

# CPU-only: the command runs directly as one task on one node; no Ray, no GPUs.
(
  tp_export_job_env
  exec "$tp_srun" --nodes=1 --ntasks=1 --cpus-per-task=8 \
    -- "${tp_container[@]}" \
    'python3' '/tuneplane/attempt/train.py' '--folds' '5'
)
