#!/usr/bin/env bash
# Flag sets and symbolic values read as the kernel prints them: tracerec
# stores each event's print format (specs/format.md, type map print_fmt),
# tracepp names gfp_flags (__print_flags) and softirq vectors
# (__print_symbolic) from it. Truth: the kernel's own text of the same
# events, read from the `trace` file of a tracefs instance that records them
# at the same time (joined on CPU, timestamp and page frame).
# san: skip
. "$(dirname "$0")/lib.sh"
TFS=/sys/kernel/tracing
[ -d $TFS/instances ] || mount -t tracefs nodev $TFS 2>/dev/null
if ! [ -d $TFS/instances ] || ! [ -r $TFS/events/kmem/mm_page_alloc/format ] ||
   ! [ -r $TFS/events/irq/softirq_entry/format ]; then
	test_skip 'gfp_flags and softirq vectors read as the kernel prints them' 'no tracefs with kmem and irq events'
	test_done; exit
fi
INST=$TFS/instances/tracepp-t-flags-$$
trap '[ -d $INST ] && { echo 0 >$INST/tracing_on; echo 0 >$INST/events/enable; rmdir $INST; }; _cleanup' EXIT

test_expect 'gfp_flags and softirq vectors read as the kernel prints them (its trace file, same events)' '
	mkdir $INST && echo mono >$INST/trace_clock && echo 4096 >$INST/buffer_size_kb &&
	echo 1 >$INST/events/kmem/mm_page_alloc/enable && echo 1 >$INST/events/irq/softirq_entry/enable &&
	echo 1 >$INST/tracing_on &&
	"$TRACEREC" record -q -a -e kmem:mm_page_alloc,irq:softirq_entry -o f.tpp -- \
		sh -c "dd if=/dev/zero of=z bs=64k count=64 2>/dev/null; rm -f z; sleep 0.1" &&
	echo 0 >$INST/tracing_on && cat $INST/trace >k.txt && echo 0 >$INST/events/enable && rmdir $INST &&
	"$TRACEPP" dump f.tpp >d.txt && "$TRACEPP" dump --format=json f.tpp >d.json &&
	python3 - <<-"PY"
	import json, re
	# the kernel: "  dd-123  [001] d..1. 67760.596896: mm_page_alloc: page=... pfn=0x10a6f7 order=0 migratetype=0 gfp_flags=GFP_KERNEL|__GFP_ZERO"
	kern = {}
	for l in open("k.txt"):
	    m = re.search(r"\[(\d+)\] \S+ +(\d+)\.(\d{6}): (mm_page_alloc|softirq_entry): (.*)", l)
	    if not m:
	        continue
	    cpu, sec, us, ev, rest = m.groups()
	    if ev == "mm_page_alloc":
	        f = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
	        kern[(int(cpu), int(sec), int(us), ev, int(f["pfn"], 16))] = f["gfp_flags"]
	    else:
	        v = re.match(r"vec=(\d+) \[action=(\w+)\]", rest)
	        kern[(int(cpu), int(sec), int(us), ev, int(v.group(1)))] = v.group(2)
	ours = {}
	text = [l for l in open("d.txt") if " mm_page_alloc: " in l or " softirq_entry: " in l]
	js = [e for e in map(json.loads, open("d.json")) if e["type"] in ("mm_page_alloc", "softirq_entry")]
	assert len(text) == len(js), (len(text), len(js))
	for t, e in zip(text, js):
	    sec, ns = divmod(e["ts"], 10**9)
	    if e["type"] == "mm_page_alloc":
	        key, f, raw = e["pfn"], "gfp_flags", e["gfp_flags"]
	    else:
	        key, f, raw = e["vec"], "vec", e["vec"]
	    s = e.get(f + "_str")
	    assert isinstance(raw, int) and s is not None, e
	    assert " %s=%s" % (f, s) in t, (t, s)
	    ours[(e["cpu"], sec, ns // 1000, e["type"], key)] = s
	both = set(kern) & set(ours)
	bad = [(k, kern[k], ours[k]) for k in both if kern[k] != ours[k]]
	pages = [k for k in both if k[3] == "mm_page_alloc"]
	vecs = {ours[k] for k in both if k[3] == "softirq_entry"}
	print(len(kern), len(ours), len(pages), len(both) - len(pages), sorted({ours[k] for k in pages})[:6], vecs)
	assert not bad, bad[:5]
	assert len(pages) >= 50 and len(both) - len(pages) >= 3, (len(pages), len(both))
	assert any("|" in ours[k] for k in pages) and vecs, "no flag set or vector among the joined events"
	PY
'

test_done
