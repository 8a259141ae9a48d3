#!/usr/bin/env bash
# Silence where a hint is due: a recording that cannot hold what was asked
# for, and a filter that matches nothing, say so in one line on stderr, as
# uftrace and perf do (uftrace refuses an uninstrumented program; a filter
# that matches nothing prints its line and exits 0).
. "$(dirname "$0")/lib.sh"
S=$B/samples
TRACE=$TOP/samples/traces/threads-seen-late.tpp
one_line() { [ "$(wc -l <"$1")" = 1 ] || { cat "$1"; return 1; }; }

test_expect 'latency --func matching no function: one line naming the pattern, exit 0' '
	"$TRACEPP" latency --func="zzz*" "$TRACE" >out 2>err; st=$?; cat err; [ $st = 0 ] &&
	grep -q "^tracepp latency: no event of .* passes --func=zzz\*$" err &&
	"$TRACEPP" latency --func="lea*" "$TRACE" >out 2>err && ! grep -q "no event of" err
'

test_expect 'replay --comm and sched --tid matching no task: one line naming the filter, exit 0' '
	"$TRACEPP" replay --comm=nosuch "$TRACE" >out 2>err; st=$?; cat err; [ $st = 0 ] &&
	grep -q "^tracepp replay: no event of .* passes --comm=nosuch$" err &&
	"$TRACEPP" sched --tid=999999 "$TRACE" >out 2>err; st=$?; cat err; [ $st = 0 ] &&
	grep -q "^tracepp sched: no event of .* passes --tid=999999$" err &&
	"$TRACEPP" callgraph --comm=nosuch "$TRACE" >out 2>err; st=$?; cat err; [ $st = 0 ] &&
	grep -q "^tracepp callgraph: no event of .* passes --comm=nosuch$" err &&
	"$TRACEPP" replay --comm=s-threads-fi "$TRACE" >out 2>err && ! grep -q "no event of" err
'

if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing/instances ] && [ -x "$TRACEREC" ]; then
test_expect 'a command without -pg/-finstrument-functions and nothing else asked: refused in one line, as uftrace does' '
	! "$TRACEREC" record -q -o t.tpp -- "$S/s-chain" >out 2>err && cat err && one_line err &&
	grep -q "s-chain: not built with -pg or -finstrument-functions" err && grep -q -- "-u .s-chain:GLOB." err &&
	"$TRACEREC" record -q -e sched -o t.tpp -- "$S/s-chain" >out 2>err && [ ! -s err ]
'

test_expect '-p on a -pg process without the runtime: a warning line, kernel events still recorded' '
	"$S/s-calls-pg" 400000000 >/dev/null & p=$!
	sleep 0.2
	"$TRACEREC" record -q -e sched -d 0.5 -o t.tpp -p $p >out 2>err; st=$?
	kill $p; wait $p 2>/dev/null; cat err; [ $st = 0 ] && one_line err &&
	grep -q "warning: $p (s-calls-pg) is built with -pg, but its calls cannot be recorded" err &&
	# a CPU-bound task: switched out, or at least its runtime reported
	"$TRACEPP" info t.tpp >info; st=$?; sed -n "/^by type/,/^\$/p" info
	[ $st = 0 ] && grep -q "sched_switch\|sched_stat_runtime" info
'
else
	test_skip 'recording hints' 'recording not permitted (not root or no tracefs)'
fi

test_done
