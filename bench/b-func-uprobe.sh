#!/usr/bin/env bash
# Uprobe path cost per call, tracerec -u vs plain tracefs, measured the same
# way for both: samples/src/s-calls times its own loop (wall and the thread's
# CPU time, which includes the kernel's uprobe trap), rounds interleaved so a
# busy VM hits every variant alike, medians minus the untraced loop.
# "tracefs" has the probes enabled in a private instance and nobody reading;
# with TFSREAD=1 a cat of every CPU's trace_pipe_raw reads along, which is
# what a plain tracefs *recording* costs.
# Usage: bench/b-func-uprobe.sh [BUILD_DIR]   (NU=calls, RUNS)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd); P=$B/samples/s-calls; NU=${NU:-20000}; RUNS=${RUNS:-15}
TFS=/sys/kernel/tracing; G=ub$$; W=$(mktemp -d)
off=$(python3 "$TOP/bench/sym-offset.py" "$P" leaf)
cleanup() { [ -d $TFS/instances/$G ] && { echo 0 >$TFS/instances/$G/events/$G/enable; rmdir $TFS/instances/$G; }
  grep -q "$G/" $TFS/uprobe_events && { echo "-:$G/leaf" >>$TFS/uprobe_events; echo "-:$G/leaf_ret" >>$TFS/uprobe_events; }; rm -rf $W; }
trap cleanup EXIT
[ -w $TFS/uprobe_events ] || { echo "b-func-uprobe: skipped (no writable $TFS/uprobe_events)"; exit 0; }
get() { awk -v k=$1 '$1==k {print $2}' $W/err; }
for i in $(seq $RUNS); do
  "$P" $NU x >/dev/null 2>$W/err; echo "plain $(get loop_ns) $(get loop_cpu_ns)"
  echo "p:$G/leaf $P:$off" >>$TFS/uprobe_events; echo "r:$G/leaf_ret $P:$off" >>$TFS/uprobe_events
  mkdir $TFS/instances/$G; echo 1 >$TFS/instances/$G/events/$G/enable
  if [ -n "${TFSREAD:-}" ]; then for c in $TFS/instances/$G/per_cpu/cpu*; do cat $c/trace_pipe_raw >/dev/null & done; fi; "$P" $NU x >/dev/null 2>$W/err; echo "tracefs $(get loop_ns) $(get loop_cpu_ns)"
  echo 0 >$TFS/instances/$G/events/$G/enable; [ -n "${TFSREAD:-}" ] && { kill $(jobs -p) 2>/dev/null; wait; }; rmdir $TFS/instances/$G
  echo "-:$G/leaf" >>$TFS/uprobe_events; echo "-:$G/leaf_ret" >>$TFS/uprobe_events
  "$B/tracerec" record -q -o $W/u.tpp ${TREC_OPTS:-} -u "$P:leaf" -- "$P" $NU x >/dev/null 2>$W/err; echo "tracerec $(get loop_ns) $(get loop_cpu_ns)"
done | python3 -c '
import sys, statistics, collections
d = collections.defaultdict(list)
for l in sys.stdin:
    k, w, c = l.split(); d[k].append((int(w), int(c)))
n = int(sys.argv[1])
pw = statistics.median(w for w, c in d["plain"]); pc = statistics.median(c for w, c in d["plain"])
for k in ("tracefs", "tracerec"):
    ws = sorted((w - pw) / n for w, c in d[k]); cs = sorted((c - pc) / n for w, c in d[k])
    print("%-9s wall %6.0f ns/call (min %.0f max %.0f)  cpu %6.0f ns/call (min %.0f max %.0f)  n=%d" % (k, statistics.median(ws), ws[0], ws[-1], statistics.median(cs), cs[0], cs[-1], len(ws)))
' $NU
