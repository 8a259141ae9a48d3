#!/usr/bin/env bash
# tracepp export --table: rows for analytics engines. Each table in each
# format against its own schema (--schema: the one column list), the bytes
# the same on every run and for several files the concatenation of each
# file's rows, and the numbers in the rows equal to what the analysis
# commands print on the same files: calls per function (callgraph), on-CPU
# time per task summed over the run slices (sched), requests and their p50
# per device (io). The engines themselves read these rows in t-fleet.sh
# (ClickHouse) and t-duckdb.sh.
. "$(dirname "$0")/lib.sh"
S=$TOP/samples/traces
FILES="$S/demo.tpp $S/gen-mixed.tpp $S/threads-seen-late.tpp"
SMALL="$S/threads-seen-late.tpp $S/gen-func.tpp $S/uprobe-calls.tpp"
TABLES="events calls sched io net tasks conns"
# a small file with every kind of event (calls, switches, block, packets)
# for the format checks: cheap in the sanitized build too
MIX=$_scratch/mix.tpp
"$GEN" -o "$MIX" -n 4000 --mix func,sched,block,net --cpus 2 --threads 3 >/dev/null

# RowBinary read by the DDL's types, every row beside the CSV's: the
# encoding checked column by column (Python's csv module reads the CSV).
# Each table's RowBinary read by the DDL's types and its JSON lines by the
# DDL's names, every row beside the CSV's (Python's csv module reads it):
# the three encodings checked column by column. Arguments: table names,
# each with T.ddl, T.rb, T.jsonl and T.csv beside.
cat >"$_scratch/rows.py" <<'PY'
import csv, json, re, struct, sys
fixed = {"UInt64": "<Q", "Int64": "<q", "UInt32": "<I", "Int32": "<i", "UInt8": "<B"}
for t in sys.argv[1:]:
    cols = re.findall(r"^    (\w+) (\w+),?$", open(t + ".ddl").read(), re.M)
    data = open(t + ".rb", "rb").read()
    rows = list(csv.reader(open(t + ".csv", encoding="utf-8", newline="")))
    lines = open(t + ".jsonl", encoding="utf-8").read().splitlines()
    assert rows[0] == [c for c, _ in cols], (rows[0], cols)
    assert len(lines) == len(rows) - 1 and len(lines) > 0, (t, len(lines), len(rows))
    pos, n = 0, 0
    while pos < len(data):
        n += 1
        want = rows[n]
        d = json.loads(lines[n - 1])
        assert list(d) == [c for c, _ in cols], list(d)
        for (name, ty), text in zip(cols, want):
            if ty == "String":
                ln, shift = 0, 0
                while True:
                    b = data[pos]; pos += 1
                    ln |= (b & 0x7f) << shift; shift += 7
                    if b < 0x80: break
                v = data[pos:pos + ln].decode("utf-8", "replace"); pos += ln
            else:
                f = fixed[ty]; v = str(struct.unpack_from(f, data, pos)[0]); pos += struct.calcsize(f)
                assert isinstance(d[name], int), (t, name, d[name])
            assert v == text == str(d[name]), (t, n, name, v, text, d[name])
    assert n == len(rows) - 1, (t, n, len(rows) - 1)
    print(t, n, "rows")
PY

test_expect 'each table in csv, jsonl and rowbinary has exactly the columns --schema lists, in order, and the same rows' '
	for t in $TABLES; do
		files="$MIX $S/threads-seen-late.tpp $S/uprobe-calls.tpp"
		[ $t = conns ] && files=$S/demo.tpp # (the one with TCP connections)
		$TRACEPP export --table=$t --schema=clickhouse >$t.ddl &&
		$TRACEPP export --table=$t --schema=duckdb >$t.duck &&
		[ "$(grep -c "^    " $t.ddl)" = "$(grep -c "^    " $t.duck)" ] &&
		$TRACEPP export --table=$t --format=csv $files >$t.csv &&
		$TRACEPP export --table=$t --format=jsonl $files >$t.jsonl &&
		$TRACEPP export --table=$t --format=rowbinary -o $t.rb $files || exit 1
	done &&
	python3 "$_scratch/rows.py" $TABLES &&
	grep -q "ENGINE = MergeTree() ORDER BY (host, trace_id" events.ddl &&
	grep -q "wall_ns UBIGINT" events.duck
