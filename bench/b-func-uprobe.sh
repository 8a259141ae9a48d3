#!/usr/bin/env bash
# Uprobe cost per call (entry + return of one function), tracerec -u beside
# its peers, in one run:
#   tracefs   the same uprobe pair in a private tracefs instance, every CPU's
#             trace_pipe_raw read by cat (a plain tracefs recording)
#   bpftrace  uprobe + uretprobe counting the calls (bpftrace's cheapest
#             form: nothing leaves the kernel per event)
#   bpftrace-out  the same pair sending each call's tid and time to user
#             space (printf: perf ring buffer, read and written by bpftrace):
#             bpftrace doing a recorder's job, every event leaving the kernel
#   tracerec  tracerec record -u BIN:leaf -- BIN
# All timed the same way: samples/src/s-calls times its own loop (wall, and
# the thread's CPU time, which holds the kernel's uprobe trap and the event's
# write), rounds interleaved so a busy VM hits every variant alike; per
# call = median of (variant - the untraced loop of the same round) / calls.
# Usage: bench/b-func-uprobe.sh [BUILD_DIR]   (NU=calls, RUNS; TRACEREC_B=an
# other tracerec to measure beside, e.g. main's build; ARGS="sp=%sp ..."
# adds a tracefs variant with those fetchargs on the entry probe, and RARGS
# those on the return probe)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd); P=$B/samples/s-calls; NU=${NU:-20000}; RUNS=${RUNS:-11}
TFS=/sys/kernel/tracing; G=ub$$; W=$(mktemp -d /tmp/b-func-uprobe.XXXXXX)
off=$(python3 "$TOP/bench/sym-offset.py" "$P" leaf)
CATS=
probes_off() {
	[ -n "$CATS" ] && { kill $CATS 2>/dev/null; wait $CATS 2>/dev/null; CATS=; }
	[ -d $TFS/instances/$G ] && { echo 0 >$TFS/instances/$G/events/$G/enable; rmdir $TFS/instances/$G; }
	grep -q "^[pr]:$G/" $TFS/uprobe_events 2>/dev/null && { echo "-:$G/leaf" >>$TFS/uprobe_events; echo "-:$G/leaf_ret" >>$TFS/uprobe_events; }
}
cleanup() { probes_off; if [ -n "${BT:-}" ]; then kill -INT $BT 2>/dev/null; fi; rm -rf $W; }
trap cleanup EXIT
[ -w $TFS/uprobe_events ] || { echo "b-func-uprobe: skipped (no writable $TFS/uprobe_events)"; exit 0; }
have_bt=0; command -v bpftrace >/dev/null && [ "$(id -u)" = 0 ] && have_bt=1
[ $have_bt = 1 ] || echo "# bpftrace missing (or not root): its rows are skipped"
get() { awk -v k=$1 '$1==k {print $2}' $W/err; }
run() { "$@" >/dev/null 2>$W/err; }
# probes_on [ENTRY_FETCHARGS [RETURN_FETCHARGS]]: the pair in a private instance, read by cat per CPU
probes_on() {
	echo "p:$G/leaf $P:$off${1:+ $1}" >>$TFS/uprobe_events; echo "r:$G/leaf_ret $P:$off${2:+ $2}" >>$TFS/uprobe_events
	mkdir $TFS/instances/$G; echo 1 >$TFS/instances/$G/events/$G/enable
	for c in $TFS/instances/$G/per_cpu/cpu*; do cat $c/trace_pipe_raw >/dev/null & CATS="$CATS $!"; done
}
# bpftrace attaches one probe at a time after "Attaching": probes of its own
# declared first and last, fired by runs of $READY, say when all are in
READY=$W/b-uprobe-ready; cp /bin/true "$READY"
# bt_on [out]: counting in the kernel, or (out) every call sent to user space
bt_on() {
	local body="uprobe:$P:leaf { @entry = count(); } uretprobe:$P:leaf { @return = count(); }"
	[ -n "${1:-}" ] && body="uprobe:$P:leaf { @entry = count(); printf(\"e %d %lu\n\", tid, nsecs); }
uretprobe:$P:leaf { printf(\"r %d %lu %d\n\", tid, nsecs, retval); }"
	timeout -k 10 300 bpftrace -e "tracepoint:sched:sched_process_exec /comm == \"b-uprobe-ready\"/ { printf(\"ready1\n\"); }
$body
tracepoint:sched:sched_process_exit /comm == \"b-uprobe-ready\"/ { printf(\"ready2\n\"); }" >$W/bt.out 2>&1 & BT=$!
	for k in $(seq 300); do
		"$READY"; grep -q '^ready1$' $W/bt.out && grep -q '^ready2$' $W/bt.out && return 0; sleep 0.2
	done
	return 1
}
bt_off() { for k in $(seq 60); do kill -INT $BT 2>/dev/null || break; sleep 0.3; done; wait $BT; BT=; }
for i in $(seq $RUNS); do
	run "$P" $NU x; echo "plain $(get loop_ns) $(get loop_cpu_ns)"
	probes_on; run "$P" $NU x; probes_off; echo "tracefs $(get loop_ns) $(get loop_cpu_ns)"
	if [ -n "${ARGS:-}" ]; then probes_on "$ARGS" "${RARGS:-}"; run "$P" $NU x; probes_off; echo "tracefs+args $(get loop_ns) $(get loop_cpu_ns)"; fi
	if [ $have_bt = 1 ] && bt_on; then
		run "$P" $NU x; bt_off
		# a count short of the calls is not a measurement of them
		grep -q "^@entry: $NU$" $W/bt.out && echo "bpftrace $(get loop_ns) $(get loop_cpu_ns)"
	fi
	if [ $have_bt = 1 ] && bt_on out; then
		run "$P" $NU x; bt_off
		# every call's two lines reached user space, or it is not this row
		[ "$(grep -c "^[er] " $W/bt.out)" = $((2 * NU)) ] && echo "bpftrace-out $(get loop_ns) $(get loop_cpu_ns)"
	fi
	run "$B/tracerec" record -q -o $W/u.tpp -u "$P:leaf" -- "$P" $NU x; echo "tracerec $(get loop_ns) $(get loop_cpu_ns)"
	if [ -n "${TRACEREC_B:-}" ]; then
		run "$TRACEREC_B" record -q -o $W/u.tpp -u "$P:leaf" -- "$P" $NU x; echo "tracerec_b $(get loop_ns) $(get loop_cpu_ns)"
	fi
done >$W/raw
python3 -c '
import sys, statistics, collections
n = int(sys.argv[1])
rows = [l.split() for l in sys.stdin if len(l.split()) == 3]
d = collections.defaultdict(list)
for k, w, c in rows:  # each round starts with "plain": variants minus that round'"'"'s untraced loop
    if k == "plain":
        pw, pc = int(w), int(c)
        continue
    d[k].append(((int(w) - pw) / n, (int(c) - pc) / n))
med = {}
for k in ("tracefs", "tracefs+args", "bpftrace", "bpftrace-out", "tracerec", "tracerec_b"):
    if not d[k]:
        continue
    ws = sorted(w for w, c in d[k]); cs = sorted(c for w, c in d[k])
    med[k] = (statistics.median(ws), statistics.median(cs))
    print("uprobe.%s.ns_per_call: wall %.0f (%.0f..%.0f) cpu %.0f (%.0f..%.0f), %d rounds"
          % (k, med[k][0], ws[0], ws[-1], med[k][1], cs[0], cs[-1], len(ws)))
for peer in ("tracefs", "bpftrace", "bpftrace-out", "tracerec_b"):
    if peer in med and "tracerec" in med and med[peer][1] > 0:
        print("uprobe.ratio_vs_%s: wall %.2f cpu %.2f (target <= 1)" % (peer, med["tracerec"][0] / med[peer][0], med["tracerec"][1] / med[peer][1]))
if "tracefs+args" in med and "tracefs" in med:
    print("uprobe.fetchargs_cost: %.0f ns per call cpu (%s)" % (med["tracefs+args"][1] - med["tracefs"][1], sys.argv[2]))
# A/B pairs measured in the same round: the median of the differences
# sees through a load that moves every variant of a round alike
for a, b in (("tracefs+args", "tracefs"), ("tracerec", "tracerec_b"), ("tracerec", "tracefs")):
    if d[a] and len(d[a]) == len(d[b]):
        diff = sorted(x[1] - y[1] for x, y in zip(d[a], d[b]))
        print("uprobe.paired.%s_minus_%s: cpu %.0f ns per call (%.0f..%.0f, %d rounds)"
              % (a, b, statistics.median(diff), diff[0], diff[-1], len(diff)))
' $NU "${ARGS:-}${RARGS:+ / return: $RARGS}" <$W/raw
