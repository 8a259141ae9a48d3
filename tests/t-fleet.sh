#!/usr/bin/env bash
# A real distributed engine reads tracepp's export: a ClickHouse cluster of
# two shards (Debian's clickhouse-server, two servers on loopback started by
# this test under its private scratch directory: fleet/cluster.sh), its
# MergeTree tables and a Distributed table over them (fleet/ddl.sh), loaded
# with four recordings of four hosts through the one-line loader
# (fleet/load.sh: export --format=rowbinary into the Distributed table): a
# real recording (host vm) and three by tpp-gen under hostnames h1, h2, h3
# of their own (tests/fleet_hosts.sh). SQL through the Distributed table,
# per host, must give what tracepp --by-host gives on the same files, and
# over the fleet what tracepp's merged answer gives: switches per task
# (counted from the raw sched_switch events: independent of tracepp's
# pairing) and on-CPU ns per task (run slices summed) = sched; calls per
# function = callgraph; block requests per device and op counted from the
# raw block_rq_complete events (independent) and from the io table, with
# their p50 device time = io. The servers are stopped and everything
# removed at the end, even on failure (trap).
# san: skip
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/fleet_hosts.sh"
S=$TOP/samples/traces
CH=$_scratch/ch
export TRACEPP
if ! [ -x /usr/sbin/clickhouse-server ] || ! command -v clickhouse-client >/dev/null; then
	test_skip 'ClickHouse cluster' 'clickhouse-server/clickhouse-client not installed (make deps installs them)'
	test_done
	exit
fi
if ! HOSTS=$(fleet_hosts "$_scratch"); then
	test_skip 'ClickHouse cluster' 'tpp-gen under unshare -u (a hostname of its own) failed here'
	test_done
	exit
fi
FILES="$S/demo.tpp $(echo $HOSTS)"
trap '"$TOP/fleet/cluster.sh" stop "$CH"; _cleanup' EXIT

# SQL over HTTP (curl starts faster than clickhouse-client)
q() { curl -K "$CH/curlrc" -sS --fail-with-body --data-binary "$1" "http://127.0.0.1:${2:-$H1}/"; }
# tracepp's answer (CSV) beside the SQL's: tests/sql_same.py
same() { python3 "$HERE/sql_same.py" "$@"; }

test_expect 'two servers on loopback, two shards, the tables and their Distributed tables; the recordings of four hosts loaded through it' '
	"$TOP/fleet/cluster.sh" start "$CH" && [ "$(stat -c %a "$CH")" = 700 ] &&
	read -r P1 P2 H1 H2 <"$CH/ports" && cp "$CH/ports" "$_scratch/p" &&
	# another local user reaches the ports, not the data: no query without the password
	[ "$(stat -c %a "$CH/curlrc" "$CH/client.xml" | sort -u)" = 600 ] &&
	! curl -sS --fail "http://127.0.0.1:$H1/?query=SELECT%201" 2>/dev/null && [ "$(q "SELECT 1")" = 1 ] &&
	FLEET_CURLRC=$CH/curlrc TRACEPP=$TRACEPP "$TOP/fleet/ddl.sh" "$H1" "$H2" -- events calls sched io tasks &&
	[ "$(q "SELECT count() FROM system.clusters WHERE cluster = '"'tpp'"'")" = 2 ] &&
	for t in events calls sched io tasks; do
		FLEET_CURLRC=$CH/curlrc TRACEPP=$TRACEPP "$TOP/fleet/load.sh" $t "$H1" $FILES || exit 1
		want=$($TRACEPP export --table=$t $FILES | tail -n +2 | wc -l)
		got=$(q "SELECT count() FROM $t")
		n1=$(q "SELECT count() FROM ${t}_local" "$H1")
		n2=$(q "SELECT count() FROM ${t}_local" "$H2")
		echo "$t: $want rows, Distributed $got, shards $n1 + $n2"
		[ "$got" = "$want" ] && [ $((n1 + n2)) = "$want" ] || exit 1
	done &&
	# the recordings spread over both shards (by trace_id)
	[ "$(q "SELECT count() FROM events_local" "$H1")" -gt 0 ] &&
	[ "$(q "SELECT count() FROM events_local" "$H2")" -gt 0 ] &&
	[ "$(q "SELECT arrayStringConcat(groupArray(h), '"' '"') FROM (SELECT DISTINCT host AS h FROM events ORDER BY h)")" = "h1 h2 h3 vm" ]
'
read -r P1 P2 H1 H2 <"$_scratch/p" 2>/dev/null