'

test_expect 'the output is a function of the files: the same bytes twice, and several files are each file'"'"'s rows in the order given' '
	two="$MIX $S/threads-seen-late.tpp"
	for t in $TABLES; do
		$TRACEPP export --table=$t --format=rowbinary $two | md5sum >a &&
		$TRACEPP export --table=$t --format=rowbinary $two | md5sum >b && cmp a b &&
		for f in $two; do $TRACEPP export --table=$t --format=rowbinary $f; done | md5sum >c && cmp a c &&
		$TRACEPP export --table=$t --format=csv $two >both &&
		{ $TRACEPP export --table=$t $MIX; $TRACEPP export --table=$t $S/threads-seen-late.tpp | tail -n +2; } >each &&
		cmp both each || exit 1
	done
'

test_expect 'every row names its recording: host from the file, one trace_id per file, wall_ns = ts_ns + the file'"'"'s wall offset' '
	$TRACEPP export --table=events $SMALL >ev.csv &&
	python3 - ev.csv <<-"PY"
	import csv, sys
	rows = list(csv.DictReader(open(sys.argv[1], newline="")))
	ids = []
	for r in rows:
	    if not ids or ids[-1] != r["trace_id"]: ids.append(r["trace_id"])
	assert len(ids) == 3 and len(set(ids)) == 3, ids
	assert all(r["host"] == "vm" for r in rows)
	off = {}
	for r in rows:
	    off.setdefault(r["trace_id"], set()).add(int(r["wall_ns"]) - int(r["ts_ns"]))
	assert all(len(v) == 1 for v in off.values()), off
	# the wall clock of 2026, not of 1970: a real offset
	assert all(1.7e18 < int(r["wall_ns"]) < 1.9e18 for r in rows)
	PY
'

test_expect 'calls: per function as many as callgraph counts (orphans apart), the same self time, longest call and noret' '
	i=0
	for f in $S/demo.tpp $S/gen-mixed.tpp $S/uprobe-calls.tpp; do
		i=$((i + 1))
		$TRACEPP callgraph --format=csv $f >cg.$i 2>/dev/null && $TRACEPP export --table=calls $f >calls.$i || exit 1
	done &&
	python3 - 3 <<-"PY"
	import csv, sys, collections
	for i in range(1, int(sys.argv[1]) + 1):
	    cg = {r["func"]: r for r in csv.DictReader(open("cg.%d" % i, newline=""))}
	    n, mx, slf, noret, orph = (collections.Counter() for _ in range(5))
	    for r in csv.DictReader(open("calls.%d" % i, newline="")):
	        if r["ended"] == "orphan":
	            orph[r["func"]] += 1
	            continue
	        n[r["func"]] += 1
	        mx[r["func"]] = max(mx[r["func"]], int(r["dur_ns"]))
	        slf[r["func"]] += int(r["self_ns"])
	        noret[r["func"]] += r["ended"] == "noret"
	    assert n and set(n) | set(orph) == set(cg), (sorted(n), sorted(cg))
	    for f, r in cg.items():
	        assert n[f] == int(r["calls"]) and orph[f] == int(r["orphans"]), (f, n[f], orph[f], r)
	        assert noret[f] == int(r["noret"]), (f, noret[f], r)
	        # (total_ns counts the outermost calls of a recursion only)
	        assert mx[f] == int(r["max_ns"]) and slf[f] == int(r["self_ns"]), (f, mx[f], slf[f], r)
	PY
'

