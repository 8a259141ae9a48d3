#!/usr/bin/env bash
# DuckDB reads tracepp's export as it is: its own engine (npm
# @duckdb/node-api, a prebuilt library, installed by make deps with npm ci
# --ignore-scripts) creates each table from `export --schema=duckdb` and
# COPYs the CSV and the JSON lines into it, no conversion. Both formats load
# the same rows, and SQL on them gives what tracepp gives on the same
# files: switches per task (from the raw sched_switch events' fields),
# on-CPU ns per task (the run slices summed), calls per function, block
# requests and their p50 per device.
# san: skip
. "$(dirname "$0")/lib.sh"
S=$TOP/samples/traces
FILES="$S/demo.tpp $S/gen-mixed.tpp $S/threads-seen-late.tpp"
TABLES="events calls sched io tasks"
if ! [ -d "$TOP/tests/tools/node_modules/@duckdb/node-api" ] || ! command -v node >/dev/null; then
	test_skip 'DuckDB reads the export' 'npm @duckdb/node-api not installed in tests/tools (make deps installs it)'
	test_done
	exit
fi

# tracepp's answer (CSV per file, by trace_id) beside DuckDB's (a JSON
# array of rows): the same set of rows
cat >"$_scratch/same.py" <<'PY'
import csv, json, sys
want = set()
keys = sys.argv[3].split(",")
for path, tid in (a.split("=") for a in sys.argv[4:]):
    for r in csv.DictReader(open(path, newline="")):
        if eval(sys.argv[2], {}, {"r": r}):
            want.add(("vm", tid) + tuple(r[k] for k in keys))
got = {tuple(x) for x in json.load(open(sys.argv[1]))}
assert want and want == got, ("tracepp only", sorted(want - got)[:5], "duckdb only", sorted(got - want)[:5])
print(len(got), "rows agree")
PY

test_expect 'DuckDB creates every table from --schema=duckdb and loads the CSV and the JSON lines of three recordings: the same rows' '
	args= &&
	for t in $TABLES; do
		$TRACEPP export --table=$t --schema=duckdb >$t.ddl &&
		$TRACEPP export --table=$t --format=csv $FILES >$_scratch/$t.csv &&
		$TRACEPP export --table=$t --format=jsonl $FILES >$_scratch/$t.jsonl || exit 1
		args="$args ${t}_c=$t.ddl=$_scratch/$t.csv ${t}_j=$t.ddl=$_scratch/$t.jsonl"
		echo "SELECT (SELECT count(*) FROM ${t}_c), (SELECT count(*) FROM ${t}_j),
		  (SELECT count(*) FROM (SELECT * FROM ${t}_c EXCEPT ALL SELECT * FROM ${t}_j)),
		  (SELECT count(*) FROM (SELECT * FROM ${t}_j EXCEPT ALL SELECT * FROM ${t}_c))" | tr "\n" " " >>q; echo >>q
	done &&
	cat >>q <<-"SQL" &&
	SELECT host, trace_id, CAST(CAST(json_extract(fields, '"'"'$.prev_pid'"'"') AS INTEGER) AS VARCHAR) AS t, CAST(count(*) AS VARCHAR) FROM events_c WHERE type = '"'"'sched_switch'"'"' AND t != '"'"'0'"'"' GROUP BY ALL
	SELECT host, trace_id, CAST(tid AS VARCHAR), CAST(sum(dur_ns) AS VARCHAR) FROM sched_j WHERE kind = '"'"'run'"'"' GROUP BY ALL
	SELECT host, trace_id, func, CAST(count(*) FILTER (WHERE ended != '"'"'orphan'"'"') AS VARCHAR) FROM calls_j GROUP BY ALL
	SELECT host, trace_id, dev, op, CAST(count(*) AS VARCHAR), CAST(coalesce(list_sort(list(device_ns) FILTER (WHERE issue_ns > 0))[CAST(ceil(0.5 * count(*) FILTER (WHERE issue_ns > 0)) AS BIGINT)], 0) AS VARCHAR) FROM io_c GROUP BY ALL
	SQL
	node "$TOP/tests/duckdb_read.mjs" $args <q >out && cat out &&
	head -5 out | python3 -c "
import json, sys
for t, line in zip(\"$TABLES\".split(), sys.stdin):
    (c, j, a, b), = json.loads(line)
    assert int(c) == int(j) > 0 and a == b == \"0\", (t, c, j, a, b)
" &&
	for i in 1 2 3 4; do sed -n "$((5 + i))p" out >$_scratch/ans.$i; done &&
	for f in $FILES; do
		echo "$f $($TRACEPP export --table=tasks "$f" | sed -n "2{s/^[^,]*,\([^,]*\),.*/\1/p}")"
	done >$_scratch/ids
'

by_id() { # CMD: tracepp CMD --format=csv per file, named by trace_id, as same.py args
	while read -r f id; do
		$TRACEPP $1 --format=csv "$f" >"$id.csv" 2>/dev/null || return 1
		echo "$id.csv=$id"
	done <"$_scratch/ids"
}

test_expect 'switches and on-CPU ns per task per recording in DuckDB SQL are tracepp sched'"'"'s' '
	args=$(by_id sched) &&
	python3 "$_scratch/same.py" $_scratch/ans.1 "r[\"tid\"] != \"0\" and r[\"switches\"] != \"0\"" tid,switches $args &&
	python3 "$_scratch/same.py" $_scratch/ans.2 "r[\"tid\"] != \"0\" and r[\"oncpu_ns\"] != \"0\"" tid,oncpu_ns $args
'

test_expect 'calls per function per recording in DuckDB SQL are tracepp callgraph'"'"'s' '
	python3 "$_scratch/same.py" $_scratch/ans.3 True func,calls $(by_id callgraph)
'

test_expect 'block requests and their p50 per device and op in DuckDB SQL are tracepp io'"'"'s' '
	python3 "$_scratch/same.py" $_scratch/ans.4 True dev,op,count,p50_ns $(by_id io)
'

test_done
