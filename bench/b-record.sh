#!/usr/bin/env bash
# Kernel-event recording, side by side in one run: tracerec vs
# `trace-cmd record -d --no-filter` and `perf record -a`, same events, same
# workloads:
#   switch: w-pingpong with both threads pinned to CPU 0 (-e sched)
#   io:     w-odirect, 4 KiB O_DIRECT writes and reads (-e block)
# Each recorder runs system-wide in the background around the workload.
# Prints "name: value" lines: workload slowdown per tool, bytes per event,
# recorder CPU time per million events, events captured vs the kernel's
# count (the workload's own /proc counters: switches per thread, diskstats).
# Fair play: repetitions interleave the tools (rep 1 of every tool, then rep
# 2 ...) so drifting background load hits all alike; the workload runs on
# CPU 0 and every recorder (all its threads and children) on CPU 1; slowdowns
# are medians, with the spread (min..max) over the repetitions beside them.
# The switch workload's slowdown is given twice: in wall time (medians), and
# in the CPU time the workload's process used (median of each repetition's
# ratio to the untraced run of that repetition): the tracing work done in the
# workload's own context, which the other programs of a busy machine do not
# inflate as they do its wall time.
# The floor: "tracefs", a private instance with the events tracerec enables
# (and the task events it reads for names), every CPU's trace_pipe_raw read
# by cat: the kernel's own cost of writing them, nothing of a recorder's.
# Where a recorder's cost goes besides the events themselves: its wake-ups
# (voluntary context switches of all its threads) and the irq_work
# interrupts on the workload's CPU (the ring buffer wakes a waiting reader
# through one) per run.
# Knobs: ROUNDS (default 50000), IOS (default 3000), REPS (default 5);
# TRACEREC_B=another tracerec (e.g. main's build) measured beside, as
# "tracerec_b", for before/after numbers from the same run.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=${TPP_B:-$TOP/build}
TRACEREC=$B/tracerec TRACEPP=$B/tracepp S=$B/samples
ROUNDS=${ROUNDS:-50000} IOS=${IOS:-3000} REPS=${REPS:-5}
W=$(mktemp -d /tmp/tpp-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
have_tc=1 have_perf=1
command -v trace-cmd >/dev/null || { have_tc=0; echo "# trace-cmd missing: its columns are skipped"; }
command -v perf >/dev/null || { have_perf=0; echo "# perf missing: its columns are skipped"; }
[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
# The interpreter itself, not a wrapper: a shim (pyenv's is a shell script
# running helpers before it execs python) leaves its own children's CPU in
# RUSAGE_CHILDREN, ~65 ms here, which was charged to every recorder.
PY=$(python3 -c 'import sys; print(sys.executable)')
# workload CPU and recorder CPU
if [ "$(nproc)" -ge 2 ]; then WL_CPU=0 REC_PIN="taskset -c 1"; else WL_CPU=0 REC_PIN=; fi

# bg_rusage OUTFILE CMD...: runs CMD in the background; when it exits, its
# CPU time (user+sys, all its threads and waited-for children) and its
# voluntary context switches (its wake-ups) go to OUTFILE.
bg_rusage() {
	local out=$1; shift
	$REC_PIN "$PY" -c '
import os, resource, signal, subprocess, sys
p = subprocess.Popen(sys.argv[2:])
for s in (signal.SIGINT, signal.SIGTERM):
    signal.signal(s, lambda n, f: p.send_signal(signal.SIGINT))
while True:
    try:
        p.wait(); break
    except InterruptedError:
        pass
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.6f %d\n" % (r.ru_utime + r.ru_stime, r.ru_nvcsw))' "$out" "$@" &
	BG=$!
}

# events in a recording, per tool
nevents() {
	case $1 in
	tracerec*) "$TRACEPP" info "$2" | awk '/^events:/ {print $2}' ;;
	trace-cmd) trace-cmd report -i "$2" 2>/dev/null | grep -c ': [a-z_]*: ' ;;
	perf) perf script -i "$2" 2>/dev/null | wc -l ;;
	esac
}

