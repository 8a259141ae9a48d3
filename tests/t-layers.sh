#!/usr/bin/env bash
# The shape of tracepp (issue 16): the rooms include only what
# postproc/README.md allows (tests/layers.py), one version for both programs
# and the files they write; every option the help of a command advertises is
# taken by its parser. Nothing here records: milliseconds.
. "$(dirname "$0")/lib.sh"
DEMO=$TOP/samples/traces/demo.tpp

test_expect 'every room includes only what postproc/README.md allows, no header by path, no import loop' '
	python3 "$TOP/tests/layers.py" "$TOP"
'

test_expect 'the libraries under tracepp are rooms too: format/ including a util/ header is a breach' '
	mkdir -p t/recorder && cp -r "$TOP/postproc" "$TOP/plot" "$TOP/util" "$TOP/format" "$TOP/decoders" t/ &&
	cp "$TOP"/recorder/*.h t/recorder/ && python3 "$TOP/tests/layers.py" t >/dev/null &&
	echo "#include \"hugemem.h\"" >>t/format/crc32c.c &&
	! python3 "$TOP/tests/layers.py" t >out.txt; cat out.txt
	grep -q "^format/crc32c.c:[0-9]*: includes hugemem.h of util, which format may not include" out.txt
'

test_expect 'one version (VERSION): tracepp --version, tracerec --version and the producer of a written file' '
	v=$(cat "$TOP/VERSION") && echo "VERSION=$v" && [ -n "$v" ] &&
	"$TRACEPP" --version | grep -qx "tracepp $v (format [0-9]*\.[0-9]*)" &&
	"$TRACEREC" --version | grep -qx "tracerec $v" &&
	"$GEN" -o g.tpp -n 100 >/dev/null 2>&1 &&
	[ "$("$TRACEPP" info --format=json g.tpp | jget producer_version)" = "$v" ]
'

# every --time-range=... spelling a --help shows, as written there
test_expect 'each --time-range grammar a --help advertises is the one its parser takes' '
	n=0 &&
	for c in dump replay callgraph latency sched io net script export; do
		"$TRACEPP" $c --help >h.txt 2>&1
		g=$(grep -o -- "--time-range=[A-Z]*[,:][A-Z]*" h.txt | head -1)
		[ -n "$g" ] || { echo "$c: no --time-range in its help"; continue; }
		case $g in *FROM,TO) ;; *) echo "$c advertises $g"; exit 1 ;; esac
		case $c in
		script) set -- -e "BEGIN { printf(\"x\\n\"); }" ;;
		export) set -- --format=folded ;;
		*) set -- ;;
		esac
		"$TRACEPP" $c "$@" --time-range=0s,10ms "$DEMO" >/dev/null 2>err.txt ||
			{ echo "$c rejects --time-range=0s,10ms:"; cat err.txt; exit 1; }
		n=$((n + 1))
	done && echo "$n commands" && [ $n = 9 ]
'

test_done
