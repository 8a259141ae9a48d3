#!/usr/bin/env bash
# tracepp script on files whose truth is known without tracepp: maps held
# against counts, sums and histograms Python computes from the events
# themselves; the column and row paths against each other; the printed
# layout against bpftrace 0.17's own printing of the same maps (BEGIN
# programs: no probe on the kernel needed); errors as one line with line
# and column; --where against a filter written out in Python.
. "$(dirname "$0")/lib.sh"

G=$_scratch/g.tpp F=$_scratch/f.tpp
"$GEN" -o "$G" -n 60000 --mix sched,block --cpus 2 --chunk-events 2048 >/dev/null || exit 1
"$GEN" -o "$F" -n 60000 --mix func --threads 3 >/dev/null || exit 1
"$TRACEPP" dump --format=json "$G" >"$_scratch/g.json" || exit 1
"$TRACEPP" dump --format=json "$F" >"$_scratch/f.json" || exit 1

# bpftrace's text maps as {name: {key: value or [hist rows]}} and the order
# of each map's values (ties aside), for comparing two outputs.
export PYTHONPATH=$TOP/tests	# btmaps.py

test_expect 'counts, sums, min, max, avg, stats by a string field equal the events counted in Python' '
	"$TRACEPP" script -e "tracepoint:sched:sched_switch { @c[args->prev_comm] = count(); @s[args->prev_comm] = sum(args->prev_pid);
		@mn[args->next_comm] = min(args->next_pid); @mx[args->next_comm] = max(args->next_pid);
		@a[cpu] = avg(args->prev_pid); @st[cpu] = stats(args->next_pid); }" "$G" >out.txt &&
	python3 - "$_scratch/g.json" out.txt <<-\PY
	import json, sys, collections, btmaps
	c, s, mn, mx, a, st = (collections.Counter(), collections.Counter(), {}, {}, collections.defaultdict(list), collections.defaultdict(list))
	for l in open(sys.argv[1]):
	    e = json.loads(l)
	    if e["type"] != "sched_switch":
	        continue
	    p, n = e["prev_comm"], e["next_comm"]
	    c[p] += 1; s[p] += e["prev_pid"]
	    mn[n] = min(mn.get(n, 1 << 62), e["next_pid"]); mx[n] = max(mx.get(n, -1), e["next_pid"])
	    a[str(e["cpu"])].append(e["prev_pid"]); st[str(e["cpu"])].append(e["next_pid"])
	got, order = btmaps.parse(open(sys.argv[2]).read())
	avg = lambda v: int(sum(v) / len(v))
	want = {"@c": {k: str(v) for k, v in c.items()}, "@s": {k: str(v) for k, v in s.items()},
	        "@mn": {k: str(v) for k, v in mn.items()}, "@mx": {k: str(v) for k, v in mx.items()},
	        "@a": {k: str(avg(v)) for k, v in a.items()},
	        "@st": {k: "count %d, average %d, total %d" % (len(v), avg(v), sum(v)) for k, v in st.items()}}
	for m in want:
	    assert got[m] == want[m], (m, got[m], want[m])
	    vals = [int(x) for x in order[m]] if m != "@st" else []
	    assert vals == sorted(vals), (m, "not in ascending order", vals)
	print("ok", {m: len(want[m]) for m in want})
	PY
'

