#!/usr/bin/env bash
# tracepp script's speed, side by side in one run:
#  1. the one-liner count by prev_comm and a hist of a field over a sched
#     recording (w-pingpong, all CPUs), in events of the file per second,
#     beside tracepp dump --sorted of the same file and the decoder alone;
#  2. the same over a synthetic file of BIG events (tpp-gen);
#  3. bpftrace doing the same count live: what each event costs the traced
#     workload (its ping-pong slowed down, per event bpftrace counted),
#     as a rate beside tracepp's offline one.
# Each comparison alternates the runs and takes medians (a shared machine).
# Usage: bench/b-script.sh [BUILD_DIR]  (ROUNDS ping-pongs, BIG, RUNS)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd)
ROUNDS=${ROUNDS:-500000} BIG=${BIG:-20000000} RUNS=${RUNS:-7}
W=$(mktemp -d /tmp/b-script.XXXXXX)
trap 'rm -rf "$W"' EXIT
TPP=$B/tracepp
COUNT='tracepoint:sched:sched_switch { @[args->prev_comm] = count(); }'
HIST='tracepoint:sched:sched_switch { @ = hist(args->prev_pid); }'
now_us() { REPLY=${EPOCHREALTIME//[.,]/}; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# pair CMD_A... -- CMD_B...: alternately RUNS times; TA, TB median ns
pair() {
	local a=() ta tb i t0
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	ta=$(mktemp) tb=$(mktemp)
	for i in $(seq "$RUNS"); do
		now_us; t0=$REPLY; "${a[@]}" >/dev/null 2>&1; now_us; echo $(((REPLY - t0) * 1000)) >>"$ta"
		now_us; t0=$REPLY; "$@" >/dev/null 2>&1; now_us; echo $(((REPLY - t0) * 1000)) >>"$tb"
	done
	TA=$(median <"$ta") TB=$(median <"$tb")
	rm -f "$ta" "$tb"
}
rate() { python3 -c "import sys; print('%.2f' % (int(sys.argv[1]) / (int(sys.argv[2]) / 1e9) / 1e6))" "$1" "$2"; }
ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print('%.1fx' % (a / b) if b else 'n/a')" "$1" "$2"; }
events() { "$TPP" info "$1" | awk '/^events:/ {print $2}'; }
floor() { [ -x "$B/bench/tpp-bench" ] || { echo n/a; return; }
	for i in $(seq "$RUNS"); do "$B/bench/tpp-bench" decode "$1" sorted | awk '{print $2}'; done | median |
		awk '{printf "%.2f", $1 / 1e6}'; }

one_file() { # LABEL FILE
	local ev c h d
	ev=$(events "$2")
	pair "$TPP" script -e "$COUNT" "$2" -- "$TPP" dump --sorted "$2"
	c=$(rate "$ev" "$TA") d=$(rate "$ev" "$TB")
	pair "$TPP" script -e "$HIST" "$2" -- "$TPP" dump --sorted "$2"
	h=$(rate "$ev" "$TA")
	echo "b-script: $1 ($ev events): script count by prev_comm $c M ev/s, hist of prev_pid $h M ev/s;" \
		"dump --sorted $d M ev/s ($(ratio "$c" "$d") dump); decoder alone $(floor "$2") M ev/s"
}

# 1. a recording
"$B/tracerec" record -q -a -e sched -o "$W/s.tpp" -- "$B/samples/w-pingpong" "$ROUNDS" >/dev/null 2>&1
one_file "sched recording" "$W/s.tpp"

# 2. a big synthetic file
if [ -x "$B/bench/tpp-gen" ] && [ "$BIG" -gt 0 ]; then
	"$B/bench/tpp-gen" -o "$W/big.tpp" -n "$BIG" --mix sched --cpus 2 >/dev/null 2>&1
	one_file "tpp-gen sched" "$W/big.tpp"
fi

# 3. bpftrace, live: the workload's ping-pong with and without the one-liner
if command -v bpftrace >/dev/null && [ "$(id -u)" = 0 ]; then
	plain=() live=() n=()
	READY=$W/b-script-ready
	cp /bin/true "$READY"
	R1='tracepoint:sched:sched_process_exec /comm == "b-script-ready"/ { printf("ready1\n"); }'
	R2='tracepoint:sched:sched_process_exit /comm == "b-script-ready"/ { printf("ready2\n"); }'
	for i in $(seq "$RUNS"); do
		plain+=("$(W_TIME=1 "$B/samples/w-pingpong" "$ROUNDS" 2>&1 >/dev/null | awk '/elapsed_ns/ {print $2}')")
		# bpftrace attaches one probe at a time after "Attaching" and
		# loses a SIGINT meanwhile: probes of its own declared first and
		# last, fired by runs of $READY, say when the count is in
		timeout -k 10 300 bpftrace -e "$R1 $COUNT $R2" >"$W/bt.out" 2>/dev/null & bp=$!
		for k in $(seq 600); do
			"$READY"
			grep -q '^ready1$' "$W/bt.out" && grep -q '^ready2$' "$W/bt.out" && break
			sleep 0.2
		done
		live+=("$(W_TIME=1 "$B/samples/w-pingpong" "$ROUNDS" 2>&1 >/dev/null | awk '/elapsed_ns/ {print $2}')")
		for k in $(seq 60); do kill -INT $bp 2>/dev/null || break; sleep 0.5; done
		wait $bp
		n+=("$(awk -F': ' '/^@\[w-pingpong\]/ {print $2}' "$W/bt.out")")
	done
	tp=$(printf '%s\n' "${plain[@]}" | median) tl=$(printf '%s\n' "${live[@]}" | median) ne=$(printf '%s\n' "${n[@]}" | median)
	ev=$(events "$W/s.tpp")
	pair "$TPP" script -e "$COUNT" "$W/s.tpp" -- true
	if [ "${ne:-0}" -gt 0 ] && [ "$tl" -gt "$tp" ]; then
		bt=$(rate "$ne" "$((tl - tp))") us=$(rate "$ev" "$TA")
		echo "b-script: bpftrace live: the count costs the workload $(((tl - tp) / ne)) ns per event counted ($bt M ev/s, $ne events);" \
			"tracepp script offline $us M ev/s: $(ratio "$us" "$bt") bpftrace"
	else
		echo "b-script: bpftrace live: no slowdown measured (plain ${tp} ns, live ${tl} ns, $ne events)"
	fi
else
	echo "b-script: bpftrace live: skipped (bpftrace not installed or not root)"
fi
