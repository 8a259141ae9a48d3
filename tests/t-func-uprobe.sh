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
