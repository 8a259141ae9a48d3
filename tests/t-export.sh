#!/usr/bin/env bash
# tracepp export --format=chrome: the JSON checked against the trace-event
# format's rules (tests/chrome_check.py: UTF-8 JSON, X durations >= 0,
# complete events nesting per thread, every B with its E), and what it holds
# against tracepp's other commands on the same file: calls per function and
# per thread equal callgraph, CPU slice time per task equals sched's on-CPU
# time, unmatched calls marked as replay marks them. --format=folded: the
# stacks of callgraph --folded, rooted per thread with --root=thread, parsed
# as flamegraph.pl parses them, totals per thread equal callgraph --tid.
# Recordings of the sample programs (known call trees) and a generated file.
. "$(dirname "$0")/lib.sh"
S=$B/samples
CHECK="python3 $TOP/tests/chrome_check.py"

tracefs_ok() { [ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; [ -d /sys/kernel/tracing/instances ]; }

# callgraph --format=json as "FUNC CALLS TOTAL_NS" lines, sorted
cg_calls() { "$TRACEPP" callgraph --format=json "$@" 2>/dev/null | python3 -c 'import json,sys
for r in sorted(json.load(sys.stdin), key=lambda r: r["func"]): print(r["func"], r["calls"], r["total_ns"])'; }
# sched --format=json as "TID ONCPU_NS" lines of the tasks that ran
sched_oncpu() { "$TRACEPP" sched --format=json "$@" 2>/dev/null | python3 -c 'import json,sys
for r in sorted(json.load(sys.stdin), key=lambda r: r["tid"]):
    if r["oncpu_ns"]: print(r["tid"], r["oncpu_ns"])'; }

# The same checks on any file: valid, calls = callgraph, slices = sched.
same_as_others() {
	"$TRACEPP" export --format=chrome -o x.json "$1" 2>err || { cat err; return 1; }
	$CHECK x.json --summary || return 1
	$CHECK x.json --calls >calls.txt && cg_calls "$1" >cg.txt && diff cg.txt calls.txt || return 1
	$CHECK x.json --slices >slices.txt && sched_oncpu "$1" >sched.txt && diff sched.txt slices.txt || return 1
	[ -s calls.txt ] && [ -s slices.txt ]
}

test_expect 'a generated file (4 threads, 2 CPUs): valid JSON, calls = callgraph, CPU slices = sched' '
	"$GEN" -o g.tpp -n 20000 --mix func,sched --cpus 2 --threads 4 >/dev/null &&
	same_as_others g.tpp && wc -l calls.txt slices.txt
'

test_expect 'export --time-range: every event inside the window, calls = callgraph over it' '
	"$GEN" -o g.tpp -n 20000 --mix func,sched --cpus 2 --threads 4 >/dev/null &&
	"$TRACEPP" export --format=chrome --time-range=1ms,3ms -o x.json g.tpp 2>/dev/null &&
	$CHECK x.json --calls >calls.txt && cg_calls --time-range=1ms,3ms g.tpp >cg.txt && diff cg.txt calls.txt &&
	python3 -c "import json
ev = [e for e in json.load(open(\"x.json\"))[\"traceEvents\"] if e[\"ph\"] != \"M\"]
assert ev
for e in ev:
    s = round(e[\"ts\"] * 1000); t = s + round(e.get(\"dur\", 0) * 1000)
    assert 1000000 <= s and t <= 3000000, e
print(len(ev), \"events in the window\")"
'

test_expect 'usage errors and unwritable output: one line, exit 2 / 1, no file left' '
	"$GEN" -o g.tpp -n 1000 --mix func >/dev/null &&
	{ "$TRACEPP" export --format=bogus g.tpp 2>e; [ $? = 2 ]; } && [ "$(wc -l <e)" = 1 ] && cat e &&
	{ "$TRACEPP" export g.tpp 2>e; [ $? = 2 ]; } && [ "$(wc -l <e)" = 1 ] && cat e &&
	{ "$TRACEPP" export --format=chrome nosuch.tpp 2>e; [ $? = 1 ]; } && [ "$(wc -l <e)" = 1 ] && cat e &&
	{ "$TRACEPP" export --format=chrome -o nodir/x.json g.tpp 2>e; [ $? = 1 ]; } && [ "$(wc -l <e)" = 1 ] && cat e &&
	{ "$TRACEPP" export --format=chrome g.tpp >/dev/full 2>e; [ $? = 1 ]; } && grep -q "No space" e &&
	"$TRACEPP" export --format=chrome -o x.json g.tpp 2>/dev/null && "$TRACEPP" export --format=chrome -o x.json g.tpp 2>/dev/null &&
	[ "$(stat -c %a x.json)" = 600 ] && [ "$(ls | grep -c "^x.json")" = 1 ] && $CHECK x.json
'

# folded FILE: "PATH SELF" lines checked as flamegraph.pl's stackcollapse
# output (frames split on ';', the count after the last space), summed per
# the first N frames: fold_sum FILE N
fold_sum() { python3 -c 'import sys, re, collections
tot = collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r"^(.+) ([0-9]+)$", line.rstrip("\n"))
    assert m, "not a folded line: %r" % line
    frames = m.group(1).split(";")
    assert all(frames), "empty frame: %r" % line
    tot[";".join(frames[:int(sys.argv[2])])] += int(m.group(2))
for k in sorted(tot): print(k, tot[k])' "$@"; }
cg_self() { "$TRACEPP" callgraph --format=json "$@" 2>/dev/null | python3 -c 'import json,sys
print(sum(r["self_ns"] for r in json.load(sys.stdin)))'; }

test_expect 'export --format=folded: the stacks of callgraph --folded; --root=thread: comm-pid;tid roots, per-thread totals = callgraph --tid' '
	"$GEN" -o g.tpp -n 20000 --mix func,sched --cpus 2 --threads 4 >/dev/null &&
	"$TRACEPP" export --format=folded -o f.txt g.tpp 2>/dev/null && "$TRACEPP" callgraph --folded g.tpp >cf.txt 2>/dev/null &&
	diff cf.txt f.txt && [ "$(fold_sum f.txt 0 | cut -d" " -f2)" = "$(cg_self g.tpp)" ] &&
	"$TRACEPP" export --format=folded --root=thread -o ft.txt g.tpp 2>/dev/null &&
	"$TRACEPP" callgraph --folded --root=thread g.tpp >cft.txt 2>/dev/null && diff cft.txt ft.txt &&
	fold_sum ft.txt 2 >roots.txt && cat roots.txt && [ "$(wc -l <roots.txt)" = 4 ] &&
	while read -r root ns; do
		tid=${root#*;}; case $root in gen-app-4242\;*) ;; *) exit 1;; esac
		[ "$(cg_self --tid=$tid g.tpp)" = "$ns" ] || { echo "tid $tid: $ns"; exit 1; }
	done <roots.txt &&
	sed "s/^[^;]*;[^;]*;//" ft.txt | fold_sum /dev/stdin 99 >merged.txt && fold_sum f.txt 99 | diff - merged.txt
'

if ! tracefs_ok; then
	test_skip 'export of recordings of the sample programs' 'no tracefs on this machine'
	test_done; exit
fi

R=$_scratch/rec
mkdir -p "$R"
# Without sched_stat_runtime sched counts on-CPU time switch to switch, the
# intervals the CPU slices are; with it, the kernel's clock (another number).
test_expect 'record s-threads-fi and s-longjmp-fi with context switches' '
	"$TRACEREC" record -q -e sched:sched_switch,sched:sched_wakeup -o "$R/th.tpp" -- "$S/s-threads-fi" >/dev/null 2>err &&
	"$TRACEREC" record -q -o "$R/lj.tpp" -- "$S/s-longjmp-fi" >/dev/null 2>>err || { cat err; exit 1; }
'

test_expect 's-threads: valid JSON, calls per function = callgraph, CPU slices per task = sched' '
	same_as_others "$R/th.tpp" && cat calls.txt &&
	grep -qx "main 1 [0-9]*" calls.txt && grep -qx "worker 4 [0-9]*" calls.txt && grep -qx "leaf 400 [0-9]*" calls.txt
'

test_expect 's-threads: calls per thread = callgraph --tid of each thread; --tid keeps one thread' '
	"$TRACEPP" export --format=chrome -o x.json "$R/th.tpp" 2>/dev/null && $CHECK x.json --calls-by-tid >bytid.txt &&
	cut -d" " -f1 bytid.txt | sort -u >tids && [ "$(wc -l <tids)" = 5 ] &&
	while read -r t; do
		cg_calls --tid=$t "$R/th.tpp" | while read -r f n tot; do echo "$t $f $n"; done
	done <tids | sort >cg.txt && sort bytid.txt | diff cg.txt - &&
	t=$(sed -n 2p tids) &&
	"$TRACEPP" export --format=chrome --tid=$t -o one.json "$R/th.tpp" 2>/dev/null && $CHECK one.json &&
	python3 -c "import json,sys
t = int(sys.argv[1])
for e in json.load(open(\"one.json\"))[\"traceEvents\"]:
    if e[\"ph\"] not in \"ME\":
        assert e[\"tid\"] == t or e[\"args\"].get(\"tid\") == t, e" $t
'

test_expect 's-threads: --func=worker keeps worker and what it calls' '
	"$TRACEPP" export --format=chrome --func=worker -o x.json "$R/th.tpp" 2>/dev/null &&
	$CHECK x.json --calls >calls.txt && cat calls.txt &&
	[ "$(cut -d" " -f1,2 calls.txt)" = "leaf 400
worker 4" ] &&
	python3 -c "import json
ev = [e for e in json.load(open(\"x.json\"))[\"traceEvents\"] if e.get(\"cat\") == \"kernel\"]
print(len(ev), \"kernel events under worker\")"
'

test_expect 's-longjmp: the calls left by longjmp marked unwound, as replay marks them' '
	"$TRACEPP" export --format=chrome -o x.json "$R/lj.tpp" 2>/dev/null && $CHECK x.json &&
	n=$(grep -o "\"unwound\":true" x.json | wc -l) &&
	r=$("$TRACEPP" replay --no-kernel "$R/lj.tpp" 2>/dev/null | grep -c "\[unwound\]") &&
	echo "export $n replay $r" && [ "$n" = "$r" ] && [ "$n" = 9 ] &&
	$CHECK x.json --calls >calls.txt && cg_calls "$R/lj.tpp" >cg.txt && diff cg.txt calls.txt
'

test_expect 's-threads: folded --root=thread: one root per thread of the process, each with its own stacks' '
	"$TRACEPP" export --format=folded --root=thread "$R/th.tpp" >f.txt 2>/dev/null && cat f.txt &&
	fold_sum f.txt 2 >roots.txt && [ "$(wc -l <roots.txt)" = 5 ] &&
	[ "$(cut -d";" -f1 roots.txt | sort -u | grep -c "^s-threads-fi-[0-9]*$")" = 1 ] &&
	while read -r root ns; do
		[ "$(cg_self --tid=${root#*;} "$R/th.tpp")" = "$ns" ] || exit 1
	done <roots.txt
'

test_expect 'the hot path writes the bytes of the general way (TPP_EXPORT_HOT=0): s-threads (whole, one --tid), s-longjmp, the bundled traces' '
	tid=$("$TRACEPP" info --format=json "$R/th.tpp" | python3 -c "import json, sys; print([s[\"tid\"] for s in json.load(sys.stdin)[\"streams\"] if s[\"kind\"] == \"thread\"][-1])") &&
	n=0 && for f in "$R/th.tpp --tid=$tid" "$R/th.tpp" "$R/lj.tpp" "$TOP"/samples/traces/*.tpp; do
		"$TRACEPP" export --format=chrome $f >hot.json 2>/dev/null; a=$?
		TPP_EXPORT_HOT=0 "$TRACEPP" export --format=chrome $f >gen.json 2>/dev/null; b=$?
		[ $a = $b ] && cmp hot.json gen.json || { echo "$f: the two ways differ"; exit 1; }
		n=$((n + 1))
	done && echo "$n exports alike" && [ $n -ge 7 ]
'

test_expect 'block requests as async slices per device = io, queue depth as a counter, packets on their device track = net (samples/traces/demo.tpp)' '
	D=$TOP/samples/traces/demo.tpp &&
	"$TRACEPP" export --format=chrome -o x.json "$D" 2>/dev/null && $CHECK x.json --summary &&
	"$TRACEPP" io --format=json "$D" >io.json 2>/dev/null && "$TRACEPP" net --format=json "$D" >net.json 2>/dev/null &&
	"$TRACEPP" dump --format=json --type=net_dev_xmit,netif_receive_skb "$D" >pk.json 2>/dev/null &&
	python3 -c "import json
from collections import Counter
ev = json.load(open(\"x.json\"))[\"traceEvents\"]
io, net = json.load(open(\"io.json\")), json.load(open(\"net.json\"))
names = {(e[\"pid\"], e[\"tid\"]): e[\"args\"][\"name\"] for e in ev if e[\"ph\"] == \"M\" and e[\"name\"] == \"thread_name\"}
procs = {e[\"pid\"]: e[\"args\"][\"name\"] for e in ev if e[\"ph\"] == \"M\" and e[\"name\"] == \"process_name\"}
slices = Counter((e[\"name\"], e[\"args\"][\"op\"]) for e in ev if e[\"ph\"] == \"b\")
assert sum(slices.values()) > 100, slices
for r in io:
    # a completion whose issue was not recorded has no latency and no slice
    want = r[\"count\"] if r[\"max_ns\"] else 0
    assert slices[(r[\"dev\"], r[\"op\"])] == want, (r, slices)
assert sum(slices.values()) == sum(r[\"count\"] for r in io if r[\"max_ns\"])
qd = Counter()
for e in ev:
    if e[\"ph\"] == \"C\" and e[\"cat\"] == \"block\":
        assert procs[e[\"pid\"]] == \"block devices\"
        dev = e[\"name\"].split()[-1]
        qd[dev] = max(qd[dev], e[\"args\"][\"requests\"])
for dev in {r[\"dev\"] for r in io}:
    ops = [r[\"max_qd\"] for r in io if r[\"dev\"] == dev]
    assert max(ops) <= qd[dev] <= sum(ops), (dev, qd[dev], ops)
pk = Counter((names[(e[\"pid\"], e[\"tid\"])], e[\"name\"]) for e in ev
             if e[\"ph\"] == \"i\" and procs.get(e[\"pid\"]) == \"network devices\")
for r in net:
    assert pk[(r[\"dev\"], \"net_dev_xmit\")] == r[\"tx_packets\"] > 0, (r, pk)
    assert pk[(r[\"dev\"], \"netif_receive_skb\")] == r[\"rx_packets\"], (r, pk)
# the task each packet went out or came in on, as dump has it
by_task = Counter((e[\"args\"].get(\"task_tid\"), e[\"name\"]) for e in ev
                  if e[\"ph\"] == \"i\" and procs.get(e[\"pid\"]) == \"network devices\")
want = Counter((e[\"tid\"] if e[\"tid\"] > 0 else None, e[\"type\"]) for e in map(json.loads, open(\"pk.json\")) if e[\"type\"] != \"lost\")
assert by_task == want and len(by_task) > 1, (by_task, want)
print(dict(slices), dict(qd), dict(pk), len(by_task), \"tasks with packets\")"
'

# Truth: the kernel's nr_running summed over the CPUs (/proc/loadavg), read
# every 2 ms while two threads pinned to one CPU keep preempting each other,
# against the export's run-queue counters summed at the same times. The
# kernel's count also holds sleeping tasks it has not dequeued yet (EEVDF's
# delayed dequeue, Linux 6.12 on: its h_nr_queued against h_nr_runnable),
# so the counters may be below it, never above (one for the reading's own
# skew, rarely two under load); and on the pinned CPU, while both threads
# spin, both are runnable: its counter is 2 or more.
test_expect 'run-queue length counters per CPU: never above the kernel'"'"'s nr_running (/proc/loadavg), close to it, and 2+ on the CPU two pinned spinners share' '
	"$TRACEREC" record -q -e sched -a -o rq.tpp -- python3 "$TOP/tests/analysis/w-nr-running.py" "$S/w-cpupair" 150 \
		>nr.txt 2>err || { cat err; exit 1; }
	"$TRACEPP" export --format=chrome -o rq.json rq.tpp 2>/dev/null && $CHECK rq.json --summary &&
	python3 - <<-"PY"
	import bisect, collections, json
	d = json.load(open("rq.json"))
	ev, base = d["traceEvents"], d["otherData"]["clock_base_ns"]
	ns = lambda e: base + round(e["ts"] * 1000)
	procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
	rq = collections.defaultdict(list)
	for e in ev:
	    if e["ph"] == "C" and e["cat"] == "sched":
	        assert procs[e["pid"]] == "CPUs" and e["name"].startswith("run queue CPU "), e
	        rq[int(e["name"].split()[-1])].append((ns(e), e["args"]["tasks"]))
	at = {k: [t for t, _ in v] for k, v in rq.items()}
	def length(cpu, t):
	    i = bisect.bisect_right(at[cpu], t) - 1
	    return rq[cpu][i][1] if i >= 0 else 0
	diff = collections.Counter(); kern = 0
	for l in open("nr.txt"):
	    t, n = map(int, l.split())
	    diff[sum(length(c, t) for c in rq) - n] += 1; kern += n
	readings = sum(diff.values())
	below = -sum(k * v for k, v in diff.items() if k < 0) / readings
	print("readings", readings, "counters - kernel:", dict(diff), "mean kernel", kern / readings, "mean below", below)
	# one above: the skew of a reading; two, in a few readings of a loaded
	# machine, where the reader is scheduled late after its clock read
	assert readings >= 10 and max(diff) <= 2 and diff[2] <= max(1, readings // 20), diff
	assert below <= max(0.5, 0.15 * kern / readings), below
	# the spinners: the CPU their slices share; each spins 150 ms from its
	# start, so both do in the 120 ms after the later one first ran
	sl = collections.defaultdict(list)
	for e in ev:
	    if e["ph"] in "BE" and e.get("cat") == "sched" and e["name"].startswith("w-cpupair/"):
	        sl[e["name"]].append((ns(e), e["tid"]))
	spin = sorted(sl.items(), key=lambda kv: -len(kv[1]))[:2]
	cpu = collections.Counter(tid for _, v in spin for _, tid in v).most_common(1)[0][0]
	cpu = {e["tid"]: int(e["args"]["name"].split()[-1]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and procs.get(e["pid"]) == "CPUs"}[cpu]
	t0 = max(min(t for t, _ in v) for _, v in spin); t1 = t0 + 120e6
	pts = [t0] + [t for t in at[cpu] if t0 < t < t1] + [t1]
	low = sum(b - a for a, b in zip(pts, pts[1:]) if length(cpu, a) < 2)
	print("spinners", [k for k, _ in spin], "on CPU", cpu, "for", (t1 - t0) / 1e6, "ms; under 2 for", low / 1e6, "ms")
	assert low <= 0.05 * (t1 - t0), (t0, t1, low)
	PY
'
test_done
