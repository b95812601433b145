#!/usr/bin/env bash
# Runs the libFuzzer binaries `make fuzz` built (fuzz/CMakeLists.txt, TUNEPLANE_FUZZ=ON).
#
#   fuzz/run.sh BUILD_DIR          each target for FUZZ_SECONDS (default 30) on a scratch copy
#                                  of its corpus (BUILD_DIR/fuzz-scratch/<target>/corpus); the
#                                  repository's corpus is only read
#   fuzz/run.sh BUILD_DIR --merge  then adds to fuzz/corpus/<target>/ the inputs of the scratch
#                                  corpus that are at most FUZZ_MERGE_MAX_BYTES (768) and reach
#                                  coverage edges it lacks (libFuzzer's -merge=1): `make fuzz-merge`
#
# FUZZ_TARGETS (default: all) picks targets; FUZZ_RUNS=N runs N inputs instead of a time;
# FUZZ_FLAGS adds libFuzzer flags. A crash, leak or timeout is saved as
# BUILD_DIR/fuzz-scratch/<target>/artifacts/crash-… (copy it to fuzz/regressions/<target>/
# with a name saying what it found, once fixed), the run goes on with the next target, and
# the script exits 1 at the end. Each target's executions are printed from libFuzzer's stats.
set -euo pipefail
build=${1:?usage: fuzz/run.sh BUILD_DIR [--merge]}
mode=${2:-run}
root=$(cd "$(dirname "$0")/.." && pwd)
all="spec site registry slurm_answers api_body log_tail script_render"
targets=${FUZZ_TARGETS:-$all}
seconds=${FUZZ_SECONDS:-30}
scratch="$build/fuzz-scratch"
max_bytes=${FUZZ_MERGE_MAX_BYTES:-768}
read -r -a extra <<<"${FUZZ_FLAGS:-}"
if [ -n "${FUZZ_RUNS:-}" ]; then bound=(-runs="$FUZZ_RUNS"); else bound=(-max_total_time="$seconds"); fi

failed=()
summary=()
for target in $targets; do
  binary="$build/fuzz/fuzz_$target"
  [ -x "$binary" ] || { echo "fuzz: $binary is not built (make fuzz builds it)" >&2; exit 2; }
  work="$scratch/$target"
  mkdir -p "$work/corpus" "$work/artifacts" "$root/fuzz/regressions/$target"
  cp -n "$root/fuzz/corpus/$target/"* "$work/corpus/" 2>/dev/null || true
  echo "== fuzz_$target: ${bound[*]}"
  # New inputs go to the first directory only: the scratch copy. The regression inputs
  # are read as seeds.
  if "$binary" "${bound[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$work/artifacts/" "${extra[@]}" \
       "$work/corpus" "$root/fuzz/regressions/$target" >"$work/log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed+=("$target")
    grep -E "ERROR|FUZZ_CHECK|Test unit written|SUMMARY" "$work/log" | head -20 >&2 || true
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
  summary+=("$(printf '%-14s %-6s %12s executions %8s/s  (log: %s)' \
    "$target" "$status" "${runs:-?}" "${speed:-?}" "$work/log")")
  if [ "$mode" = "--merge" ] && [ "$status" = ok ]; then
    # The merge starts from the repository's corpus, so it keeps only the scratch inputs
    # that reach a coverage edge the corpus does not (-use_counters=0: an edge, not each
    # count of its hits; a long run keeps thousands of inputs that differ only in counts).
    # Only small inputs are offered: the replay tests run every input under ASan in CI,
    # and a small input reaches an edge as well as a large one that libFuzzer grew.
    merged="$work/merged" small="$work/small"
    rm -rf "$merged" "$small" && cp -r "$root/fuzz/corpus/$target" "$merged" && mkdir -p "$small"
    find "$work/corpus" -maxdepth 1 -type f -size -"$((max_bytes + 1))"c -exec cp -t "$small/" {} +
    "$binary" -merge=1 -use_counters=0 -timeout=10 -rss_limit_mb=2048 "$merged" "$small" \
      >"$work/merge.log" 2>&1
    added=0
    for input in "$merged"/*; do
      [ -e "$root/fuzz/corpus/$target/$(basename "$input")" ] && continue
      cp "$input" "$root/fuzz/corpus/$target/"
      added=$((added + 1))
    done
    echo "   merged: $added new inputs of at most $max_bytes bytes into fuzz/corpus/$target"
  fi
done
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]} (inputs in $scratch/<target>/artifacts/)" >&2
  exit 1
fi
