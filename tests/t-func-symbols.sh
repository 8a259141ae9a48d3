#!/usr/bin/env bash
# Offline symbols: the file carries maps, build-ids and symbol tables, so
# function names survive the binary being deleted after recording.
. "$(dirname "$0")/lib.sh"

test_expect "names resolve from the file alone after the binary is deleted" "
	cp '$B/samples/s-recursion-fi' ./victim &&
	'$TRACEREC' record -q -o t.tpp -- ./victim >/dev/null && rm victim &&
	'$TRACEPP' dump t.tpp --format=json | python3 -c '
import json, sys, collections
c = collections.Counter(json.loads(l).get(\"sym\") for l in sys.stdin if \"func_entry\" in l)
assert c == {\"fib\": 177, \"main\": 1}, c'"

test_expect "the build-id stored for the program is the one readelf -n reports, not another binary's" "
	cp '$B/samples/s-chain-pg' ./prog &&
	'$TRACEREC' record -q -o t.tpp -- ./prog >/dev/null &&
	bid=\$(readelf -n prog | awk '/Build ID/ { print \$3 }') && [ -n \"\$bid\" ] &&
	other=\$(readelf -n '$B/samples/s-recursion-pg' | awk '/Build ID/ { print \$3 }') && [ \"\$other\" != \"\$bid\" ] &&
	'$TRACEPP' info t.tpp >info.txt && cat info.txt &&
	grep -Eq 'metadata:.* [1-9][0-9]* symbol tables?' info.txt &&
	python3 -c '
import sys
# LZ4 can only refer back to bytes it has seen, so the first copy of 20
# random bytes is stored literally even in a compressed chunk.
d = open(\"t.tpp\", \"rb\").read()
bid, other = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2])
print(\"build-id\", sys.argv[1], \"found\", d.count(bid), \"other\", d.count(other))
assert bid in d and other not in d' \"\$bid\" \"\$other\""
test_done
