#!/usr/bin/env bash
# dump prints field values as people read them (postproc/out/fieldfmt.c):
# task states as the kernel's own print format spells them (its flag table,
# read from this machine's tracefs), block devices as major:minor (the
# format's own shift), syscall numbers by name and failed returns by errno
# name (a program that makes known calls, and Python's errno table), a
# system call with its arguments named (strace's own decoding of the same
# calls: its count of arguments and their values); JSON keeps each raw
# number and adds the reading as FIELD_str.
. "$(dirname "$0")/lib.sh"
DEMO=$TOP/samples/traces/demo.tpp
FMT=/sys/kernel/tracing/events

tracefs_ok() { [ -d $FMT ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; [ -r $FMT/sched/sched_switch/format ]; }

if tracefs_ok; then
test_expect 'sched_switch prev_state and block dev read as the kernel formats them; JSON keeps the number and adds the reading' '
	"$TRACEPP" dump "$DEMO" >d.txt 2>/dev/null && "$TRACEPP" dump --format=json "$DEMO" >d.json 2>/dev/null &&
	python3 - $FMT <<-"PY"
	import json, re, sys
	fmt = sys.argv[1]
	pf = open(fmt + "/sched/sched_switch/format").read().split("print fmt:")[1]
	# the kernel table: { 0x00000001, "S" }, ...; "R" when no bit; "+" for the bit past them
	flags = [(int(v, 16), s) for v, s in re.findall(r"\{ (0x[0-9a-f]+), \"(\w)\" \}", pf)]
	assert len(flags) >= 7, pf
	top = max(v for v, _ in flags) << 1
	def state(v):
	    s = "|".join(n for b, n in flags if v & b) or "R"
	    return s + ("+" if v & top else "")
	bf = open(fmt + "/block/block_rq_issue/format").read().split("print fmt:")[1]
	shift = int(re.search(r"\(REC->dev\) >> (\d+)", bf).group(1))
	text = [l for l in open("d.txt") if " sched_switch: " in l or " block_rq_issue: " in l]
	js = [e for e in map(json.loads, open("d.json")) if e["type"] in ("sched_switch", "block_rq_issue")]
	assert len(text) == len(js) > 1000, (len(text), len(js))
	seen = set()
	for t, e in zip(text, js):
	    if e["type"] == "sched_switch":
	        want = state(e["prev_state"])
	        assert " prev_state=%s " % want in t and e["prev_state_str"] == want, (t, e, want)
	    else:
	        want = "%d:%d" % (e["dev"] >> shift, e["dev"] & ((1 << shift) - 1))
	        assert " dev=%s " % want in t and e["dev_str"] == want, (t, e)
	    seen.add(want)
	print(sorted(seen))
	assert {"R", "R+", "S"} <= seen, seen
	PY
'
else
	test_skip 'sched_switch prev_state and block dev read as the kernel formats them' 'no tracefs to read the kernel formats from'
fi

test_expect 'replay prints the kernel events inline with the same readings as dump, text and JSON' '
	"$TRACEPP" dump "$DEMO" 2>/dev/null | grep -o " prev_state=[^ ]*\| dev=[^ ]*" | sort >d.txt &&
	"$TRACEPP" replay "$DEMO" 2>/dev/null | grep -o " prev_state=[^ ]*\| dev=[^ ]*" | sort >r.txt &&
	[ $(wc -l <d.txt) -gt 1000 ] && grep -qx " prev_state=R+" r.txt && grep -qx " dev=254:0" r.txt && cmp d.txt r.txt &&
	"$TRACEPP" dump --format=json "$DEMO" >dj.json 2>/dev/null && "$TRACEPP" replay --format=json "$DEMO" >rj.json 2>/dev/null &&
	python3 - <<-"PY"
	import json, collections
	def readings(rows):
	    c = collections.Counter()
	    for e in rows:
	        for k, v in e.items():
	            if k.endswith("_str") and k[:-4] in e:
	                c[(k, e[k[:-4]], v)] += 1
	    return c
	d = readings(e for e in map(json.loads, open("dj.json")))
	r = readings(e["fields"] for e in json.load(open("rj.json")) if e.get("kind") == "event")
	assert d and d == r, (sum(d.values()), sum(r.values()), (d - r).most_common(3), (r - d).most_common(3))
	print(sum(d.values()), "readings, the same in dump and replay JSON")
	PY
'

test_expect 'syscalls by name and failed returns by errno name: a program that calls getsid 7 times and closes a bad fd' '
	[ -d $FMT/raw_syscalls ] || { echo "no raw_syscalls events: nothing to check"; exit 1; }
	"$TRACEREC" record -q -e syscalls -o s.tpp -- python3 -c "import os
for _ in range(7): os.getsid(0)
try: os.close(987)
except OSError: pass
print(os.getpid())" >pid && pid=$(cat pid) &&
	"$TRACEPP" dump s.tpp 2>/dev/null | grep -- "-$pid sys_" >d.txt &&
	"$TRACEPP" dump --format=json s.tpp 2>/dev/null | grep "\"tid\": $pid," >d.json &&
	[ $(grep -c "sys_enter: id=[0-9]* getsid(pid=0)$" d.txt) = 7 ] && [ $(grep -c "sys_exit: id=[0-9]*(getsid) ret=" d.txt) = 7 ] &&
	python3 -c "import errno, json, sys
bad = [e for e in map(json.loads, open(\"d.json\")) if e[\"type\"] == \"sys_exit\" and e.get(\"id_str\") == \"close\" and e[\"ret\"] < 0]
assert len(bad) >= 1 and all(e[\"ret_str\"] == errno.errorcode[-e[\"ret\"]] for e in bad), bad
assert any(e[\"ret\"] == -errno.EBADF for e in bad), bad
print(len(bad), \"failed close:\", bad[-1][\"ret\"], bad[-1][\"ret_str\"])" &&
	grep "id=[0-9]*(close) ret=-$(python3 -c "import errno; print(errno.EBADF)")(EBADF)$" d.txt
'

# strace -e raw=all prints each call with as many arguments as it takes, in
# hex: the calls of ls -l under strace, recorded, read back the same.
if command -v strace >/dev/null; then
test_expect 'sys_enter reads as a call with its arguments named: the same calls, argument counts and values as strace prints for ls -l' '
	"$TRACEREC" record -q -e raw_syscalls -o st.tpp -- strace -f -qq -e raw=all -o st.txt ls -l / >/dev/null &&
	"$TRACEPP" dump --sorted --format=json --type=sys_enter st.tpp 2>/dev/null >se.json &&
	"$TRACEPP" dump --sorted --type=sys_enter st.tpp 2>/dev/null | grep -m3 " openat(dfd=-100, filename=0x[0-9a-f]*, flags=0x[0-9a-f]*, mode=0[0-7]*)$" &&
	python3 - <<-"PY"
	import json, re
	st, pid = [], None
	for l in open("st.txt"):
	    m = re.match(r"(\d+) +(\w+)\((.*?)\)\s+= ", l)
	    if m:
	        pid = int(m[1])
	        st.append((m[2], [int(a, 16) for a in m[3].split(", ")] if m[3] else []))
	ours = [e.get("args_str", "") for e in map(json.loads, open("se.json")) if e["tid"] == pid]
	ours = ours[next(k for k, s in enumerate(ours) if s.startswith("execve(")):]
	known = bad = 0
	for (name, args), call in zip(st, ours):
	    m = re.match(r"(\w+)\((.*)\)$", call)
	    assert m and m[1] == name, (name, args, call)
	    if m[2] and "=" not in m[2]:
	        continue # arguments tracepp does not know: six words
	    known += 1
	    vals = [v.split("=", 1)[1] for v in m[2].split(", ")] if m[2] else []
	    vals = [int(v, 8) if re.match(r"0[0-7]+$", v) else int(v, 0) for v in vals]
	    if len(vals) != len(args) or any(v % 2**64 != a and v % 2**32 != a for v, a in zip(vals, args)):
	        bad += 1; print("differs:", name, [hex(a) for a in args], call)
	print(len(st), "calls,", len(ours), "recorded from the first execve,", known, "with arguments named,", bad, "differ")
	assert len(st) > 100 and len(ours) >= len(st) and known >= 0.9 * len(st) and bad == 0
	PY
	# replay reads them the same
	"$TRACEPP" dump st.tpp 2>/dev/null | sed -n "s/.* sys_enter: \(id=.*\)/\1/p" | sort >d.txt &&
	"$TRACEPP" replay st.tpp 2>/dev/null | sed -n "s/.*\[sys_enter\] \(id=.*\)/\1/p" | sort >r.txt &&
	[ "$(wc -l <d.txt)" -gt 100 ] && cmp d.txt r.txt
'
else
	test_skip 'sys_enter arguments against strace' 'strace is not installed'
fi

test_expect 'a filter that passes nothing: one line on stderr naming the filters, exit 0 (as perf script, uftrace replay)' '
	"$TRACEPP" dump --tid 999999 --type=sched_switch "$DEMO" >out 2>err; rc=$?
	cat err; [ $rc = 0 ] && [ "$(wc -l <err)" = 1 ] && grep -q "no event of .* passes --tid=[0-9]* --type=[^ ]*$" err &&
	! grep -q "sched_switch" out &&
	"$TRACEPP" dump --type=sched_switch "$DEMO" >out 2>err && [ ! -s err ] && grep -q sched_switch out
'

test_done
