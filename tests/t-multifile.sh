#!/usr/bin/env bash
# Several files, one analysis (issue 19): three files written on two hosts
# (tpp-gen in its own UTS namespace, so each has its own hostname; hosta
# twice: two runs on one host). Each host's rows of `CMD --by-host A B C`
# are byte for byte what `CMD X` says of its file alone; merged (the
# default), one row per key (comm, function, path, device and op, net
# device) whose counts are the files' sums and whose percentiles are the
# union's, from the files' exported calls and requests; two runs
# on one host are told apart by their files' names. And --clock=wall: dump,
# replay and io print the same wall-clock instants, the ISO text is the
# wall_ns number, and merged time lines come in wall-clock order. No
# recording: it runs in both passes in about a second.
. "$(dirname "$0")/lib.sh"

F=$_scratch/files
mkdir -p "$F"
gen_on() { # HOST FILE SEED
	unshare -u sh -c "hostname $1 && \"$GEN\" -o $F/$2 -n 6000 --seed $3" 2>/dev/null
}
# each test works in its own directory: the files are linked in
files() { ln -sf "$F"/a.tpp "$F"/b.tpp "$F"/c.tpp .; }

if gen_on hosta a.tpp 1 && gen_on hostb b.tpp 2 && gen_on hosta c.tpp 3; then

