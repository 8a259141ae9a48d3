#!/usr/bin/env bash
# tracepp report and make demo: one self-contained HTML page per trace, its
# facts equal to tracepp info, its tables to the analyses, every plot the
# trace has events for embedded as a valid PNG; the page still comes out
# without gnuplot; bad input gets one error line. The bundled sample traces
# make this independent of recording; the demo is run both ways.
. "$(dirname "$0")/lib.sh"
TR=$TOP/samples/traces
one_line() { [ "$(wc -l <"$1")" = 1 ] || { cat "$1"; return 1; }; }
# pngs HTML: decodes every embedded image, checks it is a 1200 px wide PNG, prints the alts
pngs() { python3 -c 'import base64, re, struct, sys
html = open(sys.argv[1]).read()
imgs = re.findall(r"<img alt=\"([^\"]+)\" src=\"data:image/png;base64,([A-Za-z0-9+/=]+)\">", html)
for alt, b in imgs:
    d = base64.b64decode(b, validate=True)
    assert d[:8] == b"\x89PNG\r\n\x1a\n" and d[12:16] == b"IHDR", alt
    w, h = struct.unpack(">II", d[16:24]); assert w == 1200 and h >= 300, (alt, w, h)
    print(alt)
assert not re.search(r"(src|href)=\"(https?:|//|[^d#])", html), "external reference"' "$1"; }

if ! command -v gnuplot >/dev/null; then
	test_skip 'tracepp report' 'gnuplot is not installed'
	test_done; exit
fi

test_expect 'report of a kernel trace: facts = tracepp info, every kernel plot embedded, nothing external' '
	"$TRACEPP" report "$TR/demo-workload.tpp" -o rep >out 2>err && cat out err && [ ! -s err ] &&
	pngs rep/index.html >alts && cat alts &&
	for f in timeline latency-hist cpu-heatmap latency-heatmap gantt-cpu gantt-task; do
		grep -qx $f alts || { echo "missing $f"; exit 1; }
	done && ! grep -qx flame alts &&
	"$TRACEPP" info "$TR/demo-workload.tpp" >info &&
	ev=$(awk "/^events:/ {print \$2}" info) && host=$(awk "/^host:/ {print \$2}" info | tr -d ,) &&
	grep -q "<tr><th>events</th><td>$ev</td>" rep/index.html &&
	grep -q "<tr><th>host</th><td>$host</td>" rep/index.html &&
	grep -q "<tr><th>lost events</th><td>0</td>" rep/index.html &&
	ls rep/timeline.gp rep/timeline.timeline.dat rep/gantt-cpu.bars.dat
'

test_expect 'report tables: tasks in tracepp sched order, devices of tracepp io and net' '
	"$TRACEPP" report "$TR/demo-workload.tpp" -o rep >/dev/null 2>&1 &&
	"$TRACEPP" sched --format=json "$TR/demo-workload.tpp" 2>/dev/null >s.json &&
	want=$(python3 -c "import json; r=sorted((t for t in json.load(open(\"s.json\")) if t[\"tid\"]), key=lambda t: (-t[\"oncpu_ns\"], t[\"tid\"])); print(\" \".join(str(t[\"tid\"]) for t in r[:5]))") &&
	got=$(python3 -c "import re; h=open(\"rep/index.html\").read(); s=h[h.index(\"Tasks by CPU time\"):]; print(\" \".join(re.findall(r\"<tr><td class=n>(\d+)</td>\", s)[:5]))") &&
	echo "sched: $want / report: $got" && [ "$want" = "$got" ] &&
	"$TRACEPP" net --format=json "$TR/demo-workload.tpp" >n.json &&
	python3 -c "import json, re
h = open(\"rep/index.html\").read()
for d in json.load(open(\"n.json\")):
    name = d.get(\"dev\") or d.get(\"name\") or d.get(\"device\")
    assert \"<tr><td>%s</td>\" % name in h, name
print(\"net devices ok\")"
'

test_expect 'report of a function trace: the flame chart, and calls of s-threads are main=1 worker=4 leaf=400' '
	"$TRACEPP" report "$TR/demo-functions.tpp" -o rep >/dev/null 2>err && [ ! -s err ] &&
	pngs rep/index.html >alts && grep -qx flame alts && grep -q "<tr><td>main</td><td class=n>1</td>" rep/index.html &&
	python3 -c "import re; h=open(\"rep/index.html\").read(); h=h[h.index(\"<h2>Functions\"):]
calls = sorted(int(c) for c in re.findall(r\"<tr><td>[^<]+</td><td class=n>(\d+)</td>\", h))
print(calls); assert calls == [1, 4, 400]" &&
	# the flame chart names the busiest thread calls: worker over leaf
	"$TRACEPP" plot "$TR/demo-functions.tpp" --type=gantt --by call -o fl.png --keep 2>err && [ ! -s err ] &&
	grep -q "0 \"worker\"$" fl.bars.dat && [ "$(grep -c " 1 \"leaf\"$" fl.bars.dat)" = 100 ]
'

test_expect 'report without gnuplot: the page with a note, data and scripts to render later' '
	PATH=/nonexistent "$TRACEPP" report "$TR/demo-workload.tpp" -o rep >out 2>err && cat out &&
	grep -q "gnuplot was not found" rep/index.html && ! grep -q "data:image/png" rep/index.html &&
	ls rep/timeline.gp rep/cpu-heatmap.busy.dat && (cd rep && gnuplot timeline.gp) && [ -s rep/timeline.png ]
'

test_expect 'bad input: missing trace, unwritable directory: one error line, exit != 0' '
	! "$TRACEPP" report nosuch.tpp -o rep 2>e1 && one_line e1 && grep -q nosuch.tpp e1 &&
	! "$TRACEPP" report "$TR/demo-workload.tpp" -o /nonexistent/a/b 2>e2 && one_line e2 &&
	grep -q "cannot create /nonexistent/a/b" e2 && ! "$TRACEPP" report "$TR/demo-workload.tpp" 2>e3 && cat e1 e2 e3
'

test_expect 'make demo where recording is not permitted: analyses the bundled traces and says so' '
	TPP_DEMO_RECORD=0 B="$B" "$TOP/samples/demo.sh" d >out 2>err; st=$?; cat out err; [ $st = 0 ] &&
	grep -q "recording is not permitted here" out && grep -q "bundled sample traces" out &&
	pngs d/report/index.html >/dev/null && pngs d/functions/index.html | grep -qx flame && [ -s d/flame.png ]
'

if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing/instances ] && [ -x "$TRACEREC" ]; then
test_expect 'make demo records the sample workload and reports it' '
	B="$B" "$TOP/samples/demo.sh" d >out 2>err; st=$?; cat out err; [ $st = 0 ] &&
	grep -q "recorded on this machine" out && pngs d/report/index.html >alts &&
	grep -qx gantt-cpu alts && grep -q "<h2>Block I/O</h2>" d/report/index.html &&
	grep -q "<h2>Network</h2>" d/report/index.html && grep -q "<h2>Scheduler</h2>" d/report/index.html
'
else
	test_skip 'make demo records the sample workload' 'recording not permitted (not root or no tracefs)'
fi

test_done