test_expect 'sched and tasks: the run slices of each task add up to sched'"'"'s on-CPU time; tasks rows are sched'"'"'s rows' '
	i=0
	for f in $S/demo.tpp $S/gen-mixed.tpp $S/threads-seen-late.tpp; do
		i=$((i + 1))
		$TRACEPP sched --format=csv $f >s.$i 2>/dev/null &&
		$TRACEPP export --table=sched $f >sl.$i && $TRACEPP export --table=tasks $f >tk.$i || exit 1
	done &&
	python3 - 3 <<-"PY"
	import csv, sys, collections
	for i in range(1, int(sys.argv[1]) + 1):
	    sched = {r["tid"]: r for r in csv.DictReader(open("s.%d" % i, newline=""))}
	    run = collections.Counter()
	    for r in csv.DictReader(open("sl.%d" % i, newline="")):
	        if r["kind"] == "run": run[r["tid"]] += int(r["dur_ns"])
	    tasks = {r["tid"]: r for r in csv.DictReader(open("tk.%d" % i, newline=""))}
	    assert set(tasks) == set(sched) - {"0"}, (sorted(tasks), sorted(sched))
	    for tid, r in tasks.items():
	        s = sched[tid]
	        for k in ("pid", "comm", "oncpu_ns", "switches", "voluntary", "involuntary", "migrations",
	                  "runq_wait_ns", "wakeups", "wakeup_avg_ns", "wakeup_max_ns", "offcpu_ns"):
	            assert r[k] == s[k], (tid, k, r[k], s[k])
	        assert run[tid] == int(s["oncpu_ns"]), (tid, run[tid], s["oncpu_ns"])
	PY
'

test_expect 'io: requests per device and op as io counts them, and their p50 device time (nearest rank) io'"'"'s' '
	i=0
	for f in $S/demo.tpp $S/gen-mixed.tpp; do
		i=$((i + 1))
		$TRACEPP io --format=csv $f >io.$i 2>/dev/null && $TRACEPP export --table=io $f >rq.$i || exit 1
	done &&
	python3 - 2 <<-"PY"
	import csv, math, sys, collections
	for i in range(1, int(sys.argv[1]) + 1):
	    io = {(r["dev"], r["op"]): r for r in csv.DictReader(open("io.%d" % i, newline=""))}
	    n, d2c = collections.Counter(), collections.defaultdict(list)
	    for r in csv.DictReader(open("rq.%d" % i, newline="")):
	        k = (r["dev"], r["op"]); n[k] += 1
	        if int(r["issue_ns"]): d2c[k].append(int(r["device_ns"]))
	    assert io and set(io) <= set(n), (sorted(io), sorted(n))
	    for k, r in io.items():
	        v = sorted(d2c[k])
	        p50 = v[max(1, math.ceil(0.5 * len(v))) - 1] if v else 0
	        assert n[k] == int(r["count"]) and p50 == int(r["p50_ns"]), (k, n[k], p50, r)
	PY
'

test_expect '--time-range: the window of each file, from its start: events inside it only, run slices per task add up to sched --time-range'"'"'s on-CPU time' '
	$TRACEPP export --table=events $S/demo.tpp >all.csv &&
	$TRACEPP export --table=events --time-range=0.2s,0.5s $S/demo.tpp >win.csv &&
	$TRACEPP sched --format=csv --time-range=0.2s,0.5s $S/demo.tpp >s.csv 2>/dev/null &&
	$TRACEPP export --table=sched --time-range=0.2s,0.5s $S/demo.tpp >sl.csv &&
	python3 - <<-"PY"
	import csv, collections
	ts = [int(r["ts_ns"]) for r in csv.DictReader(open("all.csv", newline=""))]
	win = [int(r["ts_ns"]) for r in csv.DictReader(open("win.csv", newline=""))]
	lo, hi = ts[0] + 200000000, ts[0] + 500000000
	assert win == [t for t in ts if lo <= t <= hi] and 0 < len(win) < len(ts), (len(win), len(ts))
	sched = {r["tid"]: int(r["oncpu_ns"]) for r in csv.DictReader(open("s.csv", newline="")) if r["tid"] != "0"}
	run = collections.Counter()
	for r in csv.DictReader(open("sl.csv", newline="")):
	    if r["kind"] == "run": run[r["tid"]] += int(r["dur_ns"])
	assert sched and all(run[t] == v for t, v in sched.items()), [(t, run[t], v) for t, v in sched.items() if run[t] != v]
	PY
