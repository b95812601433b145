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
#SBATCH --signal=USR2@120
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

# Sentinels for TunePlane: logs/start-<pool>.json now, logs/exit-<pool>.json when this
# script ends by itself (not when a signal or the job's fence stops it). Written whole
# or not at all.
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

# The job's fence (staging/job_fence.h): this attempt runs only while no later attempt
# of the job has been staged — checked now, watched while it runs (below), and read
# once more before its command. A later mark: superseded (73); unreadable: 72.
tp_fence_dir='/shared/tuneplane/jobs/job-cpu-apptainer/fence'
tp_attempt=1
# P: a read every P s, each bounded by P; G: TERM, then KILL after G s; U: unreadable
# that long stops the attempt. The batch step's environment may set each (the site's
# slurm.job_environment), in whole seconds from 1 to 9999.
tp_fence_poll=10
tp_fence_grace=10
tp_fence_unreadable=180
tp_fence_setting() { # VARIABLE NAME
  local value=${!2:-}
  if [[ $value =~ ^[1-9][0-9]{0,3}$ ]]; then
    printf -v "$1" '%s' "$value"
  elif [[ -n $value ]]; then
    printf 'tuneplane: %s is not a whole number of seconds from 1 to 9999, so %s s applies\n' \
      "$2" "${!1}" >&2
  fi
}
tp_fence_setting tp_fence_poll TUNEPLANE_FENCE_POLL_SECONDS
tp_fence_setting tp_fence_grace TUNEPLANE_FENCE_GRACE_SECONDS
tp_fence_setting tp_fence_unreadable TUNEPLANE_FENCE_UNREADABLE_SECONDS

