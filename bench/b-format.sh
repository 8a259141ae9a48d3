#!/usr/bin/env bash
# The file format against peer formats, same events, same run:
#  - bytes per event: function entry/exit (tracerec vs uftrace's data) and
#    scheduler events (tracerec vs trace-cmd's trace.dat, zstd-compressed);
#  - decode rate (read + verify + decompress + decode to typed events) vs
#    `uftrace report` and `trace-cmd report` on the same recordings;
#  - encode rate of the writer alone, one core.
# Usage: bench/b-format.sh   (B=build dir; N calls, R ping-pong rounds)
set -u
TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
B=${B:-$TOP/build}
N=${N:-1000000} R=${R:-100000}
W=$(mktemp -d /tmp/b-format.XXXXXX)
trap 'rm -rf "$W"' EXIT
ns() { date +%s%N; }
events() { "$B/tracepp" info --format=json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])'; }
rate() { python3 -c "import sys; n, t = int(sys.argv[1]), int(sys.argv[2]); print('%.1f' % (n / (t / 1e9) / 1e6))" "$1" "$2"; }
ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }
bpe() { python3 -c "import sys; print('%.2f' % (int(sys.argv[1]) / int(sys.argv[2])))" "$1" "$2"; }

echo "# function entry/exit: samples/src/s-calls.c -pg, $N calls"
"$B/tracerec" record -q -o "$W/f.tpp" -- "$B/samples/s-calls-pg" "$N" >/dev/null 2>&1
fe=$(events "$W/f.tpp") fb=$(stat -c %s "$W/f.tpp")
t0=$(ns); "$B/bench/tpp-bench" decode "$W/f.tpp" >/dev/null; ft=$(($(ns) - t0))
echo "tracerec: $fe events, $(bpe "$fb" "$fe") bytes/event, decode $(rate "$fe" "$ft") M events/s"
if command -v uftrace >/dev/null; then
	uftrace record -d "$W/uf" "$B/samples/s-calls-pg" "$N" >/dev/null 2>&1
	ue=$(uftrace dump -d "$W/uf" 2>/dev/null | grep -cE ': \[(entry|exit ?)\] ')
	ub=$(du -sb "$W/uf/"[0-9]*.dat | awk '{s += $1} END {print s}')
	t0=$(ns); uftrace report -d "$W/uf" --no-pager >/dev/null 2>&1; ut=$(($(ns) - t0))
	echo "uftrace:  $ue events, $(bpe "$ub" "$ue") bytes/event, report $(rate "$ue" "$ut") M events/s"
	echo "ratio func bytes/event tracerec/uftrace: $(ratio "$(bpe "$fb" "$fe")" "$(bpe "$ub" "$ue")") (target <= 2 bytes: $(bpe "$fb" "$fe"))"
	echo "ratio func decode rate tracerec/uftrace-report: $(ratio "$(rate "$fe" "$ft")" "$(rate "$ue" "$ut")")"
fi

echo "# scheduler: samples/src/w-pingpong.c, $R rounds on one CPU"
EV=sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new,sched:sched_migrate_task
"$B/tracerec" record -q -e "$EV" -o "$W/s.tpp" -- taskset -c 0 "$B/samples/w-pingpong" "$R" >/dev/null 2>&1
se=$(events "$W/s.tpp") sb=$(stat -c %s "$W/s.tpp")
t0=$(ns); "$B/bench/tpp-bench" decode "$W/s.tpp" sorted >/dev/null; st=$(($(ns) - t0))
echo "tracerec:  $se events, $(bpe "$sb" "$se") bytes/event, sorted decode $(rate "$se" "$st") M events/s"
if command -v trace-cmd >/dev/null; then
	(cd "$W" && trace-cmd record -d --no-filter -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_wakeup_new \
		-e sched:sched_migrate_task -o tc.dat taskset -c 0 "$B/samples/w-pingpong" "$R" >/dev/null 2>&1)
	t0=$(ns); te=$(trace-cmd report "$W/tc.dat" 2>/dev/null | grep -cE ' sched_(switch|wakeup|wakeup_new|migrate_task):'); tt=$(($(ns) - t0))
	tb=$(stat -c %s "$W/tc.dat")
	echo "trace-cmd: $te events, $(bpe "$tb" "$te") bytes/event, report $(rate "$te" "$tt") M events/s"
	echo "ratio sched bytes/event tracerec/trace-cmd: $(ratio "$(bpe "$sb" "$se")" "$(bpe "$tb" "$te")") (target <= 0.75; <= 3 bytes: $(bpe "$sb" "$se"))"
	echo "ratio sched decode rate tracerec/trace-cmd-report: $(ratio "$(rate "$se" "$st")" "$(rate "$te" "$tt")")"
fi

echo "# writer alone and decoder alone, synthetic function events, one core"
"$B/bench/tpp-bench" encode "$W/e.tpp" 20000000
"$B/bench/tpp-bench" decode "$W/e.tpp"
"$B/bench/tpp-gen" -o "$W/m.tpp" -n 20000000 2>/dev/null
echo "mixed func/sched/block/net: $("$B/bench/tpp-bench" decode "$W/m.tpp")"
