#!/bin/sh
# tools/replay/record-trace.sh: records a workload with `perf sched record`
# and stores the text taskplace-replay reads, compressed.
#
#   tools/replay/record-trace.sh OUT.txt.xz -- perf bench sched pipe -l 20000
#
# Needs root (or perf_event_paranoid <= -1) and perf. The trace holds
# sched_waking, sched_wakeup, sched_switch, sched_migrate_task,
# sched_wakeup_new and sched_process_fork (perf sched record's events plus
# sched_wakeup); sched_stat_runtime lines are dropped to keep it small.
set -eu
if [ $# -lt 3 ] || [ "$2" != "--" ]; then
  echo "usage: $0 OUT.txt.xz -- COMMAND [ARGS...]" >&2
  exit 2
fi
case $1 in /*) out=$1 ;; *) out=$(pwd)/$1 ;; esac
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Run from the temporary folder, so that the header's command line names
# no path of this machine.
cd "$dir"
perf sched record -o perf.data -e sched:sched_wakeup -- "$@" >&2
perf script -i perf.data --header -F comm,pid,tid,cpu,time,event,trace 2>/dev/null |
  grep -v 'sched:sched_stat_runtime:' | xz -9 > "$out"
echo "$out: $(xz -dc "$out" | grep -c 'sched:sched_waking:') sched_waking, $(wc -c < "$out") bytes" >&2
