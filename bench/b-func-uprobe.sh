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
#   bpf-ringbuf  a prototype of a BPF path for tracerec (bench/tpp-bpf-uprobe.c):
#             uprobe_multi links on BIN's process, hand-assembled programs
#             writing each event's tid, time, sp (and the return address)
#             to a BPF ring buffer without wake-ups, drained to a file
#   bpf-count the same links and programs only counting the calls in a map
#             (the prototype's path at bpftrace counting's job); with LADDER,
#             both again attached as bpftrace attaches (-perf: perf_event_open
#             of the uprobe PMU, PERF_EVENT_IOC_SET_BPF)
# All timed the same way: samples/src/s-calls times its own loop (wall, and
# the thread's CPU time, which holds the kernel's uprobe trap and the event's
# write), rounds interleaved so a busy VM hits every variant alike; per
# call = median of (variant - the untraced loop of the same round) / calls.
# Usage: bench/b-func-uprobe.sh [BUILD_DIR]   (NU=calls, RUNS; TRACEREC_B=an
# other tracerec to measure beside, e.g. main's build; ARGS="sp=%sp ..."
# adds a tracefs variant with those fetchargs on the entry probe, and RARGS
# those on the return probe; LADDER=1 adds tracefs variants with one of
# tracerec's kernel-side settings each (trace_clock mono, the pid filter
# with event-fork) and one with all of them (tracefs+rec: those, its
# fetchargs, buffer_percent 20 and the task events it reads for names), and
# that instance read by nobody (tracefs-noread: the kernel's writes alone),
# so that tracerec - tracefs splits into the kernel's part and the reader's.
# Each row also gives the median of IRQ-work interrupts per run (iwi): cat
# is woken every few events, each wake-up a self-IPI on the traced CPU)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd); P=$B/samples/s-calls; NU=${NU:-20000}; RUNS=${RUNS:-11}
TFS=/sys/kernel/tracing; G=ub$$; W=$(mktemp -d /tmp/b-func-uprobe.XXXXXX)
off=$(python3 "$TOP/bench/sym-offset.py" "$P" leaf)
CATS=
probes_off() {
	[ -n "$CATS" ] && { kill $CATS 2>/dev/null; wait $CATS 2>/dev/null; CATS=; }
	[ -d $TFS/instances/$G ] && { echo 0 >$TFS/instances/$G/events/enable; rmdir $TFS/instances/$G; }
	grep -q "^[pr]:$G/" $TFS/uprobe_events 2>/dev/null && { echo "-:$G/leaf" >>$TFS/uprobe_events; echo "-:$G/leaf_ret" >>$TFS/uprobe_events; }
}
cleanup() { probes_off; if [ -n "${BT:-}" ]; then kill -INT $BT 2>/dev/null; fi; rm -rf $W; }
trap cleanup EXIT
[ -w $TFS/uprobe_events ] || { echo "b-func-uprobe: skipped (no writable $TFS/uprobe_events)"; exit 0; }
have_bt=0; command -v bpftrace >/dev/null && [ "$(id -u)" = 0 ] && have_bt=1
[ $have_bt = 1 ] || echo "# bpftrace missing (or not root): its rows are skipped"
get() { awk -v k=$1 '$1==k {print $2}' $W/err; }
# IRQ-work interrupts, all CPUs: how the ring buffer wakes a waiting reader
# (a self-IPI on the writing CPU, ~10-20 us of the traced thread's CPU in
# this VM), counted over each run
iwi() { awk '$1 == "IWI:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts; }
# (the command's own status: have_bpf below relies on it)
run() { local a rc; a=$(iwi); "$@" >/dev/null 2>$W/err; rc=$?; echo $(($(iwi) - a)) >$W/iwi; return $rc; }
res() { echo "$(get loop_ns) $(get loop_cpu_ns) $(cat $W/iwi)"; }
# run_pid CMD...: CMD alone in the instance's pid filter, as tracerec sets it for its command
run_pid() {
	echo 1 >$TFS/instances/$G/options/event-fork
	run sh -c 'echo $$ >"$0"; exec "$@"' $TFS/instances/$G/set_event_pid "$@"
}
BPFU=$B/bench/tpp-bpf-uprobe; have_bpf=0
[ -x "$BPFU" ] && [ "$(id -u)" = 0 ] && run "$BPFU" -c "$P" $off -- "$P" 10 x && have_bpf=1
[ $have_bpf = 1 ] || echo "# the BPF prototype cannot attach here ($(tail -1 $W/err 2>/dev/null)): its rows are skipped"
RECARGS='__sp=%sp:x64 __ra=$stack0:x64'; RECRET='__sp=%sp:x64'
TASKEV='task/task_newtask task/task_rename sched/sched_process_exec'
# probes_on [ENTRY_FETCHARGS [RETURN_FETCHARGS [CLOCK [BUFFER_PERCENT [EXTRA_EVENTS [noread]]]]]]:
# the pair in a private instance, read by cat per CPU (noread: read by
# nobody, in a buffer that holds the whole run: the kernel's writes alone)
probes_on() {
	echo "p:$G/leaf $P:$off${1:+ $1}" >>$TFS/uprobe_events; echo "r:$G/leaf_ret $P:$off${2:+ $2}" >>$TFS/uprobe_events
	mkdir $TFS/instances/$G
	[ -n "${3:-}" ] && echo $3 >$TFS/instances/$G/trace_clock
	[ -n "${4:-}" ] && echo $4 >$TFS/instances/$G/buffer_percent
	for e in ${5:-}; do echo 1 >$TFS/instances/$G/events/$e/enable; done
	[ -n "${6:-}" ] && echo $((NU / 8 + 1024)) >$TFS/instances/$G/buffer_size_kb
	echo 1 >$TFS/instances/$G/events/$G/enable
	[ -n "${6:-}" ] && return
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
	run "$P" $NU x; echo "plain $(res)"
	probes_on; run "$P" $NU x; probes_off; echo "tracefs $(res)"
	if [ -n "${ARGS:-}" ]; then probes_on "$ARGS" "${RARGS:-}"; run "$P" $NU x; probes_off; echo "tracefs+args $(res)"; fi
	if [ -n "${LADDER:-}" ]; then
		probes_on "" "" mono; run "$P" $NU x; probes_off; echo "tracefs+mono $(res)"
		probes_on; run_pid "$P" $NU x; probes_off; echo "tracefs+pid $(res)"
		probes_on "$RECARGS" "$RECRET" mono 20 "$TASKEV"; run_pid "$P" $NU x; probes_off
		echo "tracefs+rec $(res)"
		probes_on "$RECARGS" "$RECRET" mono 20 "$TASKEV" noread; run_pid "$P" $NU x; probes_off
		echo "tracefs-noread $(res)"
	fi
	if [ $have_bt = 1 ] && bt_on; then
		run "$P" $NU x; bt_off
		# a count short of the calls is not a measurement of them
		grep -q "^@entry: $NU$" $W/bt.out && echo "bpftrace $(res)"
	fi
	if [ $have_bt = 1 ] && bt_on out; then
		run "$P" $NU x; bt_off
		# every call's two lines reached user space, or it is not this row
		[ "$(grep -c "^[er] " $W/bt.out)" = $((2 * NU)) ] && echo "bpftrace-out $(res)"
	fi
	run "$B/tracerec" record -q -o $W/u.tpp -u "$P:leaf" -- "$P" $NU x; echo "tracerec $(res)"
	if [ $have_bpf = 1 ]; then
		rm -f $W/b.rec; run "$BPFU" -o $W/b.rec "$P" $off -- "$P" $NU x
		# every event in the file, none lost, or it is not this row
		grep -q "^events $((2 * NU)) lost 0$" $W/err && echo "bpf-ringbuf $(res)"
		run "$BPFU" -c "$P" $off -- "$P" $NU x
		grep -q "^counted $((2 * NU))$" $W/err && echo "bpf-count $(res)"
		if [ -n "${LADDER:-}" ]; then  # the same programs on bpftrace's attach path (perf_event uprobe PMU)
			rm -f $W/b.rec; run "$BPFU" -p -o $W/b.rec "$P" $off -- "$P" $NU x
			grep -q "^events $((2 * NU)) lost 0$" $W/err && echo "bpf-ringbuf-perf $(res)"
			run "$BPFU" -p -c "$P" $off -- "$P" $NU x
			grep -q "^counted $((2 * NU))$" $W/err && echo "bpf-count-perf $(res)"
		fi
	fi
	if [ -n "${TRACEREC_B:-}" ]; then
		run "$TRACEREC_B" record -q -o $W/u.tpp -u "$P:leaf" -- "$P" $NU x; echo "tracerec_b $(res)"
	fi
done >$W/raw
python3 -c '
import sys, statistics, collections
n = int(sys.argv[1])
rows = [l.split() for l in sys.stdin if len(l.split()) == 4]
d = collections.defaultdict(list)
byround = collections.defaultdict(dict)  # variant -> round -> cpu ns per call
rnd = 0
iw = collections.defaultdict(list)
for k, w, c, i in rows:  # each round starts with "plain": variants minus that round'"'"'s untraced loop
    if k == "plain":
        pw, pc = int(w), int(c)
        rnd += 1
        continue
    d[k].append(((int(w) - pw) / n, (int(c) - pc) / n))
    iw[k].append(int(i))
    byround[k][rnd] = d[k][-1][1]
med = {}
for k in ("tracefs", "tracefs+args", "tracefs+mono", "tracefs+pid", "tracefs+rec", "tracefs-noread", "bpftrace", "bpftrace-out",
          "tracerec", "tracerec_b", "bpf-ringbuf", "bpf-count", "bpf-ringbuf-perf", "bpf-count-perf"):
    if not d[k]:
        continue
    ws = sorted(w for w, c in d[k]); cs = sorted(c for w, c in d[k])
    med[k] = (statistics.median(ws), statistics.median(cs))
    print("uprobe.%s.ns_per_call: wall %.0f (%.0f..%.0f) cpu %.0f (%.0f..%.0f), %d rounds, iwi %d"
          % (k, med[k][0], ws[0], ws[-1], med[k][1], cs[0], cs[-1], len(ws), statistics.median(iw[k])))
for peer in ("tracefs", "tracefs+rec", "tracefs-noread", "bpftrace", "bpftrace-out", "tracerec_b"):
    if peer in med and "tracerec" in med and med[peer][1] > 0:
        print("uprobe.ratio_vs_%s: wall %.2f cpu %.2f (target <= 1)" % (peer, med["tracerec"][0] / med[peer][0], med["tracerec"][1] / med[peer][1]))
# the BPF prototype against the same peers: would a BPF path reach them
for peer in ("bpftrace", "tracefs", "tracerec", "bpf-count"):
    if peer in med and "bpf-ringbuf" in med and med[peer][1] > 0:
        print("uprobe.bpf-ringbuf.ratio_vs_%s: wall %.2f cpu %.2f" % (peer, med["bpf-ringbuf"][0] / med[peer][0], med["bpf-ringbuf"][1] / med[peer][1]))
if "tracefs+args" in med and "tracefs" in med:
    print("uprobe.fetchargs_cost: %.0f ns per call cpu (%s)" % (med["tracefs+args"][1] - med["tracefs"][1], sys.argv[2]))
# A/B pairs measured in the same round: the median of the differences
# sees through a load that moves every variant of a round alike
for a, b in (("tracefs+args", "tracefs"), ("tracefs+mono", "tracefs"), ("tracefs+pid", "tracefs"),
             ("tracefs+rec", "tracefs"), ("tracerec", "tracefs+rec"), ("tracerec", "tracefs-noread"), ("tracerec", "tracerec_b"),
             ("tracerec", "tracefs"), ("bpf-ringbuf", "bpftrace"), ("bpf-count", "bpftrace"),
             ("bpf-ringbuf", "bpf-count"), ("bpf-ringbuf", "tracerec"), ("bpf-ringbuf-perf", "bpf-count-perf"),
             ("bpf-count-perf", "bpftrace"), ("bpf-ringbuf", "bpf-ringbuf-perf")):
    both = sorted(set(byround[a]) & set(byround[b]))  # a row may miss a round (a short count)
    if both:
        diff = sorted(byround[a][r] - byround[b][r] for r in both)
        print("uprobe.paired.%s_minus_%s: cpu %.0f ns per call (%.0f..%.0f, %d rounds)"
              % (a, b, statistics.median(diff), diff[0], diff[-1], len(diff)))
' $NU "${ARGS:-}${RARGS:+ / return: $RARGS}" <$W/raw
