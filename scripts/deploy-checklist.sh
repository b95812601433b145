#!/usr/bin/env bash
# Runs docs/operators.md's "Deploying on an existing cluster" exactly as written: every code
# block of that section marked `<!-- deploy-checklist -->`, in order, in one bash, as root, from
# `dpkg -i` of the package to a Succeeded job (and a user added by a reload), then the same site
# moved to slurm.identity per_user and a job run as its user. Only the site's facts (the
# variables the first block names, and the users' Unix accounts) come from here, and, where the
# machine lacks them, stand-ins for what a site already has: `systemctl`/`journalctl` when systemd is not
# PID 1 (the unit is run as its User=, with its StateDirectory=, UMask= and ExecStartPre=,
# from the installed unit file and the operator's drop-in), and `scontrol token` when no Slurm
# command is at hand (a token minted with the cluster's JWT key).
#
#   scripts/deploy-checklist.sh sim  [BUILD_DIR]   the bundled simulator stands in for the
#                                                  cluster (CI: make test-package)
#   scripts/deploy-checklist.sh live [BUILD_DIR]   the real slurmrestd named by TUNEPLANE_LIVE_*
#                                                  (docs/developers.md, "Commands")
#
# BUILD_DIR/package/ holds the .deb (`make deb`). Everything it makes is removed at the end:
# the package (purged), the files the steps wrote under /etc, the state directory, the users
# (and their associations) it made. Bounded: each wait has a limit and the whole run has DEPLOY_TIMEOUT.
set -euo pipefail
mode=${1:-sim}
build=$(cd "${2:-build}" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
case "$mode" in sim | live) ;; *) echo "deploy-checklist: mode is sim or live" >&2; exit 2 ;; esac
if [ "$mode" = live ] && { [ -z "${TUNEPLANE_LIVE_SLURMRESTD:-}" ] || [ -z "${TUNEPLANE_LIVE_USER:-}" ] ||
  [ -z "${TUNEPLANE_LIVE_SHARED_DIR:-}" ] || [ -z "${TUNEPLANE_LIVE_SLURM_BIN:-}" ]; }; then
  echo "deploy-checklist: skipped: set TUNEPLANE_LIVE_SLURMRESTD, _USER, _SHARED_DIR and _SLURM_BIN" \
    "(and _JWT_KEY_FILE or a working scontrol) to run it against a real slurmrestd" >&2
  exit 77
fi
[ "$(id -u)" = 0 ] || { echo "deploy-checklist: run as root (the steps install a package)" >&2; exit 2; }
debs=("$build"/package/tuneplane_*.deb)
[ -f "${debs[-1]}" ] || { echo "deploy-checklist: no package in $build/package (make deb)" >&2; exit 2; }
if dpkg-query -W -f='${Status}' tuneplane 2>/dev/null | grep -q "ok installed"; then
  echo "deploy-checklist: tuneplane is installed here already; the steps install and purge it" >&2
  exit 2
fi
# What the steps write outside the scratch directory; none of it may be there already.
made_files=(/etc/tuneplane/site.yaml /etc/tuneplane/runtimes.yaml /etc/tuneplane/slurm.jwt
  /etc/systemd/system/tuneplane.service.d/job-user.conf)