# Events as "TS_NS TYPE FIELDS..." text, uniform over tools (for the checks)
as_text() {
	case $1 in
	tracerec*) "$TRACEPP" dump --format=json "$2" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == "sched_switch": print(e["ts"], "sched_switch", "prev_pid=%d" % e["prev_pid"])
    elif e["type"] == "block_rq_complete": print(e["ts"], "block_rq_complete", "%d,%d" % (e["dev"] >> 20, e["dev"] & 0xfffff), e["rwbs"])' ;;
	trace-cmd) trace-cmd report -t -i "$2" 2>/dev/null | python3 -c '
import re, sys
for l in sys.stdin:
    m = re.search(r"\]\s+(\d+)\.(\d+): (\w+):\s+(.*)", l)
    if not m: continue
    ts = int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, "0")[:9])
    ev, rest = m.group(3), m.group(4)
    if ev == "sched_switch":
        p = re.search(r"prev_pid=(\d+)", rest) or re.search(r":(\d+) \[", rest)
        print(ts, ev, "prev_pid=%s" % p.group(1))
    elif ev == "block_rq_complete":
        f = rest.split()
        print(ts, ev, f[0], f[1])' ;;
	perf) perf script --ns -i "$2" -F time,event,trace 2>/dev/null | python3 -c '
import re, sys
for l in sys.stdin:
    m = re.match(r"\s*(\d+)\.(\d+):\s+(\S+):\s+(.*)", l)
    if not m: continue
    ts = int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, "0")[:9])
    ev, rest = m.group(3).split(":")[-1], m.group(4)
    if ev == "sched_switch":
        p = re.search(r"prev_pid=(\d+)", rest)
        print(ts, ev, "prev_pid=%s" % p.group(1))
    elif ev == "block_rq_complete":
        f = rest.split()
        print(ts, ev, f[0], f[1])' ;;
	esac
}

# tracerec's events per group (recorder/event_select.c), and the task events
# it reads for names
tfs_events() {
	case $1 in
	sched) echo sched/sched_switch sched/sched_wakeup sched/sched_wakeup_new sched/sched_migrate_task \
		sched/sched_process_fork sched/sched_process_exec sched/sched_process_exit sched/sched_stat_runtime ;;
	block) echo block/block_rq_insert block/block_rq_issue block/block_rq_complete ;;
	esac
	echo task/task_newtask task/task_rename sched/sched_process_exec
}
TI=/sys/kernel/tracing/instances/tpp-bench-$$ CATS=
tfs_off() {
	[ -n "$CATS" ] && { kill $CATS 2>/dev/null; wait $CATS 2>/dev/null; CATS=; }
	[ -d "$TI" ] && { echo 0 >"$TI/tracing_on"; echo 0 >"$TI/events/enable"; rmdir "$TI"; }
}
trap 'tfs_off; rm -rf "$W"' EXIT
irq_work() { awk -v c=$((WL_CPU + 2)) '$1 == "IWI:" {print $c}' /proc/interrupts; }

# start_tool TOOL EVENTS FILE: system-wide recorder in the background
start_tool() {
	local ev
	case $1 in
	tracefs)
		mkdir "$TI" && echo mono >"$TI/trace_clock"
		for ev in $(tfs_events "$2"); do [ -d "$TI/events/$ev" ] && echo 1 >"$TI/events/$ev/enable"; done
		for ev in "$TI"/per_cpu/cpu*; do $REC_PIN cat "$ev/trace_pipe_raw" >/dev/null & CATS="$CATS $!"; done
		BG= ;;
	tracerec) bg_rusage "$W/cpu" "$TRACEREC" record -q -a -e "$2" -o "$3" ;;
	tracerec_b) bg_rusage "$W/cpu" "$TRACEREC_B" record -q -a -e "$2" -o "$3" ;;
	trace-cmd)
		ev=$(echo "$2" | sed 's/\(^\|,\)/ -e /g')
		# (it complains about ftrace files this kernel refuses, and goes on)
		bg_rusage "$W/cpu" trace-cmd record -q -d --no-filter -C mono $ev -o "$3" >/dev/null 2>&1 ;;
	perf)
		case $2 in sched) ev="sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new,sched:sched_migrate_task,sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit,sched:sched_stat_runtime" ;;
		block) ev="block:block_rq_insert,block:block_rq_issue,block:block_rq_complete" ;; esac
		bg_rusage "$W/cpu" perf record -q -a -k CLOCK_MONOTONIC -e "$ev" -o "$3" ;;
	none) BG= ;;
	esac
	sleep 1 # setup done (trace-cmd and perf need a moment)
}
stop_tool() { [ -n "$BG" ] && { kill -INT "$BG"; wait "$BG"; }; tfs_off; }

