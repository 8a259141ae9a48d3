#!/usr/bin/env bash
# tracepp export --table for analytics engines (issue 19), on one generated
# recording of N events (functions, context switches, block requests,
# packets), runs interleaved, medians:
#  1. export rows/s of each table (CSV), and the file's events read per
#     second, beside `tracepp dump --format=json` events/s on the same file;
#  2. ingestion rows/s of the events table into the two-shard ClickHouse
#     cluster (fleet/: RowBinary streamed from export into the Distributed
#     table over HTTP, fleet/load.sh) beside clickhouse-client's own TSV
#     import of the same rows into the same table;
#  3. bytes per event: RowBinary events table, CSV, the .tpp, dump's JSON;
#  4. several files, one analysis: the peak RSS (/usr/bin/time's %M, kB)
#     of sched, latency, io and callgraph over NF small recordings of NF
#     hosts (tpp-gen under unshare -u, a hostname each), merged and
#     --by-host CSV, beside the same command on one: the state is per key
#     (function, comm, device), not per file; merged latency and io keep
#     the union's samples for exact percentiles up to an_lat's budget
#     (8 Mi samples for the process), then a histogram.
# Usage: bench/b-fleet.sh [BUILD_DIR]   (RUNS, N events, NF files)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-${TPP_B:-$TOP/build}}" && pwd)
RUNS=${RUNS:-3} N=${N:-2000000}
W=$(mktemp -d /tmp/b-fleet.XXXXXX)
CH=$W/ch
trap '"$TOP/fleet/cluster.sh" stop "$CH" >/dev/null 2>&1; rm -rf "$W"' EXIT
cd "$W" || exit 1
median() { python3 -c 'import sys, statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
# seconds of a command, stdout to the named file (or stdin from it with <)
secs() { local out=$1; shift; python3 -c 'import os, sys, time
t = time.perf_counter()
inp = sys.argv[1].startswith("<")
fd = os.open(sys.argv[1][1:], os.O_RDONLY) if inp else os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
pid = os.fork()
if pid == 0:
    os.dup2(fd, 0 if inp else 1)
    if inp: os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    os.execvp(sys.argv[2], sys.argv[2:])
_, st = os.waitpid(pid, 0)
print("%.6f" % (time.perf_counter() - t) if st == 0 else "fail")' "$out" "$@"; }
ratio() { python3 -c "print('%.2f' % ($1))"; }

"$B/bench/tpp-gen" -o t.tpp -n "$N" --mix func,sched,block,net --cpus 2 --threads 4 >/dev/null 2>&1 ||
	{ echo "b-fleet: tpp-gen failed"; exit 1; }
ev=$("$B/tracepp" info --format=json t.tpp | python3 -c 'import json, sys; print(json.load(sys.stdin)["events"])')
TABLES="events calls sched io net tasks"
for r in $(seq "$RUNS"); do
	echo "dump $(secs dump.json "$B/tracepp" dump --format=json t.tpp)"
	for t in $TABLES; do echo "$t $(secs $t.csv "$B/tracepp" export --table=$t t.tpp)"; done
done >rounds
dump=$(median $(awk '$1 == "dump" {print $2}' rounds))
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "dump --format=json: $ev events, $dump s, $(ratio "$ev / $dump" | cut -d. -f1) events/s"
for t in $TABLES; do
	s=$(median $(awk -v t=$t '$1 == t {print $2}' rounds))
	rows=$(($(wc -l <$t.csv) - 1))
	echo "export --table=$t: $rows rows, $s s, $(ratio "$rows / $s" | cut -d. -f1) rows/s, $(ratio "$ev / $s" | cut -d. -f1) events read/s; ratio events/s export/dump: $(ratio "$dump / $s")"
done
"$B/tracepp" export --table=events --format=rowbinary -o events.rb t.tpp
rb=$(stat -c %s events.rb) csv=$(stat -c %s events.csv) tpp=$(stat -c %s t.tpp) js=$(stat -c %s dump.json)
echo "bytes/event: rowbinary $(ratio "$rb / $ev"), csv $(ratio "$csv / $ev"), .tpp $(ratio "$tpp / $ev"), dump json $(ratio "$js / $ev")"
echo "ratio bytes rowbinary/.tpp: $(ratio "$rb / $tpp"), rowbinary/json: $(ratio "$rb / $js")"
rm -f dump.json ./*.csv

NF=${NF:-200}
mkdir fl && for i in $(seq "$NF"); do
	unshare -u sh -c "hostname host$i && \"\$0\" -o fl/f$i.tpp -n 20000 --seed $i" "$B/bench/tpp-gen" >/dev/null 2>&1 ||
		{ echo "b-fleet: tpp-gen under unshare -u failed: no several-files rows"; break; }
done
if [ -f "fl/f$NF.tpp" ]; then
	rss() { /usr/bin/time -f %M -o rss "$@" >/dev/null 2>&1 && cat rss || echo fail; }
	for cmd in sched latency io callgraph "sched --by-host --format=csv" "latency --by-host --format=csv"; do
		one=$(rss "$B/tracepp" $cmd fl/f1.tpp) all=$(rss "$B/tracepp" $cmd $(seq -f "fl/f%g.tpp" "$NF"))
		echo "peak RSS tracepp $cmd: 1 file $one kB, $NF files (hosts) $all kB; ratio $NF/1: $(ratio "$all / $one")"
	done
fi
rm -rf fl

if ! [ -x /usr/sbin/clickhouse-server ] || ! command -v clickhouse-client >/dev/null; then
	echo "b-fleet: clickhouse-server missing: no ingestion rows"
	exit 0
fi
"$TOP/fleet/cluster.sh" start "$CH" || { echo "b-fleet: the cluster did not start"; exit 1; }
read -r P1 P2 H1 H2 <"$CH/ports"
q() { curl -K "$CH/curlrc" -sS --fail-with-body --data-binary "$1" "http://127.0.0.1:${2:-$H1}/"; }
FLEET_CURLRC=$CH/curlrc TRACEPP=$B/tracepp "$TOP/fleet/ddl.sh" "$H1" "$H2" -- events || exit 1
empty() { q "TRUNCATE TABLE events_local" "$H1" && q "TRUNCATE TABLE events_local" "$H2"; }
FLEET_CURLRC=$CH/curlrc TRACEPP=$B/tracepp "$TOP/fleet/load.sh" events "$H1" t.tpp && q "SELECT * FROM events FORMAT TabSeparated" >rows.tsv && empty
rows=$(wc -l <rows.tsv)
for r in $(seq "$RUNS"); do
	echo "tracepp $(FLEET_CURLRC=$CH/curlrc TRACEPP=$B/tracepp secs /dev/null "$TOP/fleet/load.sh" events "$H1" t.tpp)"
	[ "$(q "SELECT count() FROM events")" = "$rows" ] || echo "b-fleet: tracepp load: wrong count" >&2
	empty
	echo "client $(secs "<rows.tsv" clickhouse-client --config-file "$CH/client.xml" --port "$P1" --query "INSERT INTO events FORMAT TabSeparated")"
	[ "$(q "SELECT count() FROM events")" = "$rows" ] || echo "b-fleet: TSV import: wrong count" >&2
	empty
done >ingest
tp=$(median $(awk '$1 == "tracepp" {print $2}' ingest))
cl=$(median $(awk '$1 == "client" {print $2}' ingest))
echo "ingest events into the 2-shard Distributed table: tracepp export | RowBinary over HTTP $tp s, $(ratio "$rows / $tp" | cut -d. -f1) rows/s (the export included); clickhouse-client TSV import of the same $rows rows $cl s, $(ratio "$rows / $cl" | cut -d. -f1) rows/s"
echo "ratio ingest rows/s tracepp/clickhouse-client TSV: $(ratio "$cl / $tp")"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
