#!/usr/bin/env bash
# The Debian package installed on this very machine (CI runs it as root; no container):
# dpkg -i of the package `make deb` built in BUILD/package/, then what an operator sees —
# `tuneplane --version` from PATH, the unit where Debian keeps units and valid
# (systemd-analyze verify), the example site file under /etc/tuneplane/, every relative
# link of the installed guides resolving inside the package, and `systemctl cat tuneplane`
# where systemd is PID 1 (it cannot answer otherwise: a container, a chroot). The package is
# purged; then docs/operators.md's "Deploying on an existing cluster" runs as written, from
# dpkg -i to a Succeeded job on the simulator (scripts/deploy-checklist.sh sim).
#   scripts/package-test.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
[ "$(id -u)" = 0 ] || { echo "package-test: run as root (it runs dpkg -i)" >&2; exit 2; }
debs=("$build"/package/tuneplane_*.deb)
deb=${debs[-1]}
[ -f "$deb" ] || { echo "package-test: no package in $build/package (make deb)" >&2; exit 2; }
if dpkg-query -W -f='${Status}' tuneplane 2>/dev/null | grep -q "ok installed"; then
  echo "package-test: tuneplane is already installed here; this test installs and purges it" >&2
  exit 2
fi
fail() { echo "package-test: FAIL: $*" >&2; exit 1; }

echo "== dpkg -i $deb"
dpkg -i "$deb"
trap 'echo "== dpkg --purge tuneplane"; dpkg --purge tuneplane >/dev/null' EXIT

echo "== tuneplane --version"
version=$(dpkg-deb -f "$deb" Version)
[ "$(command -v tuneplane)" = /usr/bin/tuneplane ] || fail "tuneplane is not /usr/bin/tuneplane on PATH"
out=$(tuneplane --version)
echo "$out"
[ "$out" = "tuneplane $version" ] || fail "expected 'tuneplane $version'"
tuneplane-slurmsim --help >/dev/null || fail "tuneplane-slurmsim --help"

echo "== the unit and the site files"
unit=/lib/systemd/system/tuneplane.service
[ -f "$unit" ] || fail "$unit not installed"
grep -qx 'ExecStart=/usr/bin/tuneplane serve --site /etc/tuneplane/site.yaml' "$unit" ||
  fail "$unit does not run /usr/bin/tuneplane on /etc/tuneplane/site.yaml"
if grep -q '^User=' "$unit"; then fail "$unit names a user: the operator's drop-in does"; fi
# shellcheck disable=SC2016 # $MAINPID is systemd's, written as it is
grep -qx 'ExecReload=/bin/kill -HUP $MAINPID' "$unit" || fail "$unit has no ExecReload (systemctl reload)"
grep -qx 'StateDirectory=tuneplane' "$unit" || fail "$unit has no StateDirectory=tuneplane"
[ -f /etc/tuneplane/site.yaml.example ] || fail "/etc/tuneplane/site.yaml.example not installed"
[ ! -e /etc/tuneplane/site.yaml ] || fail "the package must not write /etc/tuneplane/site.yaml"
dpkg-query -W -f='${Conffiles}\n' tuneplane | grep -q /etc/tuneplane/site.yaml.example ||
  fail "/etc/tuneplane/site.yaml.example is not a conffile"
getent passwd tuneplane >/dev/null && fail "the package created a user"
# verify exits 0 on an unknown key (a typo): any word from it is a failure too.
verified=$(systemd-analyze verify "$unit" 2>&1) || fail "systemd-analyze verify $unit: $verified"
[ -z "$verified" ] || fail "systemd-analyze verify $unit: $verified"
echo "systemd-analyze verify: ok"

completion=/usr/share/bash-completion/completions/tuneplane
[ -f "$completion" ] || fail "$completion not installed"
bash -n "$completion" || fail "$completion: bash -n"
grep -q 'complete -o default -F _tuneplane tuneplane' "$completion" || fail "$completion: no complete line"

echo "== the installed guides link only what the package ships"
unpacked=$(mktemp -d)
dpkg-deb -x "$deb" "$unpacked"  # the package's own files, whatever this machine's dpkg excludes
python3 - "$unpacked/usr/share/doc/tuneplane" <<'PY' || fail "the installed guides link files the package does not ship"
import pathlib, re, sys
root = pathlib.Path(sys.argv[1])
docs = sorted(root.rglob("*.md"))
if not docs:
    sys.exit(f"no guide under {root}")
bad = []
for doc in docs:
    in_fence = False
    for number, line in enumerate(doc.read_text(encoding="utf-8").split("\n"), 1):
        if re.match(r"^\s*(```|~~~)", line):
            in_fence = not in_fence
        if in_fence:
            continue
        for target in re.findall(r"\]\(([^)\s]+)\)", re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            dest = (doc.parent / target.split("#")[0]).resolve()
            if not dest.exists() or root.resolve() not in dest.parents:
                bad.append(f"{doc.relative_to(root)}:{number}: {target}")
for b in bad:
    print("  " + b, file=sys.stderr)
print(f"{len(docs)} guides, every relative link inside the package" if not bad else "", end="")
sys.exit(1 if bad else 0)
PY
echo
rm -rf "$unpacked"

echo "== systemctl cat tuneplane"
if [ "$(ps -p 1 -o comm=)" = systemd ]; then
  systemctl daemon-reload
  systemctl cat tuneplane
else
  echo "skipped: systemd is not PID 1 on this machine, so systemctl cannot answer (checked the unit file above instead)"
fi
dpkg --purge tuneplane >/dev/null
trap - EXIT

echo "== docs/operators.md, \"Deploying on an existing cluster\", on the simulator"
bash "$(dirname "$0")/deploy-checklist.sh" sim "$build"
echo "package-test: OK"