for f in "${made_files[@]}" /var/lib/tuneplane; do
  [ ! -e "$f" ] || { echo "deploy-checklist: $f exists: not this run's to overwrite" >&2; exit 2; }
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/tp-deploy.XXXXXX")
chmod 0755 "$scratch"  # the job user walks through it to the shared directory
made_users=()
made_association=""
sim_pid=""
live_dir=""
fail() { echo "deploy-checklist: FAIL: $*" >&2; exit 1; }
systemd=no
[ "$(ps -p 1 -o comm=)" != systemd ] || systemd=yes
cleanup() {
  local status=$?
  set +e
  if [ "$systemd" = yes ]; then
    systemctl disable --now tuneplane >/dev/null 2>&1
  elif [ -f "$scratch/serve.pid" ]; then
    kill -TERM "$(cat "$scratch/serve.pid")" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$(cat "$scratch/serve.pid")" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ "$status" != 0 ] && [ -f "$scratch/journal" ]; then
    echo "== serve's log (journal)" >&2
    tail -n 40 "$scratch/journal" >&2
  fi
  [ -z "$sim_pid" ] || { kill "$sim_pid" 2>/dev/null; wait "$sim_pid" 2>/dev/null; }
  dpkg --purge tuneplane >/dev/null 2>&1
  rm -f "${made_files[@]}"
  rmdir /etc/tuneplane /etc/systemd/system/tuneplane.service.d 2>/dev/null
  rm -rf /var/lib/tuneplane
  [ "$systemd" = no ] || systemctl daemon-reload
  [ -z "$made_association" ] || sacctmgr -i delete user "$made_association" >/dev/null 2>&1
  for user in "${made_users[@]}"; do userdel "$user" 2>/dev/null; done
  if [ "$status" = 0 ]; then
    rm -rf "$scratch" "$live_dir"
  else
    echo "deploy-checklist: kept $scratch for inspection" >&2
  fi
  exit "$status"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ---- the site's facts: the cluster that exists before TunePlane does ----
if [ "$mode" = sim ]; then
  export JOB_USER=tpdeploy
  if ! getent passwd "$JOB_USER" >/dev/null; then
    useradd --system --user-group --shell /usr/sbin/nologin "$JOB_USER"  # the site's, not a step
    made_users+=("$JOB_USER")
  fi
  # "slurmctld's" key, where only the cluster reads it (never named in the site file).
  install -d -m 0700 -o "$JOB_USER" "$scratch/slurmctld"
  head -c 32 /dev/urandom >"$scratch/slurmctld/jwt_hs256.key"
  chown "$JOB_USER" "$scratch/slurmctld/jwt_hs256.key"
  chmod 0600 "$scratch/slurmctld/jwt_hs256.key"
  jwt_key=$scratch/slurmctld/jwt_hs256.key
  install -m 0755 "$build/src/sim/tuneplane-slurmsim" "$scratch/tuneplane-slurmsim"
  # The simulator runs jobs as its own user, as slurmd runs them as the job's.
  runuser -u "$JOB_USER" -- "$scratch/tuneplane-slurmsim" --listen 127.0.0.1:0 \
    --jwt-key "$jwt_key" --state "$scratch/slurmctld/sim" --epilog-ms 300 \
    >"$scratch/slurmsim.out" 2>"$scratch/slurmsim.err" &
  sim_pid=$!
  url=""
  for _ in $(seq 1 100); do
    url=$(grep -m1 -o 'http://[0-9.]*:[0-9]*' "$scratch/slurmsim.out" 2>/dev/null || true)
    [ -n "$url" ] && break
    kill -0 "$sim_pid" 2>/dev/null || { cat "$scratch/slurmsim.err" >&2; fail "the simulator did not start"; }
    sleep 0.1
  done
  [ -n "$url" ] || fail "the simulator did not say where it listens"
  export SLURMRESTD=$url
  export SHARED=$scratch/shared
  printf 'a stand-in for a SIF image (the simulator runs the command itself)\n' >"$scratch/python-3.11.sif"
else
  export JOB_USER=$TUNEPLANE_LIVE_USER
  export SLURMRESTD=$TUNEPLANE_LIVE_SLURMRESTD
  live_dir=$(mktemp -d "$TUNEPLANE_LIVE_SHARED_DIR/deploy.XXXXXX")
  chmod 0755 "$live_dir"
  export SHARED=$live_dir/shared
  jwt_key=${TUNEPLANE_LIVE_JWT_KEY_FILE:-}
  conf=${TUNEPLANE_LIVE_SLURM_CONF:-${SLURM_CONF:-}}
  if [ -z "$conf" ] && [ -n "${TUNEPLANE_LIVE_TOKEN_FILE:-}" ]; then conf=$(dirname "$TUNEPLANE_LIVE_TOKEN_FILE")/etc/slurm.conf; fi
  if [ -z "$conf" ] && [ -n "$jwt_key" ]; then conf=$(dirname "$jwt_key")/slurm.conf; fi
  [ -z "$conf" ] || export SLURM_CONF=$conf
  export PATH=$TUNEPLANE_LIVE_SLURM_BIN:$PATH
  printf 'a stand-in for a SIF image (the apptainer stand-in runs the command on the node)\n' >"$scratch/python-3.11.sif"
fi
# The API users' Unix accounts (step 11, per_user: every token maps to one, the nodes know it,
# and where slurmdbd enforces associations it has one): the site's, not steps. The test
# cluster has alice and bob (with associations); the admin ops is made here when missing.
for user in alice bob ops; do
  if ! getent passwd "$user" >/dev/null; then
    useradd --user-group --shell /usr/sbin/nologin "$user"
    made_users+=("$user")
  fi
done
if [ "$mode" = live ] && [ "${TUNEPLANE_LIVE_ACCOUNTING:-0}" = 1 ] &&
  [ -z "$(sacctmgr -n -P show user ops 2>/dev/null)" ]; then
  sacctmgr -i add user ops account=general >/dev/null || fail "cannot give ops an association"
  made_association=ops
fi
port=$(free_port)
export LISTEN=127.0.0.1:$port
export DEB=${debs[-1]}
export IMAGE=$scratch/python-3.11.sif

# ---- stand-ins for what this machine lacks ----
preamble=$scratch/preamble.sh
cat >"$preamble" <<'BASH'
set -euo pipefail
cd "$DEPLOY_SCRATCH"
BASH
if ! command -v scontrol >/dev/null 2>&1 || [ "$mode" = sim ]; then
  [ -n "${jwt_key:-}" ] || fail "no scontrol and no JWT key (TUNEPLANE_LIVE_JWT_KEY_FILE) to stand in for it"
  export DEPLOY_JWT_KEY=$jwt_key
  cat >>"$preamble" <<'BASH'
# `scontrol token username=U lifespan=S`, as slurmctld answers it, from the cluster's key.
scontrol() {
  [ "$1" = token ] || { echo "scontrol stand-in: only 'token'" >&2; return 2; }
  local user="" life=1800 arg
  for arg in "${@:2}"; do
    case $arg in username=*) user=${arg#username=} ;; lifespan=*) life=${arg#lifespan=} ;; esac
  done
  python3 - "$DEPLOY_JWT_KEY" "$user" "$life" <<'PY'
import base64, hashlib, hmac, json, sys, time
key = open(sys.argv[1], "rb").read()
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=")
now = int(time.time())
head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
body = b64(json.dumps({"iat": now, "exp": now + int(sys.argv[3]), "sun": sys.argv[2]}).encode())
sig = b64(hmac.new(key, head + b"." + body, hashlib.sha256).digest())
print("SLURM_JWT=" + (head + b"." + body + b"." + sig).decode())
PY
}
BASH
fi
if [ "$systemd" = no ]; then
  cat >>"$preamble" <<'BASH'
# systemd is not PID 1 here: the unit is run as systemd would run it — the installed unit file
# and the operator's drop-ins, User=/Group=, StateDirectory= (made, owned by User=, and
# $STATE_DIRECTORY set), UMask=, ExecStartPre= then ExecStart= — and its ReadWritePaths= are
# checked to hold the staging root (ProtectSystem= would make anything else read-only).
unit_value() {  # the last value of KEY in the unit and its drop-ins
  cat /lib/systemd/system/tuneplane.service /etc/systemd/system/tuneplane.service.d/*.conf 2>/dev/null |
    sed -n "s/^$1=//p" | tail -n 1
}
systemctl() {
  local verb=$1
  shift
  [ "${1:-}" != --now ] || shift
  case $verb in
    daemon-reload) ;;
    enable | start | restart)
      if [ "$verb" = restart ] && [ -f "$DEPLOY_SCRATCH/serve.pid" ]; then
        local old
        old=$(cat "$DEPLOY_SCRATCH/serve.pid")
        kill -TERM "$old" 2>/dev/null || true
        for _ in $(seq 1 100); do kill -0 "$old" 2>/dev/null || break; sleep 0.1; done
        ! kill -0 "$old" 2>/dev/null || { echo "tuneplane.service: serve did not stop" >&2; return 1; }
      fi
      local user group state umask_value pre exec root
      user=$(unit_value User)
      group=$(unit_value Group)
      state=/var/lib/$(unit_value StateDirectory)
      umask_value=$(unit_value UMask)
      pre=$(unit_value ExecStartPre | sed 's/\$\$/$/g')
      exec=$(unit_value ExecStart)
      [ -e "$(unit_value ConditionPathExists)" ] || { echo "tuneplane.service: condition failed" >&2; return 1; }
      root=$(sed -n 's/^staging_root: *"\{0,1\}\([^"#]*\)"\{0,1\}.*/\1/p' /etc/tuneplane/site.yaml | tr -d ' ')
      local writable=no path
      for path in $(unit_value ReadWritePaths) "$state"; do
        case "$root/" in "${path%/}/"*) writable=yes ;; esac
      done
      [ "$writable" = yes ] || { echo "tuneplane.service: the sandbox leaves staging_root $root read-only (ReadWritePaths=)" >&2; return 1; }
      install -d -o "${user:-root}" -g "${group:-root}" -m 0755 "$state"
      [ -z "$pre" ] || runuser -u "${user:-root}" -- sh -c "$pre" >>"$DEPLOY_SCRATCH/journal" 2>&1 || return 1
      # shellcheck disable=SC2086
      (cd / && umask "${umask_value:-0022}" && exec setsid setpriv --reuid="${user:-root}" \
        --regid="${group:-root}" --init-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        STATE_DIRECTORY="$state" $exec) >>"$DEPLOY_SCRATCH/journal" 2>&1 &
      echo $! >"$DEPLOY_SCRATCH/serve.pid"
      ;;
    reload) kill -HUP "$(cat "$DEPLOY_SCRATCH/serve.pid")" ;;
    stop) kill -TERM "$(cat "$DEPLOY_SCRATCH/serve.pid")" ;;
    is-active) kill -0 "$(cat "$DEPLOY_SCRATCH/serve.pid")" && echo active ;;
    *) echo "systemctl stand-in: $verb not known" >&2; return 2 ;;
  esac
}
journalctl() { cat "$DEPLOY_SCRATCH/journal"; }
BASH
fi
if [ "$mode" = live ]; then
  cat >>"$preamble" <<'BASH'
