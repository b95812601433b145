// The job's fence in the batch script (script_parts.h): checked at the start, watched while the
// attempt runs, and read once more just before the command; plus the hand-off's wait of an
// attempt after the first. docs/decisions.md ("A running attempt obeys the job's fence") says
// what this guarantees and what it does not.
#include <string>

#include "slurm/script_parts.h"
#include "slurm/script_renderer.h"

namespace tuneplane::slurm {
namespace {

// The text below exits 72 and 73, names the environment variables, and computes the hand-off.
static_assert(kExitCannotClaim == 72);
static_assert(kExitSuperseded == 73);
static_assert(kFencePollEnv == "TUNEPLANE_FENCE_POLL_SECONDS");
static_assert(kFenceGraceEnv == "TUNEPLANE_FENCE_GRACE_SECONDS");
static_assert(kFenceUnreadableEnv == "TUNEPLANE_FENCE_UNREADABLE_SECONDS");
static_assert(fenceHandoffSeconds(1, 0) == 3 && fenceHandoffSeconds(0, 1) == 1);

// The settings, in whole seconds; each read of the fence, bounded or not; the check at the
// start. A later mark is a definite answer; anything else it cannot tell fails closed.
constexpr const char* kFenceReader = R"(tp_fence_setting() { # VARIABLE NAME
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
)";

// The watcher and the stop. The watcher only wakes the script; the script reads the fence
// itself before it stops anything, so a USR2 from elsewhere stops nothing. Each watcher read
// starts P s after the last one started (its sleep runs during the read).
constexpr const char* kFenceWatch = R"(
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
)";

// An earlier attempt "may still run" when its logs show it claimed and has no exit sentinel
// for every pool, or cannot be read; one never claimed meets this attempt's mark if it starts.
constexpr const char* kHandoff = R"(tp_unended=""
tp_earlier_attempt_may_run() {
  local k pool listing
  for ((k = tp_attempt - 1; k >= 1; k--)); do
    [[ -e $tp_attempts_dir/$k ]] || continue # not staged here: nothing of it can run
    if ! listing=$(ls -1A -- "$tp_attempts_dir/$k/logs" 2>/dev/null); then
      tp_unended=$k
      return 0
    fi
    [[ $'\n'$listing$'\n' == *$'\n'claim$'\n'* ]] || continue
    for pool in "${tp_sentinel_pools[@]}"; do
      if [[ $'\n'$listing$'\n' != *$'\n'"exit-$pool.json"$'\n'* ]]; then
        tp_unended=$k
        return 0
      fi
    done
  done
  return 1
}
if tp_earlier_attempt_may_run; then
  tp_handoff=$((3 * tp_fence_poll + tp_fence_grace))
  printf 'tuneplane: attempt %s of this job started and did not end by itself (it may still run on a node that lost slurmctld), so this job (%s) waits %s s before its command: by then that attempt has seen the mark of this one and stopped\n' \
    "$tp_unended" "${SLURM_JOB_ID:-}" "$tp_handoff" >&2
  sleep "$tp_handoff" &
  tp_handoff_pid=$!
fi
)";

constexpr const char* kBeforeCommand = R"(
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
)";

// <root>/jobs/<id>/attempts for <root>/jobs/<id>/attempts/<n> (staging_paths.h).
std::string attemptsDirOf(const std::string& attempt_dir) {
  const std::size_t slash = attempt_dir.rfind('/');
  return slash == std::string::npos ? std::string() : attempt_dir.substr(0, slash);
}

}  // namespace

void renderFenceCheck(std::string& out, const launch::LaunchRequest& request) {
  if (request.fence_dir.empty()) return;  // a request staged before the fence existed
  out +=
      "\n# The job's fence (staging/job_fence.h): this attempt runs only while no later attempt\n";
  out += "# of the job has been staged — checked now, watched while it runs (below), and read\n";
  out += "# once more before its command. A later mark: superseded (73); unreadable: 72.\n";
  out += "tp_fence_dir=" + shellQuote(request.fence_dir) + "\n";
  out += "tp_attempt=" + std::to_string(request.identity.attempt) + "\n";
  out += "# P: a read every P s, each bounded by P; G: TERM, then KILL after G s; U: unreadable\n";
  out += "# that long stops the attempt. The batch step's environment may set each (the site's\n";
  out += "# slurm.job_environment), in whole seconds from 1 to 9999.\n";
  out += "tp_fence_poll=" + std::to_string(kFencePollSeconds) + "\n";
  out += "tp_fence_grace=" + std::to_string(kFenceGraceSeconds) + "\n";
  out += "tp_fence_unreadable=" + std::to_string(kFenceUnreadableSeconds) + "\n";
  out += kFenceReader;
}

void renderFenceWatch(std::string& out, const launch::LaunchRequest& request) {
  if (request.fence_dir.empty()) return;
  out += kFenceWatch;
  if (request.identity.attempt > 1) {
    out += "\n# The hand-off. An earlier attempt that started and did not end by itself (no exit\n";
    out += "# sentinel: its node was lost, or a signal ended it) may still run on a node that\n";
    out += "# lost slurmctld but not the shared filesystem, until its watcher sees a later mark:\n";
    out += "# within 3P + G s. So this attempt's command starts no sooner than that after this\n";
    out += "# attempt read its own mark, timed by this node's clock alone (no two hosts' clocks\n";
    out += "# are compared). The earlier attempts' logs are read where staging put them.\n";
    out += "tp_attempts_dir=" + shellQuote(attemptsDirOf(request.attempt_dir)) + "\n";
    out += kHandoff;
  }
  out += kBeforeCommand;
}

void renderBeforeCommand(std::string& out, const launch::LaunchRequest& request) {
  if (request.fence_dir.empty()) return;
  out += "tp_before_command\n";
}

}  // namespace tuneplane::slurm