'

test_expect 'net: one row per packet event, as many as the file has of net_dev_queue, net_dev_xmit and netif_receive_skb' '
	$TRACEPP export --table=net $S/demo.tpp >net.csv &&
	$TRACEPP export --table=events $S/demo.tpp >ev.csv &&
	python3 - net.csv ev.csv <<-"PY"
	import csv, sys, collections
	net = list(csv.DictReader(open(sys.argv[1], newline="")))
	ev = [r for r in csv.DictReader(open(sys.argv[2], newline=""))
	      if r["type"] in ("net_dev_queue", "net_dev_xmit", "netif_receive_skb")]
	assert len(net) == len(ev) > 0, (len(net), len(ev))
	assert [r["ts_ns"] for r in net] == [r["ts_ns"] for r in ev]
	assert {r["dev"] for r in net} == {"lo"}, {r["dev"] for r in net}
	PY
'

test_expect 'conns: one row per TCP connection, the rows of net --conns (start from the file'"'"'s first event)' '
	$TRACEPP export --table=conns $S/demo.tpp >c.csv && $TRACEPP net --conns --format=csv $S/demo.tpp >n.csv 2>/dev/null &&
	t0=$($TRACEPP export --table=events $S/demo.tpp | sed -n "2p" | cut -d, -f5) &&
	python3 - "$t0" <<-"PY"
	import csv, sys
	t0 = int(sys.argv[1])
	keys = ("saddr", "sport", "daddr", "dport", "state", "tx_bytes", "rx_bytes", "sends", "recvs", "errors", "dur_ns")
	c = list(csv.DictReader(open("c.csv")))
	n = list(csv.DictReader(open("n.csv")))
	assert len(c) == len(n) > 0
	for a, b in zip(c, n):
	    assert [a[k] for k in keys] == [b[k] for k in keys], (a, b)
	    assert int(a["ts_ns"]) - t0 == int(b["start_ns"]), (a, b, t0)
	PY
'

# The filters are the analysis commands' own (an_cli): --tid and --comm
# pick events and calls by their task, sched and tasks rows by theirs (a
# switch is two tasks': its events all stay); --where is the kernel filter
# syntax over the events every row comes from.
test_expect 'with --tid, --comm, --where: events are dump'"'"'s with the same filter, calls latency'"'"'s, sched rows and tasks sched'"'"'s; io refuses --tid' '
	tid=$($TRACEPP sched --format=csv $MIX | awk -F, '"'"'NR == 2 { print $1 }'"'"') &&
	comm=$($TRACEPP sched --format=csv $MIX | awk -F, '"'"'NR == 2 { print $3 }'"'"') && [ -n "$tid" ] &&
	[ "$($TRACEPP export --table=events --tid=$tid $MIX | tail -n +2 | wc -l)" = \
	  "$($TRACEPP dump --tid=$tid --format=json $MIX | wc -l)" ] &&
	[ "$($TRACEPP export --table=events --where="prev_pid == $tid" $MIX | tail -n +2 | wc -l)" = \
	  "$($TRACEPP dump --where="prev_pid == $tid" --format=json $MIX | wc -l)" ] &&
	$TRACEPP export --table=calls --comm=$comm $MIX >c.csv && $TRACEPP latency --format=csv --comm=$comm $MIX >l.csv 2>/dev/null &&
	$TRACEPP export --table=sched --comm=$comm $MIX >s.csv && $TRACEPP export --table=tasks --comm=$comm $MIX >t.csv &&
	$TRACEPP sched --format=csv --comm=$comm $MIX >sc.csv &&
	python3 - "$comm" <<-"PY" &&
	import csv, collections, sys
	comm = sys.argv[1]
	calls = list(csv.DictReader(open("c.csv")))
	assert calls and all(r["comm"] == comm for r in calls)
	n = collections.Counter(r["func"] for r in calls if r["ended"] in ("return", "tail") and r["resumed"] == "0")
	lat = {r["name"]: int(r["count"]) for r in csv.DictReader(open("l.csv")) if r["kind"] == "func"}
	assert dict(n) == lat, (dict(n), lat)
	sched = {r["tid"]: r for r in csv.DictReader(open("sc.csv"))}
	run = collections.Counter()
	for r in csv.DictReader(open("s.csv")):
	    assert r["comm"] == comm, r
	    if r["kind"] == "run":
	        run[r["tid"]] += int(r["dur_ns"])
	assert {t: int(r["oncpu_ns"]) for t, r in sched.items()} == {t: run[t] for t in sched}
	assert sorted(r["tid"] for r in csv.DictReader(open("t.csv"))) == sorted(sched)
	PY
	! $TRACEPP export --table=io --tid=1 $MIX 2>e && grep -q "io table has no task" e &&
	$TRACEPP export --table=events --comm=no_such_task $MIX 2>e >/dev/null && grep -q "no event of .* passes --comm=no_such_task$" e
