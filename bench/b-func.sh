#!/usr/bin/env bash
# Function tracing cost on one call-heavy binary (samples/src/s-calls.c):
#  1. compiled-in runtime (tracerec, -pg build) vs uftrace record: ns per call
#     (duration of main as each tool recorded it, minus the untraced run) and
#     bytes written per call;
#  2. uprobes: tracerec -u vs a plain tracefs uprobe and perf record, ns per call.
# Usage: bench/b-func.sh [BUILD_DIR]   (N=calls, NU=calls under uprobes, RUNS)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-${TPP_B:-$TOP/build}}
N=${N:-1000000} NU=${NU:-20000} RUNS=${RUNS:-3}
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
main_ns_tpp() { "$B/tracepp" dump "$1" --format=json | python3 -c '
import json, sys
ts = [json.loads(l)["ts"] for l in sys.stdin if "\"sym\": \"main\"" in l]
print(ts[-1] - ts[0])'; }

P=$B/samples/s-calls
base0=$(wall "$P" 0) base=$(wall "$P" "$N")
plain=$((base - base0))
echo "b-func: $N calls, untraced loop $((plain / 1000)) us"

t=() b=()
for i in $(seq "$RUNS"); do
	"$B/tracerec" record -q -o "$W/t.tpp" -- "$P-pg" "$N" >/dev/null
	t+=($(main_ns_tpp "$W/t.tpp")); b+=($(stat -c %s "$W/t.tpp"))
done
tr_ns=$(printf '%s\n' "${t[@]}" | median) tr_b=$(printf '%s\n' "${b[@]}" | median)
if command -v uftrace >/dev/null; then
	u=() ub=()
	for i in $(seq "$RUNS"); do
		rm -rf "$W/uf"; uftrace record -d "$W/uf" "$P-pg" "$N" >/dev/null 2>&1
		u+=($(uftrace report -d "$W/uf" --no-pager -f total -F main 2>/dev/null | awk '$NF == "main" {
			v = $1; u = $2; print (u == "s" ? v * 1e9 : u == "ms" ? v * 1e6 : u == "us" ? v * 1e3 : v) }' | head -1 | cut -d. -f1))
		ub+=($(du -sb "$W/uf" | cut -f1))
	done
	uf_ns=$(printf '%s\n' "${u[@]}" | median) uf_b=$(printf '%s\n' "${ub[@]}" | median)
else
	uf_ns=0 uf_b=0
fi
python3 - "$N" "$plain" "$tr_ns" "$tr_b" "$uf_ns" "$uf_b" <<'PY'
import sys
n, plain, tr, trb, uf, ufb = map(int, sys.argv[1:])
t = (tr - plain) / n; u = (uf - plain) / n if uf else 0
print("runtime  tracerec: %6.1f ns/call  %6.2f bytes/call" % (t, trb / n))
if uf:
    print("runtime  uftrace : %6.1f ns/call  %6.2f bytes/call" % (u, ufb / n))
    print("runtime  ratio   : time %.2fx of uftrace (target <= 0.5), bytes %.3fx (target <= 0.2)" % (t / u, (trb / n) / (ufb / n)))
PY

[ -w $TFS/uprobe_events ] || { echo "uprobes: skipped (no writable $TFS/uprobe_events)"; exit 0; }
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
off=$(python3 -c '
import subprocess, sys
out = subprocess.run(["readelf", "-Ws", sys.argv[1]], capture_output=True, text=True).stdout
addr = [int(l.split()[1], 16) for l in out.splitlines() if l.split()[-1:] == ["leaf"]][0]
ph = subprocess.run(["readelf", "-lW", sys.argv[1]], capture_output=True, text=True).stdout
for l in ph.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        o, v, fs = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        if v <= addr < v + fs: print(hex(addr - v + o)); break' "$P")
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
