#!/usr/bin/env bash
# Function calls of threads and child processes: every call is named after
# its function and its task, whichever thread or process made it, however
# late the recorder learned about that thread. The truth is each sample's
# source ("expect:" line: the calls it makes).
. "$(dirname "$0")/lib.sh"
S=$B/samples

# "name=calls ..." of tracepp callgraph, sorted
cg_calls() { "$TRACEPP" callgraph --format=json "$1" | python3 -c 'import json, sys
print(" ".join("%s=%d" % (r["func"], r["calls"]) for r in sorted(json.load(sys.stdin), key=lambda r: r["func"])))'; }
# The "expect:" line of a sample, sorted like cg_calls
expected() { grep -ho "expect: .*" "$TOP"/samples/src/"$1".c* | sed "s/^expect: //; s/ *\*\/.*//" |
	tr ' ' '\n' | grep -v '=0$' | sort | tr '\n' ' ' | sed 's/ $//'; }

# A recording of s-threads-fi (system-wide, with sched events) whose
# recorder first saw worker thread 14155 in a sched_switch after the thread
# had exited: /proc no longer knew its process, and the task record it wrote
# then (pid 14155, later than the runtime's own record of the thread) named
# the thread a process of its own, with no maps: its calls showed as addresses.
test_expect 'a thread the recorder saw only after its exit: its calls are named (bundled recording)' '
	want=$(expected s-threads) && got=$(cg_calls "$TOP/samples/traces/threads-seen-late.tpp" 2>/dev/null) &&
	echo "source: $want" && echo "trace:  $got" && [ "$want" = "$got" ]
'

if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing/instances ] && [ -x "$TRACEREC" ]; then
# Short threads are read from the ring buffers after they are gone (the
# recorder reads every 200 ms unless a buffer fills): each run has several
# chances to name a thread from a late event.
test_expect 'short-lived threads recorded system-wide with sched events: every call named, 5 runs' '
	want=$(expected s-threads) && echo "source: $want" &&
	for i in 1 2 3 4 5; do
		"$TRACEREC" record -q -a -e sched -o t$i.tpp -- "$S/s-threads-fi" >/dev/null &&
		got=$(cg_calls t$i.tpp 2>/dev/null) && echo "run $i: $got" && [ "$want" = "$got" ] || exit 1
	done
'
else
	test_skip 'short-lived threads recorded system-wide' 'recording not permitted (not root or no tracefs)'
fi

test_done
