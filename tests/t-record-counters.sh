#!/usr/bin/env bash
# tracerec record against the kernel's own counters: context switches per
# thread (/proc/PID/task/TID/status), block completions (/proc/diskstats,
# including those completed in interrupt context), loopback packets
# (/proc/net/dev). Every number must match exactly, with no lost events.
# san: skip
. "$(dirname "$0")/lib.sh"
S=$B/samples

tracefs_ok() { [ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; [ -d /sys/kernel/tracing/instances ]; }

# count FILE PYTHON-CONDITION [FROM TO]: events of the dump for which the
# condition on e (the event's JSON object) holds, with FROM < ts < TO.
count() {
	"$TRACEPP" dump --format=json "$1" | python3 -c '
import json, sys
cond = compile(sys.argv[1], "cond", "eval")
lo = int(sys.argv[2]) if len(sys.argv) > 2 else 0
hi = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 64
n = 0
for line in sys.stdin:
    e = json.loads(line)
    if lo < e["ts"] < hi and eval(cond):
        n += 1
print(n)' "${@:2}"
}
lost() { "$TRACEPP" info "$1" | awk '/^lost:/ {print $2}'; }

if ! tracefs_ok; then
	test_skip 'context switches match /proc' 'no tracefs on this machine'
	test_done; exit
fi

test_expect 'sched_switch per thread equals voluntary+nonvoluntary switches (pipe ping-pong)' '
	"$TRACEREC" record -e sched -o pp.tpp -- "$S/w-pingpong" 20000 >out 2>err &&
	cat out err && [ "$(wc -l <out)" = 2 ] &&
	[ "$(lost pp.tpp)" = 0 ] &&
	while read -r _ tid vol invol t; do
		want=$((vol + invol))
		got=$(count pp.tpp "e[\"type\"]==\"sched_switch\" and e[\"prev_pid\"]==$tid" 0 "$t")
		echo "tid $tid: kernel $want, recorded $got"
		[ "$want" -ge 10000 ] && [ "$got" = "$want" ] || exit 1
	done <out
'

test_expect 'pinned ping-pong (one CPU, always a runnable worker): switch-ins equal switch-outs too' '
	"$TRACEREC" record -e sched -a -C 1 -o pin.tpp -- taskset -c 1 "$S/w-pingpong" 20000 >out 2>err &&
	cat out err && [ "$(wc -l <out)" = 2 ] &&
	unst=$("$TRACEPP" info pin.tpp | awk "/^unstored:/ {print \$2} END {print 0}" | head -1) &&
	while read -r _ tid vol invol t; do
		want=$((vol + invol))
		outs=$(count pin.tpp "e[\"type\"]==\"sched_switch\" and e[\"prev_pid\"]==$tid" 0 "$t")
		ins=$(count pin.tpp "e[\"type\"]==\"sched_switch\" and e[\"next_pid\"]==$tid" 0 "$t")
		echo "tid $tid: kernel $want, recorded out $outs in $ins (unstored on the CPU: $unst)"
		# a worker woken on the idle CPU at its start or end is a switch-in
		# the kernel does not store: it must be among those reported
		[ "$want" -ge 10000 ] && [ "$outs" = "$want" ] && [ "$ins" -le "$outs" ] &&
			[ $((outs - ins)) -le "$unst" ] || exit 1
	done <out
'

test_expect '-p PID follows the process and the children it forks later' '
	sh -c "sleep 0.5; exec \"$S/w-pingpong\" 5000" >out &
	pid=$!
	"$TRACEREC" record -e sched -p $pid -o p.tpp -d 5 2>err &
	rec=$!
	wait $pid; sleep 0.3; kill -INT $rec; wait $rec; st=$?
	cat out err; [ $st = 0 ] &&
	while read -r _ tid vol invol t; do
		want=$((vol + invol))
		got=$(count p.tpp "e[\"type\"]==\"sched_switch\" and e[\"prev_pid\"]==$tid" 0 "$t")
		echo "tid $tid: kernel $want, recorded $got"
		[ "$got" = "$want" ] || exit 1
	done <out &&
	others=$(count p.tpp "e[\"type\"]==\"sched_switch\" and e[\"prev_pid\"]!=0 and e[\"next_pid\"]!=0 and e[\"prev_comm\"]!=\"w-pingpong\" and e[\"next_comm\"]!=\"w-pingpong\" and e[\"prev_comm\"]!=\"sh\" and e[\"next_comm\"]!=\"sh\" and e[\"prev_comm\"]!=\"sleep\" and e[\"next_comm\"]!=\"sleep\"") &&
	echo "switches between unrelated tasks: $others" && [ "$others" = 0 ]
'

dir=${TPP_IO_DIR:-/var/tmp}
dev=$(stat -c %d "$dir" 2>/dev/null)
if [ -z "$dev" ] || ! grep -q " $((dev >> 8)) *$((dev & 255)) " /proc/diskstats 2>/dev/null &&
	! [ -e "/sys/dev/block/$((dev >> 8)):$((dev & 255))/partition" ]; then
	test_skip 'block completions match /proc/diskstats' "$dir is on a device without diskstats"
else
test_expect 'block_rq_complete equals /proc/diskstats completions (O_DIRECT, -a -- CMD)' '
	f=$(mktemp "$dir/tpp-odirect.XXXXXX") &&
	ok=0 &&
	for try in 1 2 3; do
		"$TRACEREC" record -e block -a -o io.tpp -- "$S/w-odirect" "$f" 2000 >out 2>err || { cat err; break; }
		read -r _ maj min rd wr t0 t1 <out
		kdev=$(( (maj << 20) | min ))
		r=$(count io.tpp "e[\"type\"]==\"block_rq_complete\" and e[\"dev\"]==$kdev and \"R\" in e[\"rwbs\"]" "$t0" "$t1")
		w=$(count io.tpp "e[\"type\"]==\"block_rq_complete\" and e[\"dev\"]==$kdev and \"W\" in e[\"rwbs\"]" "$t0" "$t1")
		echo "try $try: diskstats reads $rd writes $wr; recorded $r $w; lost $(lost io.tpp)"
		# background IO racing the diskstats reads is retried, never excused
		if [ "$r" = "$rd" ] && [ "$w" = "$wr" ] && [ "$(lost io.tpp)" = 0 ] && [ "$rd" -ge 2000 ]; then ok=1; break; fi
	done
	rm -f "$f"; [ $ok = 1 ]
'
fi

test_expect 'net_dev_xmit and netif_receive_skb on lo equal /proc/net/dev packets' '
	ok=0 &&
	for try in 1 2 3; do
		"$TRACEREC" record -e net -a -o net.tpp -- "$S/w-tcp" 5000 1000 >out 2>err || { cat err; break; }
		read -r _ rx tx t0 t1 <out
		x=$(count net.tpp "e[\"type\"]==\"net_dev_xmit\" and e[\"name\"]==\"lo\"" "$t0" "$t1")
		v=$(count net.tpp "e[\"type\"]==\"netif_receive_skb\" and e[\"name\"]==\"lo\"" "$t0" "$t1")
		echo "try $try: /proc/net/dev lo rx $rx tx $tx; recorded rx $v tx $x; lost $(lost net.tpp)"
		if [ "$x" = "$tx" ] && [ "$v" = "$rx" ] && [ "$tx" -ge 10000 ] && [ "$(lost net.tpp)" = 0 ]; then ok=1; break; fi
	done
	[ $ok = 1 ]
'

test_expect 'TCP state changes of the connection are recorded (sock:inet_sock_set_state)' '
	"$TRACEREC" record -e net -a -o st.tpp -- "$S/w-tcp" 10 100 >out 2>err &&
	n=$(count st.tpp "e[\"type\"]==\"inet_sock_set_state\" and e[\"newstate\"]==1") &&
	echo "ESTABLISHED transitions: $n" && [ "$n" -ge 2 ]
'

test_done
