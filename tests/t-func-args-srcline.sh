#!/usr/bin/env bash
# What a call looked like, strace-style: uprobe arguments and return values
# paired per thread in `tracepp replay` (checked against the descriptor the
# kernel gave the program, and the values the sample computes), and file:line
# through libdw when the recorded build-id is found on this host (checked
# against the source file itself), absent without error when it is not.
# san: skip
. "$(dirname "$0")/lib.sh"

TFS=/sys/kernel/tracing
mountpoint -q $TFS 2>/dev/null || mount -t tracefs nodev $TFS 2>/dev/null
# other recordings may be running: only a probe group whose recorder is gone is left behind
no_probes_left() {
	for g in $(grep -o "tpp_[0-9]*" $TFS/uprobe_events | sort -u); do
		kill -0 "${g#tpp_}" 2>/dev/null || { echo "probes $g left behind"; return 1; }
	done
}
S=$B/samples
SRC=$TOP/samples/src
W=$_scratch # what one block records, the next ones read

if [ ! -w $TFS/uprobe_events ]; then
	test_skip "uprobe arguments in replay" "no writable $TFS/uprobe_events (not root, or no CONFIG_UPROBE_EVENTS)"
else
	test_expect "replay pairs uprobes: open(path=\"/etc/hostname\", flags=0) = the fd the program got" "
		'$TRACEREC' record -q -o $W/a.tpp -u libc:open -A 'open:path=+0(%di):string,flags=%si:s32' \
			-u '$S/s-args:greet' -A greet:who,n -- '$S/s-args' >out.txt && cat out.txt &&
		fd=\$(sed -n 's/^fd=\([0-9]*\) .*/\1/p' out.txt) && [ -n \"\$fd\" ] &&
		'$TRACEPP' replay $W/a.tpp >$W/r.txt && cat $W/r.txt &&
		grep -q \"| open(path=\\\"/etc/hostname\\\", flags=0) = \$fd;\" $W/r.txt &&
		[ \$(grep -c '| open(' $W/r.txt) = 1 ] && no_probes_left"

	test_expect "DWARF-typed arguments and return: signed values print signed, per call" "
		grep -q '| greet(who=\"world\", n=21) = 42;' $W/r.txt &&
		grep -q '| greet(who=\"nobody\", n=-5) = -1;' $W/r.txt &&
		[ \$(grep -c '| greet(' $W/r.txt) = 2 ]"

	test_expect "replay JSON carries the argument text and the signed return" "
		'$TRACEPP' replay --format=json $W/a.tpp | python3 -c '
import json, sys
calls = [l for l in json.load(sys.stdin) if l.get(\"func\") == \"greet\"]
got = sorted((c[\"args_text\"], c[\"ret\"]) for c in calls)
assert got == [(\"who=\\\"nobody\\\", n=-5\", -1), (\"who=\\\"world\\\", n=21\", 42)], got'"

	test_expect "nested uprobe calls pair by thread: a > b > c with c's return inside b" "
		'$TRACEREC' record -q -o c.tpp -u '$S/s-chain:[abc]' -A c:x -- '$S/s-chain' >/dev/null &&
		'$TRACEPP' replay c.tpp | tail -n +2 | sed 's/.*| //' >flow.txt && cat flow.txt &&
		printf '%s\n' 'a() {' '  b() {' '    c(x=1) = 2;' '  } /* b */ = 4' '} /* a */ = 7' | diff - flow.txt"
fi

line_of() { grep -n "^int $1(" "$SRC/s-chain.c" | cut -d: -f1; }

test_expect "--srcline: b's line is where s-chain.c defines b (-pg runtime recording)" "
	cp '$S/s-chain-pg' $W/prog &&
	'$TRACEREC' record -q -o $W/s.tpp -- $W/prog >/dev/null &&
	'$TRACEPP' replay --srcline $W/s.tpp >r.txt && cat r.txt &&
	want=\$(line_of b) && [ -n \"\$want\" ] &&
	grep -Eq \"\\| +b\\(\\) \\{ /\\* .*s-chain\\.c:\$want \\*/\" r.txt &&
	grep -Eq \"\\| +c\\(\\); /\\* .*s-chain\\.c:\$(line_of c) \\*/\" r.txt &&
	'$TRACEPP' replay --srcline --format=json $W/s.tpp | python3 -c '
import json, sys
b = [l for l in json.load(sys.stdin) if l.get(\"func\") == \"b\" and l[\"kind\"] == \"entry\"]
assert len(b) == 1 and b[0][\"srcline\"].endswith(\"s-chain.c:\" + sys.argv[1]), b' \"\$want\""

test_expect "dump --srcline: JSON srcline and text 'at FILE:LINE' of b's entry, none without the option" "
	want=\$(line_of b) &&
	'$TRACEPP' dump --srcline --format=json $W/s.tpp | python3 -c '
import json, sys
b = [e for e in map(json.loads, sys.stdin) if e[\"type\"] == \"func_entry\" and e.get(\"sym\") == \"b\"]
assert len(b) == 1 and b[0][\"srcline\"].endswith(\"s-chain.c:\" + sys.argv[1]), b' \"\$want\" &&
	'$TRACEPP' dump --srcline $W/s.tpp | grep -Eq \"<b\\+0x[0-9a-f]+> at .*s-chain\\.c:\$want\$\" &&
	! '$TRACEPP' dump --format=json $W/s.tpp | grep -q srcline"

test_expect "--srcline with the binary deleted: names stay, no line, exit 0" "
	rm $W/prog && '$TRACEPP' replay --srcline $W/s.tpp >r2.txt 2>err.txt && cat r2.txt err.txt &&
	grep -Eq '\\| +b\\(\\) \\{\$' r2.txt && ! grep -q 's-chain.c:' r2.txt && [ ! -s err.txt ]"

test_expect "--srcline refuses a rebuilt binary at the recorded path (build-id differs)" "
	cp '$S/s-chain-pg' ./prog && '$TRACEREC' record -q -o s.tpp -- ./prog >/dev/null &&
	cc -O0 -g -pg -DREBUILT -o prog '$SRC/s-chain.c' && '$TRACEPP' replay --srcline s.tpp >r3.txt && cat r3.txt &&
	grep -Eq '\\| +b\\(\\) \\{\$' r3.txt && ! grep -q 's-chain.c:' r3.txt"
test_done
