#!/usr/bin/env bash
# Analysis speed side by side with the peers, each on its own recording of
# the same workload, in events per second (events as each tool counts them):
#  1. tracepp replay  vs uftrace replay   (s-calls-pg: function entry/exit)
#  2. tracepp dump --sorted vs trace-cmd report and perf script
#     (w-pingpong: sched events, all CPUs)
#  3. tracepp latency --sched vs perf sched latency (same recordings)
#  4. peak RSS of replay, latency and sched on a BIG-event synthetic file.
# Each comparison alternates the two tools' runs and takes medians.
# Usage: bench/b-analysis.sh [BUILD_DIR]  (N calls, ROUNDS ping-pongs, BIG, RUNS,
# LRUNS: the latency pairs)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd)
N=${N:-1000000} ROUNDS=${ROUNDS:-100000} BIG=${BIG:-100000000} RUNS=${RUNS:-7}
# tracepp's latency run lasts ~9 ms, perf's ~130: the machine's phases move
# the short one's median most, and 15 pairs cost two seconds
LRUNS=${LRUNS:-15}
W=$(mktemp -d /tmp/b-analysis.XXXXXX)
trap 'rm -rf "$W"' EXIT
TPP=$B/tracepp
ns() { date +%s%N; }
# Times are read from bash's own clock: a $(date) around each run forked and
# exec'd about 1.5 ms, charged to the tool timed, a tenth of tracepp's time.
now_us() { REPLY=${EPOCHREALTIME//[.,]/}; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() { for i in $(seq "$RUNS"); do now_us; t0=$REPLY; "$@" >/dev/null 2>&1; now_us; echo $(((REPLY - t0) * 1000)); done | median; }
# pair CMD_A... -- CMD_B...: the two run alternately NP (RUNS) times; TA and TB
# are their median wall times in ns. Alternating spreads the drift of this
# shared machine over both tools, where all of A then all of B did not.
pair() {
	local a=() ta tb i t0
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	ta=$(mktemp) tb=$(mktemp)
	for i in $(seq "${NP:-$RUNS}"); do
		now_us; t0=$REPLY; "${a[@]}" >/dev/null 2>&1; now_us; echo $(((REPLY - t0) * 1000)) >>"$ta"
		now_us; t0=$REPLY; "$@" >/dev/null 2>&1; now_us; echo $(((REPLY - t0) * 1000)) >>"$tb"
	done
	TA=$(median <"$ta") TB=$(median <"$tb")
	rm -f "$ta" "$tb"
}
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
if command -v uftrace >/dev/null; then
	uftrace record --no-libcall --no-event -d "$W/uf" "$B/samples/s-calls-pg" "$N" >/dev/null 2>&1
	# uftrace folds a leaf call into one line: count the records behind
	# the lines (2 for "f();", 1 for "f() {" and "}")
	uev=$(uftrace replay -d "$W/uf" 2>/dev/null | awk -F'|' 'NF > 1 {n += ($2 ~ /\);/) ? 2 : 1} END {print n + 0}')
	pair "$TPP" replay "$W/f.tpp" -- uftrace replay -d "$W/uf"
	tp=$(rate "$ev" "$TA")
	up=$(rate "$uev" "$TB")
	echo "b-analysis: replay: tracepp $tp M ev/s ($ev events), uftrace replay $up M ev/s ($uev records): $(ratio "$tp" "$up")"
else
	echo "b-analysis: replay: tracepp $(rate "$ev" "$(wall "$TPP" replay "$W/f.tpp")") M ev/s; uftrace not installed"
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
		pair "$TPP" dump --sorted "$W/s.tpp" -- trace-cmd report -i "$W/tc.dat"
		tcp=$(rate "$tev" "$TB")
		line="$line, trace-cmd report $tcp M ev/s ($tev): $(ratio "$(rate "$ev" "$TA")" "$tcp")"
	else
		line="$line, trace-cmd record refused on this kernel (no report to time)"
	fi
fi
if command -v perf >/dev/null; then
	perf sched record -q -o "$W/perf.data" -- "$B/samples/w-pingpong" "$ROUNDS" >/dev/null 2>&1
	pev=$(perf script -i "$W/perf.data" 2>/dev/null | wc -l)
	pair "$TPP" dump --sorted "$W/s.tpp" -- perf script -i "$W/perf.data"
	pp=$(rate "$pev" "$TB")
	line="$line, perf script $pp M ev/s ($pev): $(ratio "$(rate "$ev" "$TA")" "$pp")"
fi
echo "$line"

# 3. scheduler latency
echo "b-analysis: decoder alone (tpp-bench decode sorted): $(floor "$W/s.tpp") M ev/s on the sched file"
if [ -e "$W/perf.data" ]; then
	NP=$LRUNS pair "$TPP" latency --sched --no-hist "$W/s.tpp" -- perf sched latency -i "$W/perf.data"
	lp=$(rate "$ev" "$TA")
	pl=$(rate "$pev" "$TB")
	line="b-analysis: sched latency: tracepp latency --sched $lp M ev/s, perf sched latency $pl M ev/s: $(ratio "$lp" "$pl")"
else
	line="b-analysis: sched latency: tracepp latency --sched $(rate "$ev" "$(wall "$TPP" latency --sched --no-hist "$W/s.tpp")") M ev/s"
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
