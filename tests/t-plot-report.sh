#!/usr/bin/env bash
# tracepp report and make demo: one self-contained HTML page per trace, its
# facts equal to tracepp info, its tables to the analyses and to the call
# counts the demo program's source fixes, every plot the trace has events
# for embedded as a valid PNG; the page still comes out without gnuplot; bad
# input gets one error line. The bundled demo trace (s-demo-fi recorded
# system-wide with sched, block and net) makes this independent of
# recording; the demo is run both ways.
. "$(dirname "$0")/lib.sh"
DEMO=$TOP/samples/traces/demo.tpp
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
# demo_calls TRACE: the calls per function that samples/src/s-demo.c makes for
# the ROUNDS BLOCKS MESSAGES on the trace's command line ("name=N ...", sorted)
demo_calls() { "$TRACEPP" info "$1" | python3 -c 'import re, sys
r, b, m = map(int, re.search(r"s-demo-\w+ (\d+) (\d+) (\d+)", sys.stdin.read()).groups())
c = dict(main=1, ping_pong=1, partner=1, volley=2 * r, disk_io=1, prepare_file=1, write_block=b,
         read_block=b, tcp_transfer=1, receiver=1, send_message=m, wait_ack=m, recv_message=m,
         send_ack=m, transfer=4 * m, digest=255, fold=128)
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))'; }
# report_calls HTML: the functions table of a report, "name=N ..." sorted
report_calls() { python3 -c 'import re, sys
h = open(sys.argv[1]).read(); h = h[h.index("<h2>Functions"):]; h = h[:h.index("</table>")]
print(" ".join("%s=%s" % kv for kv in sorted(re.findall(r"<tr><td>([^<]+)</td><td class=n>(\d+)</td>", h))))' "$1"; }

if ! command -v gnuplot >/dev/null; then
	test_skip 'tracepp report' 'gnuplot is not installed'
	test_done; exit
fi

test_expect 'report of the demo trace: facts = tracepp info, every plot embedded (kernel and flame), nothing external' '
	"$TRACEPP" report "$DEMO" -o rep >out 2>err && cat out err && [ ! -s err ] &&
	pngs rep/index.html >alts && cat alts &&
	for f in timeline latency-hist cpu-heatmap latency-heatmap gantt-cpu gantt-task flame; do
		grep -qx $f alts || { echo "missing $f"; exit 1; }
	done &&
	"$TRACEPP" info "$DEMO" >info &&
	ev=$(awk "/^events:/ {print \$2}" info) && host=$(awk "/^host:/ {print \$2}" info | tr -d ,) &&
	lost=$(awk "/^lost:/ {print \$2}" info) && echo "info: $ev events, $lost lost, host $host" &&
	grep -q "<tr><th>events</th><td>$ev</td>" rep/index.html &&
	grep -q "<tr><th>host</th><td>$host</td>" rep/index.html &&
	grep -Eq "<tr><th>lost events</th><td>(<b class=bad>)?$lost(</b>)?</td>" rep/index.html &&
	for s in Scheduler "Block I/O" Network Functions; do
		grep -q "<h2>$s</h2>" rep/index.html || { echo "missing section $s"; exit 1; }
	done &&
	ls rep/timeline.gp rep/timeline.timeline.dat rep/gantt-cpu.bars.dat rep/flame.bars.dat
'

test_expect 'report tables: tasks in tracepp sched order, devices of tracepp io and net' '
	"$TRACEPP" report "$DEMO" -o rep >/dev/null 2>&1 &&
	"$TRACEPP" sched --format=json "$DEMO" 2>/dev/null >s.json &&
	want=$(python3 -c "import json; r=sorted((t for t in json.load(open(\"s.json\")) if t[\"tid\"]), key=lambda t: (-t[\"oncpu_ns\"], t[\"tid\"])); print(\" \".join(str(t[\"tid\"]) for t in r[:5]))") &&
	got=$(python3 -c "import re; h=open(\"rep/index.html\").read(); s=h[h.index(\"Tasks by CPU time\"):]; print(\" \".join(re.findall(r\"<tr><td class=n>(\d+)</td>\", s)[:5]))") &&
	echo "sched: $want / report: $got" && [ "$want" = "$got" ] &&
	"$TRACEPP" net --format=json "$DEMO" >n.json &&
	python3 -c "import json, re
h = open(\"rep/index.html\").read()
for d in json.load(open(\"n.json\")):
    name = d.get(\"dev\") or d.get(\"name\") or d.get(\"device\")
    assert \"<tr><td>%s</td>\" % name in h, name
print(\"net devices ok\")"
'

test_expect 'report functions table: the calls s-demo.c makes for its arguments, and tracepp callgraph agrees' '
	"$TRACEPP" report "$DEMO" -o rep >/dev/null 2>err && [ ! -s err ] &&
	want=$(demo_calls "$DEMO") && got=$(report_calls rep/index.html) &&
	echo "source: $want" && echo "report: $got" && [ "$want" = "$got" ] &&
	"$TRACEPP" callgraph --format=json "$DEMO" | python3 -c "import json, sys
print(\" \".join(\"%s=%d\" % (r[\"func\"], r[\"calls\"]) for r in sorted(json.load(sys.stdin), key=lambda r: r[\"func\"])))" >cg &&
	echo "callgraph: $(cat cg)" && [ "$(cat cg)" = "$want" ]
'

test_expect 'flame chart of the demo: main, then its phases ping_pong, disk_io, tcp_transfer, digest at depth 1, one volley bar per round' '
	"$TRACEPP" plot "$DEMO" --type=gantt --by call --exact -o fl.png --keep 2>err && [ ! -s err ] &&
	grep -c "" fl.bars.dat && grep -q " 0 \"main\"$" fl.bars.dat &&
	[ "$(grep " 1 \"[a-z_]*\"$" fl.bars.dat | sort -n | sed "s/.*\"\(.*\)\"/\1/" | tr "\n" " ")" = "ping_pong disk_io tcp_transfer digest " ] &&
	rounds=$(demo_calls "$DEMO" | tr " " "\n" | sed -n "s/^volley=//p") &&
	echo "volley bars: $(grep -c " 2 \"volley\"$" fl.bars.dat), rounds: $((rounds / 2))" &&
	[ "$(grep -c " 2 \"volley\"$" fl.bars.dat)" = $((rounds / 2)) ]
'

# The kernel events and the calls share one clock: the disk requests and
# loopback packets of the demo happen inside the calls that made them.
test_expect 'one trace, one clock: block requests inside disk_io, packets inside tcp_transfer' '
	"$TRACEPP" dump --format=json "$DEMO" >d.json && demo_calls "$DEMO" >calls &&
	python3 -c "import json, sys
calls = dict(kv.split(\"=\") for kv in open(\"calls\").read().split())
ev = [json.loads(l) for l in open(\"d.json\")]
span = {}
for e in ev:
    if e[\"type\"] in (\"func_entry\", \"func_exit\") and e.get(\"sym\") in (\"disk_io\", \"tcp_transfer\"):
        span.setdefault(e[\"sym\"], []).append(e[\"ts\"])
def inside(f, types):
    lo, hi = span[f]
    return sum(1 for e in ev if e[\"type\"] in types and lo <= e[\"ts\"] <= hi)
blk, pk = inside(\"disk_io\", (\"block_rq_complete\",)), inside(\"tcp_transfer\", (\"netif_receive_skb\",))
b, m = int(calls[\"write_block\"]), int(calls[\"send_message\"])
print(\"block completions in disk_io: %d (>= %d), packets in tcp_transfer: %d (>= %d)\" % (blk, 2 * b, pk, 2 * m))
assert blk >= 2 * b and pk >= 2 * m"
'

test_expect 'report without gnuplot: the page with a note, data and scripts to render later' '
	PATH=/nonexistent "$TRACEPP" report "$DEMO" -o rep >out 2>err && cat out &&
	grep -q "gnuplot was not found" rep/index.html && ! grep -q "data:image/png" rep/index.html &&
	ls rep/timeline.gp rep/cpu-heatmap.busy.dat rep/flame.gp && (cd rep && gnuplot timeline.gp) && [ -s rep/timeline.png ]
'

test_expect 'bad input: missing trace, unwritable directory: one error line, exit != 0' '
	! "$TRACEPP" report nosuch.tpp -o rep 2>e1 && one_line e1 && grep -q nosuch.tpp e1 &&
	! "$TRACEPP" report "$DEMO" -o /nonexistent/a/b 2>e2 && one_line e2 &&
	grep -q "cannot create /nonexistent/a/b" e2 && ! "$TRACEPP" report "$DEMO" 2>e3 && cat e1 e2 e3
'

test_expect 'make demo where recording is not permitted: analyses the bundled trace, says so, one page' '
	TPP_DEMO_RECORD=0 B="$B" "$TOP/samples/demo.sh" d >out 2>err; st=$?; cat out err; [ $st = 0 ] &&
	grep -q "recording is not permitted here" out && grep -q "bundled sample trace" out &&
	pngs d/report/index.html >alts && grep -qx flame alts && grep -qx gantt-cpu alts &&
	[ "$(find d -name index.html | wc -l)" = 1 ] && cmp d/demo.tpp "$DEMO"
'

if [ "$(id -u)" = 0 ] && [ -d /sys/kernel/tracing/instances ] && [ -x "$TRACEREC" ]; then
test_expect 'make demo records s-demo with kernel events and calls in one trace, one report' '
	B="$B" "$TOP/samples/demo.sh" d >out 2>err; st=$?; cat out err; [ $st = 0 ] &&
	grep -q "recorded on this machine" out && pngs d/report/index.html >alts &&
	grep -qx gantt-cpu alts && grep -qx flame alts &&
	for s in Scheduler "Block I/O" Network Functions; do
		grep -q "<h2>$s</h2>" d/report/index.html || { echo "missing section $s"; exit 1; }
	done &&
	want=$(demo_calls d/demo.tpp) && got=$(report_calls d/report/index.html) &&
	echo "source: $want" && echo "report: $got" && [ "$want" = "$got" ] &&
	# other recordings may be running: only an instance whose recorder is gone is left behind
	for i in $(ls /sys/kernel/tracing/instances | sed -n "s/^tracepp-//p"); do
		kill -0 "$i" 2>/dev/null || { echo "instance tracepp-$i left behind"; exit 1; }
	done
'
else
	test_skip 'make demo records the sample workload' 'recording not permitted (not root or no tracefs)'
fi

test_done