'

test_expect 'wall_err_ns: the file'"'"'s clock error at each row, within what info says of the file; -1 for a file without clock samples' '
	$TRACEPP info --format=json $MIX >i.json && $TRACEPP export --table=events $MIX >e.csv &&
	$TRACEPP export --table=calls $S/demo.tpp >d.csv &&
	python3 - <<-"PY"
	import csv, json
	w = json.load(open("i.json"))["wall_clock"]
	rows = list(csv.DictReader(open("e.csv")))
	assert w["samples"] >= 2 and rows
	bound = w["err_ns"] + abs(w["drift_ns"])
	assert all(0 <= int(r["wall_err_ns"]) <= bound for r in rows), (bound, set(r["wall_err_ns"] for r in rows))
	assert {r["wall_err_ns"] for r in csv.DictReader(open("d.csv"))} == {"-1"}
	PY
'

test_expect 'bad requests: one clear line and a non-zero exit; a damaged file is named' '
	! $TRACEPP export --table=nope $S/demo.tpp 2>e1 && [ $(wc -l <e1) = 1 ] && grep -q "not one of events, calls" e1 &&
	! $TRACEPP export --table=calls --format=chrome $S/demo.tpp 2>e2 && grep -q "not csv, jsonl or rowbinary" e2 &&
	! $TRACEPP export --table=calls --schema=oracle 2>e3 && grep -q "not clickhouse or duckdb" e3 &&
	! $TRACEPP export --table=calls 2>e4 && grep -q "no trace file" e4 &&
	! $TRACEPP export --table=calls $S/demo.tpp missing.tpp >/dev/null 2>e5 && grep -q "missing.tpp" e5 &&
	head -c 30000 $S/demo.tpp >cut.tpp && $TRACEPP export --table=events cut.tpp >cut.csv 2>e6 &&
	[ $(wc -l <e6) = 1 ] && grep -q "cut.tpp: no trailer" e6 && [ $(wc -l <cut.csv) -gt 1000 ] &&
	! $TRACEPP export --table=calls -o /nonexistent/dir/x.csv $S/demo.tpp 2>e7 && grep -q "/nonexistent/dir" e7 &&
	! $TRACEPP export --table=calls --time-range=soon $S/demo.tpp 2>e8 && grep -q "bad --time-range" e8 &&
	$TRACEPP export --help | grep -q -- "--table=T" && $TRACEPP export --help | grep -q -- "--schema=clickhouse|duckdb"
'

test_done
