#!/usr/bin/env bash
# Function analyses on real recordings of the sample programs, whose call
# trees are known from their source: callgraph counts (also against
# uftrace report on the same binary), the call tree, callers/callees,
# folded stacks, calls that never returned (longjmp), replay's flow view
# and its filters, and the latency of a function that sleeps a known time.
# san: skip
. "$(dirname "$0")/lib.sh"
S=$B/samples

tracefs_ok() { [ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; [ -d /sys/kernel/tracing/instances ]; }

# calls FILE.json FUNC [KEY]: from callgraph --format=json
calls() { python3 -c 'import json,sys
rows = [r for r in json.load(open(sys.argv[1])) if r["func"] == sys.argv[2]]
print(rows[0][sys.argv[3] if len(sys.argv) > 3 else "calls"] if rows else 0)' "$@"; }

# expect_counts SAMPLE FILE.json: the "expect: f=N ..." line of the sample's
# source against the recorded call counts.
expect_counts() {
	src=$(ls "$TOP/samples/src/$1".c* 2>/dev/null | head -1)
	line=$(sed -n "s/^ \* expect: //p" "$src" | sed "s|\*/||")
	[ -n "$line" ] || { echo "no expect line in $src"; return 1; }
	for kv in $line; do
		f=${kv%=*} want=${kv#*=} got=$(calls "$2" "${kv%=*}")
		echo "$1 $f: want $want got $got"
		[ "$got" = "$want" ] || return 1
	done
}

for v in fi pg; do
	for s in s-chain s-recursion s-threads s-longjmp; do
		test_expect "callgraph counts of $s-$v equal the call counts its source states" '
			"$TRACEREC" record -q -o t.tpp -- "$S/'$s-$v'" >/dev/null 2>err || { cat err; exit 1; }
			"$TRACEPP" callgraph --format=json t.tpp >cg.json && expect_counts '$s' cg.json
		'
	done
done

test_expect 'callgraph counts equal uftrace report on the same -pg binary (s-threads, s-recursion)' '
	for s in s-threads s-recursion; do
		"$TRACEREC" record -q -o t.tpp -- "$S/$s-pg" >/dev/null 2>err || { cat err; exit 1; }
		"$TRACEPP" callgraph --format=json t.tpp >cg.json &&
		uftrace record --no-libcall --no-event -d ut "$S/$s-pg" >/dev/null 2>&1 &&
		uftrace report -d ut -f call 2>/dev/null | awk "NR > 2 && NF == 2 {print \$2, \$1}" >uf.txt &&
		[ -s uf.txt ] && cat uf.txt &&
		while read -r f n; do
			got=$(calls cg.json "$f"); echo "$s $f: uftrace $n tracepp $got"
			[ "$got" = "$n" ] || exit 1
		done <uf.txt
		rm -rf ut
	done
'

test_expect 'longjmp: mid, inner, deep never return and are marked, not paired wrong' '
	"$TRACEREC" record -q -o t.tpp -- "$S/s-longjmp-fi" >/dev/null 2>err &&
	"$TRACEPP" callgraph --format=json t.tpp >cg.json 2>warn && cat warn &&
	for f in mid inner deep; do [ "$(calls cg.json $f noret)" = 3 ] || exit 1; done &&
	for f in main outer after; do [ "$(calls cg.json $f noret)" = 0 ] || exit 1; done &&
	grep -q "9 unwound" warn &&
	"$TRACEPP" replay --no-kernel t.tpp | grep -c "\[unwound\]" | grep -qx 9
'

test_expect 'call tree by path, callers, callees and folded stacks of s-chain' '
	"$TRACEREC" record -q -o t.tpp -- "$S/s-chain-fi" >/dev/null 2>err &&
	"$TRACEPP" callgraph --tree --format=json t.tpp >tree.json &&
	python3 -c "import json
t = json.load(open(\"tree.json\"))
paths = {\";\".join(r[\"path\"]): r for r in t}
print(sorted(paths))
assert paths[\"main;a;b;c\"][\"calls\"] == 1 and paths[\"main;a;b;c\"][\"depth\"] == 3
assert paths[\"main\"][\"total_ns\"] >= paths[\"main;a\"][\"total_ns\"] >= paths[\"main;a;b\"][\"total_ns\"]
" &&
	"$TRACEPP" callgraph --callers=b --format=json t.tpp >up.json &&
	[ "$(calls up.json a)" = 1 ] && [ "$(python3 -c "import json; print(len(json.load(open(\"up.json\"))))")" = 1 ] &&
	"$TRACEPP" callgraph --callees=a --format=json t.tpp >down.json && [ "$(calls down.json b)" = 1 ] &&
	"$TRACEPP" callgraph --folded t.tpp >f.txt && cat f.txt &&
	grep -Eq "^main;a;b;c [0-9]+$" f.txt && grep -Eq "^main [0-9]+$" f.txt &&
	! "$TRACEPP" callgraph --callers=nosuch t.tpp 2>e && [ "$(wc -l <e)" = 1 ]
'

test_expect 'replay shows the s-chain tree indented, leaf calls on one line' '
	"$TRACEREC" record -q -o t.tpp -- "$S/s-chain-fi" >/dev/null 2>err &&
	"$TRACEPP" replay --no-kernel t.tpp >r.txt && cat r.txt &&
	grep -v "^#" r.txt | sed -n "s/^[^|]*| //p" >flow &&
	printf "%s\n" "main() {" "  a() {" "    b() {" "      c();" "    } /* b */" "  } /* a */" "} /* main */" >want &&
	diff want flow &&
	"$TRACEPP" replay --no-kernel --func=b t.tpp | grep -v "^#" | sed -n "s/^[^|]*| //p" >fb &&
	printf "%s\n" "b() {" "  c();" "} /* b */" | diff - fb &&
	"$TRACEPP" replay --no-kernel --depth=2 t.tpp | grep -v "^#" | sed -n "s/^[^|]*| //p" >fd &&
	printf "%s\n" "main() {" "  a();" "} /* main */" | diff - fd &&
	"$TRACEPP" replay --format=json t.tpp | python3 -c "import json,sys; d=json.load(sys.stdin); print(len(d)); assert any(r.get(\"func\")==\"c\" and r[\"kind\"]==\"call\" for r in d)"
'

cc -O0 -finstrument-functions -o "$_scratch/w-nap" "$TOP/tests/analysis/w-nap.c" || exit 1
if ! tracefs_ok; then
	test_skip 'latency of a sleeping function; sched events inside calls' 'no tracefs'
else
test_expect 'latency --func nap: 7 calls of at least 20 ms, each as long as the program measured it' '
	"$TRACEREC" record -q -e sched -o n.tpp -- "$_scratch/w-nap" 7 20 >own 2>err || { cat err; exit 1; }
	"$TRACEPP" latency --func=nap --format=json n.tpp >l.json && cat l.json own &&
	python3 -c "import json, math
own = sorted(int(l.split()[1]) for l in open(\"own\"))
r = json.load(open(\"l.json\"))
assert len(r) == 1 and r[0][\"func\"] == \"nap\", r
r = r[0]
assert r[\"count\"] == len(own) == 7, r
rank = lambda p: own[max(1, math.ceil(p / 100 * len(own))) - 1]
# the program measures around the call: the call itself is shorter by at
# most the cost of recording its entry and exit
for k, want in ((\"min_ns\", own[0]), (\"p50_ns\", rank(50)), (\"p90_ns\", rank(90)), (\"max_ns\", own[-1])):
    print(k, r[k], want)
    assert want - 100000 <= r[k] <= want, (k, r[k], want)
assert r[\"min_ns\"] >= 20000000
assert abs(r[\"avg_ns\"] - sum(own) / len(own)) <= 100000
" &&
	"$TRACEPP" latency --func="t*" n.tpp >l.txt && cat l.txt && grep -q "^func  *tick" l.txt && grep -q "Distribution" l.txt
'

test_expect 'replay: the sleep shows as a sched_switch inside nap(); --min-duration keeps only long calls' '
	"$TRACEREC" record -q -a -e sched -o n.tpp -- "$_scratch/w-nap" 2 20 >/dev/null 2>err &&
	"$TRACEPP" replay --tid="$(python3 -c "import json,subprocess;print([t for t in json.load(open(\"/dev/stdin\"))][0][\"tid\"])" < <("$TRACEPP" sched --format=json --comm=w-nap n.tpp))" n.tpp >r.txt; cat r.txt &&
	awk "/nap\(.*\{/ {inside=1} inside && /\[sched_switch\]/ {sw++} /\} \/\* nap \*\// {inside=0} END {print sw; exit !(sw >= 2)}" r.txt &&
	# the switch back in is shown when the recording has it (a pid-filtered
	# recording can miss idle -> task switches): then it is the sleep, ms
	off=$(awk "/\[sched_in\]/ {print \$4, \$5; exit}" r.txt) && echo "off-CPU ${off:-not recorded}" &&
	case "$off" in ""|*ms) ;; *) exit 1 ;; esac &&
	"$TRACEPP" replay --no-kernel --min-duration=10ms n.tpp | grep -v "^#" | sed -n "s/^[^|]*| //p" >m &&
	cat m && ! grep -q tick m && [ "$(grep -c "nap" m)" = 2 ] && grep -q "main() {" m
'
fi
test_done