test_expect 'sched, io, net, latency, callgraph --by-host: each host'\''s rows are the file alone, byte for byte' '
	files &&
	for cmd in sched io net latency callgraph; do
		"$TRACEPP" $cmd --by-host --format=csv a.tpp b.tpp c.tpp >all.csv 2>/dev/null || return 1
		for h in hosta:a:a hostb:b hosta:c:c; do
			label=${h%:*} f=${h##*:}
			"$TRACEPP" $cmd --format=csv $f.tpp >alone.csv 2>/dev/null || return 1
			# the header gains the host column; the rows keep their order
			head -1 all.csv | grep -qx "host,$(head -1 alone.csv)" || { echo "$cmd header"; return 1; }
			grep "^$label," all.csv | cut -d, -f2- >mine.csv
			tail -n +2 alone.csv | cmp - mine.csv || { echo "$cmd $label"; return 1; }
		done
		n=$(tail -n +2 all.csv | wc -l)
		[ "$n" -gt 0 ] || { echo "$cmd: no rows"; return 1; }
	done
'

test_expect 'merged sched: one row per comm, the tasks of that name in every file added, in on-CPU order' '
	files && "$TRACEPP" sched --format=csv a.tpp b.tpp c.tpp >m.csv 2>/dev/null &&
	for f in a b c; do "$TRACEPP" sched --format=csv $f.tpp >$f.csv 2>/dev/null || return 1; done &&
	"$TRACEPP" sched --format=json "$TOP/samples/traces/demo.tpp" a.tpp >d.json 2>/dev/null &&
	"$TRACEPP" sched --format=json "$TOP/samples/traces/demo.tpp" >d1.json 2>/dev/null &&
	python3 - <<-"PY"
	import csv, collections
	m = {r["comm"]: r for r in csv.DictReader(open("m.csv"))}
	want = collections.defaultdict(lambda: collections.Counter())
	wmax = collections.Counter()
	ids = collections.defaultdict(list)
	for f in "abc":
	    for r in csv.DictReader(open(f + ".csv")):
	        w = want[r["comm"]]
	        w["tasks"] += 1
	        ids[r["comm"]].append((r["tid"], r["pid"]))
	        for k in ("oncpu_ns", "switches", "voluntary", "involuntary", "runq_wait_ns", "wakeups", "offcpu_ns"):
	            w[k] += int(r[k])
	        wmax[r["comm"]] = max(wmax[r["comm"]], int(r["wakeup_max_ns"]))
	assert sorted(m) == sorted(want) and len(m) >= 2, (sorted(m), sorted(want))
	for comm, w in want.items():
	    for k, v in w.items():
	        assert int(m[comm][k]) == v, (comm, k, m[comm][k], v)
	    assert int(m[comm]["wakeup_max_ns"]) == wmax[comm]
	    # issue 5 keys stay: the one task tid and pid, -1 for a name of several
	    one = ids[comm][0] if len(ids[comm]) == 1 else ("-1", "-1")
	    assert (m[comm]["tid"], m[comm]["pid"]) == one, (comm, m[comm]["tid"], m[comm]["pid"], ids[comm])
	assert any(len(v) > 1 for v in ids.values()), ids
	# names of one task (a recording beside a generated file): its own tid and pid
	import json
	one = [r for r in json.load(open("d.json")) if r["tasks"] == 1]
	alone = {r["tid"]: r for r in json.load(open("d1.json"))}
	assert len(one) >= 5, one
	for r in one:
	    t = alone[r["tid"]]
	    assert (r["comm"], r["pid"], r["oncpu_ns"]) == (t["comm"], t["pid"], t["oncpu_ns"]), (r, t)
	on = [int(r["oncpu_ns"]) for r in csv.DictReader(open("m.csv"))]
	assert on == sorted(on, reverse=True), "not in on-CPU order"
	PY
'

# The merged answers' truth: the union of the files' own rows. Latency's
# percentiles are nearest-rank over every file's calls (export --table=calls,
# a row per paired call) and io's over every file's requests (--table=io).
test_expect 'merged latency, io, net, callgraph and its tree: counts are the sums of the files'\'', percentiles those of the union of their samples' '
	files &&
	"$TRACEPP" latency --format=csv a.tpp b.tpp c.tpp >lat.csv 2>/dev/null &&
	"$TRACEPP" io --format=csv a.tpp b.tpp c.tpp >io.csv 2>/dev/null &&
	"$TRACEPP" callgraph --format=csv a.tpp b.tpp c.tpp >cg.csv 2>/dev/null &&
	"$TRACEPP" callgraph --tree --format=json a.tpp b.tpp c.tpp >tree.json 2>/dev/null &&
	for f in a b c; do
		"$TRACEPP" latency --format=csv $f.tpp >lat-$f.csv 2>/dev/null &&
		"$TRACEPP" callgraph --tree --format=json $f.tpp >tree-$f.json 2>/dev/null &&
		"$TRACEPP" callgraph --format=csv $f.tpp >cg-$f.csv 2>/dev/null &&
		"$TRACEPP" net --format=csv $f.tpp >net-$f.csv 2>/dev/null || return 1
	done &&
	"$TRACEPP" net --format=csv a.tpp b.tpp c.tpp >net.csv 2>/dev/null &&
	"$TRACEPP" export --table=calls --format=csv a.tpp b.tpp c.tpp >calls.csv &&
	"$TRACEPP" export --table=io --format=csv a.tpp b.tpp c.tpp >req.csv &&
	python3 - <<-"PY"
	import csv, collections, math
	def pct(v, p):
	    v = sorted(v)
	    return v[max(1, math.ceil(p / 100 * len(v))) - 1]
	lat = {(r["kind"], r["name"]): r for r in csv.DictReader(open("lat.csv"))}
	assert len(lat) == len(set(lat)) and all(r["exact"] == "1" for r in lat.values())
	for kind_name, r in lat.items():
	    n = sum(int(x["count"]) for f in "abc" for x in csv.DictReader(open("lat-%s.csv" % f))
	            if (x["kind"], x["name"]) == kind_name)
	    assert int(r["count"]) == n > 0, (kind_name, r["count"], n)
	durs = collections.defaultdict(list)
	for c in csv.DictReader(open("calls.csv")):
	    if c["ended"] in ("return", "tail") and c["resumed"] == "0":
	        durs[c["func"]].append(int(c["dur_ns"]))
	funcs = [k[1] for k in lat if k[0] == "func"]
	assert len(funcs) > 5
	for f in funcs:
	    r, d = lat[("func", f)], durs[f]
	    assert int(r["count"]) == len(d), (f, r["count"], len(d))
	    for p, col in ((50, "p50_ns"), (90, "p90_ns"), (99, "p99_ns"), (99.9, "p999_ns")):
	        assert int(r[col]) == pct(d, p), (f, col, r[col], pct(d, p))
	    assert int(r["min_ns"]) == min(d) and int(r["max_ns"]) == max(d)
	req = collections.defaultdict(list)
	for q in csv.DictReader(open("req.csv")):
	    req[(q["dev"], q["op"])].append(q)
	io = list(csv.DictReader(open("io.csv")))
	assert len(io) == len(req) >= 2 and "host" not in io[0]
	for r in io:
	    q = req[(r["dev"], r["op"])]
	    d2c = [int(x["device_ns"]) for x in q]
	    assert int(r["count"]) == len(q) and int(r["p50_ns"]) == pct(d2c, 50) and int(r["p99_ns"]) == pct(d2c, 99), r
	    l = lat[("io", "%s %s d2c" % (r["dev"], r["op"]))]
	    assert l["p50_ns"] == r["p50_ns"] and l["count"] == r["count"]
	cg = {r["func"]: r for r in csv.DictReader(open("cg.csv"))}
	calls = collections.Counter()
	for f in "abc":
	    for x in csv.DictReader(open("cg-%s.csv" % f)):
	        calls[x["func"]] += int(x["calls"])
	assert {k: int(v["calls"]) for k, v in cg.items()} == dict(calls)
	import json
	tree = collections.defaultdict(collections.Counter)
	for f in "abc":
	    for r in json.load(open("tree-%s.json" % f)):
	        for k in ("calls", "total_ns", "self_ns"):
	            tree[tuple(r["path"])][k] += r[k]
	merged = json.load(open("tree.json"))
	assert len(merged) == len(tree) > 10 and {tuple(r["path"]) for r in merged} == set(tree)
	for r in merged:
	    assert all(r[k] == tree[tuple(r["path"])][k] for k in ("calls", "total_ns", "self_ns")), r
	    assert r["depth"] == len(r["path"]) - 1 and r["func"] == r["path"][-1]
	net = collections.defaultdict(collections.Counter)
	for f in "abc":
	    for r in csv.DictReader(open("net-%s.csv" % f)):
	        for k in ("tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "tx_errors"):
	            net[r["dev"]][k] += int(r[k])
	mnet = list(csv.DictReader(open("net.csv")))
	assert len(mnet) == len(net) > 0 and "host" not in mnet[0]
	for r in mnet:
	    assert {k: int(r[k]) for k in net[r["dev"]]} == dict(net[r["dev"]]), r
	PY
'

test_expect 'the text sum over files is the sum of the files; info of three files is an array with their clocks' '
	files && "$TRACEPP" sched a.tpp b.tpp c.tpp >m.txt 2>/dev/null &&
	for f in a b c; do "$TRACEPP" sched --format=csv $f.tpp >$f.csv 2>/dev/null || return 1; done &&
	sw=$(cat a.csv b.csv c.csv | awk -F, '\''$1 != "tid" { s += $5 } END { print s }'\'') &&
	grep -q "^all 3 files: .*, $sw switches," m.txt &&
	grep -q "^host hosta:c:" m.txt &&
	"$TRACEPP" info --format=json a.tpp b.tpp c.tpp >i.json &&
	python3 - <<-"PY"
	import json
	a = json.load(open("i.json"))
	assert [x["hostname"] for x in a] == ["hosta", "hostb", "hosta"], a
	for x in a:
	    w = x["wall_clock"]
	    assert w["samples"] >= 2 and w["err_ns"] is not None and 0 <= w["err_ns"] < 10**9, w
	    assert w["end_ns"] - w["start_ns"] >= x["end_ns"] - x["start_ns"] - 10**6, w
	PY
'

test_expect 'one file given twice, and --by-host where one file is read, are said plainly' '
	files && "$TRACEPP" sched --by-host --format=csv a.tpp a.tpp 2>/dev/null | cut -d, -f1 | sort -u >h.txt &&
	printf "%s\n" hosta:a.tpp#1 hosta:a.tpp#2 host | sort >want.txt && cmp h.txt want.txt &&
	! "$TRACEPP" replay --by-host a.tpp 2>err.txt && grep -q "unrecognized option .--by-host" err.txt
'

# A hostname is the file's bytes: "a;b" plus an escape code (sethostname
# takes any bytes) must neither split a folded frame nor reach the terminal.
test_expect 'callgraph --callers of a function no file has: exit 1, said once for all; io --clock=wall without --interval: a usage error; an unreadable file stops the run first; merged io time lines carry the wall column' '
	files &&
	! "$TRACEPP" callgraph --callers no_such_fn a.tpp b.tpp >/dev/null 2>err && grep -q "in any of the 2 files" err &&
	"$TRACEPP" io --clock=wall a.tpp b.tpp >/dev/null 2>err; [ $? = 2 ] && grep -q "needs --interval" err &&
	# a file that cannot be read stops the run before any is analysed: one line, no rows
	! "$TRACEPP" sched a.tpp missing.tpp b.tpp >out 2>err && [ ! -s out ] && [ "$(wc -l <err)" = 1 ] &&
	grep -q "missing.tpp" err &&
	# merged time lines come in wall-clock order: the column that shows it, even without --clock=wall
	"$TRACEPP" io --interval=1ms --format=csv a.tpp b.tpp 2>/dev/null | head -1 | grep -q ",wall$" &&
	"$TRACEPP" io --interval=1ms --format=csv a.tpp 2>/dev/null | head -1 | grep -vq ",wall$"
'

test_expect 'a missing file among several: info JSON still one valid array, exit 1; a hostname with ; and ESC stays one frame, escaped' '
	files &&
	! "$TRACEPP" info --format=json missing.tpp a.tpp b.tpp >i.json 2>err &&
	python3 -c "import json; d = json.load(open(\"i.json\")); assert len(d) == 2, len(d)" &&
	unshare -u python3 -c "import socket, subprocess, sys
socket.sethostname(b\"x;y \x1b[31m\".decode())
subprocess.run([sys.argv[1], \"-o\", \"e.tpp\", \"-n\", \"3000\", \"--seed\", \"4\"], check=True, stderr=subprocess.DEVNULL)" "$GEN" &&
	"$TRACEPP" callgraph --folded a.tpp e.tpp >f.txt 2>/dev/null &&
	"$TRACEPP" sched a.tpp e.tpp >s.txt 2>&1 &&
	! grep -q "$(printf "\033")" f.txt s.txt &&
	grep -q "^x_y_\\\\x1b\[31m;" f.txt && ! grep -v "^hosta;" f.txt | grep -qv "^x_y_"
'

test_expect '--clock=wall: dump text, dump JSON, replay and io agree on every instant; merged io time lines in wall order' '
	files && "$TRACEPP" dump --clock=wall a.tpp >d.txt 2>d.err &&
	"$TRACEPP" dump --clock=wall --format=json a.tpp >d.json 2>/dev/null &&
	grep -q "wall-clock times of a.tpp within +-" d.err &&
	"$TRACEPP" replay --clock=wall --format=csv a.tpp >r.csv 2>/dev/null &&
	"$TRACEPP" replay --clock=wall a.tpp >r.txt 2>/dev/null &&
	"$TRACEPP" io --interval=1ms --clock=wall --format=csv a.tpp b.tpp c.tpp >io.csv 2>io.err &&
	grep -q "merged in wall-clock order, aligned within +-" io.err &&
	python3 - <<-"PY"
	import csv, json, datetime
	def iso(ns):
	    s, f = divmod(ns, 10**9)
	    return datetime.datetime.fromtimestamp(s, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % f
	js = [json.loads(l) for l in open("d.json")]
	txt = [l.split(" ", 1)[0] for l in open("d.txt")]
	assert len(js) == len(txt) > 500
	wall = {}
	for e, t in zip(js, txt):
	    assert iso(e["wall_ns"]) == t, (e, t)
	    wall[e["ts"]] = e["wall_ns"]
	rows = list(csv.DictReader(open("r.csv")))
	rtxt = [l.split()[0] for l in open("r.txt") if not l.startswith("#")]
	assert len(rows) == len(rtxt) > 500
	for r, t in zip(rows, rtxt):
	    w = int(r["wall_ns"])
	    assert iso(w)[:-1] == t, (r, t)
	    if int(r["ts_ns"]) in wall:
	        assert wall[int(r["ts_ns"])] == w, r
	io = list(csv.DictReader(open("io.csv")))
	assert len(set(r["host"] for r in io)) == 3
	ws = [r["wall"] for r in io]
	assert ws == sorted(ws) and len(ws) > 10, "not in wall-clock order"
	PY
'

# Merged rates (review s7 B5): totals over the union of the files' wall-clock
# windows. Two runs 100 s apart (tpp-gen --start-s) are no fleet of two
# hosts at once: their merged rate is the total over both windows, between
# the two files' own; the same file twice is two hosts side by side: twice
# its rate. The truth is each file's own count and rate (its window is
# count / rate) and info's wall-clock windows, which must not overlap.
test_expect 'merged io iops/bytes/s/avg-qd and net packets/s: totals over the union of the files'\'' wall-clock windows (runs apart average, hosts side by side add up)' '
	"$GEN" -o x.tpp -n 6000 --seed 1 >/dev/null 2>&1 && "$GEN" -o y.tpp -n 6000 --seed 2 --start-s 100 >/dev/null 2>&1 &&
	for f in x y "x y" "x x"; do
		n=$(echo $f | tr -d " ")
		"$TRACEPP" io --format=csv $(printf "%s.tpp " $f) >io-$n.csv 2>/dev/null &&
		"$TRACEPP" net --format=csv $(printf "%s.tpp " $f) >net-$n.csv 2>/dev/null || return 1
	done &&
	"$TRACEPP" info --format=json x.tpp y.tpp >i.json &&
	python3 - <<-"PY"
	import csv, json
	i = json.load(open("i.json"))
	assert i[0]["wall_clock"]["end_ns"] < i[1]["wall_clock"]["start_ns"], "windows overlap"
	def rows(name, key):
	    return {tuple(r[k] for k in key): r for r in csv.DictReader(open(name))}
	def near(a, b):
	    return abs(a - b) <= 1e-3 * max(abs(a), abs(b))
	for kind, key, cnt, rates in (("io", ("dev", "op"), "count", (("iops", "count"), ("bytes_per_s", "bytes"))),
	                              ("net", ("dev",), "tx_packets", (("tx_pps", "tx_packets"), ("rx_pps", "rx_packets")))):
	    x, y, xy, xx = (rows("%s-%s.csv" % (kind, n), key) for n in ("x", "y", "xy", "xx"))
	    assert set(x) == set(y) == set(xy) == set(xx) and len(x) > 0
	    for k in x:
	        for rate, tot in rates:
	            fx, fy = float(x[k][rate]), float(y[k][rate])
	            span = int(x[k][tot]) / fx + int(y[k][tot]) / fy  # the two windows, apart
	            want = (int(x[k][tot]) + int(y[k][tot])) / span
	            got = float(xy[k][rate])
	            assert near(got, want) and min(fx, fy) <= got <= max(fx, fy), (kind, k, rate, got, want, fx, fy)
	            assert not near(got, fx + fy), (kind, k, rate, "the sum of the rates")
	            assert near(float(xx[k][rate]), 2 * fx), (kind, k, rate, xx[k][rate], fx)
	        if kind == "io":
	            qx, qy, q = float(x[k]["avg_qd"]), float(y[k]["avg_qd"]), float(xy[k]["avg_qd"])
	            assert min(qx, qy) - 1e-6 <= q <= max(qx, qy) + 1e-6, (k, q, qx, qy)
	            assert near(float(xx[k]["avg_qd"]), 2 * qx), (k, xx[k]["avg_qd"], qx)
	PY
'

# review s7 B1: --by-host text printed every host's rows in one table at
# the end (all kept); now each host's section as soon as its file is done
test_expect '--by-host text: each host under "host LABEL:", its section byte for byte what the command prints of its file alone' '
	files &&
	for cmd in sched io net latency callgraph; do
		"$TRACEPP" $cmd --by-host a.tpp b.tpp c.tpp >all.txt 2>/dev/null &&
		{ echo "host hosta:a:"; "$TRACEPP" $cmd a.tpp 2>/dev/null; printf "\nhost hostb:\n"; "$TRACEPP" $cmd b.tpp 2>/dev/null
		  printf "\nhost hosta:c:\n"; "$TRACEPP" $cmd c.tpp 2>/dev/null; } >want.txt || return 1
		n=$(wc -c <want.txt)
		head -c $n all.txt | cmp - want.txt || { echo "$cmd: sections differ"; return 1; }
		tail -c +$((n + 1)) all.txt >rest.txt
		[ ! -s rest.txt ] || grep -q "^all 3 files" rest.txt || { echo "$cmd: after the sections:"; cat rest.txt; return 1; }
		[ $(grep -c "^host " all.txt) = 3 ] && [ $(wc -l <want.txt) -gt 8 ] || return 1
	done &&
	# folded stacks carry their host as the first frame: no heading lines
	"$TRACEPP" callgraph --folded --by-host a.tpp b.tpp c.tpp >f.txt 2>/dev/null && [ -s f.txt ] &&
	! grep -Ev "^(hosta:a|hostb|hosta:c);[^ ]+ [0-9]+$" f.txt
'

else
test_skip 'several files, one analysis' 'tpp-gen under unshare -u (a hostname of its own) failed here'
fi

test_done
