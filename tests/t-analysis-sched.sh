#!/usr/bin/env bash
# tracepp sched against the kernel's own scheduler accounting: per-thread
# on-CPU time and run-queue wait of a recorded workload vs
# /proc/PID/task/TID/schedstat (within 2% and 5%), switch counts vs the
# switches the kernel recorded, with a pid filter and system-wide (-a).
# san: skip
. "$(dirname "$0")/lib.sh"

tracefs_ok() { [ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; [ -d /sys/kernel/tracing/instances ]; }
if ! tracefs_ok; then
	test_skip 'sched matches schedstat' 'no tracefs on this machine'
	test_done; exit
fi
cc -O1 -pthread -o "$_scratch/w-schedstat" "$TOP/tests/analysis/w-schedstat.c" || exit 1
W=$_scratch/w-schedstat

# within GOT WANT PERCENT [FLOOR_NS]: |GOT-WANT| <= PERCENT% of WANT, or <= FLOOR
within() { python3 -c 'import sys
g, w, p = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
floor = int(sys.argv[4]) if len(sys.argv) > 4 else 0
ok = abs(g - w) <= max(w * p / 100, floor)
print("  got %d want %d (%.2f%%) %s" % (g, w, 100.0 * (g - w) / w if w else 0, "ok" if ok else "OUT"))
sys.exit(0 if ok else 1)' "$@"; }

# field FILE TID KEY: from `tracepp sched --format=json` output
field() { python3 -c 'import json,sys
rows = [r for r in json.load(open(sys.argv[1])) if r["tid"] == int(sys.argv[2])]
print(rows[0][sys.argv[3]] if rows else -1)' "$@"; }

# This kernel stores no sched_switch for a CPU leaving idle; tracepp sched
# infers those switch-ins. Before it read the kernel's clock (sched_stat_
# runtime), an unlucky recording could land outside the tolerance and a fresh
# one was tried, up to 3; now a recording that lost events is the only reason.
test_expect 'on-CPU time and run-queue wait per thread agree with schedstat (3 threads, 2 CPUs)' '
	for try in 1 2 3; do (
	"$TRACEREC" record -q -a -b 16384 -e sched -o s.tpp -- "$W" 3 400 >out 2>err || { cat err; exit 1; }
	lost=$("$TRACEPP" info s.tpp | awk "/^lost:/ {print \$2}") && echo "lost $lost" &&
	if [ "$lost" != 0 ]; then exit 2; fi
	cat out && [ "$(grep -c ^task out)" = 3 ] &&
	t=$(awk "{print \$6}" out | sort -n | head -1) &&
	"$TRACEPP" sched --format=json --time-range=",$t" s.tpp >s.json &&
	while read -r _ tid on rq sl _; do
		echo "tid $tid on-cpu:"; within "$(field s.json $tid oncpu_ns)" "$on" 2 || exit 1
		echo "tid $tid runq-wait:"; within "$(field s.json $tid runq_wait_ns)" "$rq" 5 50000 || exit 1
		echo "tid $tid switches vs slices: $(field s.json $tid switches) $sl"
		[ "$(field s.json $tid switches)" -ge "$((sl - 2))" ] || exit 1
	done <out
	); rc=$?; [ $rc = 0 ] && exit 0; [ $rc = 2 ] || exit 1; echo "try $try: events lost"; done; exit 1
'

# The three workloads of issue 21, each printing its threads' own schedstat
# just before they end (samples/src/w-truth.h): a pipe ping-pong, a CPU-bound
# pair sharing one CPU (nearly all switches involuntary) and two sleepers
# (nearly all voluntary), recorded with a pid filter and system-wide. Each
# thread's on-CPU time must agree within 2%, its run-queue wait within 5%
# (of schedstat's run_delay, with 50 µs of slack for the smallest totals),
# its switch-outs exactly, and it must not be marked partial. The kernel
# counts both on its run queue's clock, which tracepp sched reads from the
# sched_stat_runtime events -e sched records: from the switch and wakeup
# timestamps alone, run-queue waits came out 12-23% above run_delay here and
# on-CPU time 4-11% below (the ping-pong on a quiet machine: +43..+131%).
S=$B/samples
# schedstat_check FILE.json FILE.out: the comparison, one line per thread
schedstat_check() { python3 - "$@" <<-\PY
	import json, sys
	rows = {r["tid"]: r for r in json.load(open(sys.argv[1]))}
	bad = n = 0
	for l in open(sys.argv[2]):
	    f = l.split()
	    if f[0] != "schedstat":
	        continue
	    tid, on, rq, _, vol, invol = map(int, f[1:7])
	    r = rows[tid]
	    n += 1
	    eon = 100.0 * (r["oncpu_ns"] - on) / on
	    erq = 100.0 * (r["runq_wait_ns"] - rq) / rq if rq else 0
	    ok = (abs(eon) <= 2 and abs(r["runq_wait_ns"] - rq) <= max(rq * 0.05, 50000) and
	          r["switches"] == vol + invol and r.get("partial") is None)
	    print("  tid %d on-cpu %d/%d (%+.2f%%) runq %d/%d (%+.2f%%) switches %d/%d partial %s%s" % (
	        tid, r["oncpu_ns"], on, eon, r["runq_wait_ns"], rq, erq, r["switches"], vol + invol,
	        r.get("partial"), "" if ok else "  <-- OUT"))
	    bad += not ok
	sys.exit(bad or n != 2)
	PY
}
for mode in pid all; do
	test_expect "$mode: each thread of ping-pong, CPU-bound pair and sleepers agrees with its own schedstat" '
		a=; [ '$mode' = all ] && a=-a
		for w in "w-pingpong 20000" "w-cpupair 300" "w-sleeper 300"; do
			set -- $w
			# events lost from the ring (a recorder starved on a loaded
			# machine) leave nothing to compare; with the pid filter, a
			# runtime report the kernel fires in another task.s context
			# (a wakeup from an untraced task checking preemption) is
			# filtered out with it: recorded again, 3 times
			for try in 1 2 3; do
				W_SCHEDSTAT=1 "$TRACEREC" record -q $a -b 16384 -e sched -o $1.tpp -- "$S/$@" >$1.out \
					2>$1.err || { cat $1.err; exit 1; }
				lost=$("$TRACEPP" info $1.tpp | awk "/^lost:/ {print \$2}")
				[ "$lost" = 0 ] || { echo "try $try: $lost events lost"; continue; }
				t=$(awk "/^schedstat/ {print \$8}" $1.out | sort -n | head -1)
				"$TRACEPP" sched --format=json --time-range=",$t" $1.tpp >$1.json &&
				echo "$w (${a:-pid filter}, try $try):" && schedstat_check $1.json $1.out && continue 2
			done
			exit 1
		done &&
		"$TRACEPP" info w-sleeper.tpp | grep -q "^sched clock: *the kernel.s"
	'
done

# One number everywhere: on these recordings, report shows for every task
# what sched shows, and plot's latency histograms what latency prints.
test_expect 'report and plot print what sched and latency print (three workloads, -a)' '
	for w in "w-pingpong 5000" "w-cpupair 100" "w-sleeper 100"; do
		set -- $w
		"$TRACEREC" record -q -a -e sched -o $1.tpp -- "$S/$@" >/dev/null 2>$1.err || { cat $1.err; exit 1; }
		"$TRACEPP" report $1.tpp -o rep-$1 >/dev/null 2>&1 && "$TRACEPP" sched $1.tpp >$1.txt 2>/dev/null &&
		python3 - $1 <<-\PY || exit 1
		import re, sys
		name = sys.argv[1]
		html = open("rep-%s/index.html" % name).read()
		text = {}
		for l in open(name + ".txt"):
		    f = re.split(r"\s{2,}", l.strip())
		    if len(f) == 15 and f[0].isdigit():
		        text[int(f[0])] = f
		n = 0
		for tr in re.findall(r"<tr>(.*?)</tr>", html, re.S):
		    c = [re.sub(r"<[^>]+>", "", x).strip() for x in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
		    if len(c) != 11 or not c[0].isdigit() or int(c[0]) not in text:
		        continue
		    s = text[int(c[0])]
		    # on-CPU, switches, run-queue wait, wakeups, wakeup avg, wakeup max, partial
		    pairs = [(c[2], s[3]), (c[3], s[4]), (c[6], s[8]), (c[7], s[9]), (c[8], s[10]), (c[9], s[11]),
		             (c[10] or "-", s[14])]
		    assert all(a == b for a, b in pairs), (c, s)
		    n += 1
		print(name, "tasks compared:", n)
		assert n >= 3
		PY
		if command -v gnuplot >/dev/null; then
			"$TRACEPP" plot $1.tpp --type=hist -o h-$1.png --keep 2>/dev/null &&
			"$TRACEPP" latency --sched --format=json $1.tpp >l-$1.json 2>/dev/null &&
			for k in wakeup runq; do
				line=$(grep "^# $k " h-$1.hist.dat) &&
				want=$(python3 -c "import json; r=[x for x in json.load(open(\"l-$1.json\")) if x[\"name\"]==\"$k\"][0]; print(\"n=%d p50_ns=%d p99_ns=%d max_ns=%d\" % (r[\"count\"], r[\"p50_ns\"], r[\"p99_ns\"], r[\"max_ns\"]))") &&
				echo "$1 $k: plot ${line#"# $k "}, latency $want" && [ "${line#"# $k "}" = "$want" ] || exit 1
			done
		fi
	done
'

# Every task alone, then all of them: --tid splits the delay distributions
# of latency --sched into the per-task ones sched reports, without loss.
test_expect 'latency --sched --tid: per-task delays add up to the whole and match sched per task' '
	"$TRACEREC" record -q -a -e sched -o t.tpp -- "$W" 3 100 >out 2>err || { cat err; exit 1; }
	"$TRACEPP" sched --format=json t.tpp >all.json 2>/dev/null &&
	"$TRACEPP" latency --sched --format=json t.tpp >lat.json 2>/dev/null &&
	for tid in $(python3 -c "import json; print(*[r[\"tid\"] for r in json.load(open(\"all.json\"))])"); do
		"$TRACEPP" latency --sched --format=json --tid=$tid t.tpp >"l$tid.json" 2>/dev/null || exit 1
	done &&
	python3 - <<-\PY
	import glob, json
	rows = lambda f: {r["name"]: r for r in json.load(open(f)) if r["kind"] == "sched"}
	whole, tasks = rows("lat.json"), {r["tid"]: r for r in json.load(open("all.json"))}
	parts = {int(f[1:-5]): rows(f) for f in glob.glob("l*.json") if f != "lat.json"}
	for name in ("wakeup", "runq", "offcpu"):
	    got = sum(p[name]["count"] for p in parts.values())
	    print(name, "whole", whole[name]["count"], "sum of tasks", got)
	    assert got == whole[name]["count"]
	    assert max(p[name]["max_ns"] for p in parts.values()) == whole[name]["max_ns"]
	checked = 0
	for tid, p in parts.items():
	    if p["wakeup"]["count"]:
	        t = tasks[tid]
	        assert (p["wakeup"]["avg_ns"], p["wakeup"]["max_ns"]) == (t["wakeup_avg_ns"], t["wakeup_max_ns"]), tid
	        checked += 1
	print("tasks with wakeups checked:", checked)
	assert checked >= 3 and len(parts) > 3
	PY
'

# latency --sched reads columns (tpp_scan, a second thread decoding) when it
# can; TPP_SCAN=0 forces the row path every other analysis takes and
# TPP_SCAN=1 the columns without the thread. All three must print the same
# bytes, warnings included, on a recording, with filters, and damaged.
test_expect 'latency --sched by columns, with or without its thread, prints what the row path prints' '
	"$TRACEREC" record -q -a -e sched -o c.tpp -- "$W" 3 100 >out 2>err || { cat err; exit 1; }
	tid=$(awk "NR == 1 {print \$2}" out) && t=$(awk "{print \$6}" out | sort -n | head -1) &&
	first=$("$TRACEPP" info c.tpp | awk "/^span:/ {print \$2}") &&
	cp c.tpp d.tpp && size=$(stat -c %s d.tpp) &&
	printf "\377\377\377\377\377\377\377\377" | dd of=d.tpp bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null &&
	for f in c.tpp d.tpp; do
		for opts in "" "--format=json" "--format=csv --no-hist" "--tid=$tid" "--comm=w-schedstat" \
			"--time-range=$((first + 1000000)),$t"; do
			TPP_SCAN=0 "$TRACEPP" latency --sched $opts $f >rows.out 2>rows.err; r0=$?
			"$TRACEPP" latency --sched $opts $f >cols.out 2>cols.err; r1=$?
			TPP_SCAN=1 "$TRACEPP" latency --sched $opts $f >one.out 2>one.err; r2=$?
			echo "$f $opts: exit $r0 $r1 $r2, $(wc -l <rows.out) lines"
			[ $r0 = 0 ] && [ $r1 = 0 ] && [ $r2 = 0 ] && [ -s rows.out ] &&
			cmp rows.out cols.out && cmp rows.out one.out && cmp rows.err cols.err && cmp rows.err one.err || exit 1
		done
	done &&
	grep -qi damaged rows.err &&
	# the column path did run: a second thread, which the row path never starts
	strace -f -qq -e trace=clone,clone3 -o st.cols "$TRACEPP" latency --sched c.tpp >/dev/null 2>&1 &&
	TPP_SCAN=0 strace -f -qq -e trace=clone,clone3 -o st.rows "$TRACEPP" latency --sched c.tpp >/dev/null 2>&1 &&
	cat st.cols && [ "$(grep -c clone st.cols)" -ge 1 ] && [ "$(grep -c clone st.rows)" = 0 ]
'

test_expect 'text output names the threads and shows human units' '
	"$TRACEREC" record -q -e sched -o s.tpp -- "$W" 2 100 >out 2>err &&
	"$TRACEPP" sched s.tpp >txt && cat txt &&
	head -1 txt | grep -q "on-cpu" && grep -q "w-schedstat" txt && grep -Eq "[0-9] (ms|µs|s) " txt
'

test_expect 'csv output has the JSON keys as header and one row per task' '
	"$TRACEREC" record -q -e sched -o s.tpp -- "$W" 2 50 >out 2>err &&
	"$TRACEPP" sched --format=csv s.tpp >c.csv && head -3 c.csv &&
	head -1 c.csv | grep -q "^tid,pid,comm,oncpu_ns,switches" &&
	for tid in $(awk "{print \$2}" out); do grep -q "^$tid," c.csv || exit 1; done
'

test_expect 'bad input: a missing file and a bad --format each give one error line, exit != 0' '
	! "$TRACEPP" sched nosuch.tpp 2>e1 && [ "$(wc -l <e1)" = 1 ] && cat e1 &&
	echo garbage >g.tpp && ! "$TRACEPP" sched g.tpp 2>e2 && [ "$(wc -l <e2)" = 1 ] && cat e2 &&
	! "$TRACEPP" sched --format=xml g.tpp 2>e3 && [ "$(wc -l <e3)" = 1 ] && cat e3
'
test_done
