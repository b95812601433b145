#!/bin/bash
# shellcheck disable=SC2016,SC1003,SC2317 # values are single-quoted on purpose: never expanded; trap handlers
# TunePlane batch script: job job-llm-2node (llama-sft), attempt 1. Rendered; do not edit.
# The #SBATCH lines only mirror the submit request for people: slurmrestd does not read
# them, every option is in the request's JSON. Values in them are shown with control
# characters replaced by '?'.
#SBATCH --job-name=llama-sft
#SBATCH --comment=tp-job-llm-2node-a1-7f3c9e
#SBATCH --partition=gpu
#SBATCH --constraint=h100
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=96
#SBATCH --mem=1024000M
#SBATCH --gres=gpu:h100:8
#SBATCH --time=720
#SBATCH --no-requeue
#SBATCH --chdir=/shared/tuneplane/jobs/job-llm-2node/attempts/1
#SBATCH --output=/shared/tuneplane/jobs/job-llm-2node/attempts/1/logs/trainers.out
#SBATCH --error=/shared/tuneplane/jobs/job-llm-2node/attempts/1/logs/trainers.err
set -euo pipefail

# Exit codes of this script itself (any other code is the entrypoint's own):
#   64 the request could not be rendered safely    65 artifact SHA-256 mismatch
#   66 artifact missing or unreadable               67 not every node joined Ray in time
#   68 no usable IP address for the Ray head

# Sentinels for TunePlane: logs/start-<pool>.json now, logs/exit-<pool>.json when this
# script ends by itself (not when a signal kills it). Written whole or not at all.
tp_logs_dir='/shared/tuneplane/jobs/job-llm-2node/attempts/1/logs'
tp_sentinel_pools=('trainers')
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
tp_artifact='/shared/runtimes/llm-finetune-2.3.sqsh'
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
# change this script's own environment. Pyxis: --container-env lists these names so
# they win over the image's.
tp_export_job_env() {
  export HF_HOME='/datasets/hf'
  export TUNEPLANE_JOB_ID='job-llm-2node'
  export TUNEPLANE_ATTEMPT='1'
  export TUNEPLANE_OUTPUT_DIR='/tuneplane/output'
}

# The container every step runs in.
tp_container=(
  --container-image='/shared/runtimes/llm-finetune-2.3.sqsh'
  --container-mounts='/datasets:/datasets:ro,/shared/tuneplane/jobs/job-llm-2node/attempts/1:/tuneplane/attempt:ro,/shared/tuneplane/jobs/job-llm-2node/output:/tuneplane/output'
  --container-workdir='/tuneplane/output'
  --no-container-mount-home
)

# Ray across all 2 nodes.
# Counts are rendered as numbers: REST jobs get no SLURM_CPUS_PER_TASK or
# SLURM_GPUS_PER_NODE.
tp_head_nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
tp_head_node=${tp_head_nodes%%$'\n'*}

# The head's IP address, as the other nodes reach it. Not `hostname --ip-address`: on
# Debian that is 127.0.1.1 from /etc/hosts. The head node's name is resolved the way the
# cluster resolves it, loopback skipped; else the first address `hostname -I` lists.
# (This script runs on the head node: the first node of component 0.)
tp_head_ip=$(getent ahostsv4 "$tp_head_node" | awk '$1 !~ /^127\./ { print $1; exit }') || true
if [[ -z $tp_head_ip ]]; then
  tp_head_ip=$(hostname -I | awk '{ print $1 }') || true
fi
if [[ -z $tp_head_ip ]]; then
  echo "tuneplane: no IP address found for the Ray head node $tp_head_node" >&2
  exit 68
fi
tp_ray_address="$tp_head_ip:6379"

# Background steps (head, workers) are stopped when this script ends, however it ends
# (the EXIT trap of the prologue calls tp_stop_background).
tp_background_pids=()
tp_stop_background() {
  local pid
  for pid in "${tp_background_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
}

