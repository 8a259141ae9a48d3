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

# Uprobes: the kernel reports a probe hit with the thread's tid only; the
# recorder must learn each thread's process (task:task_newtask's clone
# flags, read even when the thread is long gone) and the probe names its
# function whatever maps were caught.
if [ "$(id -u)" = 0 ] && [ -w /sys/kernel/tracing/uprobe_events ]; then
# every function event of a dump: "task tid sym" per line
calls_by_task() { "$TRACEPP" dump --format=json "$1" | python3 -c 'import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if "__probe_ip" in e or "__probe_func" in e:
        print(e.get("task", "?"), e["tid"], e.get("sym", "?"))'; }
test_expect 'uprobes in 40 short threads: every call named, every thread named and counted' '
	"$TRACEREC" record -q -o t.tpp -u "$S/s-thread-churn:main" -u "$S/s-thread-churn:churn" \
		-u "$S/s-thread-churn:leaf" -- "$S/s-thread-churn" >/dev/null &&
	want=$(expected s-thread-churn) && got=$(cg_calls t.tpp 2>/dev/null) &&
	echo "source: $want" && echo "trace:  $got" && [ "$want" = "$got" ] &&
	calls_by_task t.tpp >calls && cut -d" " -f1 calls | sort | uniq -c &&
	[ "$(cut -d" " -f1 calls | sort -u)" = s-thread-churn ] &&
	[ "$(cut -d" " -f2 calls | sort -u | wc -l)" = 41 ] &&
	"$TRACEPP" replay t.tpp | grep -v "^#" >flow && ! grep -q " -[0-9]* " flow
'

test_expect 'uprobes across fork and exec: the child and the exec'"'"'d program named, their calls too' '
	"$TRACEREC" record -q -o t.tpp -u "$S/s-fork-exec:main" -u "$S/s-fork-exec:*_work" \
		-u "$S/s-fork-exec:before_fork" -- "$S/s-fork-exec" >/dev/null &&
	want=$(expected s-fork-exec) && got=$(cg_calls t.tpp 2>/dev/null) &&
	echo "source: $want" && echo "trace:  $got" && [ "$want" = "$got" ] &&
	calls_by_task t.tpp >calls && cat calls && ! grep -q "^? " calls &&
	[ "$(cut -d" " -f2 calls | sort -u | wc -l)" = 2 ]
'

test_expect 'uprobe on libc malloc of a command that execs: every call is malloc, none of the recorder'"'"'s own' '
	"$TRACEREC" record -q -o t.tpp -u libc:malloc -- env TPP_T=1 "$S/s-fork-exec" >/dev/null &&
	calls_by_task t.tpp >calls && sort calls | uniq -c &&
	[ -s calls ] && [ "$(cut -d" " -f3 calls | sort -u)" = malloc ] && ! grep -q "^? " calls
'
else
	test_skip 'uprobes in threads, forks and execs' 'no writable uprobe_events (not root, or no CONFIG_UPROBE_EVENTS)'
fi

test_done
