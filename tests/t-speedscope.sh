#!/usr/bin/env bash
# tracepp export read back by a real consumer: speedscope (the npm package,
# installed by make deps into tests/tools) in headless Chromium (Debian's).
# tests/speedscope_read.mjs loads each export as a person would (speedscope's
# own page, #profileURL), keeps a screenshot of the flame chart, and prints
# what speedscope parsed: its profiles (threads, CPUs) and each profile's
# frames with total and self time. These must equal tracepp's own answers on
# the same file: callgraph --tid per thread, sched's on-CPU time per task.
# The recording is samples/traces/demo.tpp (s-demo-fi: 3 threads, 2 CPUs).
# san: skip
. "$(dirname "$0")/lib.sh"
DEMO=$TOP/samples/traces/demo.tpp
TIDS="28141 28144 28150"   # the threads of s-demo-fi in demo.tpp
READ="node $TOP/tests/speedscope_read.mjs"
ART=$B/test-artefacts
mkdir -p "$ART"

# speedscope's times ("56.68ms", "281.52µs", "112,577,193") and tracepp's
# JSON side by side; the checks are in Python below.
cat >"$_scratch/agree.py" <<'PY'
import json, os, re, sys

UNIT = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def ns(text):
    text = text.strip().replace(",", "")
    m = re.fullmatch(r"([\d.]+)(ns|µs|ms|s)?", text)
    assert m, "not a time speedscope prints: %r" % text
    return float(m.group(1)) * UNIT[m.group(2) or "ns"]


def near(shown, truth):
    # speedscope prints 2 decimals of its unit: within that rounding
    return abs(shown - truth) <= max(0.006 * truth, 10)


def frame_name(name):
    # speedscope names a frame by its name and its args together
    return name.split(" {")[0]


def chrome(parsed, cg_dir, sched_json):
    profiles = parsed["profiles"]
    threads = [p for p in profiles if not p["name"].startswith("CPUs ")]
    cpus = [p for p in profiles if p["name"].startswith("CPUs ") and "lost events" not in p["name"]]
    tids = sorted(re.search(r"\(tid (\d+)\)$", p["name"]).group(1) for p in threads)
    assert tids == sorted(os.listdir(cg_dir)) and len(cpus) == 2, ([p["name"] for p in profiles], os.listdir(cg_dir))
    checked = 0
    for p in threads:
        tid = re.search(r"\(tid (\d+)\)$", p["name"]).group(1)
        cg = {r["func"]: r for r in json.load(open("%s/%s" % (cg_dir, tid)))}
        assert cg, tid
        names = [frame_name(f["name"]) for f in p["frames"]]
        assert sorted(names) == sorted(cg), (tid, sorted(names), sorted(cg))
        for f in p["frames"]:
            r = cg[frame_name(f["name"])]
            assert near(ns(f["total"]), r["total_ns"]), (tid, f, r["total_ns"])
            assert near(ns(f["self"]), r["self_ns"]), (tid, f, r["self_ns"])
            checked += 1
    oncpu = {str(r["tid"]): r["oncpu_ns"] for r in json.load(open(sched_json)) if r["oncpu_ns"]}
    seen = {}
    for p in cpus:
        for f in p["frames"]:
            # one task's slices never nest in another's on a CPU
            assert f["total"] == f["self"], (p["name"], f)
            tid = re.search(r'"tid":(\d+)', f["name"]).group(1)
            seen[tid] = seen.get(tid, 0) + ns(f["self"])
    assert sorted(seen) == sorted(oncpu), (len(seen), len(oncpu))
    for tid, t in seen.items():
        assert near(t, oncpu[tid]), (tid, t, oncpu[tid])
    print("%d thread frames = callgraph --tid, %d tasks on %d CPUs = sched" % (checked, len(seen), len(cpus)))


def folded(parsed, cg_json, tids):
    (p,) = parsed["profiles"]
    cg = {r["func"]: r for r in json.load(open(cg_json))}
    frames = {frame_name(f["name"]): f for f in p["frames"]}
    roots = [n for n in frames if n in tids]
    assert sorted(roots) == sorted(tids), (roots, tids)
    for func, r in cg.items():
        f = frames[func]
        # folded weights are nanoseconds, printed exactly
        assert ns(f["total"]) == r["total_ns"] and ns(f["self"]) == r["self_ns"], (func, f, r)
    print("%d functions = callgraph, %d thread roots" % (len(cg), len(roots)))


what = sys.argv[1]
parsed = json.load(open(sys.argv[2]))
assert not parsed["errors"], parsed["errors"]
if what == "chrome":
    chrome(parsed, sys.argv[3], sys.argv[4])
else:
    folded(parsed, sys.argv[3], sys.argv[4].split())
PY

if [ ! -x /usr/bin/chromium ] || [ ! -d "$TOP/tests/tools/node_modules/speedscope" ]; then
	test_skip 'speedscope in headless Chromium reads the exports as tracepp does' \
		'Chromium or speedscope is not installed: make deps installs them'
	test_done
	exit
fi

test_expect 'speedscope in headless Chromium loads the Chrome JSON and the folded stacks of one recording' '
	"$TRACEPP" export --format=chrome -o demo.json "$DEMO" 2>/dev/null &&
	"$TRACEPP" export --format=folded --root=thread -o demo.folded "$DEMO" 2>/dev/null &&
	$READ demo.json "$ART/speedscope-chrome.png" demo.folded "$ART/speedscope-folded.png" >parsed.json &&
	python3 -c "import json
for n, x in enumerate(json.load(open(\"parsed.json\"))):
    open(\"parsed.%d.json\" % n, \"w\").write(json.dumps(x))
    print(x[\"title\"], len(x[\"profiles\"]), \"profiles\")" &&
	for png in "$ART"/speedscope-chrome.png "$ART"/speedscope-folded.png; do
		python3 -c "import struct,sys
d = open(sys.argv[1], \"rb\").read()
assert d[:8] == b\"\\x89PNG\\r\\n\\x1a\\n\" and struct.unpack(\">II\", d[16:24]) == (1280, 800), sys.argv[1]
print(sys.argv[1], len(d), \"bytes\")" "$png" || exit 1
	done &&
	cp parsed.0.json parsed.1.json "$_scratch/"
'

test_expect 'Chrome JSON in speedscope: each thread its functions with the total and self time of callgraph --tid; each CPU what ran there, per task = sched, no slice nested in another' '
	mkdir cg && for tid in $TIDS; do
		"$TRACEPP" callgraph --tid=$tid --format=json "$DEMO" >cg/$tid 2>/dev/null || exit 1
	done &&
	"$TRACEPP" sched --format=json "$DEMO" >sched.json 2>/dev/null &&
	python3 "$_scratch/agree.py" chrome "$_scratch/parsed.0.json" cg sched.json
'

test_expect 'folded stacks in speedscope: one profile, a root per thread, every function with the total and self of callgraph' '
	"$TRACEPP" callgraph --format=json "$DEMO" >cg.json 2>/dev/null &&
	python3 "$_scratch/agree.py" folded "$_scratch/parsed.1.json" cg.json "$TIDS"
'

test_done
