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
	# the recording's trace_id, from its first row as JSON (a CSV cut would
	# split at a comma of a quoted hostname; the export stops at the pipe's end)
	id=$("$tp" export --table="$t" --format=jsonl "$f" 2>/dev/null | head -1 |
		sed -n 's/.*"trace_id":"\([0-9a-f]*\)".*/\1/p')
	if [ -n "$id" ]; then
		n=$(echo "SELECT count() FROM $t WHERE trace_id = '$id'" | curl_ --data-binary @- "http://127.0.0.1:$p/") ||
			exit 1
		[ "$n" = 0 ] || { echo "$0: $f: $t already holds its rows (trace_id $id): skipped" >&2; continue; }
	fi
	# RowBinary is positional: the INSERT names the export's columns, so a
	# table made by another version's DDL is refused whole ("no such
	# column"), not filled with shifted bytes
	cols=$("$tp" export --table="$t" --format=csv "$f" 2>/dev/null | head -1)
	case $cols in host,trace_id,*) ;; *) echo "$0: $f: tracepp export gave no header" >&2; exit 1 ;; esac
	"$tp" export --table="$t" --format=rowbinary "$f" |
		curl_ -H 'Transfer-Encoding: chunked' --data-binary @- \
			"http://127.0.0.1:$p/?query=INSERT%20INTO%20$t%20($cols)%20FORMAT%20RowBinary" || exit 1
done
