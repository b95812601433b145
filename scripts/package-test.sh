#!/usr/bin/env bash
# The Debian package installed on this very machine (CI runs it as root; no container):
# dpkg -i of the package `make deb` built in BUILD/package/, then what an operator sees —
# `tuneplane --version` from PATH, the unit where Debian keeps units and valid
# (systemd-analyze verify), the example site file under /etc/tuneplane/, and `systemctl cat
# tuneplane` where systemd is PID 1 (it cannot answer otherwise: a container, a chroot).
# The package is purged at the end.
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

echo "== systemctl cat tuneplane"
if [ "$(ps -p 1 -o comm=)" = systemd ]; then
  systemctl daemon-reload
  systemctl cat tuneplane
else
  echo "skipped: systemd is not PID 1 on this machine, so systemctl cannot answer (checked the unit file above instead)"
fi
echo "package-test: OK"
