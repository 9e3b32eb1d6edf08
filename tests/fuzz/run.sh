#!/usr/bin/env bash
# tests/fuzz/run.sh: build the libFuzzer targets and run each for a bounded
# time or number of executions, failing on any finding (a crash, a
# sanitizer report, a broken invariant, a timeout or running out of
# memory).
#
#   tests/fuzz/run.sh                 # 30 s per target
#   tests/fuzz/run.sh 600             # 10 minutes per target
#   tests/fuzz/run.sh --long          # 10^7 executions per target
#   tests/fuzz/run.sh --long 1000000  # that many executions per target
#
# Environment: BUILD (default build-fuzz), CXX (default clang++), JOBS
# (default 2: the build's jobs, and how many targets fuzz at once), TARGETS (default: every target), MAX_SECONDS (with --long:
# stop a target after this many seconds even short of its count; default
# 0, no limit). The checked-in seed corpus of each target
# (tests/fuzz/corpus/<target>) is read, never written: new inputs go to
# $BUILD/fuzz-corpus/<target>, findings to $BUILD/fuzz-findings. The
# summary ($BUILD/fuzz-summary.txt) gives each target's executions,
# seconds and executions per second.
set -euo pipefail

seconds=30
runs=""
case "${1:-}" in
  --long)
    runs=${2:-10000000}
    case $runs in '' | *[!0-9]*) echo "run.sh: --long takes a count of executions (got '$runs')" >&2; exit 2 ;; esac
    ;;
  '') ;;
  *[!0-9]*) echo "run.sh: expected seconds or --long [count] (got '$1')" >&2; exit 2 ;;
  *) seconds=$1 ;;
esac
if [ -n "$runs" ]; then
  limit=(-runs="$runs" -max_total_time="${MAX_SECONDS:-0}")
  what="$runs executions"
else
  limit=(-max_total_time="$seconds")
  what="${seconds}s"
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-build-fuzz}
case $build in /*) ;; *) build="$root/$build" ;; esac
jobs=${JOBS:-2}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
targets=${TARGETS:-"cpulist sysfs sysfs_tree table policies placer balancer replay"}

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O1 -g' \
  -DCMAKE_CXX_COMPILER="${CXX:-clang++}" -DTASKPLACE_FUZZ=ON >/dev/null
build_targets=()
for t in $targets; do build_targets+=("fuzz_$t"); done
cmake --build "$build" -j"$jobs" --target "${build_targets[@]}" >&2

findings="$build/fuzz-findings"
mkdir -p "$findings"
summary="$build/fuzz-summary.txt"

# run_target <t>: one target for its bounded time; writes its summary row
# to $build/fuzz-$t.row and exits non-zero on a finding.
run_target() {
  local t=$1 work="$build/fuzz-corpus/$1" log="$build/fuzz-$1.log" rc=0 start=$SECONDS
  local took execs rate verdict
  mkdir -p "$work"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/tests/fuzz/fuzz_$t" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$findings/$t-" \
    "$work" "$root/tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  took=$((SECONDS - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    echo "fuzz_$t: FINDING (exit $rc), see $log and $findings/" >&2
    grep -m5 -E 'invariant broken|ERROR|runtime error|==ERROR' "$log" >&2 || tail -20 "$log" >&2
    verdict=FAIL
  else
    verdict=ok
  fi
  printf '%-11s %12s %8s %10s %8s  %s\n' "$t" "${execs:-?}" "$took" "${rate:-?}" "$verdict" "$log" \
    >"$build/fuzz-$t.row"
  return "$rc"
}

# Each fuzzer is one process on one core: the targets are dealt into JOBS
# lanes that run at once, each lane its targets one after another, each
# target still for the whole time (or count) asked. The verdicts are read
# from the rows the targets write.
lanes=()
i=0
for t in $targets; do
  rm -f "$build/fuzz-$t.row"
  lanes[i % jobs]+="$t "
  i=$((i + 1))
done
for lane in "${lanes[@]}"; do
  (
    for t in $lane; do
      echo "== fuzz_$t for $what"
      run_target "$t" || true
    done
  ) &
done
wait

status=0
printf '%-11s %12s %8s %10s %8s  %s\n' target executions seconds exec/s status log >"$summary"
for t in $targets; do
  if [ -f "$build/fuzz-$t.row" ]; then
    cat "$build/fuzz-$t.row" >>"$summary"
    if ! grep -q ' ok  ' "$build/fuzz-$t.row"; then status=1; fi
  else
    status=1
    printf '%-11s %12s %8s %10s %8s  %s\n' "$t" "?" "?" "?" FAIL "$build/fuzz-$t.log" >>"$summary"
  fi
done
cat "$summary"
exit $status
