#!/usr/bin/env bash
# Dynamic uprobes on unmodified binaries (-u BIN:GLOB): every call of a probed
# function arrives once, with its return; arguments by fetch syntax and by
# DWARF name; bad input gets one clear error; no probe is left behind.
# san: skip
. "$(dirname "$0")/lib.sh"

TFS=/sys/kernel/tracing
mountpoint -q $TFS 2>/dev/null || mount -t tracefs nodev $TFS 2>/dev/null
# Types of a dump counted: "type=count ..." sorted.
types() {
	"$TRACEPP" dump "$1" --format=json | python3 -c '
import json, sys, collections
c = collections.Counter(json.loads(l)["type"] for l in sys.stdin)
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))'
}
# other recordings may be running: only a probe group whose recorder is gone is left behind
no_probes_left() {
	for g in $(grep -o "tpp_[0-9]*" $TFS/uprobe_events | sort -u); do
		kill -0 "${g#tpp_}" 2>/dev/null || { echo "probes $g left behind"; return 1; }
	done
}

if [ ! -w $TFS/uprobe_events ]; then
	test_skip "uprobe recordings" "no writable $TFS/uprobe_events (not root, or no CONFIG_UPROBE_EVENTS)"
	test_done
	exit
fi
S=$B/samples

test_expect "uprobes count every call: fib(10) is 177 entries and 177 returns, main 1" "
	'$TRACEREC' record -q -o t.tpp -u '$S/s-recursion:fib' -u '$S/s-recursion:main' -- '$S/s-recursion' >/dev/null &&
	[ \"\$(types t.tpp)\" = 'fib=177 fib__return=177 main=1 main__return=1' ] && no_probes_left"

test_expect "a glob places one probe pair per matching function" "
	'$TRACEREC' record -q -o t.tpp -u '$S/s-chain:[abc]' -- '$S/s-chain' >/dev/null &&
	[ \"\$(types t.tpp)\" = 'a=1 a__return=1 b=1 b__return=1 c=1 c__return=1' ] && no_probes_left"

test_expect "-A by DWARF name and \$retval: c(x=1) returns 2" "
	'$TRACEREC' record -q -o t.tpp -u '$S/s-chain:c' -A c:x -- '$S/s-chain' >/dev/null &&
	'$TRACEPP' dump t.tpp >d.txt && cat d.txt &&
	grep -q ' c: .*x=1' d.txt && grep -q ' c__return: .*ret=2' d.txt"

test_expect "-A in fetch syntax: a string argument of a libc function" "
	'$TRACEREC' record -q -o t.tpp -u libc:fopen -A 'fopen:+0(%di):string' -- python3 -c 'open(\"/etc/hostname\").close(); import ctypes; ctypes.CDLL(None).fopen(b\"/etc/passwd\", b\"r\")' >/dev/null &&
	'$TRACEPP' dump t.tpp | grep -q 'fopen: .*=/etc/passwd'"

test_expect "a glob that matches nothing: one clear error, non-zero exit, nothing left" "
	! '$TRACEREC' record -q -o t.tpp -u '$S/s-chain:nosuchfunc*' -- '$S/s-chain' 2>err.txt &&
	cat err.txt && [ \$(wc -l <err.txt) = 1 ] && grep -q 'no function .* matches' err.txt && no_probes_left"

test_expect "a binary with no symbols: says so" "
	cp '$S/s-chain' nosym && strip nosym &&
	! '$TRACEREC' record -q -o t.tpp -u ./nosym:a -- ./nosym 2>err.txt && cat err.txt &&
	grep -q 'no function symbols' err.txt && no_probes_left"

test_expect "a stripped library still has its dynamic symbols" "
	cp \$(ls /lib/x86_64-linux-gnu/libz.so.1* /usr/lib/x86_64-linux-gnu/libz.so.1* 2>/dev/null | head -1) libz-stripped.so &&
	strip libz-stripped.so && '$TRACEREC' record -q -o t.tpp --max-probes 2 -u ./libz-stripped.so:zlibVersion -- true >/dev/null && no_probes_left"

test_expect "a non-ELF path and a missing one: clear errors" "
	echo text >notelf &&
	! '$TRACEREC' record -q -o t.tpp -u ./notelf:a -- true 2>err.txt && grep -q 'not an ELF file' err.txt &&
	! '$TRACEREC' record -q -o t.tpp -u ./missing:a -- true 2>err.txt && grep -q 'no such file' err.txt"

test_expect "the probe cap stops a run before it creates anything" "
	! '$TRACEREC' record -q -o t.tpp --max-probes 4 -u 'libc:str*' -- true 2>err.txt &&
	cat err.txt && grep -q 'over the cap of 4' err.txt && no_probes_left"

test_expect "probes are removed when the recorder is stopped by SIGINT or SIGTERM" "
	for sig in INT TERM; do
		'$TRACEREC' record -q -o t.tpp -u '$S/s-chain:c' -- sleep 5 >/dev/null 2>&1 & pid=\$!
		for i in \$(seq 50); do grep -q tpp_\$pid $TFS/uprobe_events && break; sleep 0.1; done
		grep -q tpp_\$pid $TFS/uprobe_events || exit 1
		sleep 0.5 # past start-up: the recording is running
		kill -\$sig \$pid; wait \$pid
		no_probes_left || exit 1
	done"

# A jump out of nested calls: the stack pointer each entry and return
# carries says which frames the jump left (s-longjmp: outer -> mid -> inner
# -> deep, deep longjmps back to outer, which then calls after; 3 rounds).
test_expect "longjmp under uprobes: after() is outer's child, mid/inner/deep closed [unwound] at the jump, counted in info" "
	'$TRACEREC' record -q -o lj.tpp -u '$S/s-longjmp:main' -u '$S/s-longjmp:outer' -u '$S/s-longjmp:mid' \
		-u '$S/s-longjmp:inner' -u '$S/s-longjmp:deep' -u '$S/s-longjmp:after' -- '$S/s-longjmp' >/dev/null &&
	'$TRACEPP' replay lj.tpp >r.txt 2>w.txt && cat r.txt w.txt &&
	[ \$(grep -c '\[unwound\]' r.txt) = 9 ] && grep -q ' 9 unwound (0 by an exception), 0 tail call(s)' w.txt &&
	'$TRACEPP' info lj.tpp | grep '^calls:' | grep -q ' 9 unwound (0 by an exception), 0 tail call(s)' &&
	! grep -q '__sp\|__ra' r.txt &&
	'$TRACEPP' callgraph --callers=after lj.tpp >c.txt 2>/dev/null && cat c.txt &&
	[ \"\$(awk 'NR > 1 {print \$1, \$2}' c.txt)\" = 'outer 3' ] &&
	'$TRACEPP' replay --format=json lj.tpp | python3 -c '
import json, sys
L = json.load(sys.stdin)
# each round: deep, inner, mid end (unwound) before after() begins, and
# after() is at outer'\''s depth + 1
ends = [l for l in L if l.get(\"unwound\")]
afters = [l for l in L if l.get(\"func\") == \"after\"]
outers = [l for l in L if l.get(\"func\") == \"outer\" and l[\"kind\"] == \"entry\"]
assert len(ends) == 9 and len(afters) == 3, (len(ends), len(afters))
for r in range(3):
    assert max(e[\"ts_ns\"] for e in ends[3 * r:3 * r + 3]) <= afters[r][\"ts_ns\"]
    assert afters[r][\"depth\"] == outers[r][\"depth\"] + 1
'"

# A tail call at -O2 (tail_a ends in a jmp to tail_b): tail_b runs on
# tail_a's frame; shown inside it, tail_a marked [tail].
TAIL=$_scratch/tail
cat >$TAIL.c <<'EOF2'
volatile int sink;
__attribute__((noinline)) int tail_b(int x) { sink += x; return x * 3 + sink; }
__attribute__((noinline)) int tail_a(int x) { return tail_b(x + 1); }
int main(void) { int r = 0; for (int i = 0; i < 3; i++) r += tail_a(i); return r == -1; }
EOF2
if cc -O2 -g -o $TAIL $TAIL.c && objdump -d --no-show-raw-insn $TAIL | awk '/<tail_a>:/ {f = 1; next} f && /^$/ {exit} f' | grep -q 'jmp.*<tail_b>'; then
	test_expect "a tail call under uprobes: tail_b inside tail_a, tail_a marked [tail], 3 of each, counted in info" "
		'$TRACEREC' record -q -o tc.tpp -u '$TAIL:tail_*' -- '$TAIL' &&
		'$TRACEPP' replay tc.tpp >r.txt 2>w.txt && cat r.txt w.txt &&
		[ \$(grep -c '} /\* tail_a \*/.*\[tail\]' r.txt) = 3 ] && [ \$(grep -c '^.*|   tail_b()' r.txt) = 3 ] &&
		grep -q ' 0 unwound (0 by an exception), 3 tail call(s)' w.txt &&
		'$TRACEPP' info --format=json tc.tpp | python3 -c 'import json, sys; c = json.load(sys.stdin)[\"calls\"]; assert (c[\"calls\"], c[\"tail\"], c[\"unwound\"]) == (6, 3, 0), c'"
else
	test_skip "a tail call under uprobes" "cc -O2 made no tail call of tail_a"
fi

# Events lost while the recorder was stopped (a small buffer, the command
# run to its end meanwhile): markers inline in dump and replay, their
# counts adding up to what info says was lost.
test_expect "lost events: LOST markers inline in dump and replay, as many as info counts" "
	rm -f go go2 done && mkfifo go go2 done &&
	{ '$TRACEREC' record -q -b 64 -o lost.tpp -u '$S/s-calls:[lm]*' -- taskset -c 0 sh -c 'read x <go; \"\$0\" 100000 >/dev/null; echo >done; read x <go2; \"\$0\" 3 >/dev/null' '$S/s-calls' 2>err.txt & } &&
	rec=\$! &&
	for i in \$(seq 50); do grep -q tpp_\$rec $TFS/uprobe_events && break; sleep 0.1; done &&
	sleep 0.5 && kill -STOP \$rec && echo >go && read x <done && kill -CONT \$rec && sleep 0.3 && echo >go2 &&
	wait \$rec && cat err.txt &&
	lost=\$('$TRACEPP' info lost.tpp | awk '/^lost:/ {print \$2}') &&
	'$TRACEPP' dump lost.tpp >d.txt && grep LOST d.txt &&
	'$TRACEPP' replay lost.tpp >r.txt 2>/dev/null && grep LOST r.txt &&
	d=\$(awk '/ LOST / {for (i = 1; i < NF; i++) if (\$i == \"LOST\") n += \$(i + 1)} END {print n + 0}' d.txt) &&
	p=\$(awk '/LOST/ {for (i = 1; i < NF; i++) if (\$i == \"LOST\") n += \$(i + 1)} END {print n + 0}' r.txt) &&
	echo \"info lost \$lost, dump \$d, replay \$p\" && [ \"\$lost\" -gt 0 ] && [ \"\$d\" = \"\$lost\" ] && [ \"\$p\" = \"\$lost\" ] &&
	# inline: the second run's calls come after a marker
	awk '/LOST/ {m = 1} m && /main\(\) \{/ {ok = 1} END {exit !ok}' r.txt && no_probes_left"

if [ -e $TFS/kprobe_events ]; then
	test_expect "-k places kernel probes" "
		'$TRACEREC' record -q -o t.tpp -k 'do_sys_openat2' -- cat /etc/hostname >/dev/null &&
		'$TRACEPP' dump t.tpp | grep -q do_sys_openat2"
else
	test_expect "-k on a kernel without kprobes: one clear error" "
		! '$TRACEREC' record -q -o t.tpp -k 'do_sys_open*' -- true 2>err.txt && cat err.txt &&
		[ \$(wc -l <err.txt) = 1 ] && grep -q 'no kprobe events' err.txt"
	test_skip "-k places kernel probes" "this kernel has no kprobe events (no $TFS/kprobe_events)"
fi
test_done
