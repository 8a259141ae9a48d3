#!/usr/bin/env bash
# The trace file seen through the CLI: `tracepp info` and `tracepp dump`
# honour their JSON contracts and agree with what was written, and bad input
# gets one clear error line and a non-zero exit.
. "$(dirname "$0")/lib.sh"

gen() { "$GEN" "$@" 2>gen.err && sed -n 's/^tpp-gen: \([0-9]*\) events.*/\1/p' gen.err; }

test_expect 'info --format=json has the contract keys and the generator counts' '
	n=$(gen -o t.tpp -n 30000 --cpus 3 --threads 2) &&
	"$TRACEPP" info --format=json t.tpp > info.json &&
	python3 - "$n" <<-PY
	import json, sys
	d = json.load(open("info.json"))
	for k in ("format_version", "events", "lost", "streams", "start_ns", "end_ns", "by_type"):
	    assert k in d, k
	assert d["format_version"] == "1.2"
	assert d["events"] == int(sys.argv[1]) == sum(d["by_type"].values()), (d["events"], sys.argv[1])
	assert sum(s["events"] for s in d["streams"]) == d["events"]
	assert len(d["streams"]) == 5 and d["lost"] == 0 and d["complete"] is True
	assert d["end_ns"] > d["start_ns"] > 0
	PY
'

test_expect 'dump --format=json: one object per line with ts, cpu, tid, type and named fields' '
	gen -o t.tpp -n 5000 --mix sched,block,func --cpus 2 --threads 1 >/dev/null &&
	"$TRACEPP" dump --format=json t.tpp > d.json &&
	python3 - <<-PY
	import json
	n = 0
	for line in open("d.json"):
	    e = json.loads(line); n += 1
	    for k in ("ts", "cpu", "tid", "type"): assert k in e, (k, e)
	    if e["type"] == "sched_switch":
	        for k in ("prev_comm", "prev_pid", "prev_state", "next_comm", "next_pid"): assert k in e
	    if e["type"] == "block_rq_complete": assert e["rwbs"] in ("R", "W") and e["nr_sector"] == 8
	    if e["type"] == "func_entry": assert "addr" in e and e.get("sym"), e
	assert n == 5000, n
	PY
'

test_expect 'dump --sorted is in global time order and loses nothing' '
	gen -o t.tpp -n 40000 --cpus 4 --threads 3 >/dev/null &&
	"$TRACEPP" dump --sorted --format=json t.tpp | python3 -c "