tools="none tracefs tracerec"
[ -n "${TRACEREC_B:-}" ] && tools="$tools tracerec_b"
[ $have_tc = 1 ] && tools="$tools trace-cmd"
[ $have_perf = 1 ] && tools="$tools perf"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "# switch workload: w-pingpong $ROUNDS rounds on CPU $WL_CPU; io: w-odirect $IOS x 4 KiB on CPU $WL_CPU;" \
	"recorders ${REC_PIN:-unpinned}; $REPS interleaved repetitions"
for wl in switch io; do
	for tool in $tools; do : >"$W/times.$tool"; : >"$W/acc.$tool"; : >"$W/cpus.$tool"; : >"$W/iwi.$tool"; done
	for rep in $(seq "$REPS"); do
		for tool in $tools; do
			f=$W/$tool.$wl.$rep; rm -f "$f" "$W/cpu"
			start_tool $tool $([ $wl = switch ] && echo sched || echo block) "$f"
			iw0=$(irq_work)
			if [ $wl = switch ]; then
				W_TIME=1 taskset -c $WL_CPU "$S/w-pingpong" "$ROUNDS" >"$W/out" 2>"$W/err"
				awk '/^elapsed_ns/ {print $2}' "$W/err" >>"$W/times.$tool"
				awk '/^cpu_ns/ {print $2}' "$W/err" >>"$W/cpus.$tool"
			else
				taskset -c $WL_CPU "$S/w-odirect" "$W/io.file" "$IOS" >"$W/out"
				awk '{print $7 - $6}' "$W/out" >>"$W/times.$tool"
			fi
			echo $(($(irq_work) - ${iw0:-0})) >>"$W/iwi.$tool"
			stop_tool
			[ $tool = none ] || [ $tool = tracefs ] && continue
			n=$(nevents $tool "$f")
			as_text $tool "$f" >"$W/txt"
			cap=0 want=0
			if [ $wl = switch ]; then
				while read -r _ tid vol invol t; do
					want=$((want + vol + invol))
					cap=$((cap + $(awk -v p="prev_pid=$tid" -v t="$t" '$2 == "sched_switch" && $3 == p && $1 < t' "$W/txt" | wc -l)))
				done <"$W/out"
			else
				read -r _ maj min rd wr t0 t1 <"$W/out"
				want=$((rd + wr))
				cap=$(awk -v d="$maj,$min" -v a="$t0" -v b="$t1" '$2 == "block_rq_complete" && $3 == d && $1 > a && $1 < b && $4 ~ /[RW]/' "$W/txt" | wc -l)
			fi
			# per rep: recorder CPU s, events, bytes, captured, kernel's count, wake-ups
			read -r rcpu rvcs <"$W/cpu"
			echo "$rcpu $n $(stat -c %s "$f") $cap $want $rvcs" >>"$W/acc.$tool"
			rm -f "$f"
		done
	done
	base=$(median <"$W/times.none")
	echo "$wl.none.workload_ms: $(awk -v t="$base" 'BEGIN {printf "%.1f", t / 1e6}')" \
		"($(sort -n "$W/times.none" | awk 'NR == 1 {a = $1} END {printf "%.1f..%.1f", a / 1e6, $1 / 1e6}'))"
	for tool in $tools; do
		[ $tool = none ] && continue
		echo "$wl.$tool.irq_work_per_run: $(median <"$W/iwi.$tool") (on the workload's CPU; none: $(median <"$W/iwi.none"))"
		if [ $tool = tracefs ]; then
			t=$(median <"$W/times.$tool")
			echo "$wl.$tool.slowdown: $(awk -v t="$t" -v b="$base" 'BEGIN {printf "%.3f", t / b}')"
			cs=0
			if [ -s "$W/cpus.$tool" ]; then
				cs=$(paste "$W/cpus.$tool" "$W/cpus.none" | awk '$2 > 0 {print $1 / $2}' | median)
				echo "$wl.$tool.cpu_slowdown: $(awk -v c="$cs" 'BEGIN {printf "%.3f", c}')"
			fi
			eval "r_${wl}_${tool}=\"$t 0 0 0 $cs\""
			continue
		fi
		echo "$wl.$tool.wakeups_per_run: $(awk '{print $6}' "$W/acc.$tool" | median)"
		t=$(median <"$W/times.$tool")
		read -r cpu_sum ev_sum bytes_sum cap want < <(awk '{for (i = 1; i <= 5; i++) s[i] += $i}
			END {printf "%.6f %d %d %d %d\n", s[1], s[2], s[3], s[4], s[5]}' "$W/acc.$tool")
		echo "$wl.$tool.slowdown: $(awk -v t="$t" -v b="$base" 'BEGIN {printf "%.3f", t / b}')"
		echo "$wl.$tool.slowdown_spread: $(sort -n "$W/times.$tool" | awk -v b="$base" 'NR == 1 {a = $1} END {printf "%.3f..%.3f", a / b, $1 / b}')"
		cs=
		if [ -s "$W/cpus.$tool" ]; then
			cs=$(paste "$W/cpus.$tool" "$W/cpus.none" | awk '$2 > 0 {print $1 / $2}' | median)
			echo "$wl.$tool.cpu_slowdown: $(awk -v c="$cs" 'BEGIN {printf "%.3f", c}')" \
				"($(paste "$W/cpus.$tool" "$W/cpus.none" | awk '$2 > 0 {print $1 / $2}' | sort -n | awk 'NR == 1 {a = $1} END {printf "%.3f..%.3f", a, $1}'))"
		fi
		echo "$wl.$tool.bytes_per_event: $(awk -v a="$bytes_sum" -v n="$ev_sum" 'BEGIN {printf "%.2f", n ? a / n : 0}')"
		echo "$wl.$tool.cpu_s_per_Mevent: $(awk -v c="$cpu_sum" -v n="$ev_sum" 'BEGIN {printf "%.3f", n ? c / n * 1e6 : 0}')"
		echo "$wl.$tool.cpu_ms_per_run: $(awk '{print $1 * 1000}' "$W/acc.$tool" | median)" \
			"($(awk '{print $1 * 1000}' "$W/acc.$tool" | sort -n | awk 'NR == 1 {a = $1} END {printf "%.1f..%.1f", a, $1}'))"
		echo "$wl.$tool.captured_vs_kernel: $cap/$want"
		eval "r_${wl}_${tool//-/_}=\"$t $bytes_sum $ev_sum $cpu_sum ${cs:-0}\""
	done
	# ratios: tracerec against each peer (< 1 is better, except captured)
	for peer in tracefs trace-cmd perf tracerec_b; do
		v=r_${wl}_${peer//-/_}; [ -n "${!v:-}" ] || continue
		read -r tp bp np cp sp <<<"${!v}"
		v=r_${wl}_tracerec; read -r tt bt nt ct st <<<"${!v}"
		# a peer whose median is not above the baseline gives no overhead to divide by
		echo "$wl.ratio_vs_$peer.overhead: $(awk -v a="$tt" -v b="$tp" -v z="$base" 'BEGIN {d = b - z; if (d > 0) printf "%.2f", (a - z) / d; else print "n/a (peer within noise)"}')"
		[ "$sp" != 0 ] && echo "$wl.ratio_vs_$peer.cpu_overhead: $(awk -v a="$st" -v b="$sp" 'BEGIN {if (b > 1) printf "%.2f", (a - 1) / (b - 1); else print "n/a (peer within noise)"}')"
		[ $peer = tracefs ] && continue
		echo "$wl.ratio_vs_$peer.bytes_per_event: $(awk -v a="$bt" -v an="$nt" -v b="$bp" -v bn="$np" 'BEGIN {printf "%.2f", (a / an) / (b / bn)}')"
		echo "$wl.ratio_vs_$peer.cpu_per_event: $(awk -v a="$ct" -v an="$nt" -v b="$cp" -v bn="$np" 'BEGIN {printf "%.2f", (a / an) / (b / bn)}')"
	done
done
rm -f "$W/io.file"