test_expect 'hist and lhist of a field equal the buckets computed in Python, bucket for bucket' '
	"$TRACEPP" script -e "tracepoint:block:block_rq_complete { @h = hist(args->nr_sector * 512); @k[args->dev] = hist(args->sector);
		@l = lhist(args->nr_sector, 0, 64, 8); }" "$G" >out.txt &&
	python3 - "$_scratch/g.json" out.txt <<-\PY
	import json, sys, collections, btmaps
	def lab(p):
	    for suf, sh in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
	        if p >= sh:
	            return "%d%s" % (1 << (p - sh), suf)
	    return str(1 << p)
	def hist(vals):
	    b = collections.Counter(0 if v < 0 else 1 if v == 0 else 1 + v.bit_length() for v in vals)
	    rows = []
	    for i in range(min(b), max(b) + 1):
	        l = "(..., 0)" if i == 0 else "[0]" if i == 1 else "[1]" if i == 2 else "[%s, %s)" % (lab(i - 2), lab(i - 1))
	        rows.append((l, b[i]))
	    return rows
	def lhist(vals, lo, hi, step):
	    n = (hi - lo) // step
	    b = collections.Counter(0 if v < lo else n + 1 if v >= hi else 1 + (v - lo) // step for v in vals)
	    def ll(x):
	        return "%dK" % (x // 1024) if x and x % 1024 == 0 else str(x)
	    rows = []
	    for i in range(min(b), max(b) + 1):
	        l = "(..., %s)" % ll(lo) if i == 0 else "[%s, ...)" % ll(hi) if i == n + 1 else "[%s, %s)" % (ll(lo + (i - 1) * step), ll(lo + i * step))
	        rows.append((l, b[i]))
	    return rows
	h, k, l = [], collections.defaultdict(list), []
	for line in open(sys.argv[1]):
	    e = json.loads(line)
	    if e["type"] == "block_rq_complete":
	        h.append(e["nr_sector"] * 512); k[str(e["dev"])].append(e["sector"]); l.append(e["nr_sector"])
	got, _ = btmaps.parse(open(sys.argv[2]).read())
	assert got["@h"][""] == hist(h), (got["@h"], hist(h))
	assert got["@l"][""] == lhist(l, 0, 64, 8), (got["@l"], lhist(l, 0, 64, 8))
	assert got["@k"] == {d: hist(v) for d, v in k.items()}
	print("ok", len(h), "completions")
	PY
'

# Programs whose output must not depend on how the events are read.
cat >"$_scratch/progs.txt" <<'EOF'
tracepoint:sched:sched_switch /args->prev_state == 0/ { @[args->prev_comm, args->next_comm] = count(); @t = sum(args->prev_prio); }
tracepoint:sched:* { @[probe] = count(); @c[comm, pid] = count(); }
tracepoint:block:block_rq_issue { @start[args->dev, args->sector] = nsecs; } tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ { @us = hist((nsecs - @start[args->dev, args->sector]) / 1000); delete(@start[args->dev, args->sector]); }
tracepoint:sched:sched_wakeup { if (args->target_cpu == 1) { @w[args->comm] = count(); } else { @o[args->pid % 7] = lhist(args->prio, 100, 140, 5); } }
interval:ms:7 { @ticks = count(); printf("%d\n", elapsed / 1000000); }
tracepoint:sched:sched_switch { $d = args->next_pid - args->prev_pid; @d = stats($d); @neg = hist($d); }
EOF

test_expect 'the column scan and the row path give the same output' '
	n=0; while IFS= read -r p; do
		n=$((n + 1))
		"$TRACEPP" script -e "$p" "$G" >cols.txt 2>cols.err && TPP_SCAN=0 "$TRACEPP" script -e "$p" "$G" >rows.txt 2>rows.err &&
		[ -s cols.txt ] && cmp cols.txt rows.txt && cmp cols.err rows.err || { echo "program $n differs: $p"; diff cols.txt rows.txt | head; exit 1; }
	done <"$_scratch/progs.txt"; echo "$n programs"
'

test_expect 'interval probes fire on trace time: every 7 ms of the recording, elapsed counted from its first event' '
	"$TRACEPP" script -e "interval:ms:7 { printf(\"%d\n\", elapsed); }" "$G" >ticks.txt &&
	span=$(python3 -c "import json
ts = [json.loads(l)[\"ts\"] for l in open(\"$_scratch/g.json\")]
print(max(ts) - min(ts))") &&
	python3 -c "import sys
got = [int(x) for x in open(\"ticks.txt\").read().split()]
want = [7000000 * k for k in range(1, $span // 7000000 + 1)]
assert got == want, (got[:5], want[:5], len(got), len(want))
print(len(got), \"ticks\")"
'

test_expect 'compiled-in functions as uprobes: calls per function and durations at the returns, against the events paired in Python' '
	"$TRACEPP" script -e "uprobe:*:* { @calls[func] = count(); @s[tid] = nsecs; }
		uretprobe:*:* /@s[tid]/ { @ns[func] = sum(nsecs - @s[tid]); }" "$F" >out.txt &&
	"$TRACEPP" script -e "uprobe:*:de* { @[probe] = count(); }" "$F" >probe.txt &&
	python3 - "$_scratch/f.json" out.txt probe.txt <<-\PY
	import json, sys, collections, btmaps
	calls, ns, last = collections.Counter(), collections.Counter(), {}
	for l in open(sys.argv[1]):
	    e = json.loads(l)
	    if e["type"] == "func_entry":
	        calls[e["sym"]] += 1; last[e["tid"]] = e["ts"]
	    elif e["type"] == "func_exit" and e["tid"] in last:
	        ns[e["sym"]] += e["ts"] - last[e["tid"]]
	got, _ = btmaps.parse(open(sys.argv[2]).read())
	assert got["@calls"] == {k: str(v) for k, v in calls.items()}, got["@calls"]
	assert got["@ns"] == {k: str(v) for k, v in ns.items()}, (got["@ns"], ns)
	pr, _ = btmaps.parse(open(sys.argv[3]).read())
	assert pr["@"] == {"uprobe:*:" + k: str(v) for k, v in calls.items() if k.startswith("de")}, pr["@"]
	print("ok", len(calls), "functions")
	PY
'

test_expect 'a speculation prints only what is committed: the calls longer than 95 ns, as a program without one prints them' '
	"$TRACEPP" script -e "uprobe:*:compute { self->sp = speculation(); speculate(self->sp); printf(\"enter %d\n\", tid); self->t = nsecs; }
		uretprobe:*:compute /self->sp/ { speculate(self->sp); printf(\"leave %d\n\", nsecs - self->t); }
		uretprobe:*:compute /self->sp && nsecs - self->t > 95/ { commit(self->sp); self->sp = 0; }
		uretprobe:*:compute /self->sp/ { discard(self->sp); self->sp = 0; }" "$F" >spec.txt 2>spec.err &&
	"$TRACEPP" script -e "uprobe:*:compute { @t[tid] = nsecs; }
		uretprobe:*:compute /@t[tid] && nsecs - @t[tid] > 95/ { printf(\"enter %d\nleave %d\n\", tid, nsecs - @t[tid]); }" "$F" >plain.txt &&
	calls=$(grep -c "\"sym\": \"compute\"" "$_scratch/f.json") && kept=$(grep -c leave spec.txt) &&
	echo "$kept of $((calls / 2)) calls kept" && [ "$kept" -gt 0 ] && [ "$kept" -lt $((calls / 2)) ] &&
	diff spec.txt <(grep -v "^@t\[" plain.txt) && cat spec.err && ! grep -q speculation spec.err
'

# bpftrace's printing of the same maps, from BEGIN: no kernel probe needed.
cat >"$_scratch/layout.bt" <<'EOF'
BEGIN {
  printf("%d %u %x %X %5d|%-5d|%05d %s|%10s|%-10s|%c %lu %ld %lx\n", -5, -5, 255, 255, 42, 42, 42, "hi", "r", "l", 65, 7, -7, 4096);
  printf("%d %d %ld\n", 4294967301, -4294967301, 4294967301);
  $x = 10; $y = 3; $s = "str";
  printf("%d %d %d %d %d %d %d\n", $x + $y, $x - $y, $x * $y, $x / $y, $x % $y, $x << 2, $x >> 1);
  printf("%d %d %d %d %d %d|%d %d %d %d %d %d|%d %d %d\n", $x & $y, $x | $y, $x ^ $y, !$x, ~$x, -$x,
         $x < $y, $x > $y, $x <= 10, $x >= 11, $x == 10, $x != 10, $x && $y, $x || 0, 0 && 1);
  printf("%s %d %d\n", $s, $s == "str", $x > 5 ? 100 : 200);
  @c["b"] = count(); @c["a"] = count(); @c["a"] = count(); @c["zz"] = count(); @c["zz"] = count(); @c["zz"] = count();
  @s[1, "x"] = sum(5); @s[2, "y"] = sum(-3); @s[3, "a"] = sum(10);
  @i[5] = 7; @i[3] = 8; @i[4] = -1; @scalar = 42; @str = "hello"; @sk["k1"] = "v2"; @sk["k0"] = "v9";
  @a = avg(10); @a = avg(3); @mn = min(5); @mn = min(-2); @mx = max(5); @mx = max(9);
  @st = stats(10); @st = stats(20); @st = stats(33); @stk["q"] = stats(1); @stk["r"] = stats(100);
  @h = hist(0); @h = hist(1); @h = hist(2); @h = hist(3); @h = hist(1000); @h = hist(1025); @h = hist(-5); @h = hist(1048576);
  @l = lhist(5, 0, 100, 10); @l = lhist(55, 0, 100, 10); @l = lhist(-1, 0, 100, 10); @l = lhist(100, 0, 100, 10);
  @l2 = lhist(1024, 0, 2048, 512); @l2 = lhist(3000, 0, 2048, 512);
  @hk["x"] = hist(10); @hk["y"] = hist(3); @hk["y"] = hist(3); @hk["z"] = hist(3000); @hk["z"] = hist(3); @hk["z"] = hist(5);
  @e = count(); clear(@e); @cl[1] = 1; clear(@cl); if (0) { @never = count(); @nk[1] = 5; }
  @m[1, "a"] = 5; @m[2, "b"] = 7; delete(@m[1, "a"]); @z["q"] = count(); @z["w"] = count(); zero(@z);
  @u[(uint8)300] = 1; @v[(int32)4294967295] = 4; @v[(int8)200] = 5;
  if ($x > 50) { @if = 1; } else if ($x > 5) { @if = 2; } else { @if = 3; }
  $k = 0; while ($k < 5) { $k++; if ($k == 2) { continue; } @w[$k] = $k * 10; if ($k == 4) { break; } }
  unroll(3) { @un++; } @y++; @y++;
  @cmp = strncmp("hello", "help", 3); @cmp2 = strncmp("hello", "help", 4);
  print(@m); print(5); print("text"); print(@s); print(@h); print(@c, 2); print(@i, 0, 2);
  exit();
}
END { printf("end %d\n", 1); }
EOF
bt_ok=
if command -v bpftrace >/dev/null && [ "$(id -u)" = 0 ] &&
	timeout 30 bpftrace -e 'BEGIN { printf("up\n"); exit(); }' 2>/dev/null | grep -q '^up$'; then
	bt_ok=1
fi
if [ -n "$bt_ok" ]; then
	test_expect 'maps, histograms, printf and print come out as bpftrace prints them, text and JSON' '
		timeout 30 bpftrace "$_scratch/layout.bt" 2>/dev/null | grep -v "^Attaching" >bt.txt &&
		"$TRACEPP" script "$_scratch/layout.bt" "$G" >mine.txt 2>mine.err &&
		timeout 30 bpftrace -f json "$_scratch/layout.bt" 2>/dev/null | grep -v "attached_probes" | grep -v "^$" >bt.json &&
		"$TRACEPP" script -f json "$_scratch/layout.bt" "$G" >mine.json &&
		python3 - <<-\PY
		import btmaps, json
		bt, mine = open("bt.txt").read(), open("mine.txt").read()
		# ties (the same count) come in bpftrace in the order of its hash table
		b, m = btmaps.parse(bt), btmaps.parse(mine)
		assert b == m, (b, m)
		norm = lambda t: sorted(t.split("\n"))
		assert norm(bt) == norm(mine), set(norm(bt)) ^ set(norm(mine))
		bj = [json.loads(l) for l in open("bt.json")]
		mj = [json.loads(l) for l in open("mine.json")]
		assert len(bj) == len(mj), (len(bj), len(mj))
		for x, y in zip(bj, mj):
		    assert x == y or (x["type"] == "map" and x["data"] == y["data"]), (x, y)
		print("same", len(bt.split("\n")), "lines,", len(bj), "JSON objects")
		PY
	'
else
	test_skip 'maps, histograms, printf and print come out as bpftrace prints them, text and JSON' 'bpftrace cannot run here (not installed, not root, or no BPF)'
fi

test_expect 'errors: one line naming line and column, exit 2; probes on events the file lacks are named' '
	! "$TRACEPP" script -e "tracepoint:sched:sched_switch { @x = count( }" "$G" 2>e1 && cat e1 && [ $(wc -l <e1) = 1 ] &&
	grep -q "^tracepp script: -e:1:45: syntax error" e1 &&
	{ "$TRACEPP" script -e "tracepoint:sched:sched_switch
	{ @[args->nosuch] = count(); }" "$G" 2>e2; [ $? = 2 ]; } && cat e2 && [ $(wc -l <e2) = 1 ] &&
	grep -q -- "-e:2:6: tracepoint:sched:sched_switch has no field .nosuch. (it has: prev_comm, prev_pid" e2 &&
	! "$TRACEPP" script -e "tracepoint:syscalls:sys_enter_read { @ = count(); }" "$G" 2>e3 && cat e3 &&
	grep -q "tracepoint:syscalls:sys_enter_read: .* has no such events (its event types: .*sched:sched_switch" e3 &&
	! "$TRACEPP" script -e "kprobe:vfs_read { @ = count(); }" "$G" 2>e4 && cat e4 && grep -q "need the live system" e4 &&
	! "$TRACEPP" script -e "tracepoint:sched:sched_switch { @ = retval; }" "$G" 2>e5 && cat e5 && grep -q "1:37: retval: only a uretprobe" e5 &&
	! "$TRACEPP" script -e "BEGIN { printf(\"%d %s\n\", 1); }" "$G" 2>e6 && cat e6 && grep -q "1:16: printf:" e6 &&
	! "$TRACEPP" script -e "BEGIN { @x = 1; } END { @x = \"s\"; }" "$G" 2>e7 && cat e7 && grep -q "1:28: @x holds an integer (from 1:12), not a string" e7 &&
	"$TRACEPP" script -e "BEGIN { exit(); }" "$G" >/dev/null 2>e8; [ $? = 0 ] &&
	! "$TRACEPP" script -e "BEGIN { @ = count(); }" "$G" --bogus 2>e9 &&
	"$TRACEPP" script -e "BEGIN { printf(\"x\n\"); exit(); }" "$G" -f json >e9.json && grep -q "^{\"type\": \"printf\"" e9.json &&
	! "$TRACEPP" script "$_scratch/nonexistent.bt" "$G" 2>e10 && grep -q "nonexistent.bt: No such file" e10 &&
	! "$TRACEPP" script -e "uprobe:*:nosuch { @ = count(); }" "$F" 2>e11 && cat e11 && grep -q "1:1: uprobe:\*:nosuch: .* has no events of this function (uprobes recorded: none; compiled-in functions of: .* symbols)" e11
'

test_expect 'a probe whose event type the file declares but never recorded is said to have seen nothing' '
	"$TRACEPP" script -e "tracepoint:sched:sched_wakeup { @w = count(); } tracepoint:sched:sched_switch { @s = count(); }" "$G" >/dev/null 2>w1 && ! grep -q "no event" w1 &&
	"$TRACEPP" script -e "BEGIN { @a = 0; }
		tracepoint:block:* { @b = count(); }" "$F" >out 2>w2; cat w2; grep -q "warning: -e:2:3: tracepoint:block:\*: no event of .* reached this probe" w2
'

test_expect 'JSON output: one valid object per line, maps as bpftrace -f json writes them' '
	"$TRACEPP" script -f json -e "tracepoint:sched:sched_switch { @c[args->prev_comm] = count(); @h = hist(args->prev_pid); @s = stats(args->next_pid); }
		END { printf(\"done\n\"); }" "$G" >out.json &&
	python3 - <<-\PY
	import json
	objs = [json.loads(l) for l in open("out.json")]
	kinds = [(o["type"], list(o["data"])[0] if isinstance(o["data"], dict) else o["data"]) for o in objs]
	assert kinds == [("printf", "done\n"), ("map", "@c"), ("hist", "@h"), ("stats", "@s")], kinds
	assert all(isinstance(v, int) for v in objs[1]["data"]["@c"].values())
	assert all(set(b) <= {"min", "max", "count"} for b in objs[2]["data"]["@h"])
	print(kinds)
	PY
'

test_expect 'dump --where keeps exactly the events a Python filter keeps, the kernel filter syntax with strings, globs and bits' '
	n=0; for w in "prev_state == 1" "prev_state & 1 && next_comm ~ \"gen-*\"" "!(prev_pid < 4243 || prev_pid >= 4245) && common_pid != 0" \
		"target_cpu == 4 && pid == 4244 || sector < 20000000"; do
		n=$((n + 1)); "$TRACEPP" dump --format=json --where "$w" "$G" >w$n.json || exit 1
	done &&
	python3 - "$_scratch/g.json" <<-\PY &&
	import json, sys, fnmatch
	keep = [lambda e: e["type"] == "sched_switch" and e["prev_state"] == 1,
	        lambda e: e["type"] == "sched_switch" and e["prev_state"] & 1 and fnmatch.fnmatchcase(e["next_comm"], "gen-*"),
	        lambda e: e["type"] == "sched_switch" and 4243 <= e["prev_pid"] < 4245 and e["tid"] != 0,
	        lambda e: (e["type"].startswith("sched_wakeup") and e["target_cpu"] == 4 and e["pid"] == 4244) or (e["type"].startswith("block") and e["sector"] < 20000000)]
	want = [[] for _ in keep]
	for l in open(sys.argv[1]):
	    e = json.loads(l)
	    for i, k in enumerate(keep):
	        if k(e):
	            want[i].append(l)
	for i in range(len(keep)):
	    got = open("w%d.json" % (i + 1)).readlines()
	    assert got == want[i], (i + 1, len(got), len(want[i]))
	    assert got, (i + 1, "kept nothing: the filter proves nothing")
	print([len(w) for w in want], "events kept")
	PY
	! "$TRACEPP" dump --where "nosuch == 1" "$G" 2>e1 && cat e1 && grep -q "where: 1:1: .nosuch.: no event type of .* has this field" e1 &&
	! "$TRACEPP" dump --where "prev_comm > \"x\"" "$G" 2>e2 && cat e2 && [ $(wc -l <e2) = 1 ] &&
	! "$TRACEPP" dump --where "prev_pid >= 0 && nosuch == 1" "$G" 2>e3 && cat e3 && [ $(wc -l <e3) = 1 ] &&
	grep -q "where: 1:18: .nosuch.: no event type of .* has this field" e3 &&
	! "$TRACEPP" sched --where "prev_pid >= 0 || nosuch == 1" "$G" 2>e4 && cat e4 && grep -q "1:18: .nosuch." e4
'

test_expect '--where on the analysis commands: a filter passing all changes nothing, one passing some feeds only those events' '
	for c in "latency $G" "sched $G" "io $G" "net $G" "replay $F" "callgraph $F"; do
		"$TRACEPP" $c >all.txt 2>&1 && "$TRACEPP" ${c%% *} --where "common_pid >= 0" ${c#* } >w.txt 2>&1 &&
		[ -s all.txt ] && cmp all.txt w.txt || { echo "${c%% *} differs"; exit 1; }
	done &&
	"$TRACEPP" replay --where "common_pid == 4244" "$F" >w.txt && "$TRACEPP" replay --tid 4244 "$F" >t.txt && [ -s t.txt ] && cmp w.txt t.txt &&
	"$TRACEPP" callgraph --where "common_pid == 4244" "$F" >w.txt && "$TRACEPP" callgraph --tid 4244 "$F" >t.txt && cmp w.txt t.txt &&
	! cmp -s w.txt all.txt &&
	"$TRACEPP" io --where "rwbs ~ \"R*\"" "$G" >w.txt && "$TRACEPP" io "$G" >all.txt && cat w.txt &&
	[ $(wc -l <w.txt) = 2 ] && [ "$(grep " read " w.txt | tr -s " ")" = "$(grep " read " all.txt | tr -s " ")" ] &&
	"$TRACEPP" sched --where "prev_state == 1" --format=csv "$G" >s.csv 2>/dev/null &&
	python3 - "$_scratch/g.json" s.csv <<-\PY &&
	import json, sys, csv, collections
	want = collections.Counter()
	for l in open(sys.argv[1]):
	    e = json.loads(l)
	    if e["type"] == "sched_switch" and e["prev_state"] == 1:
	        want[str(e["prev_pid"])] += 1
	rows = list(csv.DictReader(open(sys.argv[2])))
	got = {r["tid"]: int(r["switches"]) for r in rows}
	assert got == {k: v for k, v in want.items() if k != "0"}, (got, want)
	assert all(r["switches"] == r["voluntary"] and r["wakeups"] == "0" for r in rows), rows
	print(len(got), "tasks, switches as Python counts them")
	PY
	! "$TRACEPP" latency --where "nosuch == 1" "$G" 2>e1 && cat e1 && [ $(wc -l <e1) = 1 ] && grep -q "^tracepp latency: --where: 1:1: .nosuch.: no event type" e1 &&
	{ "$TRACEPP" sched --where "prev_pid ==" "$G" 2>e2; [ $? = 2 ]; } && cat e2 && [ $(wc -l <e2) = 1 ]
'

test_expect 'exit() stops the run early, in an event or an interval: END, at that time, and the maps still come' '
	"$TRACEPP" script -e "tracepoint:sched:sched_switch { @n = count(); if (@n == 100) { exit(); } } END { printf(\"end\n\"); }" "$G" >out.txt &&
	cat out.txt && grep -qx "end" out.txt && grep -qx "@n: 100" out.txt &&
	"$TRACEPP" script -e "interval:ms:20 { exit(); } tracepoint:sched:sched_switch { @n = count(); } END { printf(\"%d\n\", elapsed); }" "$G" >iv.txt &&
	python3 - "$_scratch/g.json" iv.txt <<-\PY
	import json, sys
	ev = [json.loads(l) for l in open(sys.argv[1])]
	t0 = min(e["ts"] for e in ev)
	n = sum(1 for e in ev if e["type"] == "sched_switch" and e["ts"] < t0 + 20000000)
	got = open(sys.argv[2]).read().split()
	assert got == ["20000000", "@n:", str(n)], (got, n)
	print(n, "switches in the first 20 ms")
	PY
'

test_expect 'a damaged chunk is skipped and said (one warning line, exit 0 as every command), the rest still counted' '
	cp "$G" d.tpp && size=$(stat -c %s d.tpp) &&
	printf "\xff\xff\xff\xff" | dd of=d.tpp bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null &&
	"$TRACEPP" script -e "tracepoint:sched:sched_switch { @ = count(); }" d.tpp >out.txt 2>err.txt &&
	cat out.txt err.txt && grep -q "@: [0-9]" out.txt && [ "$(grep -c "damaged chunk" err.txt)" = 1 ]
'

test_done