import json, sys
ts = [json.loads(l)[\"ts\"] for l in sys.stdin]
assert len(ts) == 40000, len(ts)
assert ts == sorted(ts), \"not sorted\"
" &&
	"$TRACEPP" dump t.tpp | wc -l | grep -qx 40000
'

test_expect 'dump text names tasks and symbols from the file metadata' '
	gen -o t.tpp -n 2000 --mix func --threads 1 >/dev/null &&
	"$TRACEPP" dump t.tpp > d.txt &&
	grep -q "gen-app-4242 func_entry: addr=0x[0-9a-f]* <main>" d.txt &&
	test "$(grep -c func_entry d.txt)" -gt 900
'

test_expect 'a time range returns only events inside it' '
	gen -o t.tpp -n 20000 --cpus 2 --threads 2 >/dev/null &&
	"$TRACEPP" info --format=json t.tpp > i.json &&
	"$TRACEPP" dump --sorted --format=json --time-range=10ms,20ms t.tpp > r.json &&
	"$TRACEPP" dump --sorted --format=json t.tpp > all.json &&
	python3 - <<-PY
	import json
	start = json.load(open("i.json"))["start_ns"]
	lo, hi = start + 10000000, start + 20000000
	ts = [json.loads(l)["ts"] for l in open("r.json")]
	want = [t for t in (json.loads(l)["ts"] for l in open("all.json")) if lo <= t <= hi]
	assert ts and ts == want, (len(ts), len(want))
	PY
'

test_expect 'a killed writer leaves a readable file (no trailer), said once' '
	gen -o k.tpp -n 50000 --abandon >/dev/null;
	"$TRACEPP" info --format=json k.tpp > i.json 2> err &&
	grep -q "no trailer" err &&
	python3 -c "import json; d = json.load(open(\"i.json\")); assert d[\"complete\"] is False and d[\"events\"] > 40000, d[\"events\"]"
'

bad_input() { # FILE WHAT-THE-MESSAGE-SAYS
	if "$TRACEPP" info "$1" > out 2> err; then echo "exit 0 on $1"; return 1; fi
	test "$(wc -l < err)" -eq 1 || { cat err; return 1; }
	grep -q "$2" err || { cat err; return 1; }
}

test_expect 'empty, foreign, missing and truncated-header files: one clear error' '
	: > empty.tpp && bad_input empty.tpp "empty file" &&
	echo "hello, world, this is not a trace at all" > text.tpp && bad_input text.tpp "not a tracepp trace" &&
	bad_input nosuch.tpp "No such file" &&
	gen -o t.tpp -n 100 >/dev/null && head -c 30 t.tpp > short.tpp && bad_input short.tpp "truncated" &&
	bad_input /tmp "not a regular file"
'

test_expect 'a FIFO, a device and a socket are refused at once with one line, by every command' '
	mkfifo fifo && python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")" &&
	for f in fifo /dev/null sock; do
		for cmd in info dump sched replay callgraph latency io net; do
			timeout 20 "$TRACEPP" $cmd "$f" >out 2>err; rc=$?
			echo "$cmd $f: exit $rc: $(cat err)"
			[ $rc = 1 ] && [ "$(wc -l <err)" = 1 ] && grep -q "not a regular file" err || exit 1
		done
	done
'

test_expect 'a newer major version is refused, a newer minor is read' '
	gen -o t.tpp -n 1000 >/dev/null &&
	python3 - <<-PY
	import struct, zlib
	b = bytearray(open("t.tpp", "rb").read())
	maj = bytearray(b); maj[8] = 2; open("major.tpp", "wb").write(maj)
	PY
	bad_input major.tpp "version 2\.[0-9]* is not readable" &&
	"$TRACEPP" info major.tpp 2>&1 | grep -q "newer tracepp"
'

test_expect 'a checksum mismatch names file and offset, and the rest still decodes' '
	gen -o t.tpp -n 20000 --cpus 2 --threads 1 --chunk-events 1000 >/dev/null &&
	python3 - <<-PY
	b = bytearray(open("t.tpp", "rb").read())
	i = b.find(b"TPCK", len(b) // 2)   # a chunk in the middle
	b[i + 48 + 5] ^= 0xff              # one payload byte
	open("bad.tpp", "wb").write(b)
	PY
	"$TRACEPP" dump bad.tpp > d.txt 2> err && cat err && [ "$(wc -l <err)" = 1 ] &&
	grep -q "warning: 1 damaged chunk(s) skipped (.*bad.tpp: offset [0-9]*: chunk payload checksum mismatch)" err &&
	test "$(wc -l < d.txt)" -ge 18000 && test "$(wc -l < d.txt)" -lt 20000
'

test_expect 'one rule for a damaged file in every command: the intact part, one warning line, exit 0' '
	gen -o t.tpp -n 30000 --mix func,sched,block,net --cpus 2 --threads 1 --chunk-events 1000 >/dev/null &&
	python3 - <<-PY &&
	b = bytearray(open("t.tpp", "rb").read())
	i = b.find(b"TPCK", len(b) // 2)
	b[i + 48 + 5] ^= 0xff
	open("bad.tpp", "wb").write(b)
	PY
	for cmd in info "info --format=json" dump sched "latency --sched" callgraph replay io net \
		"plot --type=timeline --data-only -o p.png" "report -o rep" \
		"script -e tracepoint:sched:sched_switch{@=count();}"; do
		"$TRACEPP" $cmd bad.tpp >out 2>err; rc=$?
		echo "$cmd: exit $rc: $(cat err)"
		[ $rc = 0 ] && [ "$(grep -c "damaged chunk" err)" = 1 ] && [ -s out ] || exit 1
	done
'

test_expect 'nothing to sort is no undefined behaviour: sched and report on traces without such events' '
	gen -o f.tpp -n 1000 --mix func >/dev/null && gen -o e.tpp -n 0 >/dev/null &&
	"$TRACEPP" sched f.tpp >s.txt 2>s.err; rc=$?; cat s.err; [ $rc = 0 ] && ! grep -q "runtime error" s.err &&
	PATH=/nonexistent "$TRACEPP" report -o rep e.tpp >r.txt 2>r.err; rc=$?; cat r.err; [ $rc = 0 ] &&
	! grep -q "runtime error" r.err && [ -s rep/index.html ]
'

full=$_scratch/full
if mkdir -p "$full" && mount -t tmpfs -o size=1m tmpfs "$full" 2>/dev/null; then
test_expect 'a file cut short by a full disk ends cleanly and says so, not "killed"' '
	! "$GEN" -o "$full/f.tpp" -n 3000000 2>err; cat err; grep -q "No space left on device" err &&
	"$TRACEPP" info --format=json "$full/f.tpp" >i.json 2>err; rc=$?; cat err; umount "$full"
	[ $rc = 0 ] && [ "$(wc -l <err)" = 1 ] && grep -q "cut short: its disk filled (ENOSPC)" err &&
	! grep -q "killed\|abruptly" err && python3 -c "import json; d = json.load(open(\"i.json\"))
assert d[\"complete\"] and d[\"cut_short\"].endswith(\"(ENOSPC)\") and d[\"events\"] > 100000, d"
'
else
	test_skip 'a full disk' 'cannot mount a small tmpfs'
fi

test_expect 'absurd sizes in headers are refused without a huge allocation' '
	gen -o t.tpp -n 1000 >/dev/null &&
	python3 - <<-PY
	import struct
	b = bytearray(open("t.tpp", "rb").read())
	h = bytearray(b); h[12:16] = struct.pack("<I", 0xfffffff0); open("hdr.tpp", "wb").write(h)
	PY
	bad_input hdr.tpp "header length" &&
	case $B in
	*san*) ;; # ASan reserves terabytes of address space: no ulimit there
	*) (ulimit -v 200000; "$TRACEPP" info hdr.tpp 2>/dev/null; test $? -eq 1) ;;
	esac
'

test_expect 'unknown options and formats are refused' '
	gen -o t.tpp -n 10 >/dev/null &&
	! "$TRACEPP" info --bogus t.tpp 2>/dev/null &&
	! "$TRACEPP" dump --format=yaml t.tpp 2> err && grep -q "unknown --format" err &&
	! "$TRACEPP" frobnicate 2> err && grep -q "unknown command" err
'

test_done