# Reads the fence: 0 while this attempt's own mark is there and no later one; 73 when a later
# attempt has a mark (its number in tp_later_mark); 72 when it cannot tell. `ls` says when it
# cannot read the directory (a glob would not). LIMIT, in seconds, bounds a read that hangs (a
# hard NFS mount that lost its server): such a read is one that failed.
tp_later_mark=""
tp_read_fence() { # [LIMIT]
  local listing mark own=0
  local -a read_dir=(ls -1A -- "$tp_fence_dir")
  if [[ -n ${1:-} ]]; then read_dir=(timeout -s KILL "$1" "${read_dir[@]}"); fi
  listing=$("${read_dir[@]}" 2>/dev/null) || return 72
  while IFS= read -r mark; do
    if [[ $mark == "$tp_attempt" ]]; then own=1; fi
    if [[ $mark =~ ^[0-9]{1,9}$ ]] && ((10#$mark > tp_attempt)); then
      tp_later_mark=$mark
      return 73
    fi
  done <<<"$listing"
  ((own == 1)) || return 72
}
tp_fence_verdict=0
tp_read_fence || tp_fence_verdict=$?
if ((tp_fence_verdict == 73)); then
  printf 'tuneplane: attempt %s of this job was staged after this one (%s), so this job (%s) runs nothing\n' \
    "$tp_later_mark" "$tp_attempt" "${SLURM_JOB_ID:-}" >&2
  exit 73
elif ((tp_fence_verdict != 0)); then
  printf 'tuneplane: cannot read the job fence %s, so this job (%s) runs nothing\n' \
    "$tp_fence_dir" "${SLURM_JOB_ID:-}" >&2
  exit 72
fi

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

# While this attempt runs, the fence is watched (docs/decisions.md, "A running attempt obeys the
# job's fence"): a node that lost slurmctld but not the shared filesystem keeps running what
# Slurm has judged ended, while a later attempt resumes from the same checkpoints. A watcher
# reads the fence every P s. A later attempt's mark, or a fence unreadable at every read for U s,
# wakes this script (USR2); it reads the fence itself and, unless the attempt is still the job's
# latest, stops its steps and exits 73 (superseded) or 72 (it cannot tell), with no exit
# sentinel: the attempt did not end by itself. One failed read stops nothing: a filesystem that
# hiccups must not end healthy training. Unreadable for U s (less than Slurm's default
# SlurmdTimeout), the filesystem is of no use to the job, and the node may be cut off as a whole:
# it stops before Slurm can judge it lost and a later attempt can start.
tp_fence_unreadable_reads=$(((tp_fence_unreadable + tp_fence_poll - 1) / tp_fence_poll + 1))
tp_watch_fence() {
  local nap="" verdict unreadable=0
  trap 'kill "$nap" 2>/dev/null; exit 0' TERM
  while :; do
    sleep "$tp_fence_poll" &
    nap=$!
    verdict=0
    tp_read_fence "$tp_fence_poll" || verdict=$?
    if ((verdict == 72)); then
      unreadable=$((unreadable + 1))
      if ((unreadable == 1)); then
        printf 'tuneplane: cannot read the job fence %s; this job (%s) goes on unless it stays unreadable for %s s\n' \
          "$tp_fence_dir" "${SLURM_JOB_ID:-}" "$tp_fence_unreadable" >&2
      fi
    elif ((unreadable > 0)); then
      printf 'tuneplane: the job fence %s can be read again\n' "$tp_fence_dir" >&2
      unreadable=0
    fi
    if ((verdict == 73 || unreadable >= tp_fence_unreadable_reads)); then
      kill -USR2 "$$" 2>/dev/null || exit 0
    fi
    wait "$nap" || true
  done
}

# Stops every step this script started: TERM, which srun passes on to the step's tasks through
# their nodes' slurmd (slurmctld not needed), then KILL for any srun still there after G s.
tp_stop_steps_now() {
  local pid tries=0
  local -a pids=()
  if ((${#tp_background_pids[@]} > 0)); then pids=("${tp_background_pids[@]}"); fi
  if [[ -n $tp_step_pid ]]; then pids+=("$tp_step_pid"); fi
  ((${#pids[@]} > 0)) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((tries < tp_fence_grace * 5)); do
      sleep 0.2
      tries=$((tries + 1))
    done
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}
tp_stop_fenced() { # EXIT-CODE: the EXIT trap stops the steps (tp_stop_steps_now)
  tp_fenced=1
  exit "$1"
}
tp_on_fence_alarm() {
  tp_woken=1
  [[ $tp_exiting == 0 ]] || return 0
  local verdict=0
  tp_read_fence "$tp_fence_poll" || verdict=$?
  if ((verdict == 73)); then
    printf 'tuneplane: attempt %s of this job was staged after this one (%s), so this job (%s) stops its steps (TERM, then KILL after %s s)\n' \
      "$tp_later_mark" "$tp_attempt" "${SLURM_JOB_ID:-}" "$tp_fence_grace" >&2
  elif ((verdict == 72)); then
    printf 'tuneplane: the job fence %s stayed unreadable for %s s: this job (%s) cannot tell whether a later attempt runs, so it stops its steps (TERM, then KILL after %s s)\n' \
      "$tp_fence_dir" "$tp_fence_unreadable" "${SLURM_JOB_ID:-}" "$tp_fence_grace" >&2
  else
    return 0 # still the job's latest (the fence can be read again, or the USR2 was not ours)
  fi
  tp_stop_fenced "$verdict"
}
trap tp_on_fence_alarm USR2
tp_watch_fence &
tp_fence_watcher_pid=$!

# Just before the command: the hand-off's wait, then the fence once more (failing closed).
tp_before_command() {
  local verdict=0
  if [[ -n $tp_handoff_pid ]]; then
    tp_wait_step "$tp_handoff_pid" || true
    tp_handoff_pid=""
  fi
  tp_read_fence "$tp_fence_poll" || verdict=$?
  if ((verdict == 73)); then
    printf 'tuneplane: attempt %s of this job was staged after this one (%s), so this job (%s) starts no command\n' \
      "$tp_later_mark" "$tp_attempt" "${SLURM_JOB_ID:-}" >&2
  elif ((verdict != 0)); then
    printf 'tuneplane: cannot read the job fence %s, so this job (%s) starts no command\n' \
      "$tp_fence_dir" "${SLURM_JOB_ID:-}" >&2
  else
    return 0
  fi
  tp_stop_fenced "$verdict"
}

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
  export APPTAINERENV_TUNEPLANE_PREEMPT_SIGNAL='USR2'
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

# Each step's command starts with Slurm's warning signal ignored (exec passes that on);
# a program that wants the warning installs a handler for $TUNEPLANE_PREEMPT_SIGNAL.
tp_step_start=(sh -c 'trap "" USR2; exec "$@"' tuneplane-step)

# CPU-only: the command runs directly as one task on one node; no Ray, no GPUs.
tp_before_command
(
  tp_export_job_env
  exec "$tp_srun" --nodes=1 --ntasks=1 --cpus-per-task=8 \
    -- "${tp_container[@]}" \
    "${tp_step_start[@]}" 'python3' '/tuneplane/attempt/train.py' '--folds' '5'
) &
tp_wait_step "$!"
