#!/usr/bin/env bash
# tests/fuzz/run.sh: build the libFuzzer targets and run each for a bounded
# time, failing on any finding (a crash, a sanitizer report, a broken
# invariant, a timeout or running out of memory).
#
#   tests/fuzz/run.sh          # 30 s per target
#   tests/fuzz/run.sh 600      # 10 minutes per target
#
# Environment: BUILD (default build-fuzz), CXX (default clang++), JOBS
# (default 2), TARGETS (default: every target). The checked-in seed corpus
# of each target (tests/fuzz/corpus/<target>) is read, never written: new
# inputs go to $BUILD/fuzz-corpus/<target>, findings to $BUILD/fuzz-findings.
set -euo pipefail

seconds=${1:-30}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-build-fuzz}
case $build in /*) ;; *) build="$root/$build" ;; esac
jobs=${JOBS:-2}
targets=${TARGETS:-"cpulist sysfs table policies placer balancer"}

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O1 -g' \
  -DCMAKE_CXX_COMPILER="${CXX:-clang++}" -DTASKPLACE_FUZZ=ON >/dev/null
build_targets=()
for t in $targets; do build_targets+=("fuzz_$t"); done
cmake --build "$build" -j"$jobs" --target "${build_targets[@]}" >&2

findings="$build/fuzz-findings"
mkdir -p "$findings"
status=0
printf '%-10s %12s %8s  %s\n' target executions status log >"$build/fuzz-summary.txt"
for t in $targets; do
  work="$build/fuzz-corpus/$t"
  mkdir -p "$work"
  log="$build/fuzz-$t.log"
  echo "== fuzz_$t for ${seconds}s"
  rc=0
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$findings/$t-" \
    "$work" "$root/tests/fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "fuzz_$t: FINDING (exit $rc), see $log and $findings/" >&2
    grep -m5 -E 'invariant broken|ERROR|runtime error|==ERROR' "$log" >&2 || tail -20 "$log" >&2
    printf '%-10s %12s %8s  %s\n' "$t" "${execs:-?}" FAIL "$log" >>"$build/fuzz-summary.txt"
  else
    printf '%-10s %12s %8s  %s\n' "$t" "${execs:-?}" ok "$log" >>"$build/fuzz-summary.txt"
  fi
done
cat "$build/fuzz-summary.txt"
exit $status
