#!/usr/bin/env bash
# Events the kernel counts but no ring buffer stores (on this VM kernel: the
# sched_switch of a CPU leaving idle) must show up as unstored, never vanish,
# and never be called lost (nothing was dropped from the ring buffer).
# Truth: each task switched in on a CPU is switched out of it again, so on a
# CPU the stored switch-outs of real tasks (prev_pid != 0, always stored)
# equal the switch-ins (next_pid != 0) stored plus those the recorder reports
# unstored, within a margin: +2 for the task running when recording starts
# (switched out, its switch-in unrecorded) and the one running at the end.
# That side is the promise (nothing lost silently) and stays tight. The other
# side is looser: the counters run from before tracing_on=1 to after
# tracing_on=0, and those writes can block, so switches fired while the ring
# buffer is off are counted too. The count errs only towards reporting more;
# measured over 15 runs up to 16 of ~270 (6%): allowed 10% of the switch-outs
# plus 4. Reading the counters exactly at the tracing_on edges would remove it.
# san: skip
. "$(dirname "$0")/lib.sh"
S=$B/samples

[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
if ! [ -d /sys/kernel/tracing/instances ] || ! command -v taskset >/dev/null; then
	test_skip 'unstored events are counted' 'no tracefs or no taskset on this machine'
	test_done; exit
fi
if [ "$(nproc)" -lt 2 ]; then
	test_skip 'unstored events are counted' 'needs 2 CPUs'
	test_done; exit
fi

# balance FILE CPU [TID [UPTO]]: "outs ins unstored tid_outs tid_ins" on CPU
balance() {
	"$TRACEPP" info --format=json "$1" >info.json &&
	"$TRACEPP" dump --format=json "$1" | python3 -c '
import json, sys
cpu, tid = int(sys.argv[1]), int(sys.argv[2])
upto = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else 1 << 64
o = i = to = ti = 0
for line in sys.stdin:
    e = json.loads(line)
    if e["type"] != "sched_switch" or e["cpu"] != cpu:
        continue
    o += e["prev_pid"] != 0
    i += e["next_pid"] != 0
    if e["ts"] < upto:
        to += e["prev_pid"] == tid
        ti += e["next_pid"] == tid
info = json.load(open("info.json"))
lost = sum(l["count"] for l in info.get("unstored_by_stream", []) if l["stream"] == cpu)
print(o, i, lost, to, ti)' "$2" "${3:-0}" "${4:-}"
}

test_expect 'nap workload (idles): stored switch-ins + reported unstored = switch-outs' '
	"$TRACEREC" record -a -e sched:sched_switch -o nap.tpp -- taskset -c 1 "$S/w-nap" 200 >out 2>err &&
	cat out err &&
	read -r _ tid v1 n1 t0 t1 < <(grep ^task out) &&
	read -r o i lost to ti < <(balance nap.tpp 1 "$tid") &&
	echo "cpu 1: outs $o, ins $i, unstored $lost; w-nap outs $to ins $ti (/proc $((v1 + n1)))" &&
	total=$("$TRACEPP" info nap.tpp | awk "/^unstored:/ {print \$2}") &&
	grep -q "recorder CPU .*, $total events fired but not stored by the kernel" err &&
	d=$((o - i - lost)) && [ $d -ge $((-4 - o / 10)) ] && [ $d -le 2 ] &&
	[ "$to" -ge 200 ] && [ $((ti + lost)) -ge "$to" ]
'

test_expect 'nap workload: tracepp info shows the unstored (not as lost); perf stat context-switches bounds them' '
	if ! command -v perf >/dev/null; then echo "perf missing: only the note is checked"; perf() { shift 7; "$@"; }; fi
	perf stat -e context-switches -C 1 -x, -o ps.out -- \
		"$TRACEREC" record -a -C 1 -e sched:sched_switch -o nap.tpp -- taskset -c 1 "$S/w-nap" 200 >out 2>err &&
	cat err && lost=$("$TRACEPP" info nap.tpp | awk "/^unstored:/ {print \$2}") &&
	"$TRACEPP" info nap.tpp | grep -q "^lost: *0$" &&
	"$TRACEPP" dump --format=json nap.tpp | grep -c sched_switch >n &&
	stored=$(cat n) && echo "stored $stored unstored $lost" &&
	grep -q "recorder CPU .*, $lost events fired but not stored by the kernel" err &&
	if [ -s ps.out ]; then
		k=$(awk -F, "/context-switches/ {print \$1}" ps.out)
		echo "perf stat (a wider window): $k"
		[ $((stored + lost)) -le "$k" ]
	fi
'

test_expect 'ping-pong pinned to one CPU (busy): switch-outs == /proc, missing switch-ins all reported' '
	"$TRACEREC" record -a -C 1 -e sched:sched_switch -o pp.tpp -- taskset -c 1 "$S/w-pingpong" 20000 >out 2>err &&
	cat out err &&
	while read -r _ tid vol invol t; do
		read -r o i lost to ti < <(balance pp.tpp 1 "$tid" "$t")
		echo "tid $tid: /proc $((vol + invol)), outs $to, ins $ti; cpu 1 unstored $lost, outs-ins $((o - i))"
		# a worker can still be woken on an idle CPU at its start or end:
		# any switch-in not stored must be among those reported
		[ "$to" = $((vol + invol)) ] && [ "$ti" -le "$to" ] && [ $((to - ti)) -le "$lost" ] &&
		[ "$to" -ge 20000 ] || exit 1
		d=$((o - i - lost)); [ $d -ge $((-4 - o / 10)) ] && [ $d -le 2 ] || exit 1
	done <out
'

test_expect 'pid-filtered recording says the check was not made' '
	"$TRACEREC" record -e sched:sched_switch -o p.tpp -- "$S/w-nap" 5 >out 2>err &&
	cat err && grep -q "fired but not stored: not checked (only some tasks are recorded)" err
'

# A perf counter per tracepoint costs ~0.1 us per event in the traced task:
# only on request. The default holds sched_switch against the context-switch
# count (the tests above), and says when nothing else can be checked.
test_expect '--count-fired checks any tracepoint; by default only sched_switch is checked' '
	"$TRACEREC" record -a -C 1 -e sched:sched_wakeup -o w.tpp -- taskset -c 1 "$S/w-nap" 20 >out 2>err &&
	cat err && grep -q "fired but not stored: not checked (only sched_switch is checked by default; --count-fired" err &&
	"$TRACEREC" record -a -C 1 -e sched:sched_wakeup --count-fired -o w.tpp -- taskset -c 1 "$S/w-nap" 20 >out 2>err &&
	cat err && grep -q "recorder CPU .*, [0-9]* events fired but not stored by the kernel$" err &&
	"$TRACEREC" record -a -C 1 -e sched --count-fired -o s.tpp -- taskset -c 1 "$S/w-nap" 200 >out 2>err &&
	cat err && read -r o i lost _ < <(balance s.tpp 1 0) &&
	echo "cpu 1 (every sched tracepoint counted): outs $o, ins $i, unstored $lost" &&
	d=$((o - i - lost)) && [ $d -ge $((-4 - o / 10)) ] && [ $d -le 2 ]
'

test_expect 'no counters, probe or instance left behind' '
	! ls /sys/kernel/tracing/instances | grep -q "^tracepp-$$" &&
	for d in /sys/kernel/tracing/instances/tracepp-*; do
		[ -e "$d" ] || continue
		kill -0 "${d##*-}" 2>/dev/null || { echo "left behind: $d"; exit 1; }
	done
'

test_done
