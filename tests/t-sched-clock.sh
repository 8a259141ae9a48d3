#!/usr/bin/env bash
# The scheduler accounting's rules on traces whose every number is known
# (tests/analysis/mk-trace.c, mode clock): the kernel's clock, read through
# sched_stat_runtime, against the tracepoints' timestamps; the lower bounds of
# tasks seen in part; and one number for the same quantity in sched, latency,
# report and plot. The expected values are worked out by hand from the events
# listed in mk-trace.c, by the kernel's rules (kernel/sched/stats.h):
#   on-CPU      the sum of the runtime the kernel reports;
#   a slice     starts on the kernel's clock at its first report's time less
#               that runtime, and ends that start plus its runtime;
#   a wait      from the wakeup, or from the end of a preempted slice, to the
#               start of the next slice; a wakeup right after a runtime report
#               its waker fired (the preemption check's) was enqueued on that
#               report's clock, and waits from there.
. "$(dirname "$0")/lib.sh"
cflags="-std=gnu11 -O1 -I$TOP/format"
case $B in *san*) cflags="$cflags -fsanitize=address,undefined" ;; esac
cc $cflags -o "$_scratch/mk" "$TOP/tests/analysis/mk-trace.c" "$B/libtppformat.a" \
	-llz4 -lcbor -lpthread -lm 2>"$_scratch/cc.err" || { cat "$_scratch/cc.err"; exit 1; }
MK=$_scratch/mk

# expect FILE.json "TID KEY VALUE"...: each task's field, from tracepp sched --format=json
expect() { python3 - "$@" <<-\PY
	import json, sys
	rows = {r["tid"]: r for r in json.load(open(sys.argv[1]))}
	bad = 0
	for want in sys.argv[2:]:
	    tid, key, val = want.split()
	    got = rows[int(tid)][key]
	    ok = str(got) == val or (val == "null" and got is None)
	    print("%s %s: %s (want %s)%s" % (tid, key, got, val, "" if ok else "  <-- WRONG"))
	    bad += not ok
	sys.exit(bad)
	PY
}

test_expect 'with runtime reports: on-CPU and waits on the kernel clock, as schedstat counts them' '
	"$MK" clock c.tpp && "$TRACEPP" sched --format=json c.tpp >c.json 2>c.err && cat c.err &&
	expect c.json "100 oncpu_ns 2180" "100 runq_wait_ns 1010" "100 wakeup_avg_ns 0" \
		"100 switches 2" "100 involuntary 1" "100 partial null" \
		"101 oncpu_ns 1610" "101 runq_wait_ns 80" "101 wakeup_avg_ns 40" "101 wakeup_max_ns 60" \
		"101 inferred_switch_ins 1" "101 partial null" \
		"102 oncpu_ns 200" "102 partial start" "103 oncpu_ns 900" "103 runq_wait_ns 100" \
		"103 partial end" "104 oncpu_ns 500" "104 runq_wait_ns 50" "104 partial gaps" &&
	"$TRACEPP" sched c.tpp >c.txt && cat c.txt &&
	grep -q "^clock: the kernel.s (sched_stat_runtime)" c.txt &&
	grep -q "^partial: 3 task(s)" c.txt &&
	"$TRACEPP" info c.tpp | grep -q "^sched clock: *the kernel.s (10 sched_stat_runtime reports)"
'

test_expect 'without them: the same events on the switch and wakeup timestamps, and says so' '
	"$MK" clock-ts t.tpp && "$TRACEPP" sched --format=json t.tpp >t.json 2>t.err && cat t.err &&
	expect t.json "100 oncpu_ns 1800" "100 runq_wait_ns 1400" "100 wakeup_avg_ns 600" \
		"101 oncpu_ns 1500" "101 runq_wait_ns 200" "101 wakeup_avg_ns 100" "101 wakeup_max_ns 200" \
		"101 inferred_switch_ins 1" "102 oncpu_ns 0" "102 partial start" "103 partial end" \
		"104 oncpu_ns 500" "104 runq_wait_ns 50" "104 partial gaps" &&
	"$TRACEPP" sched t.tpp | grep -q "^clock: switch and wakeup timestamps" &&
	"$TRACEPP" info t.tpp | grep -q "^sched clock: *switch and wakeup timestamps"
'

test_expect 'csv carries the partial column; text marks the bounds' '
	"$MK" clock c.tpp && "$TRACEPP" sched --format=csv c.tpp >c.csv && cat c.csv &&
	head -1 c.csv | grep -q ",partial$" && grep -q "^102,.*,start$" c.csv && grep -q "^103,.*,end$" c.csv &&
	grep -q "^100,.*,$" c.csv &&
	"$TRACEPP" sched c.tpp | awk "\$1 == 103" | grep -q " end$"
'

# latency --sched reads columns with a second thread; the per-task numbers
# must be the distributions' to the nanosecond, on both kinds of file.
test_expect 'latency --sched (columns and rows) and sched give the same waits' '
	for m in clock clock-ts; do
		"$MK" $m f.tpp && "$TRACEPP" sched --format=json f.tpp >s.json 2>/dev/null &&
		"$TRACEPP" latency --sched --format=json f.tpp >l.json 2>/dev/null &&
		TPP_SCAN=0 "$TRACEPP" latency --sched --format=json f.tpp >r.json 2>/dev/null &&
		cmp l.json r.json && python3 - <<-\PY || exit 1
		import json
		tasks = [t for t in json.load(open("s.json")) if t["tid"]]
		lat = {r["name"]: r for r in json.load(open("l.json")) if r["kind"] == "sched"}
		n = sum(t["wakeups"] for t in tasks)  # every woken task here ran
		print("wakeups", n, "samples", lat["wakeup"]["count"])
		assert lat["wakeup"]["count"] == n
		assert lat["wakeup"]["max_ns"] == max(t["wakeup_max_ns"] for t in tasks)
		total = sum(t["runq_wait_ns"] for t in tasks)
		got = lat["runq"]["avg_ns"] * lat["runq"]["count"]
		print("runq total", total, "distribution", got)
		assert abs(got - total) <= lat["runq"]["count"]  # avg is rounded down
		PY
	done
'

test_expect 'report prints the numbers sched prints' '
	"$MK" clock c.tpp && "$TRACEPP" report c.tpp -o rep >/dev/null 2>&1 &&
	"$TRACEPP" sched c.tpp >s.txt 2>/dev/null &&
	python3 - <<-\PY
	import re
	html = open("rep/index.html").read()
	rows = {}
	for tr in re.findall(r"<tr>(.*?)</tr>", html, re.S):
	    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
	    if len(cells) == 11 and cells[0].isdigit():
	        rows[int(cells[0])] = cells
	text = {}
	for l in open("s.txt"):
	    f = re.split(r"\s{2,}", l.strip())
	    if f and f[0].isdigit():
	        text[int(f[0])] = f
	for tid, r in rows.items():
	    s = text[tid]
	    # on-CPU, run-queue wait, wakeup avg, wakeup max as sched prints them
	    pairs = [(r[2], s[3]), (r[6], s[8]), (r[8], s[10]), (r[9], s[11])]
	    print(tid, pairs)
	    assert all(a == b for a, b in pairs), tid
	    assert (r[10] or "-") == s[14], (r[10], s[14])
	assert set(rows) == {100, 101, 102, 103, 104}, rows.keys()
	PY
'

test_done
