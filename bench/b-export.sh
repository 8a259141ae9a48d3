#!/usr/bin/env bash
# tracepp export --format=chrome beside uftrace dump --chrome (issue 17):
#  1. events/s on the recording of the same program (s-calls-pg, N calls:
#     main -> loop -> leaf x N), each tool reading its own recording, runs
#     interleaved, medians; the ratio is tracepp's speed over uftrace's;
#  2. bytes of JSON per function event (an entry or a return), each tool;
#  3. peak RSS of an export of a generated file of BIG events (functions and
#     context switches), written to /dev/null: bounded memory, whatever the
#     file's size (target <= 64 MiB at 100 M events).
# Usage: bench/b-export.sh [BUILD_DIR]   (RUNS, N calls, BIG events; OLD=BUILD_DIR
# adds that build's tracepp to every round, on the same recording, for a
# before/after in one run; the load average is printed beside the ratios)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd)
RUNS=${RUNS:-9} N=${N:-1000000} BIG=${BIG:-100000000}
W=$(mktemp -d /tmp/b-export.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
median() { python3 -c 'import sys, statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
# seconds of a command, output to a new file of that name: "WALL CPU", CPU
# the child's user + system time (what the machine's load does not stretch).
# Only the tool is timed: the previous round's file is removed before the
# clock starts (truncating ~100 MB of page cache took 0.06-0.13 s here), and
# the tool is started with posix_spawn (vfork) rather than a fork of this
# python (a fork copies its page tables: 0.05-0.16 s in this VM, as long as
# tracepp's whole export).
secs() { local out=$1; shift; rm -f "$out"; python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
null = os.open(os.devnull, os.O_WRONLY)
fa = [(os.POSIX_SPAWN_DUP2, fd, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
t = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ, file_actions=fa)
_, st, ru = os.wait4(pid, 0)
w = time.perf_counter() - t
print("%.6f %.6f" % (w, ru.ru_utime + ru.ru_stime) if st == 0 else "fail")' "$out" "$@"; }

"$B/tracerec" record -q -o t.tpp -- "$B/samples/s-calls-pg" "$N" >/dev/null 2>&1 || { echo "b-export: tracerec failed"; exit 1; }
ev=$("$B/tracepp" info --format=json t.tpp | python3 -c 'import json, sys; print(json.load(sys.stdin)["events"])')
if command -v uftrace >/dev/null && uftrace record --no-libcall --no-event -d uf "$B/samples/s-calls-pg" "$N" >/dev/null 2>&1; then
	have_uf=1
else
	have_uf=0
	echo "b-export: uftrace missing or failed: tracepp alone"
fi
OLD=${OLD:-}
[ -z "$OLD" ] || OLD=$(cd "$OLD" && pwd)
echo "load average before: $(cut -d" " -f1-3 /proc/loadavg)"
for r in $(seq "$RUNS"); do
	[ -n "$OLD" ] && echo "old $(secs old.json "$OLD/tracepp" export --format=chrome t.tpp)"
	echo "tracepp $(secs tp.json "$B/tracepp" export --format=chrome t.tpp)"
	[ $have_uf = 1 ] && echo "uftrace $(secs uf.json uftrace dump --chrome -d uf)"
done >rounds
sed "s/^/round: /" rounds
tp=$(median $(awk '$1 == "tracepp" {print $2}' rounds))
tp_cpu=$(median $(awk '$1 == "tracepp" {print $3}' rounds))
tp_bytes=$(stat -c %s tp.json)
echo "export chrome: $ev events (s-calls-pg $N), tracepp $tp s (CPU $tp_cpu s), $(python3 -c "print('%.0f' % ($ev / $tp))") events/s, $(python3 -c "print('%.1f' % ($tp_bytes / $ev))") bytes/event"
if [ $have_uf = 1 ]; then
	uf=$(median $(awk '$1 == "uftrace" {print $2}' rounds))
	uf_cpu=$(median $(awk '$1 == "uftrace" {print $3}' rounds))
	uf_bytes=$(stat -c %s uf.json)
	# uftrace's function events: its own dump's count of entries and exits
	uf_ev=$(uftrace dump -d uf 2>/dev/null | grep -Ec "\[(entry|exit ?)\]")
	echo "uftrace dump --chrome: $uf_ev events, $uf s (CPU $uf_cpu s), $(python3 -c "print('%.0f' % ($uf_ev / $uf))") events/s, $(python3 -c "print('%.1f' % ($uf_bytes / $uf_ev))") bytes/event"
	echo "ratio events/s tracepp/uftrace: $(python3 -c "print('%.2f' % (($ev / $tp) / ($uf_ev / $uf)))") (target >= 10); per CPU second: $(python3 -c "print('%.2f' % (($ev / $tp_cpu) / ($uf_ev / $uf_cpu)))")"
	# the same ratio round by round (each round's tools ran side by side)
	echo "ratio per round: $(python3 -c '
import sys
tp = [float(l.split()[1]) for l in open("rounds") if l.startswith("tracepp ")]
uf = [float(l.split()[1]) for l in open("rounds") if l.startswith("uftrace ")]
print(" ".join("%.1f" % ((float(sys.argv[1]) / a) / (float(sys.argv[2]) / b)) for a, b in zip(tp, uf)))' "$ev" "$uf_ev")"
	echo "ratio bytes/event tracepp/uftrace: $(python3 -c "print('%.2f' % (($tp_bytes / $ev) / ($uf_bytes / $uf_ev)))")"
	if [ -n "$OLD" ]; then
		old=$(median $(awk '$1 == "old" {print $2}' rounds))
		cmp -s old.json tp.json && same="the same bytes" || same="DIFFERENT bytes"
		echo "old build ($OLD): $old s, ratio events/s old/uftrace: $(python3 -c "print('%.2f' % (($ev / $old) / ($uf_ev / $uf)))"), new/old speed: $(python3 -c "print('%.2f' % ($old / $tp))") ($same)"
	fi
fi
echo "load average after: $(cut -d" " -f1-3 /proc/loadavg)"
rm -f tp.json uf.json old.json

"$B/bench/tpp-gen" -o big.tpp -n "$BIG" --mix func,sched --cpus 4 --threads 16 >/dev/null 2>&1 || { echo "b-export: tpp-gen failed"; exit 1; }
/usr/bin/time -f "%M %e" -o rss "$B/tracepp" export --format=chrome big.tpp >/dev/null 2>&1
read -r kb s <rss
echo "export chrome of $BIG generated events: peak RSS $((kb / 1024)) MiB (target <= 64), $s s, $(python3 -c "print('%.0f' % ($BIG / $s))") events/s"
