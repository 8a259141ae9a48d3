#!/usr/bin/env bash
# What function tracing costs as a whole command, tracerec beside uftrace
# record on the same binaries, runs interleaved (each round runs every
# variant once, so a busy spell of this shared machine hits all alike),
# medians kept, results as ratios (issue 14):
#  1. fixed cost: a program that makes one call (samples/src/s-one.c),
#     wall and CPU (the command and everything it waited for);
#  2. short threads: 64 threads one after another, 1000 calls each;
#  3. shared memory of a 32-thread program: the pool's peak as the kernel
#     counted it (stored in the file) against uftrace's /dev/shm, sampled;
#  4. threads traced of a program that starts 300, one after another;
#  5. whole-command CPU per call, recorder included, over the untraced
#     run: 10 M calls in one thread (s-calls) and 64 threads at once
#     (s-many-threads), -pg and -finstrument-functions.
# Lost events are printed: a cheaper run that dropped records is no win.
# Usage: bench/b-func-cost.sh [BUILD_DIR]   (RUNS, N calls, NT per-thread calls)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd)
S=$B/samples
RUNS=${RUNS:-7} N=${N:-10000000} NT=${NT:-156250}
W=$(mktemp -d /tmp/b-func-cost.XXXXXX)
trap 'rm -rf "$W"' EXIT
command -v uftrace >/dev/null || { echo "b-func-cost: skipped (uftrace is not installed)"; exit 0; }
cd "$W" || exit 1

# "wall_s cpu_s" of a command: the command and every child it waited for
# (wait4's rusage), to the microsecond (time(1) rounds to 10 ms).
cat >"$W/cost.py" <<'PY'
import os, sys, time
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1); os.dup2(fd, 2)
    os.execvp(sys.argv[1], sys.argv[1:])
