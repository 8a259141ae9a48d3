#!/usr/bin/env bash
# Analysis speed side by side with the peers, each on its own recording of
# the same workload, in events per second (events as each tool counts them):
#  1. tracepp replay  vs uftrace replay   (s-calls-pg: function entry/exit)
#  2. tracepp dump --sorted vs trace-cmd report and perf script
#     (w-pingpong: sched events, all CPUs)
#  3. tracepp latency --sched vs perf sched latency (same recordings)
#  4. peak RSS of replay, latency and sched on a BIG-event synthetic file.
# Usage: bench/b-analysis.sh [BUILD_DIR]  (N calls, ROUNDS ping-pongs, BIG, RUNS)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd)
N=${N:-1000000} ROUNDS=${ROUNDS:-100000} BIG=${BIG:-100000000} RUNS=${RUNS:-5}
W=$(mktemp -d /tmp/b-analysis.XXXXXX)
trap 'rm -rf "$W"' EXIT
TPP=$B/tracepp
ns() { date +%s%N; }
# Times are read from bash's own clock: a $(date) around each run forked and
# exec'd about 1.5 ms, charged to the tool timed, a tenth of tracepp's time.
now_us() { REPLY=${EPOCHREALTIME//[.,]/}; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() { for i in $(seq "$RUNS"); do now_us; t0=$REPLY; "$@" >/dev/null 2>&1; now_us; echo $(((REPLY - t0) * 1000)); done | median; }
rate() { python3 -c "import sys; print('%.2f' % (int(sys.argv[1]) / (int(sys.argv[2]) / 1e9) / 1e6))" "$1" "$2"; }
ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print('%.1fx' % (a / b) if b else 'n/a')" "$1" "$2"; }
events() { "$TPP" info "$1" | awk '/^events:/ {print $2}'; }

# The decoder's own rate on a file (sorted merge, no analysis): the ceiling
# for any command on it, printed so a missed target shows whose time it is.
floor() { [ -x "$B/bench/tpp-bench" ] || { echo n/a; return; }
	for i in $(seq "$RUNS"); do "$B/bench/tpp-bench" decode "$1" sorted | awk '{print $2}'; done | median |
		awk '{printf "%.2f", $1 / 1e6}'; }

# 1. replay
"$B/tracerec" record -q -o "$W/f.tpp" -- "$B/samples/s-calls-pg" "$N" >/dev/null 2>&1
ev=$(events "$W/f.tpp")
echo "b-analysis: decoder alone (tpp-bench decode sorted): $(floor "$W/f.tpp") M ev/s on the replay file"
t=$(wall "$TPP" replay "$W/f.tpp")
tp=$(rate "$ev" "$t")
if command -v uftrace >/dev/null; then
	uftrace record --no-libcall --no-event -d "$W/uf" "$B/samples/s-calls-pg" "$N" >/dev/null 2>&1
	# uftrace folds a leaf call into one line: count the records behind
	# the lines (2 for "f();", 1 for "f() {" and "}")
	uev=$(uftrace replay -d "$W/uf" 2>/dev/null | awk -F'|' 'NF > 1 {n += ($2 ~ /\);/) ? 2 : 1} END {print n + 0}')
	ut=$(wall uftrace replay -d "$W/uf")
	up=$(rate "$uev" "$ut")
	echo "b-analysis: replay: tracepp $tp M ev/s ($ev events), uftrace replay $up M ev/s ($uev records): $(ratio "$tp" "$up")"
else
	echo "b-analysis: replay: tracepp $tp M ev/s; uftrace not installed"
fi

# 2. sorted dump of kernel events
"$B/tracerec" record -q -a -e sched -o "$W/s.tpp" -- "$B/samples/w-pingpong" "$ROUNDS" >/dev/null 2>&1
ev=$(events "$W/s.tpp")
t=$(wall "$TPP" dump --sorted "$W/s.tpp")
dp=$(rate "$ev" "$t")
line="b-analysis: sorted dump: tracepp $dp M ev/s ($ev events)"
if command -v trace-cmd >/dev/null; then
	# plain trace-cmd record fails on this kernel (EPERM on ftrace_enabled); -d --no-filter works
	# it still exits 1 here (it cannot open set_ftrace_filter): judge by the file it wrote
	# one retry: a recording that another tracer disturbed can come out empty
	tev=0
	for try in 1 2; do
		[ "$tev" -gt 0 ] && break
		(cd "$W" && trace-cmd record -q -d --no-filter -e sched -o "$W/tc.dat" "$B/samples/w-pingpong" "$ROUNDS" >/dev/null 2>&1)
		tev=$(trace-cmd report -i "$W/tc.dat" 2>/dev/null | grep -c 'sched_')
	done
	if [ "$tev" -gt 0 ]; then
		tt=$(wall trace-cmd report -i "$W/tc.dat")
		tcp=$(rate "$tev" "$tt")
		line="$line, trace-cmd report $tcp M ev/s ($tev): $(ratio "$dp" "$tcp")"
	else
		line="$line, trace-cmd record refused on this kernel (no report to time)"
	fi
fi
if command -v perf >/dev/null; then
	perf sched record -q -o "$W/perf.data" -- "$B/samples/w-pingpong" "$ROUNDS" >/dev/null 2>&1
	pev=$(perf script -i "$W/perf.data" 2>/dev/null | wc -l)
	pt=$(wall perf script -i "$W/perf.data")
	pp=$(rate "$pev" "$pt")
	line="$line, perf script $pp M ev/s ($pev): $(ratio "$dp" "$pp")"
fi
echo "$line"

# 3. scheduler latency
echo "b-analysis: decoder alone (tpp-bench decode sorted): $(floor "$W/s.tpp") M ev/s on the sched file"
t=$(wall "$TPP" latency --sched --no-hist "$W/s.tpp")
lp=$(rate "$ev" "$t")
line="b-analysis: sched latency: tracepp latency --sched $lp M ev/s"
if [ -e "$W/perf.data" ]; then
	pt=$(wall perf sched latency -i "$W/perf.data")
	pl=$(rate "$pev" "$pt")
	line="$line, perf sched latency $pl M ev/s: $(ratio "$lp" "$pl")"
fi
echo "$line"

# 4. bounded memory on a big file
if [ -x "$B/bench/tpp-gen" ] && [ "$BIG" -gt 0 ]; then
	"$B/bench/tpp-gen" -o "$W/big.tpp" -n "$BIG" --mix func,sched,block,net >/dev/null 2>&1
	for c in replay "latency --no-hist" sched callgraph; do
		t0=$(ns)
		/usr/bin/time -f %M -o "$W/rss" "$TPP" $c "$W/big.tpp" >/dev/null 2>&1
		t=$(($(ns) - t0))
		echo "b-analysis: $BIG events: tracepp $c: $(rate "$BIG" "$t") M ev/s, peak RSS $(( $(cat "$W/rss") / 1024 )) MiB"
	done
fi
