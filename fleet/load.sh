#!/usr/bin/env bash
# Loads recordings into the cluster: one table's rows, ClickHouse RowBinary
# streamed from tracepp export into the Distributed table over HTTP (no
# file between; the server spreads them over the shards).
#   fleet/load.sh TABLE HTTP_PORT FILE...
# One INSERT per recording, and a recording whose trace_id the table
# already holds is skipped: a load that fails half-way leaves whole
# recordings only, and running it again adds no row twice.
# FLEET_CURLRC: the cluster's DIR/curlrc (cluster.sh), the user and password.
set -o pipefail
[ $# -ge 3 ] || { echo "usage: $0 TABLE HTTP_PORT FILE..." >&2; exit 2; }
t=$1 p=$2
shift 2
tp=${TRACEPP:-tracepp}
curl_() { curl ${FLEET_CURLRC:+-K "$FLEET_CURLRC"} -sS --fail-with-body "$@"; }
for f in "$@"; do
	# the recording's trace_id: the second column of its first row (the
	# export stops at the pipe's end)
	id=$("$tp" export --table="$t" --format=csv "$f" 2>/dev/null | sed -n '2{s/^[^,]*,\([0-9a-f]*\),.*/\1/p;q}')
	if [ -n "$id" ]; then
		n=$(echo "SELECT count() FROM $t WHERE trace_id = '$id'" | curl_ --data-binary @- "http://127.0.0.1:$p/") ||
			exit 1
		[ "$n" = 0 ] || { echo "$0: $f: $t already holds its rows (trace_id $id): skipped" >&2; continue; }
	fi
	"$tp" export --table="$t" --format=rowbinary "$f" |
		curl_ -H 'Transfer-Encoding: chunked' --data-binary @- \
			"http://127.0.0.1:$p/?query=INSERT%20INTO%20$t%20FORMAT%20RowBinary" || exit 1
done
