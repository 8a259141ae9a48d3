#!/usr/bin/env bash
# DuckDB reads tracepp's export as it is: its own engine (npm
# @duckdb/node-api, a prebuilt library, installed by make deps with npm ci
# --ignore-scripts) creates each table from `export --schema=duckdb` and
# COPYs the CSV and the JSON lines into it, no conversion. Both formats load
# the same rows of four hosts' recordings (a real one, host vm, and three
# by tpp-gen under hostnames h1, h2, h3: tests/fleet_hosts.sh), and SQL on
# them gives, per host, what tracepp --by-host gives on the same files and,
# over the fleet, tracepp's merged answer: switches per task (from the raw
# sched_switch events' fields: independent of tracepp's pairing), on-CPU ns
# per task (the run slices summed), calls per function, block requests per
# device and op from the raw block_rq_complete events (independent) and
# from the io table with their p50.
# san: skip
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/fleet_hosts.sh"
S=$TOP/samples/traces
TABLES="events calls sched io tasks"
if ! [ -d "$TOP/tests/tools/node_modules/@duckdb/node-api" ] || ! command -v node >/dev/null; then
	test_skip 'DuckDB reads the export' 'npm @duckdb/node-api not installed in tests/tools (make deps installs it)'
	test_done
	exit
fi
if ! HOSTS=$(fleet_hosts "$_scratch"); then
	test_skip 'DuckDB reads the export' 'tpp-gen under unshare -u (a hostname of its own) failed here'
	test_done
	exit
fi
FILES="$S/demo.tpp $(echo $HOSTS)"
# tracepp's answer (CSV) beside DuckDB's (a JSON array of rows): tests/sql_same.py
same() { python3 "$HERE/sql_same.py" "$@"; }

test_expect 'DuckDB creates every table from --schema=duckdb and loads the CSV and the JSON lines of four hosts'"'"' recordings: the same rows' '
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
	SELECT host, CAST(CAST(json_extract(fields, '"'"'$.prev_pid'"'"') AS INTEGER) AS VARCHAR) AS t, CAST(count(*) AS VARCHAR) FROM events_c WHERE type = '"'"'sched_switch'"'"' AND t != '"'"'0'"'"' GROUP BY ALL
	SELECT host, CAST(tid AS VARCHAR), CAST(sum(dur_ns) AS VARCHAR) FROM sched_j WHERE kind = '"'"'run'"'"' GROUP BY ALL
	SELECT host, func, CAST(count(*) FILTER (WHERE ended != '"'"'orphan'"'"') AS VARCHAR) FROM calls_j GROUP BY ALL
	SELECT func, CAST(count(*) FILTER (WHERE ended != '"'"'orphan'"'"') AS VARCHAR) FROM calls_c GROUP BY ALL
	SELECT host, dev, op, CAST(count(*) AS VARCHAR), CAST(coalesce(list_sort(list(device_ns) FILTER (WHERE issue_ns > 0))[CAST(ceil(0.5 * count(*) FILTER (WHERE issue_ns > 0)) AS BIGINT)], 0) AS VARCHAR) FROM io_c GROUP BY ALL
	SELECT dev, op, CAST(count(*) AS VARCHAR), CAST(coalesce(list_sort(list(device_ns) FILTER (WHERE issue_ns > 0))[CAST(ceil(0.5 * count(*) FILTER (WHERE issue_ns > 0)) AS BIGINT)], 0) AS VARCHAR) FROM io_j GROUP BY ALL
	SELECT host, CAST(d >> 20 AS VARCHAR) || '"'"':'"'"' || CAST(d & 1048575 AS VARCHAR), CASE WHEN contains(w, '"'"'D'"'"') THEN '"'"'discard'"'"' WHEN contains(w, '"'"'W'"'"') THEN '"'"'write'"'"' WHEN contains(w, '"'"'R'"'"') THEN '"'"'read'"'"' WHEN contains(w, '"'"'F'"'"') THEN '"'"'flush'"'"' ELSE '"'"'other'"'"' END, CAST(count(*) AS VARCHAR) FROM (SELECT host, CAST(json_extract(fields, '"'"'$.dev'"'"') AS UBIGINT) AS d, json_extract_string(fields, '"'"'$.rwbs'"'"') AS w FROM events_j WHERE type = '"'"'block_rq_complete'"'"') GROUP BY ALL
	SQL
	node "$TOP/tests/duckdb_read.mjs" $args <q >out && cat out &&
	head -5 out | python3 -c "
import json, sys
for t, line in zip(\"$TABLES\".split(), sys.stdin):
    (c, j, a, b), = json.loads(line)
    assert int(c) == int(j) > 0 and a == b == \"0\", (t, c, j, a, b)
" &&
	for i in 1 2 3 4 5 6 7; do sed -n "$((5 + i))p" out >$_scratch/ans.$i; done &&
	[ "$(python3 -c "import json; print(sorted({r[0] for r in json.load(open(\"$_scratch/ans.1\"))}))")" = "['"'"'h1'"'"', '"'"'h2'"'"', '"'"'h3'"'"', '"'"'vm'"'"']" ]
'

test_expect 'per host, switches and on-CPU ns per task in DuckDB SQL are tracepp sched --by-host'"'"'s' '
	$TRACEPP sched --by-host --format=csv $FILES >s.csv 2>/dev/null &&
	same $_scratch/ans.1 "r[\"tid\"] != \"0\" and r[\"switches\"] != \"0\"" tid,switches s.csv &&
	same $_scratch/ans.2 "r[\"tid\"] != \"0\" and r[\"oncpu_ns\"] != \"0\"" tid,oncpu_ns s.csv
'

test_expect 'calls per function in DuckDB SQL: per host tracepp callgraph --by-host'"'"'s, over the fleet its merged answer'"'"'s' '
	$TRACEPP callgraph --by-host --format=csv $FILES >h.csv 2>/dev/null &&
	$TRACEPP callgraph --format=csv $FILES >m.csv 2>/dev/null &&
	same $_scratch/ans.3 True func,calls h.csv && same $_scratch/ans.4 True func,calls m.csv
'

test_expect 'block requests per device and op in DuckDB SQL: raw block_rq_complete events and the io table with its p50 per host are tracepp io --by-host'"'"'s; over the fleet its merged count and p50' '
	$TRACEPP io --by-host --format=csv $FILES >h.csv 2>/dev/null &&
	$TRACEPP io --format=csv $FILES >m.csv 2>/dev/null &&
	same $_scratch/ans.7 True dev,op,count h.csv &&
	same $_scratch/ans.5 True dev,op,count,p50_ns h.csv && same $_scratch/ans.6 True dev,op,count,p50_ns m.csv
'

test_done
