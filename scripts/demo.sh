#!/usr/bin/env bash
# The quick start's main job, end to end, on the embedded default: the bundled slurmrestd
# SIMULATOR (tuneplane-slurmsim — not Slurm) on a loopback port and `tuneplane serve` with
# its SQLite store, both started here and stopped at the end. Writes a throw-away site under
# BUILD/demo/, submits examples/demo/hello-cpu.yaml with the CLI (`tuneplane submit --wait`),
# and shows the job with `get`, `describe` and `logs`, then its result file.
#   scripts/demo.sh [BUILD_DIR]        (default: build; `make demo` builds it first)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build=$repo/$build ;; esac
tuneplane=$build/src/cli/tuneplane
slurmsim=$build/src/sim/tuneplane-slurmsim
if [ ! -x "$tuneplane" ] || [ ! -x "$slurmsim" ]; then echo "demo: build first (make build)" >&2; exit 2; fi

demo=$build/demo
rm -rf "$demo"
mkdir -p "$demo/shared/runtimes" "$demo/shared/staging" "$demo/secrets"
sim_pid=""
serve_pid=""
stop() { if [ -n "$1" ]; then kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi; }
cleanup() { stop "$serve_pid"; stop "$sim_pid"; }
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "a site: JWT key, runtime images, registry, the simulator's cluster (scripts/demo_site.py)"
# The simulator's `apptainer exec` stand-in runs the command on this machine; each image file
# stands for a published SIF image, and its SHA-256 is what the registry pins.
python3 "$repo/scripts/demo_site.py" "$demo" >/dev/null

step "start tuneplane-slurmsim (a slurmrestd v0.0.45 simulator) on loopback"
"$slurmsim" --listen 127.0.0.1:0 --jwt-key "$demo/secrets/jwt_hs256.key" --state "$demo/sim" \
  --cluster "$demo/cluster.yaml" \
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

python3 "$repo/scripts/demo_site.py" "$demo" --slurm-url "$url" >/dev/null  # the site, with its URL
export TUNEPLANE_SITE_FILE=$demo/site.yaml
spec=$repo/examples/demo/hello-cpu.yaml

step "tuneplane slurm ping"
"$tuneplane" slurm ping

step "tuneplane validate -f examples/demo/hello-cpu.yaml"
"$tuneplane" validate -f "$spec"

step "start tuneplane serve (the control loop and the /v1 API; SQLite in $demo)"
# One API token for the demo user: the site file keeps only its SHA-256.
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
token_sha=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
cat >>"$demo/site.yaml" <<YAML
server:
  listen: 127.0.0.1:0
  db: tuneplane.db
  poll_interval: 1s
  tokens:
    - {user: $(id -un), token_sha256: $token_sha, admin: true}
YAML
"$tuneplane" serve --site "$demo/site.yaml" >"$demo/serve.access.log" 2>"$demo/serve.log" &
serve_pid=$!
server=""
for _ in $(seq 1 100); do
  server=$(grep -m1 -o 'listening on http://[0-9.]*:[0-9]*' "$demo/serve.log" 2>/dev/null | cut -d' ' -f3 || true)
  [ -n "$server" ] && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$demo/serve.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$server" ] || { echo "demo: tuneplane serve did not start" >&2; cat "$demo/serve.log" >&2; exit 1; }
echo "tuneplane serve at $server (pid $serve_pid)"
export TUNEPLANE_SERVER=$server TUNEPLANE_TOKEN=$token

step "tuneplane whoami"
"$tuneplane" whoami

step "tuneplane submit examples/demo/hello-cpu.yaml --wait"
"$tuneplane" submit "$spec" --wait --timeout 5m --poll-interval 500ms
id=$("$tuneplane" get -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["id"])')

step "tuneplane get"
"$tuneplane" get

step "tuneplane describe $id"
"$tuneplane" describe "$id"

step "tuneplane logs $id"
"$tuneplane" logs "$id" | tee "$demo/job.log"
grep -q . "$demo/job.log" || { echo "demo: the job's log is empty" >&2; exit 1; }

attempt_dir=$("$tuneplane" get job "$id" -o json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["attempts"][-1]["staging_dir"])')
step "the staged attempt: $attempt_dir"
ls -l "$attempt_dir"
step "its result (output/result.txt)"
cat "$attempt_dir/output/result.txt"
grep -q '^loss=' "$attempt_dir/output/result.txt"

step "stop tuneplane serve (SIGTERM: it stops at a safe point and exits 0)"
kill -TERM "$serve_pid"
status=0
wait "$serve_pid" || status=$?
serve_pid=""
[ "$status" = 0 ] || { echo "demo: tuneplane serve exited $status" >&2; cat "$demo/serve.log" >&2; exit 1; }
echo "stopped"
echo
echo "demo: OK — job $id ran end to end: tuneplane submit → tuneplane serve → slurmrestd's REST API (simulated)."
