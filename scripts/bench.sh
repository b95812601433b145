#!/usr/bin/env bash
# Runs every benchmark under bench/; each prints its figures and ratios against a baseline
# measured in the same run (sha256sum, python3's json). Not part of the test suite.
#   scripts/bench.sh [BUILD_DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build=$repo/$build ;; esac
for bench in "$build"/bench/*_bench; do
  [ -x "$bench" ] || continue
  printf '\n== %s\n' "$(basename "$bench")"
  "$bench"
done
