#!/usr/bin/env bash
# A real distributed engine reads tracepp's export: a ClickHouse cluster of
# two shards (Debian's clickhouse-server, two servers on loopback started by
# this test under its private scratch directory: fleet/cluster.sh), its
# MergeTree tables and a Distributed table over them (fleet/ddl.sh), loaded
# with three recordings through the one-line loader (fleet/load.sh: export
# --format=rowbinary into the Distributed table). SQL through the
# Distributed table must give what tracepp gives on the same files:
# switches per task per recording counted from the raw sched_switch events
# (tracepp sched's switches), on-CPU ns per task summed over the run slices
# (sched's oncpu_ns), calls per function (callgraph), block requests and
# their p50 device time per device (io). The servers are stopped and
# everything removed at the end, even on failure (trap).
# san: skip
. "$(dirname "$0")/lib.sh"
S=$TOP/samples/traces
FILES="$S/demo.tpp $S/gen-mixed.tpp $S/threads-seen-late.tpp"
CH=$_scratch/ch
export TRACEPP
if ! [ -x /usr/sbin/clickhouse-server ] || ! command -v clickhouse-client >/dev/null; then
	test_skip 'ClickHouse cluster' 'clickhouse-server/clickhouse-client not installed (make deps installs them)'
	test_done
	exit
fi
trap '"$TOP/fleet/cluster.sh" stop "$CH"; _cleanup' EXIT

# SQL over HTTP (curl starts faster than clickhouse-client)
q() { curl -K "$CH/curlrc" -sS --fail-with-body --data-binary "$1" "http://127.0.0.1:${2:-$H1}/"; }

# tracepp's own answer (CSV per file, keyed by the file's trace_id) beside
# ClickHouse's (TSV): the same set of rows.
cat >"$_scratch/same.py" <<'PY'
import csv, sys
want, got = set(), set()
keys = sys.argv[3].split(",")
for path, tid in (a.split("=") for a in sys.argv[4:]):
    for r in csv.DictReader(open(path, newline="")):
        row = ("vm", tid) + tuple(r[k] for k in keys)
        if eval(sys.argv[2], {}, {"r": r}):
            want.add(row)
for line in open(sys.argv[1]):
    got.add(tuple(line.rstrip("\n").split("\t")))
assert want and want == got, ("tracepp only", sorted(want - got)[:5], "clickhouse only", sorted(got - want)[:5])
print(len(got), "rows agree")
PY
# each file's trace_id, as its rows carry it (test 1 keeps them)
ids() { cat "$_scratch/ids"; }

by_id() { # CMD: tracepp CMD --format=csv per recording, named by trace_id, as same.py args
	while read -r f id; do
		$TRACEPP $1 --format=csv "$f" >"$id.csv" 2>/dev/null || return 1
		echo "$id.csv=$id"
	done < <(ids)
}

test_expect 'two servers on loopback, two shards, the tables and their Distributed tables; three recordings loaded through it' '
	"$TOP/fleet/cluster.sh" start "$CH" && [ "$(stat -c %a "$CH")" = 700 ] &&
	read -r P1 P2 H1 H2 <"$CH/ports" && cp "$CH/ports" "$_scratch/p" &&
	# another local user reaches the ports, not the data: no query without the password
	[ "$(stat -c %a "$CH/curlrc" "$CH/client.xml" | sort -u)" = 600 ] &&
	! curl -sS --fail "http://127.0.0.1:$H1/?query=SELECT%201" 2>/dev/null && [ "$(q "SELECT 1")" = 1 ] &&
	for f in $FILES; do
		echo "$f $($TRACEPP export --table=tasks "$f" | sed -n "2{s/^[^,]*,\([^,]*\),.*/\1/p}")"
	done >"$_scratch/ids" && [ $(cut -d" " -f2 "$_scratch/ids" | sort -u | grep -c .) = 3 ] &&
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
	[ "$(q "SELECT count() FROM events_local" "$H2")" -gt 0 ]
'
read -r P1 P2 H1 H2 <"$_scratch/p" 2>/dev/null

test_expect 'switches per task per recording (raw sched_switch events in SQL) and on-CPU ns per task (run slices summed) are tracepp sched'"'"'s' '
	args=$(by_id sched) &&
	q "SELECT host, trace_id, toString(toInt32(visitParamExtractInt(fields, '"'prev_pid'"')) AS t), toString(count())
	   FROM events WHERE type = '"'sched_switch'"' AND t != 0 GROUP BY host, trace_id, t" >sw.tsv &&
	python3 "$_scratch/same.py" sw.tsv "r[\"tid\"] != \"0\" and r[\"switches\"] != \"0\"" tid,switches $args &&
	q "SELECT host, trace_id, toString(tid), toString(sum(dur_ns)) FROM sched WHERE kind = '"'run'"'
	   GROUP BY host, trace_id, tid" >on.tsv &&
	python3 "$_scratch/same.py" on.tsv "r[\"tid\"] != \"0\" and r[\"oncpu_ns\"] != \"0\"" tid,oncpu_ns $args
'

test_expect 'calls per function per recording are tracepp callgraph'"'"'s' '
	args=$(by_id callgraph) &&
	q "SELECT host, trace_id, func, toString(countIf(ended != '"'orphan'"')) FROM calls GROUP BY host, trace_id, func" >c.tsv &&
	python3 "$_scratch/same.py" c.tsv True func,calls $args
'

test_expect 'block requests and their p50 device time per device and op are tracepp io'"'"'s' '
	args=$(by_id io) &&
	q "SELECT host, trace_id, dev, op, toString(count()),
	   toString(if(countIf(issue_ns > 0) = 0, 0, arrayElement(arraySort(groupArrayIf(device_ns, issue_ns > 0)),
	          toUInt64(ceil(0.5 * countIf(issue_ns > 0))))))
	   FROM io GROUP BY host, trace_id, dev, op" >io.tsv &&
	python3 "$_scratch/same.py" io.tsv True dev,op,count,p50_ns $args
'

test_expect 'loading the same recordings again adds no row: each is skipped by its trace_id' '
	read -r P1 P2 H1 H2 <"$_scratch/p" &&
	before=$(q "SELECT count() FROM calls") &&
	FLEET_CURLRC=$CH/curlrc TRACEPP=$TRACEPP "$TOP/fleet/load.sh" calls "$H1" $FILES 2>err &&
	cat err && [ "$(grep -c "already holds its rows" err)" = 3 ] && [ "$(q "SELECT count() FROM calls")" = "$before" ]
'

test_expect 'the cluster stops: both servers gone, their ports closed' '
	pids="$(cat "$CH"/s1/pid "$CH"/s2/pid)" && "$TOP/fleet/cluster.sh" stop "$CH" &&
	for p in $pids; do ! kill -0 $p 2>/dev/null || exit 1; done &&
	! q "SELECT 1" 2>/dev/null && ! clickhouse-client --port "$P2" --query "SELECT 1" 2>/dev/null
'

test_done
