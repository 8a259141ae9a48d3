#!/usr/bin/env bash
# Function tracing cost on one call-heavy binary (samples/src/s-calls.c):
#  1. compiled-in runtime (tracerec, -pg build) vs uftrace record, per call:
#     - wall ns: the loop times itself (s-calls N x prints loop_ns on stderr),
#       median of RUNS, minus the untraced build's loop;
#     - instructions: callgrind counts the traced process deterministically;
#       two call counts (NI and 2*NI) are subtracted, so start-up, exit and
#       the tracer's own set-up cancel and only the per-call cost remains;
#     - bytes written per call.
#     TPP_RT_LIB=other/libtpprt.so measures another build of the runtime.
#  2. uprobes: tracerec -u vs a plain tracefs uprobe and perf record, ns per call.
# Usage: bench/b-func.sh [BUILD_DIR]   (N=calls, NI=calls under callgrind,
#        NU=calls under uprobes, RUNS)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd)
N=${N:-1000000} NI=${NI:-100000} NU=${NU:-20000} RUNS=${RUNS:-11}
W=$(mktemp -d /tmp/b-func.XXXXXX)
TFS=/sys/kernel/tracing
cleanup() {
	[ -d $TFS/instances/bfunc$$ ] && { echo 0 >$TFS/instances/bfunc$$/events/bfunc$$/enable; rmdir $TFS/instances/bfunc$$; }
	grep -q "bfunc$$" $TFS/uprobe_events 2>/dev/null && echo "-:bfunc$$/leaf" >>$TFS/uprobe_events
	perf probe -q -d 'probe_s:*' 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT
ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# Wall time of a command in ns, median of RUNS.
wall() { for i in $(seq "$RUNS"); do t0=$(ns); "$@" >/dev/null 2>&1; echo $(($(ns) - t0)); done | median; }
# "wall cpu": the loop's own times (ns) under a command line ending in "s-calls* N x".
loop_times() { "$@" 2>&1 >/dev/null | awk '/^loop_ns / {w = $2} /^loop_cpu_ns / {c = $2} END {print w + 0, c + 0}'; }
# Instructions executed by the s-calls process that a command line starts.
instr() {
	local d; d=$(mktemp -d "$W/cg.XXXXXX")
	(cd "$d" && valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$d/out.%p" "$@" >/dev/null 2>&1)
	grep -lE '^cmd: +[^ ]*/s-calls[^ ]* ' "$d"/out.* | head -1 | xargs grep '^summary:' | awk '{print $2}'
}
# Instructions per call: the difference between 2*NI and NI calls.
instr_per_call() { # CMD... (the call count is appended)
	local a b; a=$(instr "$@" "$NI") b=$(instr "$@" $((2 * NI)))
	python3 -c "import sys; print('%.1f' % ((int(sys.argv[2]) - int(sys.argv[1])) / int(sys.argv[3])))" "$a" "$b" "$NI"
}
have_uf=0; command -v uftrace >/dev/null && have_uf=1

P=$B/samples/s-calls
# Rounds interleave the untraced run and both tracers, so a busy spell of
# the machine hits all of them alike; each column's median is kept.
for i in $(seq "$RUNS"); do
	p=$(loop_times "$P" "$N" x)
	t=$(loop_times "$B/tracerec" record -q -o "$W/t.tpp" -- "$P-pg" "$N" x)
	u="0 0"; [ $have_uf = 1 ] && u=$(loop_times uftrace record -d "$W/uf" "$P-pg" "$N" x)
	echo "$p $t $u"
done >"$W/rounds"
tr_b=$(stat -c %s "$W/t.tpp") uf_b=0
[ $have_uf = 1 ] && uf_b=$(du -sb "$W/uf" | cut -f1)
python3 - "$N" "$RUNS" "$tr_b" "$uf_b" "$W/rounds" <<'PY'
import sys, statistics
n, runs, trb, ufb = map(int, sys.argv[1:5])
rows = [list(map(int, l.split())) for l in open(sys.argv[5]) if l.strip()]
col = lambda i: statistics.median(r[i] for r in rows)
pw, pc, tw, tc, uw, uc = (col(i) for i in range(6))
print("b-func: %d calls, untraced loop %d us wall, %d us cpu (medians of %d rounds)" % (n, pw / 1000, pc / 1000, runs))
for name, w, c, b in (("tracerec", tw, tc, trb), ("uftrace ", uw, uc, ufb)):
    if w:
        print("runtime  %s: %6.1f ns/call wall, %6.1f ns/call cpu, %6.2f bytes/call" % (name, (w - pw) / n, (c - pc) / n, b / n))
if uw:
    print("runtime  ratio   : wall %.2fx, cpu %.2fx of uftrace (target <= 0.5), bytes %.3fx (target <= 0.2)" %
          ((tw - pw) / (uw - pw), (tc - pc) / (uc - pc), (trb / n) / (ufb / n)))
PY
if command -v valgrind >/dev/null; then
	i_plain=$(instr_per_call "$P")
	i_tr=$(instr_per_call "$B/tracerec" record -q -o "$W/i.tpp" -- "$P-pg")
	i_uf=0; [ $have_uf = 1 ] && i_uf=$(instr_per_call uftrace record -d "$W/iuf" "$P-pg")
	python3 - "$i_plain" "$i_tr" "$i_uf" <<'PY'
import sys
p, t, u = map(float, sys.argv[1:])
print("runtime  tracerec: %6.1f instructions/call over the untraced %.1f (callgrind)" % (t - p, p))
if u:
    print("runtime  uftrace : %6.1f instructions/call over the untraced %.1f (callgrind)" % (u - p, p))
    print("runtime  ratio   : instructions %.2fx of uftrace" % ((t - p) / (u - p)))
PY
else
	echo "runtime  instructions: skipped (valgrind is not installed)"
fi

[ -w $TFS/uprobe_events ] || { echo "uprobes: skipped (no writable $TFS/uprobe_events)"; exit 0; }
base0=$(wall "$P" 0)
ubase=$(( $(wall "$P" "$NU") - base0 ))
# tracerec -u: leaf calls as the kernel timestamped them (first entry to last return)
ut=()
for i in $(seq "$RUNS"); do
	"$B/tracerec" record -q -o "$W/u.tpp" -u "$P:leaf" -- "$P" "$NU" >/dev/null
	ut+=($("$B/tracepp" dump "$W/u.tpp" --format=json | python3 -c '
import json, sys
ts = [json.loads(l)["ts"] for l in sys.stdin if "leaf" in l]
print(ts[-1] - ts[0])'))
done
tr_u=$(printf '%s\n' "${ut[@]}" | median)
# plain tracefs: one uprobe pair in a private instance, program wall time
off=$(python3 "$TOP/bench/sym-offset.py" "$P" leaf)
echo "p:bfunc$$/leaf $P:$off" >>$TFS/uprobe_events
echo "r:bfunc$$/leaf_ret $P:$off" >>$TFS/uprobe_events
mkdir $TFS/instances/bfunc$$
echo 1 >$TFS/instances/bfunc$$/events/bfunc$$/enable
tf=$(( $(wall "$P" "$NU") - base0 ))
echo 0 >$TFS/instances/bfunc$$/events/bfunc$$/enable
rmdir $TFS/instances/bfunc$$
echo "-:bfunc$$/leaf" >>$TFS/uprobe_events; echo "-:bfunc$$/leaf_ret" >>$TFS/uprobe_events
pf=0
if command -v perf >/dev/null && perf probe -q -x "$P" leaf 2>/dev/null && perf probe -q -x "$P" leaf%return 2>/dev/null; then
	pf=$(( $(wall perf record -q -o "$W/perf.data" -e 'probe_s:*' -- "$P" "$NU") - base0 ))
	perf probe -q -d 'probe_s:*' 2>/dev/null
fi
python3 - "$NU" "$ubase" "$tr_u" "$tf" "$pf" <<'PY'
import sys
n, base, tr, tf, pf = map(int, sys.argv[1:])
t = (tr - base) / n; f = (tf - base) / n
print("uprobes  tracerec: %7.0f ns/call" % t)
print("uprobes  tracefs : %7.0f ns/call (program wall time)" % f)
if pf:
    print("uprobes  perf    : %7.0f ns/call (perf record wall time, includes perf start-up)" % ((pf - base) / n))
print("uprobes  ratio   : %.2fx of plain tracefs (target <= 1)" % (t / f if f > 0 else 0))
PY
