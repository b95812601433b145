#!/usr/bin/env bash
# The quick start's main job, end to end, on the embedded default: the bundled slurmrestd
# SIMULATOR (tuneplane-slurmsim — not Slurm) on a loopback port. Writes a throw-away site
# under BUILD/demo/, submits examples/demo/hello-cpu.yaml through slurmrestd's REST API,
# follows the job by its SLUID until it has finished, and prints its log and its result.
#   scripts/demo.sh [BUILD_DIR]        (default: build; `make demo` builds it first)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build=$repo/$build ;; esac
tuneplane=$build/src/cli/tuneplane
slurmsim=$build/src/sim/tuneplane-slurmsim
[ -x "$tuneplane" ] && [ -x "$slurmsim" ] || { echo "demo: build first (make build)" >&2; exit 2; }

demo=$build/demo
rm -rf "$demo"
mkdir -p "$demo/shared/runtimes" "$demo/shared/staging" "$demo/secrets"
sim_pid=""
cleanup() { if [ -n "$sim_pid" ]; then kill "$sim_pid" 2>/dev/null || true; wait "$sim_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a site: JWT key, runtime image, registry"
head -c 32 /dev/urandom >"$demo/secrets/jwt_hs256.key"
chmod 0600 "$demo/secrets/jwt_hs256.key"
# The simulator's `apptainer exec` stand-in runs the command on this machine; the file
# stands for a published SIF image. Its SHA-256 is what the registry pins.
printf 'TunePlane demo runtime (a stand-in for a SIF image)\n' >"$demo/shared/runtimes/custom-demo.sif"
sha=$(sha256sum "$demo/shared/runtimes/custom-demo.sif" | cut -d' ' -f1)
cat >"$demo/runtimes.yaml" <<YAML
runtimes:
  - id: custom-demo
    format: sif
    path: $demo/shared/runtimes/custom-demo.sif
    sha256: $sha
    frameworks: [custom]
YAML

step "start tuneplane-slurmsim (a slurmrestd v0.0.45 simulator) on loopback"
"$slurmsim" --listen 127.0.0.1:0 --jwt-key "$demo/secrets/jwt_hs256.key" --state "$demo/sim" \
  --epilog-ms 1500 >"$demo/slurmsim.out" 2>"$demo/slurmsim.err" &
sim_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(grep -m1 -o 'http://[0-9.]*:[0-9]*' "$demo/slurmsim.out" 2>/dev/null || true)
  [ -n "$url" ] && break
  kill -0 "$sim_pid" 2>/dev/null || { cat "$demo/slurmsim.err" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "demo: the simulator did not start" >&2; exit 1; }
echo "slurmrestd simulator at $url (pid $sim_pid)"

cat >"$demo/site.yaml" <<YAML
# Written by scripts/demo.sh: the simulator stands in for the site's slurmrestd.
slurm:
  url: $url
  api_version: v0.0.45
  user: $(id -un)
  jwt_key_file: secrets/jwt_hs256.key
  token_lifespan: 10m
  job_environment:
    PATH: $PATH
partitions:
  gpu: gpu
  cpu: cpu
gpu_series:
  - name: h100
    slurm_constraint: h100
    gpus_per_node: 2
    gres_type: h100
container_runtime: apptainer
staging_root: $demo/shared/staging
runtime_registry_file: runtimes.yaml
YAML
export TUNEPLANE_SITE_FILE=$demo/site.yaml
spec=$repo/examples/demo/hello-cpu.yaml

step "tuneplane slurm ping"
"$tuneplane" slurm ping

step "tuneplane validate -f examples/demo/hello-cpu.yaml"
"$tuneplane" validate -f "$spec"

step "tuneplane slurm submit -f examples/demo/hello-cpu.yaml"
receipt=$("$tuneplane" slurm submit -f "$spec" --output json)
echo "$receipt"
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1" <<<"$receipt"; }
sluid=$(field sluid)
attempt_dir=$(field attempt_dir)
[ -n "$sluid" ] || { echo "demo: no SLUID in the receipt" >&2; exit 1; }

step "follow $sluid until it has finished (tuneplane slurm get)"
state=""
for _ in $(seq 1 300); do
  line=$("$tuneplane" slurm get "$sluid")
  new_state=$(awk '{print $4}' <<<"$line")
  if [ "$new_state" != "$state" ]; then echo "$line"; state=$new_state; fi
  case "$state" in
    COMPLETED) break ;;
    FAILED* | CANCELLED* | TIMEOUT* | NODE_FAIL* | OUT_OF_MEMORY* | PREEMPTED*)
      [[ $state == *COMPLETING* ]] || { echo "demo: the job ended $state" >&2; exit 1; } ;;
  esac
  sleep 0.2
done
[ "$state" = COMPLETED ] || { echo "demo: the job did not finish (last state: $state)" >&2; exit 1; }

step "the staged attempt: $attempt_dir"
ls -l "$attempt_dir"
step "its scheduler log (logs/main.out)"
cat "$attempt_dir/logs/main.out"
step "its result (output/result.txt)"
cat "$attempt_dir/output/result.txt"
grep -q '^loss=' "$attempt_dir/output/result.txt"
echo
echo "demo: OK — job $sluid ran end to end through slurmrestd's REST API (simulated)."