test_expect 'per host, switches per task (raw sched_switch events in SQL) and on-CPU ns per task (run slices summed) are tracepp sched --by-host'"'"'s' '
	$TRACEPP sched --by-host --format=csv $FILES >s.csv 2>/dev/null &&
	q "SELECT host, toString(toInt32(visitParamExtractInt(fields, '"'prev_pid'"')) AS t), toString(count())
	   FROM events WHERE type = '"'sched_switch'"' AND t != 0 GROUP BY host, t" >sw.tsv &&
	same sw.tsv "r[\"tid\"] != \"0\" and r[\"switches\"] != \"0\"" tid,switches s.csv &&
	q "SELECT host, toString(tid), toString(sum(dur_ns)) FROM sched WHERE kind = '"'run'"'
	   GROUP BY host, tid" >on.tsv &&
	same on.tsv "r[\"tid\"] != \"0\" and r[\"oncpu_ns\"] != \"0\"" tid,oncpu_ns s.csv
'

test_expect 'calls per function per host are tracepp callgraph --by-host'"'"'s, over the fleet its merged answer'"'"'s' '
	$TRACEPP callgraph --by-host --format=csv $FILES >h.csv 2>/dev/null &&
	q "SELECT host, func, toString(countIf(ended != '"'orphan'"')) FROM calls GROUP BY host, func" >c.tsv &&
	same c.tsv True func,calls h.csv &&
	$TRACEPP callgraph --format=csv $FILES >m.csv 2>/dev/null &&
	q "SELECT func, toString(countIf(ended != '"'orphan'"')) FROM calls GROUP BY func" >cm.tsv &&
	same cm.tsv True func,calls m.csv
'

# an io row's p50: nearest rank of the device times of the requests issued in the recording
P50="toString(if(countIf(issue_ns > 0) = 0, 0, arrayElement(arraySort(groupArrayIf(device_ns, issue_ns > 0)),
     toUInt64(ceil(0.5 * countIf(issue_ns > 0))))))"
# a raw block_rq_complete's device as io names it (major:minor of the kernel's dev_t) and its op (rwbs)
DEV="concat(toString(bitShiftRight(visitParamExtractUInt(fields, 'dev'), 20)), ':',
     toString(bitAnd(visitParamExtractUInt(fields, 'dev'), 1048575)))"
OP="multiIf(position(visitParamExtractString(fields, 'rwbs'), 'D') > 0, 'discard',
     position(visitParamExtractString(fields, 'rwbs'), 'W') > 0, 'write',
     position(visitParamExtractString(fields, 'rwbs'), 'R') > 0, 'read',
     position(visitParamExtractString(fields, 'rwbs'), 'F') > 0, 'flush', 'other')"
test_expect 'per host and device and op: raw block_rq_complete events counted in SQL, and the io table'"'"'s requests and p50, are tracepp io --by-host'"'"'s; over the fleet, its merged count and p50' '
	$TRACEPP io --by-host --format=csv $FILES >h.csv 2>/dev/null &&
	q "SELECT host, $DEV AS d, $OP AS o, toString(count()) FROM events WHERE type = '"'block_rq_complete'"' GROUP BY host, d, o" >raw.tsv &&
	same raw.tsv True dev,op,count h.csv &&
	q "SELECT host, dev, op, toString(count()), $P50 FROM io GROUP BY host, dev, op" >io.tsv &&
	same io.tsv True dev,op,count,p50_ns h.csv &&
	$TRACEPP io --format=csv $FILES >m.csv 2>/dev/null &&
	q "SELECT dev, op, toString(count()), $P50 FROM io GROUP BY dev, op" >iom.tsv &&
	same iom.tsv True dev,op,count,p50_ns m.csv
'

test_expect 'loading the same recordings again adds no row: each is skipped by its trace_id' '
	read -r P1 P2 H1 H2 <"$_scratch/p" &&
	before=$(q "SELECT count() FROM calls") &&
	FLEET_CURLRC=$CH/curlrc TRACEPP=$TRACEPP "$TOP/fleet/load.sh" calls "$H1" $FILES 2>err &&
	cat err && [ "$(grep -c "already holds its rows" err)" = 4 ] && [ "$(q "SELECT count() FROM calls")" = "$before" ]
'

test_expect 'a table of other columns than the export refuses the load whole: one error naming the column, no row' '
	read -r P1 P2 H1 H2 <"$_scratch/p" &&
	"$B/bench/tpp-gen" -o new.tpp -n 2000 --mix func --threads 1 --seed 11 >/dev/null 2>&1 &&
	q "ALTER TABLE calls DROP COLUMN wall_err_ns" &&
	before=$(q "SELECT count() FROM calls") &&
	! FLEET_CURLRC=$CH/curlrc TRACEPP=$TRACEPP "$TOP/fleet/load.sh" calls "$H1" new.tpp >err 2>&1 &&
	cat err && grep -q "wall_err_ns" err && [ "$(q "SELECT count() FROM calls")" = "$before" ]
'

test_expect 'the cluster stops: both servers gone, their ports closed' '
	pids="$(cat "$CH"/s1/pid "$CH"/s2/pid)" && "$TOP/fleet/cluster.sh" stop "$CH" &&
	for p in $pids; do ! kill -0 $p 2>/dev/null || exit 1; done &&
	! q "SELECT 1" 2>/dev/null && ! clickhouse-client --port "$P2" --query "SELECT 1" 2>/dev/null
'

test_done
