#!/usr/bin/env bash
# tracerec record: targets, stop conditions, production controls, and bad
# input (one clear error line, non-zero exit, what was recorded stays
# readable). Every test also checks that no tracefs instance is left behind.
. "$(dirname "$0")/lib.sh"
S=$B/samples
TFS=/sys/kernel/tracing
[ -d $TFS/instances ] || mount -t tracefs nodev $TFS 2>/dev/null

# no instance may outlive its recorder, whatever happened in the run (other
# recorders may be running: only instances of dead processes are leftovers)
no_leftovers() {
	for d in $TFS/instances/tracepp-*; do
		[ -e "$d" ] || continue
		kill -0 "${d##*-}" 2>/dev/null || { echo "left behind: $d"; return 1; }
	done
}
one_line() { [ "$(wc -l <"$1")" = 1 ] || { cat "$1"; return 1; }; }
# recording PID: wait (up to 10 s) until the recorder PID records: its
# instance has sched_switch enabled and tracing on (setup writes tracing_on 0
# first); a fixed sleep was too short under ASan on a loaded machine
recording() {
	local i d=$TFS/instances/tracepp-$1
	for i in $(seq 100); do
		[ "$(cat $d/events/sched/sched_switch/enable 2>/dev/null)" = 1 ] &&
			[ "$(cat $d/tracing_on 2>/dev/null)" = 1 ] && return 0
		sleep 0.1
	done
	echo "tracerec $1 is not recording after 10 s"; kill "$1"; return 1
}
nevents() { "$TRACEPP" info "$1" | awk '/^events:/ {print $2}'; }

if ! [ -d $TFS/instances ]; then
	test_skip 'tracerec record' 'no tracefs on this machine'
	test_done; exit
fi

test_expect '-- CMD returns the command exit status and records its exec' '
	"$TRACEREC" record -e sched -o a.tpp -- sh -c "exit 7" 2>err; st=$?
	cat err; [ $st = 7 ] && no_leftovers &&
	"$TRACEPP" dump --type=sched_process_exec a.tpp | grep -q "filename=/bin/sh\|filename=/usr/bin/sh"
'

test_expect '-- CMD that cannot run: exit 127 and one error line' '
	"$TRACEREC" record -e sched -q -o a.tpp -- /nonexistent/cmd 2>err; st=$?
	cat err; [ $st = 127 ] && one_line err && grep -q "cannot run ./nonexistent/cmd.: No such file" err &&
	no_leftovers
'

test_expect 'unknown event: one error line naming it, exit non-zero, nothing left behind' '
	! "$TRACEREC" record -e sched,nosuch:event -a -d 1 -o a.tpp 2>err &&
	one_line err && grep -q "unknown event .nosuch:event." err && no_leftovers
'

test_expect 'a PID that does not exist: one error line' '
	! "$TRACEREC" record -e sched -p 999999999 -o a.tpp 2>err &&
	one_line err && grep -q "bad pid list\|no such process" err &&
	! "$TRACEREC" record -e sched -p 4000000 -o a.tpp 2>err &&
	one_line err && grep -q "no such process: 4000000" err && no_leftovers
'

test_expect 'no tracefs: one error line' '
	! TRACEREC_TRACEFS=/nonexistent "$TRACEREC" record -e sched -a -d 1 -o a.tpp 2>err &&
	one_line err && grep -q "no tracefs" err
'

if command -v setpriv >/dev/null; then
test_expect 'no permission: one error line saying so' '
	cp "$TRACEREC" ./tr && chmod 755 . ./tr &&
	! setpriv --reuid=65534 --regid=65534 --clear-groups ./tr record -e sched -a -d 1 -o /tmp/never.tpp 2>err &&
	one_line err && grep -qi "permission" err && no_leftovers
'
else
	test_skip 'no permission: one error line saying so' 'setpriv missing'
fi

test_expect 'bad option values are refused before touching the kernel' '
	for a in "-d x" "-b 1" "-C 9x" "--max-size 0" "--flight 3q" "--filter x"; do
		"$TRACEREC" record $a -e sched -a -o a.tpp 2>err; st=$?
		echo "$a -> $st: $(cat err)"; [ $st = 2 ] && one_line err || exit 1
	done
'

