#!/usr/bin/env bash
# Bytes stay bytes: a program whose name is not UTF-8 (valid UTF-8, café, and
# a byte that is not) and holds a quote, a
# comma, a space, a control byte and a backslash, started with arguments
# that are not UTF-8 either, is recorded; every command reads the file and
# writes text, JSON and CSV that are valid UTF-8, that Python's json and csv
# modules parse, with the name in each (as U+FFFD where a byte was not
# UTF-8, as \xNN in text) and no record broken by it. Format 1.0 wrote such
# bytes as CBOR text and the file could not be opened at all.
. "$(dirname "$0")/lib.sh"

NAME=$'caf\xc3\xa9t\xff"a, b\x01\\c'
REC=$_scratch/rec
mkdir -p "$REC" && cp "$B/samples/s-calls-pg" "$REC/$NAME" &&
	(cd "$REC" && "$TRACEREC" record -q -e sched -o "$REC/t.tpp" -- "./$NAME" $'\xfe' 'x,"y"' >out 2>err) ||
	{ cat "$REC/err"; echo "recording failed"; }

# check KIND FILE [any]: KIND text|json|jsonl|csv|html; valid, and the name
# in it unless "any" (outputs about functions or devices have no task names)
cat >"$_scratch/check.py" <<'PY'
import csv, io, json, sys
kind, path = sys.argv[1], sys.argv[2]
need = len(sys.argv) < 4
raw = b'caf\xc3\xa9t\xff"a, b\x01\\c'
name = raw.decode("utf-8", "replace")          # what JSON and CSV must hold
shown = 'caf\u00e9t\\xff"a, b\\x01\\c'                   # what text must show
data = open(path, "rb").read()
s = data.decode("utf-8")                        # strict: fails on one bad byte
def strings(x):
    if isinstance(x, str): yield x
    elif isinstance(x, list):
        for y in x: yield from strings(y)
    elif isinstance(x, dict):
        for k, v in x.items(): yield k; yield from strings(v)
if kind == "text":
    for line in s.split("\n"):
        assert not any(ord(c) < 0x20 and c != "\t" for c in line), repr(line)
    assert not need or shown in s, "name not shown as %r" % shown
elif kind == "json":
    d = json.loads(s)
    assert not need or any(name in x for x in strings(d)), "name not in the JSON"
elif kind == "jsonl":
    objs = [json.loads(l) for l in s.splitlines()]
    assert objs and (not need or any(name in x for o in objs for x in strings(o))), "name not in the JSON lines"
elif kind == "csv":
    rows = list(csv.reader(io.StringIO(s, newline="")))
    assert rows and all(len(r) == len(rows[0]) for r in rows), [r for r in rows if len(r) != len(rows[0])][:3]
    assert not need or any(name in c for r in rows for c in r), "name not in a CSV field"
elif kind == "html":
    assert '<td>caf\u00e9t\ufffd&quot;a, b\\c</td>' in s, "name not in the page"
print(kind, path, "ok")
PY
check() { python3 "$_scratch/check.py" "$@"; }
F=$REC/t.tpp

test_expect 'the recording opens; info keeps the command line byte for byte' '
	"$TRACEPP" info --format=json "$F" >i.json && check json i.json &&
	python3 -c "import json,sys; a = json.load(open(\"i.json\"))[\"cmdline\"]; print(a)
assert a[-2:] == [\"\ufffd\", \"x,\\\"y\\\"\"], a" &&
	"$TRACEPP" info "$F" >i.txt && check text i.txt && grep -q "\\\\xfe x,\"y\"" i.txt
'

test_expect 'dump: text lines unbroken, one JSON object per line' '
	"$TRACEPP" dump "$F" >d.txt && check text d.txt &&
	[ "$(grep -vc "^[0-9]*\.[0-9]\{9\} " d.txt)" = 0 ] &&
	"$TRACEPP" dump --format=json "$F" >d.json && check jsonl d.json &&
	python3 -c "import json
ev = [json.loads(l) for l in open(\"d.json\")]
N = \"caf\u00e9t\ufffd\\\"a, b\x01\\\\c\"
# switched in after its exec, or only out (it may run on from the exec to its end)
assert any(N in (e.get(\"next_comm\"), e.get(\"prev_comm\")) for e in ev if e[\"type\"] == \"sched_switch\")
assert any(e.get(\"filename\", \"\").endswith(\"/caf\u00e9t\ufffd\\\"a, b\x01\\\\c\") for e in ev)"
'

# the commands and whether their output names tasks
for c in "sched:" "replay:" "latency --sched:any" "callgraph:any" "io:any" "net:any"; do
	cmd=${c%%:*} any=${c#*:}
	test_expect "$cmd: text, JSON and CSV stay whole and valid" '
		"$TRACEPP" '"$cmd"' "$F" >o.txt 2>e.txt && check text o.txt '"$any"' && check text e.txt any &&
		"$TRACEPP" '"$cmd"' --format=json "$F" >o.json 2>/dev/null && check json o.json '"$any"' &&
		"$TRACEPP" '"$cmd"' --format=csv "$F" >o.csv 2>/dev/null && check csv o.csv '"$any"'
	'
done

test_expect 'dump and info CSV: whole and valid, the name in dump'\''s comm and in its fields cells as JSON' '
	"$TRACEPP" dump --format=csv "$F" >d.csv && check csv d.csv &&
	"$TRACEPP" info --format=csv "$F" >i.csv && check csv i.csv any &&
	python3 -c "import csv, json
rows = list(csv.DictReader(open(\"d.csv\", newline=\"\")))
N = \"caf\u00e9t\ufffd\\\"a, b\x01\\\\c\"
assert any(r[\"comm\"] == N for r in rows)
f = [json.loads(r[\"fields\"]) for r in rows]
assert any(N in (x.get(\"next_comm\"), x.get(\"prev_comm\")) for x in f)"
'

test_expect 'callgraph --tree and --folded: whole and valid' '
	"$TRACEPP" callgraph --tree --format=json "$F" >t.json && check json t.json any &&
	"$TRACEPP" callgraph --tree --format=csv "$F" >t.csv && check csv t.csv any &&
	"$TRACEPP" callgraph --folded "$F" >f.txt && check text f.txt any && grep -q "^main " f.txt
'

test_expect 'export: Chrome JSON and folded stacks whole and valid, the name in the JSON' '
	"$TRACEPP" export --format=chrome -o x.json "$F" 2>/dev/null && check json x.json &&
	"$TRACEPP" export --format=folded --root=thread -o x.txt "$F" 2>/dev/null && check text x.txt
'

test_expect 'script: map keys and printf in -f json are valid JSON with the name' '
	"$TRACEPP" script -f json -e "tracepoint:sched:sched_switch { @[args.next_comm] = count(); }
		tracepoint:sched:sched_process_exec { printf(\"%s\\n\", comm); }" "$F" >s.json &&
	check jsonl s.json
'

if command -v gnuplot >/dev/null; then
test_expect 'report and plot: the page is valid UTF-8 with the name, gnuplot takes every label' '
	"$TRACEPP" report -o rep "$F" >out 2>err; rc=$?; cat err; [ $rc = 0 ] && check html rep/index.html &&
	! grep -q "gnuplot" err &&
	"$TRACEPP" plot --type=gantt --by=task -o g.png --keep "$F" 2>err && ! grep -q . err &&
	for f in g.*; do [ "${f##*.}" = png ] || python3 -c "open(\"$f\", \"rb\").read().decode(\"utf-8\")" || exit 1; done
'
else
	test_skip 'report and plot with names that are not UTF-8' 'gnuplot is not installed'
fi
test_done
