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

test_expect "the symbol table stored for the program is its ELF's, with its build-id" "
	cp '$B/samples/s-chain-pg' ./prog &&
	'$TRACEREC' record -q -o t.tpp -- ./prog >/dev/null &&
	bid=\$(readelf -n prog | awk '/Build ID/ { print \$3 }') && [ -n \"\$bid\" ] &&
	'$TRACEPP' info t.tpp >info.txt && cat info.txt &&
	grep -Eq 'symbol tables?: *[1-9]|[1-9][0-9]* symbol table' info.txt &&
	nm prog | grep -q ' T c\$'"
test_done
