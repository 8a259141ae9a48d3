#!/usr/bin/env bash
# tracepp io and tracepp net against the kernel's own counters: completed
# reads and writes per device vs /proc/diskstats, loopback packets each way
# vs /proc/net/dev. Background activity racing the counter reads is
# retried, never excused.
# san: skip
. "$(dirname "$0")/lib.sh"
S=$B/samples

tracefs_ok() { [ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; [ -d /sys/kernel/tracing/instances ]; }
if ! tracefs_ok; then
	test_skip 'io and net match /proc' 'no tracefs on this machine'
	test_done; exit
fi
# jrow FILE PYTHON-CONDITION KEY: KEY of the first row of a JSON array
# output for which the condition on r holds, 0 when none.
jrow() { python3 -c 'import json,sys
cond = compile(sys.argv[2], "cond", "eval")
rows = [r for r in json.load(open(sys.argv[1])) if eval(cond)]
print(rows[0][sys.argv[3]] if rows else 0)' "$@"; }

dir=${TPP_IO_DIR:-/var/tmp}
dev=$(stat -c %d "$dir" 2>/dev/null)
if [ -z "$dev" ] || ! grep -q " $((dev >> 8)) *$((dev & 255)) " /proc/diskstats 2>/dev/null &&
	! [ -e "/sys/dev/block/$((dev >> 8)):$((dev & 255))/partition" ]; then
	test_skip 'io counts match /proc/diskstats' "$dir is on a device without diskstats"
else
test_expect 'io: reads and writes per device equal /proc/diskstats (O_DIRECT), latency percentiles ordered' '
	f=$(mktemp "$dir/tpp-odirect.XXXXXX") && ok=0 &&
	for try in 1 2 3; do
		"$TRACEREC" record -q -e block -a -o io.tpp -- "$S/w-odirect" "$f" 1000 >out 2>err || { cat err; break; }
		read -r _ maj min rd wr t0 t1 <out
		"$TRACEPP" io --format=json --time-range="$t0,$t1" io.tpp >io.json || break
		r=$(jrow io.json "r[\"dev\"]==\"$maj:$min\" and r[\"op\"]==\"read\"" count)
		w=$(jrow io.json "r[\"dev\"]==\"$maj:$min\" and r[\"op\"]==\"write\"" count)
		echo "try $try: diskstats reads $rd writes $wr; tracepp io $r $w"
		if [ "$r" = "$rd" ] && [ "$w" = "$wr" ] && [ "$rd" -ge 1000 ]; then ok=1; break; fi
	done
	rm -f "$f"; [ $ok = 1 ] &&
	b=$(jrow io.json "r[\"dev\"]==\"$maj:$min\" and r[\"op\"]==\"read\"" bytes) &&
	p50=$(jrow io.json "r[\"dev\"]==\"$maj:$min\" and r[\"op\"]==\"read\"" p50_ns) &&
	p99=$(jrow io.json "r[\"dev\"]==\"$maj:$min\" and r[\"op\"]==\"read\"" p99_ns) &&
	echo "read bytes $b p50 $p50 p99 $p99" &&
	[ "$b" -ge $((4096 * rd)) ] && [ "$p50" -gt 0 ] && [ "$p99" -ge "$p50" ]
'
fi

test_expect 'net: lo packets each way equal /proc/net/dev' '
	ok=0 &&
	for try in 1 2 3; do
		"$TRACEREC" record -q -e net -a -o net.tpp -- "$S/w-tcp" 3000 1000 >out 2>err || { cat err; break; }
		read -r _ rx tx t0 t1 <out
		"$TRACEPP" net --format=json --time-range="$t0,$t1" net.tpp >net.json || break
		x=$(jrow net.json "r[\"dev\"]==\"lo\"" tx_packets)
		v=$(jrow net.json "r[\"dev\"]==\"lo\"" rx_packets)
		echo "try $try: /proc/net/dev lo rx $rx tx $tx; tracepp net rx $v tx $x"
		if [ "$x" = "$tx" ] && [ "$v" = "$rx" ] && [ "$tx" -ge 6000 ]; then ok=1; break; fi
	done
	[ $ok = 1 ] && "$TRACEPP" net net.tpp | grep -q "^lo "
'

test_expect 'net --conns: per connection ports and bytes each way equal what both ends counted; --clock=wall starts within the recording'"'"'s realtime' '
	before=$(date +%s%N) &&
	"$TRACEREC" record -q -a -e sock:inet_sock_set_state,sock:sock_send_length,sock:sock_recv_length \
		-o conn.tpp -- python3 "$TOP/tests/analysis/w-conns.py" 5 300000 >out 2>err || { cat err; exit 1; }
	after=$(date +%s%N) &&
	cat out && [ "$(wc -l <out)" = 10 ] &&
	"$TRACEPP" net --conns --clock=wall --format=csv conn.tpp >wall.csv 2>/dev/null &&
	python3 - "$before" "$after" <<-"PY" &&
	import csv, datetime, sys
	lo, hi = int(sys.argv[1]), int(sys.argv[2])
	rows = [r for r in csv.DictReader(open("wall.csv")) if r["wall"]]
	assert len(rows) >= 10, rows
	for r in rows:
	    d = datetime.datetime.strptime(r["wall"][:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
	    ns = int(d.timestamp()) * 10**9 + int(r["wall"][20:29])
	    assert lo <= ns <= hi, (r, lo, hi)
	PY
	"$TRACEPP" net --conns --format=json conn.tpp >conn.json &&
	"$TRACEPP" net --conns conn.tpp | head -3 &&
	while read -r side lp pp sent got; do
		c="r[\"sport\"]==$lp and r[\"dport\"]==$pp and r[\"saddr\"]==\"127.0.0.1\""
		tx=$(jrow conn.json "$c" tx_bytes) rx=$(jrow conn.json "$c" rx_bytes)
		st=$(jrow conn.json "$c" state) dur=$(jrow conn.json "$c" dur_ns)
		echo "$side $lp -> $pp: sent $sent got $got; tracepp tx $tx rx $rx $st $dur ns"
		[ "$tx" = "$sent" ] && [ "$rx" = "$got" ] && [ "$st" = CLOSE ] && [ "$dur" -gt 0 ] || exit 1
	done <out
'

test_expect 'io --interval gives a time line whose counts add up to the totals' '
	"$TRACEREC" record -q -e block -a -o io.tpp -- "$S/w-odirect" "$(mktemp "$dir/tpp-odirect.XXXXXX")" 300 >out 2>err &&
	rm -f "$dir"/tpp-odirect.* &&
	"$TRACEPP" io --format=json io.tpp >tot.json &&
	"$TRACEPP" io --format=json --interval=10ms io.tpp >tl.json &&
	python3 -c "import json
tot = sum(r[\"count\"] for r in json.load(open(\"tot.json\")))
tl = sum(r[\"count\"] for r in json.load(open(\"tl.json\")))
print(tot, tl); assert tot == tl and tot > 0"
'
test_done