test_expect 'SIGINT mid-run leaves a complete, readable file' '
	"$TRACEREC" record -e sched -a -o int.tpp 2>err &
	rec=$!; recording $rec || exit 1; "$S/w-pingpong" 5000 >/dev/null; kill -INT $rec; wait $rec; st=$?
	cat err; [ $st = 0 ] && no_leftovers &&
	n=$(sed -n "s/^tracerec: \([0-9]*\) events.*/\1/p" err) &&
	[ "$n" -gt 10000 ] && [ "$(nevents int.tpp)" = "$n" ] &&
	grep -q "^tracerec: $n events, 0 lost" err &&
	unst=$(sed -n "s/.*, \([0-9]*\) events fired but not stored by the kernel/\1/p" err) &&
	"$TRACEPP" info int.tpp >info && grep -q "^lost: *0$" info &&
	{ [ "$unst" = 0 ] || grep -q "^unstored: *$unst " info; }
'

# the sanitizers own SIGSEGV in their builds
case $B in *san*) fatal="ABRT KILL" ;; *) fatal="SEGV ABRT KILL" ;; esac
test_expect "a fatal signal ($fatal) still removes the instance" '
	for sig in $fatal; do
		"$TRACEREC" record -e sched -a -o seg.tpp 2>err &
		rec=$!; recording $rec || exit 1
		kill -$sig $rec; wait $rec; sleep 0.2; no_leftovers || exit 1
	done
'

