#!/usr/bin/env bash
# Compiled-in function tracing: the sample programs (samples/src/s-*) have
# call counts known from their source (the "expect:" line); recording their
# -pg and -finstrument-functions builds must find exactly those counts, and
# exactly what uftrace finds on the same binaries.
# san: skip
. "$(dirname "$0")/lib.sh"

# "name=count ..." of one event type in a dump, sorted by name; only names in $2 (if given).
counts() { # FILE TYPE [NAMES]
	"$TRACEPP" dump "$1" --format=json | python3 -c '
import json, sys, collections
want = set(sys.argv[2].split()) if len(sys.argv) > 2 else None
c = collections.Counter()
for l in sys.stdin:
    d = json.loads(l)
    if d.get("type") == sys.argv[1] and (want is None or d.get("sym") in want):
        c[d.get("sym", "?")] += 1
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))' "$2" ${3:+"$3"}
}
# The "expect:" (or "exits:") line of a sample, normalised like counts().
expected() { # SAMPLE KEY
	grep -ho "$2: .*" "$TOP"/samples/src/"$1".c* | sed "s/^$2: //; s/ *\*\/.*//" | tr ' ' '\n' |
		grep -v '=0$' | sort | tr '\n' ' ' | sed 's/ $//'
}
names_of() { expected "$1" expect | sed 's/=[0-9]*//g'; }

for src in "$TOP"/samples/src/s-*.c "$TOP"/samples/src/s-*.cc; do
	s=$(basename "${src%.*}")
	for v in pg fi; do
		test_expect "$s-$v: recorded entries per function equal the source's counts" "
			'$TRACEREC' record -q -o t.tpp -- '$B/samples/$s-$v' >out.txt &&
			exp=\$(expected $s expect) && got=\$(counts t.tpp func_entry) &&
			echo \"expected: \$exp\" && echo \"recorded: \$got\" && [ \"\$exp\" = \"\$got\" ]"
	done
done