# Head: first node of component 0 (trainers).
(
  tp_export_job_env
  exec "$tp_srun" --nodes=1 --ntasks=1 --cpus-per-task=96 --nodelist="$tp_head_node" \
    "${tp_container[@]}" --container-env='HF_HOME,TUNEPLANE_JOB_ID,TUNEPLANE_ATTEMPT,TUNEPLANE_OUTPUT_DIR' \
    -- 'ray' start --head --node-ip-address="$tp_head_ip" --port=6379 --dashboard-port=8265 --node-manager-port=6800 --object-manager-port=6801 --min-worker-port=10002 --max-worker-port=10999 --num-cpus=96 --num-gpus=8 --resources='{"trainers":8}' --block
) &
tp_background_pids+=("$!")

# Polls the head until N nodes are alive, at most TIMEOUT s: python3 -c PROGRAM ADDRESS
# N TIMEOUT. Workers start only once the head answers, so none gives up early.
tp_wait_program='import sys, time
import ray
address, want, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
deadline = time.monotonic() + timeout
alive = 0
while True:
    try:
        if not ray.is_initialized():
            ray.init(address=address, logging_level="ERROR")
        alive = sum(1 for node in ray.nodes() if node["Alive"])
    except Exception as error:
        print("tuneplane: waiting for Ray at", address, "-", error, file=sys.stderr)
    if alive >= want:
        sys.exit(0)
    if time.monotonic() >= deadline:
        print("tuneplane:", alive, "of", want, "Ray nodes joined", address, "in", timeout, "s",
              file=sys.stderr)
        sys.exit(1)
    time.sleep(2)
'

# Wait for the head.
if ! (
  tp_export_job_env
  exec "$tp_srun" --overlap --nodes=1 --ntasks=1 --nodelist="$tp_head_node" \
    "${tp_container[@]}" --container-env='HF_HOME,TUNEPLANE_JOB_ID,TUNEPLANE_ATTEMPT,TUNEPLANE_OUTPUT_DIR' \
    -- python3 -c "$tp_wait_program" "$tp_ray_address" 1 300
); then
  echo "tuneplane: the head did not join Ray at $tp_ray_address within 300 s" >&2
  exit 67
fi

# Workers: 1 node(s) of component 0 (trainers).
(
  tp_export_job_env
  exec "$tp_srun" --nodes=1 --ntasks=1 --ntasks-per-node=1 --cpus-per-task=96 --exclude="$tp_head_node" \
    "${tp_container[@]}" --container-env='HF_HOME,TUNEPLANE_JOB_ID,TUNEPLANE_ATTEMPT,TUNEPLANE_OUTPUT_DIR' \
    -- 'ray' start --address="$tp_ray_address" --node-manager-port=6800 --object-manager-port=6801 --min-worker-port=10002 --max-worker-port=10999 --num-cpus=96 --num-gpus=8 --resources='{"trainers":8}' --block
) &
tp_background_pids+=("$!")

# Wait until all 2 nodes joined.
if ! (
  tp_export_job_env
  exec "$tp_srun" --overlap --nodes=1 --ntasks=1 --nodelist="$tp_head_node" \
    "${tp_container[@]}" --container-env='HF_HOME,TUNEPLANE_JOB_ID,TUNEPLANE_ATTEMPT,TUNEPLANE_OUTPUT_DIR' \
    -- python3 -c "$tp_wait_program" "$tp_ray_address" 2 300
); then
  echo "tuneplane: not all 2 nodes did not join Ray at $tp_ray_address within 300 s" >&2
  exit 67
fi

# The driver: the framework command on the head node, given the head's address
# explicitly (each pyxis step has its own /tmp). Its exit code is the job's.
tp_driver_status=0
(
  tp_export_job_env
  export RAY_ADDRESS="$tp_ray_address"
  exec "$tp_srun" --overlap --nodes=1 --ntasks=1 --cpus-per-task=96 --nodelist="$tp_head_node" \
    "${tp_container[@]}" --container-env='HF_HOME,TUNEPLANE_JOB_ID,TUNEPLANE_ATTEMPT,TUNEPLANE_OUTPUT_DIR,RAY_ADDRESS' \
    -- 'python3' '-m' 'tuneplane_llm.finetune' '--config' '/tuneplane/attempt/job.json'
) || tp_driver_status=$?
exit "$tp_driver_status"
