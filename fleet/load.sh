#!/usr/bin/env bash
# Loads recordings into the cluster: one table's rows, ClickHouse RowBinary
# streamed from tracepp export into the Distributed table over HTTP (no
# file between; the server spreads them over the shards).
#   fleet/load.sh TABLE HTTP_PORT FILE...
# FLEET_CURLRC: the cluster's DIR/curlrc (cluster.sh), the user and password.
set -eo pipefail
[ $# -ge 3 ] || { echo "usage: $0 TABLE HTTP_PORT FILE..." >&2; exit 2; }
t=$1 p=$2
shift 2
"${TRACEPP:-tracepp}" export --table="$t" --format=rowbinary "$@" |
	curl ${FLEET_CURLRC:+-K "$FLEET_CURLRC"} -sS --fail-with-body -H 'Transfer-Encoding: chunked' --data-binary @- \
		"http://127.0.0.1:$p/?query=INSERT%20INTO%20$t%20FORMAT%20RowBinary"