# The test cluster has no Apptainer: a stand-in on the jobs' PATH runs the command on the
# node (tests/live/live_site.h). Put in after `site init` drafted the job environment.
after_site_init() {
  install -d -m 0755 "$SHARED/bin"
  cat >"$SHARED/bin/apptainer" <<'SH'
#!/bin/bash
[[ ${1-} == exec ]] || { echo "apptainer stand-in: expected exec" >&2; exit 92; }
shift
for name in "${!APPTAINERENV_@}"; do export "${name#APPTAINERENV_}=${!name}"; unset "$name"; done
while (($#)); do case $1 in --bind | --pwd) shift 2 ;; --nv | --no-home | --cleanenv) shift ;; *) break ;; esac; done
shift
exec "$@"
SH
  chmod 0755 "$SHARED/bin/apptainer"
  sed -i "s|^\(    PATH: \)\"\{0,1\}\([^\"#]*\)\"\{0,1\}|\1$SHARED/bin:$TUNEPLANE_LIVE_SLURM_BIN:\2|" /etc/tuneplane/site.yaml
}
BASH
else
  echo 'after_site_init() { :; }' >>"$preamble"
fi
export DEPLOY_SCRATCH=$scratch

# ---- the steps, as the guide writes them ----
steps=$scratch/steps.sh
python3 - "$repo/docs/operators.md" >"$steps" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
section = text.split("\n## Deploying on an existing cluster\n", 1)
if len(section) != 2:
    sys.exit("docs/operators.md has no '## Deploying on an existing cluster' section")
body = section[1].split("\n## ", 1)[0]
blocks = re.findall(r"<!-- deploy-checklist -->\n```(?:sh|bash)\n(.*?)```", body, re.S)
if len(blocks) < 8:
    sys.exit(f"docs/operators.md: only {len(blocks)} checklist blocks")
for i, block in enumerate(blocks, 1):
    print(f'echo "== step {i}"')
    print(block)
    if "tuneplane site init" in block:
        print("after_site_init")
PY
echo "deploy-checklist ($mode): $(grep -c '^echo "== step' "$steps") steps from docs/operators.md"

start=$SECONDS
cat "$preamble" "$steps" >"$scratch/run.sh"
timeout --kill-after=10 "${DEPLOY_TIMEOUT:-600}" bash "$scratch/run.sh" </dev/null ||
  fail "a step of docs/operators.md's checklist failed (above)"
echo "deploy-checklist ($mode): OK in $((SECONDS - start)) s — from dpkg -i to a Succeeded job, then one run as its user (per_user), as docs/operators.md says"