test_expect 'a second tracer at the same time is not disturbed (nor the top-level buffer)' '
	before=$(cat $TFS/trace_clock $TFS/tracing_on $TFS/buffer_size_kb $TFS/events/enable $TFS/set_event_pid | md5sum)
	"$TRACEREC" record -e sched -a -o wide.tpp 2>err1 &
	rec=$!; recording $rec || exit 1
	"$TRACEREC" record -e sched -o own.tpp -- "$S/w-pingpong" 5000 >out 2>err2 || exit 1
	kill -INT $rec; wait $rec || exit 1
	after=$(cat $TFS/trace_clock $TFS/tracing_on $TFS/buffer_size_kb $TFS/events/enable $TFS/set_event_pid | md5sum)
	[ "$before" = "$after" ] || { echo "top-level tracefs state changed"; exit 1; }
	while read -r _ tid vol invol t; do
		for f in own.tpp wide.tpp; do
			got=$("$TRACEPP" dump --type=sched_switch "$f" | awk -v t=$tid -v e=$t "
				{ split(\$1, a, \".\"); ts = a[1] * 1000000000 + a[2] }
				ts < e / 1 && \$0 ~ (\" prev_pid=\" t \" \") { n++ } END { print n + 0 }")
			echo "$f tid $tid: kernel $((vol + invol)) recorded $got"
			[ "$got" = $((vol + invol)) ] || exit 1
		done
	done <out
	no_leftovers
'

test_expect '--max-size stops cleanly at the cap: exit 0, readable file under the cap' '
	"$TRACEREC" record -e sched -a --max-size 64K -o cap.tpp -- "$S/w-pingpong" 30000 >/dev/null 2>err; st=$?
	cat err; [ $st = 0 ] && grep -q "max-size" err &&
	size=$(stat -c %s cap.tpp) && echo "size $size" && [ "$size" -le 65536 ] &&
	[ "$(nevents cap.tpp)" -gt 1000 ] && no_leftovers
'

full=$T/../full
if mkdir -p "$full" && mount -t tmpfs -o size=256k tmpfs "$full" 2>/dev/null; then
test_expect 'a full disk: one error line, non-zero exit, the file so far stays readable' '
	"$TRACEREC" record -e sched -a -o "'"$full"'/f.tpp" -q -d 30 2>err &
	rec=$!
	while kill -0 $rec 2>/dev/null; do "$S/w-pingpong" 3000 >/dev/null; sleep 0.2; done
	wait $rec; st=$?
	cat err; [ $st != 0 ] && one_line err && grep -q "No space left" err &&
	"$TRACEPP" info "'"$full"'/f.tpp" >info; st=$?; cat info
	umount "'"$full"'"
	[ $st = 0 ] && [ "$(awk "/^events:/ {print \$2}" info)" -gt 100 ] && no_leftovers
'
else
	test_skip 'a full disk' 'cannot mount a small tmpfs'
fi

test_expect '-C 0 records CPU 0 only; --filter applies the kernel filter' '
	"$TRACEREC" record -e sched:sched_switch --filter "prev_comm == \"w-pingpong\"" -C 0 -o c.tpp \
		-a -- taskset -c 0 "$S/w-pingpong" 2000 >/dev/null 2>err &&
	cat err && "$TRACEPP" dump --format=json c.tpp >d.json &&
	python3 -c "
import json, sys
ev = [json.loads(l) for l in open(\"d.json\")]
assert len(ev) >= 2000, len(ev)
assert all(e[\"cpu\"] == 0 for e in ev), \"cpu\"
assert all(e[\"prev_comm\"] == \"w-pingpong\" for e in ev), \"filter\"
assert all(e[\"type\"] == \"sched_switch\" for e in ev)
print(len(ev), \"events\")"
'

test_expect '-e syscalls and -e SUBSYS:NAME; task names are metadata' '
	"$TRACEREC" record -e syscalls,sched:sched_process_exit -o s.tpp -- sh -c "true; true" 2>err &&
	"$TRACEPP" dump s.tpp >d.txt &&
	grep -q "sys_enter: id=" d.txt && grep -q "sys_exit: id=.* ret=" d.txt &&
	grep -q "sched_process_exit" d.txt && grep -q " sh-[0-9]* sys_enter" d.txt
'

test_expect 'flight recorder keeps only the last N seconds, written at exit' '
	# -b: room for more than a second of ping-pong per CPU, so the time bound,
	# not the buffer size, decides what is kept (the default holds ~0.5 s)
	"$TRACEREC" record -e sched -a --flight 1s -b 8192 -o fl.tpp -d 3 2>err &
	rec=$!
	# busy for as long as the recorder runs (its start-up is slower under ASan)
	while kill -0 $rec 2>/dev/null; do "$S/w-pingpong" 2000 >/dev/null; done
	wait $rec; st=$?; cat err; [ $st = 0 ] &&
	"$TRACEPP" info fl.tpp >info && cat info &&
	span=$(awk "/^span:/ {print (\$4 - \$2) / 1e9}" info) &&
	echo "span $span s" && python3 -c "import sys; s=float(sys.argv[1]); sys.exit(not (0.5 < s <= 1.05))" "$span" &&
	[ "$(nevents fl.tpp)" -gt 1000 ] && no_leftovers
'

test_expect 'flight recorder writes out what it holds on SIGUSR1' '
	"$TRACEREC" record -e sched -a --flight 4M -o fu.tpp 2>err &
	rec=$!; recording $rec || exit 1; "$S/w-pingpong" 3000 >/dev/null; kill -USR1 $rec
	# the file as it stands before the recorder stops: polled (a fixed
	# sleep was short under load), up to 10 s
	for i in $(seq 50); do
		sleep 0.2; cp fu.tpp snap.tpp && "$TRACEPP" dump --type=sched_switch snap.tpp 2>/dev/null | grep -q w-pingpong && break
	done
	kill -INT $rec; wait $rec; st=$?; cat err
	[ $st = 0 ] && "$TRACEPP" dump --type=sched_switch snap.tpp | grep -q w-pingpong &&
	"$TRACEPP" dump --type=sched_switch fu.tpp | grep -q w-pingpong && no_leftovers
'

test_expect 'lost events equal the kernel per-CPU dropped counters, and are reported' '
	"$TRACEREC" record -e sched -a -b 64 -o lost.tpp 2>err &
	rec=$!; recording $rec || exit 1
	kill -STOP $rec   # readers stall: the small buffers overflow
	"$S/w-pingpong" 20000 >/dev/null
	kill -CONT $rec; sleep 1
	dropped=$(cat $TFS/instances/tracepp-$rec/per_cpu/cpu*/stats | awk "/^dropped events:/ {n += \$3} END {print n}")
	kill -INT $rec; wait $rec; st=$?; cat err
	got=$("$TRACEPP" info lost.tpp | awk "/^lost:/ {print \$2}")
	# switches the kernel never stored are "unstored", not lost (t-record-unstored)
	unst=$(sed -n "s/.*, \([0-9]*\) events fired but not stored by the kernel/\1/p" err)
	echo "kernel dropped $dropped, never stored $unst, file says lost $got"
	[ $st = 0 ] && [ "$dropped" -gt 0 ] && [ "$got" = "$dropped" ] &&
	grep -q "lost $dropped events" err && no_leftovers
'

test_expect 'a call-heavy burst loses no function events (the runtime is drained often enough)' '
	"$TRACEREC" record -q -o calls.tpp -- "$S/s-calls-pg" 3000000 2>err; st=$?; cat err
	n=$("$TRACEPP" info calls.tpp | awk "/^events:/ {print \$2}")
	l=$("$TRACEPP" info calls.tpp | awk "/^lost:/ {print \$2}")
	echo "events $n lost $l"
	# main, loop and 3000000 leaf calls: an entry and an exit each, and the exit of the thread
	[ $st = 0 ] && [ "$n" = 6000005 ] && [ "$l" = 0 ]
'

if [ -w $TFS/uprobe_events ]; then
test_expect 'uprobe field names in the schema are the kernel ones (two probed functions)' '
	"$TRACEREC" record -q -u "$S/s-chain:[ab]" -o ch.tpp -- "$S/s-chain" >/dev/null 2>err; cat err
	"$TRACEPP" dump --format=json ch.tpp | python3 -c "
import json, sys
# and the stack pointer (and return address) tracerec fetches for pairing
want = {\"a\": [\"__probe_ip\", \"__ra\", \"__sp\"], \"b\": [\"__probe_ip\", \"__ra\", \"__sp\"],
        \"a__return\": [\"__probe_func\", \"__probe_ret_ip\", \"__sp\", \"ret\"],
        \"b__return\": [\"__probe_func\", \"__probe_ret_ip\", \"__sp\", \"ret\"]}
seen = set()
for line in sys.stdin:
    e = json.loads(line)
    f = sorted(k for k in e if k not in (\"ts\", \"ts_ns\", \"cpu\", \"tid\", \"task\", \"type\", \"sym\", \"func\"))
    print(e[\"type\"], f)
    assert want.get(e[\"type\"]) == f, e
    seen.add(e[\"type\"])
assert seen == set(want), seen
"
'

# Each recorder's own probe group (tpp_PID), looked at as soon as it is
# gone (the next recorder would clear a dead one's): the global count of
# uprobe_events moved with other suites' probes beside this one.
test_expect 'SIGINT or SIGTERM during setup leaves no probe and no instance' '
	left=
	for d in 0 0.005 0.01 0.02 0.04 0.08; do
		for sig in INT TERM; do
			"$TRACEREC" record -q -u "$S/s-calls:*" -e sched -o s.tpp -- "$S/s-calls" 100000 >/dev/null 2>err &
			rec=$!; sleep $d; kill -$sig $rec; wait $rec; echo "delay $d SIG$sig: exit $? $(cat err)"
			grep -q "^[pr]:tpp_$rec/" $TFS/uprobe_events && left="$left tpp_$rec"
			[ -e $TFS/instances/tracepp-$rec ] && left="$left instance-$rec"
		done
	done
	echo "left behind by these recorders: ${left:-nothing}"
	[ -z "$left" ] && no_leftovers
'
fi

test_expect 'tracerec list shows the groups and the kernel events' '
	"$TRACEREC" list >l && grep -q "^groups: sched block net syscalls" l && grep -q "^sched:sched_switch$" l
'

test_expect 'the summary counts every event in the file, function events included' '
	"$TRACEREC" record -e sched -o both.tpp -- "$S/s-chain-pg" > /dev/null 2> err; cat err
	said=$(sed -n "s/^tracerec: \([0-9]*\) events,.*/\1/p" err)
	info=$("$TRACEPP" info both.tpp | awk "/^events:/ {print \$2}")
	funcs=$("$TRACEPP" info --format=json both.tpp | python3 -c "import json,sys; b=json.load(sys.stdin)[\"by_type\"]; print(b.get(\"func_entry\", 0))")
	echo "summary $said, info $info, func_entry $funcs"
	[ -n "$said" ] && [ "$said" = "$info" ] && [ "$funcs" -ge 4 ]
'

test_done