for v in pg fi; do
	test_expect "s-longjmp-$v: frames skipped by longjmp are unwound, never returned" "
		'$TRACEREC' record -q -o t.tpp -- '$B/samples/s-longjmp-$v' >/dev/null &&
		[ \"\$(counts t.tpp func_exit)\" = \"\$(expected s-longjmp exits)\" ] &&
		[ \"\$(counts t.tpp func_unwind)\" = 'deep=3 inner=3 mid=3' ]"
done
for v in pg fi; do
	test_expect "s-float-$v: SSE and x87 arguments and results are the untraced build's, bit for bit" "
		'$B/samples/s-float' >want.txt &&
		'$TRACEREC' record -q -o t.tpp -- '$B/samples/s-float-$v' >got.txt &&
		cat want.txt got.txt && cmp want.txt got.txt"
done
test_expect "s-exception-pg: frames a C++ exception skipped are unwound, the catcher returns" "
	'$TRACEREC' record -q -o t.tpp -- '$B/samples/s-exception-pg' >/dev/null &&
	[ \"\$(counts t.tpp func_exit)\" = 'main=1 run=3' ] &&
	[ \"\$(counts t.tpp func_unwind)\" = 'deeper=3 thrower=3' ]"

test_expect "every thread of s-threads gets its own stream, entries and exits balance per thread" "
	'$TRACEREC' record -q -o t.tpp -- '$B/samples/s-threads-fi' >/dev/null &&
	'$TRACEPP' dump t.tpp --format=json | python3 -c '
import json, sys, collections
bal = collections.Counter(); n = collections.Counter()
for l in sys.stdin:
    d = json.loads(l)
    if d[\"type\"] == \"func_entry\": bal[d[\"tid\"]] += 1; n[d[\"tid\"]] += 1
    elif d[\"type\"] == \"func_exit\": bal[d[\"tid\"]] -= 1
assert len(n) == 5, n
assert sorted(n.values()) == [1, 101, 101, 101, 101], n
assert all(v == 0 for v in bal.values()), bal'"

for v in pg fi; do
	test_expect "s-threads-$v: one thread-exit event per thread, after its last call, before the kernel's sched_process_exit" "
		'$TRACEREC' record -q -e sched -o t.tpp -- '$B/samples/s-threads-$v' >/dev/null &&
		'$TRACEPP' dump t.tpp --format=json | python3 -c '
import json, sys, collections
last = {}; texit = collections.defaultdict(list); kexit = {}
for l in sys.stdin:
    d = json.loads(l)
    t, tid = d[\"type\"], d[\"tid\"]
    if t in (\"func_entry\", \"func_exit\", \"func_unwind\"): last[tid] = max(last.get(tid, 0), d[\"ts\"])
    elif t == \"func_thread_exit\": texit[tid].append(d[\"ts\"])
    elif t == \"sched_process_exit\": kexit[d[\"pid\"]] = d[\"ts\"]
print(\"last call\", last); print(\"thread exit\", dict(texit)); print(\"kernel exit\", kexit)
assert len(last) == 5 and set(texit) == set(last), (last, texit)
for tid, ts in texit.items():
    assert len(ts) == 1 and last[tid] <= ts[0] <= kexit[tid], tid'"
done

test_expect "--no-func records no function events from an instrumented program" "
	'$TRACEREC' record -q --no-func -o t.tpp -- '$B/samples/s-chain-pg' >/dev/null &&
	[ -z \"\$(counts t.tpp func_entry)\" ]"

test_expect "-F a -N b: a and what it calls, without b" "
	'$TRACEREC' record -q -F a -N b -o t.tpp -- '$B/samples/s-chain-fi' >/dev/null &&
	[ \"\$(counts t.tpp func_entry)\" = 'a=1 c=1' ]"

test_expect "-D 2 keeps the two outermost levels" "
	'$TRACEREC' record -q -D 2 -o t.tpp -- '$B/samples/s-chain-pg' >/dev/null &&
	[ \"\$(counts t.tpp func_entry)\" = 'a=1 main=1' ] && [ \"\$(counts t.tpp func_exit)\" = 'a=1 main=1' ]"

test_expect "--min-duration drops short calls and keeps the long ones with their callers" "
	'$TRACEREC' record -q --min-duration 50000000 -o t.tpp -- '$B/samples/s-chain-fi' >/dev/null &&
	[ -z \"\$(counts t.tpp func_entry)\" ] &&
	'$TRACEREC' record -q --min-duration 1 -o t.tpp -- '$B/samples/s-chain-fi' >/dev/null &&
	[ \"\$(counts t.tpp func_entry)\" = 'a=1 b=1 c=1 main=1' ]"

test_expect "function timestamps are on the kernel's clock (within the recording's sched events)" "
	'$TRACEREC' record -q -e sched -o t.tpp -- '$B/samples/s-recursion-pg' >/dev/null &&
	'$TRACEPP' dump t.tpp --format=json | python3 -c '
import json, sys
k = []; f = []
for l in sys.stdin:
    d = json.loads(l)
    (f if d[\"type\"].startswith(\"func_\") else k).append(d[\"ts\"])
assert f and k, (len(f), len(k))
# the process was forked and exec-ed (sched events) before its first call and
# exited after its last one
assert min(k) < min(f) and max(f) < max(k), (min(k), min(f), max(f), max(k))'"

if command -v uftrace >/dev/null; then
	for s in s-chain s-recursion s-threads s-signal s-fork-exec; do
		test_expect "$s-pg: the same counts as uftrace record on the same binary" "
			uftrace record --no-libcall -d uf '$B/samples/$s-pg' >/dev/null 2>&1 &&
			uf=\$(uftrace report -d uf -f call --no-pager | awk 'NR > 2 && \$2 !~ /:/ { print \$2 \"=\" \$1 }' |
				grep -E \"^(\$(names_of $s | tr ' ' '|'))=\" | sort | tr '\n' ' ' | sed 's/ \$//') &&
			'$TRACEREC' record -q -o t.tpp -- '$B/samples/$s-pg' >/dev/null &&
			got=\$(counts t.tpp func_entry) && echo \"uftrace: \$uf\" && echo \"tracerec: \$got\" && [ \"\$uf\" = \"\$got\" ]"
	done
else
	test_skip "counts match uftrace" "uftrace is not installed"
fi
test_done
