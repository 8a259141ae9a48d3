#!/usr/bin/env bash
# The fleet tables on the two-shard cluster: on each server, TABLE_local
# (a MergeTree, the CREATE TABLE `tracepp export --schema=clickhouse` prints)
# and TABLE, a Distributed table over the cluster "tpp" that spreads rows by
# recording (sipHash64(trace_id): a recording's rows stay on one shard).
#   fleet/ddl.sh HTTP_PORT... [-- TABLE...]   (default: every table)
# Statements go over each server's HTTP interface on loopback. TRACEPP
# (default: tracepp on PATH) is the tracepp to ask for the schema;
# FLEET_CURLRC the cluster's DIR/curlrc (cluster.sh), the user and password.
set -eo pipefail
tracepp=${TRACEPP:-tracepp}
ports=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do ports+=("$1"); shift; done
[ $# -gt 0 ] && shift
tables=("$@")
[ ${#tables[@]} -gt 0 ] || tables=(events calls sched io net tasks conns)
[ ${#ports[@]} -gt 0 ] || { echo "usage: $0 HTTP_PORT... [-- TABLE...]" >&2; exit 2; }
sql() { curl ${FLEET_CURLRC:+-K "$FLEET_CURLRC"} -sS --fail-with-body --data-binary @- "http://127.0.0.1:$1/" >/dev/null; }
for p in "${ports[@]}"; do
	for t in "${tables[@]}"; do
		"$tracepp" export --table="$t" --schema=clickhouse |
			sed "1s/^CREATE TABLE $t\$/CREATE TABLE IF NOT EXISTS ${t}_local/; s/;\$//" | sql "$p"
		echo "CREATE TABLE IF NOT EXISTS $t AS ${t}_local
		      ENGINE = Distributed(tpp, default, ${t}_local, sipHash64(trace_id))" | sql "$p"
	done
done