_, st, ru = os.wait4(pid, 0)
print("%.6f %.6f" % (time.perf_counter() - t, ru.ru_utime + ru.ru_stime))
PY
cost() { python3 "$W/cost.py" "$@"; }
TR="$B/tracerec record -q -o $W/t.tpp --" UF="uftrace record -d $W/uf"
tr_rec() { $TR "$@"; }
uf_rec() { $UF "$@"; }
median() { python3 -c 'import sys, statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
lost() { "$B/tracepp" info --format=json "$W/t.tpp" | python3 -c 'import json, sys; print(json.load(sys.stdin)["lost"])'; }

# Rounds of named variants: "name|command..." lines on stdin; prints
# "name wall cpu" medians.
rounds() {
	local -a names cmds
	while IFS='|' read -r n c; do names+=("$n"); cmds+=("$c"); done
	for r in $(seq "$RUNS"); do
		for i in "${!names[@]}"; do echo "${names[$i]} $(eval cost "${cmds[$i]}")"; done
	done >"$W/rounds"
	for n in "${names[@]}"; do
		echo "$n $(median $(awk -v n="$n" '$1 == n {print $2}' "$W/rounds")) $(median $(awk -v n="$n" '$1 == n {print $3}' "$W/rounds"))"
	done
}
get() { awk -v n="$1" -v c="$2" '$1 == n {print $c}' "$W/med"; }
ratio() { python3 -c 'import sys; a, b = map(float, sys.argv[1:]); print("%.2f" % (a / b) if b > 0 else "n/a")' "$1" "$2"; }

# 1. fixed cost
rounds <<EOF >"$W/med"
plain|$S/s-one
tracerec|$TR $S/s-one-pg
uftrace|$UF $S/s-one-pg
EOF
printf 'fixed cost, one-call -pg program: tracerec %.0f ms wall %.0f ms cpu, uftrace %.0f ms wall %.0f ms cpu: ratio wall %s, cpu %s (target <= 1)\n' \
	"$(python3 -c "print($(get tracerec 2) * 1000)")" "$(python3 -c "print($(get tracerec 3) * 1000)")" \
	"$(python3 -c "print($(get uftrace 2) * 1000)")" "$(python3 -c "print($(get uftrace 3) * 1000)")" \
	"$(ratio "$(get tracerec 2)" "$(get uftrace 2)")" "$(ratio "$(get tracerec 3)" "$(get uftrace 3)")"

# 2. short threads: per thread, over the untraced run
rounds <<EOF >"$W/med"
plain|$S/s-many-threads 64 1000 seq
tracerec|$TR $S/s-many-threads-pg 64 1000 seq
uftrace|$UF $S/s-many-threads-pg 64 1000 seq
EOF
python3 - "$(get plain 2)" "$(get plain 3)" "$(get tracerec 2)" "$(get tracerec 3)" "$(get uftrace 2)" "$(get uftrace 3)" <<'PY'
import sys
pw, pc, tw, tc, uw, uc = map(float, sys.argv[1:])
t, u = (tw - pw) / 64 * 1e6, (uw - pw) / 64 * 1e6
tcp, ucp = (tc - pc) / 64 * 1e6, (uc - pc) / 64 * 1e6
print("64 short threads x 1000 calls (-pg), per thread: tracerec %.0f us wall %.0f us cpu, uftrace %.0f us wall %.0f us cpu:"
      " ratio wall %.2f, cpu %.2f (target <= 2)" % (t, tcp, u, ucp, t / u if u > 0 else 0, tcp / ucp if ucp > 0 else 0))
PY

# 3. shared memory of a 32-thread program
# (a tracerec that stores no footprint note: its /dev/shm file, sampled like uftrace's)
tr_rec "$S/s-many-threads-pg" 32 1000 conc >/dev/null 2>&1 & tp=$!
tr_samp=0
while kill -0 $tp 2>/dev/null; do
	s=$(find /dev/shm -maxdepth 1 -name 'tpp-rt-*' -printf '%b\n' 2>/dev/null | awk '{s += $1 * 512} END {print s + 0}')
	[ "$s" -gt "$tr_samp" ] && tr_samp=$s
	sleep 0.005
done
wait $tp
tr_shm=$("$B/tracepp" info --format=json "$W/t.tpp" | python3 -c 'import json, sys; r = json.load(sys.stdin).get("recorder", {}); print(r.get("shm_peak_bytes", '$tr_samp'), r.get("shm_budget_bytes", 0), r.get("peak_rss_bytes", 0))')
tr_size=$(stat -c %s "$W/t.tpp")
uf_rec "$S/s-many-threads-pg" 32 1000 conc >/dev/null 2>&1 & up=$!
uf_peak=0
while kill -0 $up 2>/dev/null; do
	s=$(find /dev/shm -maxdepth 1 -name 'uftrace-*' -printf '%b\n' 2>/dev/null | awk '{s += $1 * 512} END {print s + 0}')
	[ "$s" -gt "$uf_peak" ] && uf_peak=$s
	sleep 0.005
done
wait $up
set -- $tr_shm
printf 'shared memory, 32 threads x 1000 calls (trace of %d KB): tracerec pool peak %.2f MiB of a %.0f MiB budget (recorder RSS %.1f MiB), uftrace /dev/shm peak %.2f MiB (sampled)\n' \
	$((tr_size / 1000)) "$(python3 -c "print($1 / 2**20)")" "$(python3 -c "print($2 / 2**20)")" \
	"$(python3 -c "print($3 / 2**20)")" "$(python3 -c "print($uf_peak / 2**20)")"

# 4. threads traced of a program that starts 300 one after another
tr_rec "$S/s-many-threads-pg" 300 100 seq >/dev/null 2>&1
tr_n=$("$B/tracepp" info --format=json "$W/t.tpp" | python3 -c 'import json, sys; print(sum(s["kind"] == "thread" for s in json.load(sys.stdin)["streams"]))')
uf_rec "$S/s-many-threads-pg" 300 100 seq >/dev/null 2>&1
uf_n=$(uftrace report -d "$W/uf" --task --no-pager 2>/dev/null | awk 'NR > 2 && NF' | wc -l)
echo "threads traced of 301 (300 started one after another): tracerec $tr_n, uftrace $uf_n, tracerec lost $(lost)"

# 5. whole-command CPU per call
for v in pg fi; do
	rounds <<EOF >"$W/med"
plain|$S/s-calls $N
tracerec|$TR $S/s-calls-$v $N
uftrace|$UF $S/s-calls-$v $N
plain64|$S/s-many-threads 64 $NT conc
tracerec64|$TR $S/s-many-threads-$v 64 $NT conc
uftrace64|$UF $S/s-many-threads-$v 64 $NT conc
EOF
	l64=$(lost)
	tr_rec "$S/s-calls-$v" "$N" >/dev/null 2>&1; l1=$(lost)
	python3 - "$v" "$N" $((64 * NT)) "$l1" "$l64" $(for n in plain tracerec uftrace plain64 tracerec64 uftrace64; do get $n 3; done) \
		$(for n in plain64 tracerec64 uftrace64; do get $n 2; done) <<'PY'
import sys
v, n, n64, l1, l64 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
p, t, u, p64, t64, u64, wp, wt, wu = map(float, sys.argv[6:])
for what, calls, a, b, c, lost in (("%g M calls, 1 thread" % (n / 1e6), n, p, t, u, l1),
                                   ("%d threads x %d calls" % (64, n64 // 64), n64, p64, t64, u64, l64)):
    tn, un = (b - a) / calls * 1e9, (c - a) / calls * 1e9
    print("whole-command cpu per call, -%s, %s: tracerec %.1f ns, uftrace %.1f ns: ratio %.2f (target <= 0.35); tracerec lost %s"
          % (v, what, tn, un, tn / un if un > 0 else 0, lost))
# a pool smaller than the run: the threads wait for the recorder, so wall time is the price of losing nothing
print("wall, -%s, 64 threads x %d calls: untraced %.2f s, tracerec %.2f s, uftrace %.2f s: ratio %.2f; tracerec lost %s"
      % (v, n64 // 64, wp, wt, wu, wt / wu if wu > 0 else 0, l64))
PY
done
