#!/usr/bin/env python3
"""Checks a Chrome trace-event JSON file against the format's rules (the
Trace Event Format document: JSON Object Format, phases X B E i I M C b e)
and prints what it holds, for tests/t-export.sh to compare with tracepp's
other commands.

usage: chrome_check.py FILE.json [--calls | --calls-by-tid | --slices | --summary]
  --calls         "FUNC COUNT TOTAL_NS" per function name of the call (cat "call") X events,
                  frames resumed (not entered in the thread) left out
  --calls-by-tid  "TID FUNC COUNT" likewise, per thread
  --slices        "TID NS" per task that ran: the time of its CPU (cat "sched") slices,
                  complete events or B/E pairs
  --summary       counts per phase and the number of thread tracks
Exits 1 with the broken rule on stderr when the file breaks one."""
import json
import sys
from collections import defaultdict


def fail(msg):
    sys.stderr.write("chrome_check: " + msg + "\n")
    sys.exit(1)


def ns(v, what):
    # ts and dur are microseconds; tracepp writes the nanoseconds as up to
    # three decimals (no trailing zero), so they come back exact
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        fail("%s is not a number: %r" % (what, v))
    return round(v * 1000)


def main():
    path, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "--summary")
    with open(path, "rb") as f:
        raw = f.read()
    raw.decode("utf-8")  # the format is UTF-8 JSON: a stray byte fails here
    d = json.loads(raw)
    if not isinstance(d, dict) or not isinstance(d.get("traceEvents"), list):
        fail("not a JSON object with a traceEvents array")
    tracks = defaultdict(list)   # (pid, tid) -> X events as (start, end, name)
    begin_end = defaultdict(list)  # (pid, tid) -> its B and E events, in file order
    async_open = defaultdict(int)
    phases = defaultdict(int)
    calls = defaultdict(lambda: [0, 0])
    calls_tid = defaultdict(int)
    slices = defaultdict(int)
    for i, e in enumerate(d["traceEvents"]):
        where = "event %d" % i
        if not isinstance(e, dict):
            fail(where + " is not an object")
        ph = e.get("ph")
        if ph not in ("X", "B", "E", "i", "I", "M", "C", "b", "e", "n"):
            fail("%s: unknown phase %r" % (where, ph))
        phases[ph] += 1
        for k in ("pid", "tid"):
            if not isinstance(e.get(k), int):
                fail("%s: %s is not an integer" % (where, k))
        if ph != "M":
            ts = ns(e.get("ts"), where + " ts")
        if ph in ("M", "X", "B", "i", "I", "C") and not isinstance(e.get("name"), str):
            fail(where + ": no name")
        if "args" in e and not isinstance(e["args"], dict):
            fail(where + ": args is not an object")
        key = (e["pid"], e["tid"])
        if ph == "X":
            dur = ns(e.get("dur"), where + " dur")
            if dur < 0:
                fail("%s: negative duration %r" % (where, e["dur"]))
            tracks[key].append((ts, ts + dur, e["name"]))
            if e.get("cat") == "call" and not e.get("args", {}).get("resumed"):
                c = calls[e["name"]]
                c[0] += 1
                c[1] += dur
                calls_tid[(e["tid"], e["name"])] += 1
            if e.get("cat") == "sched":
                slices[e["args"]["tid"]] += dur
        elif ph in ("B", "E"):
            begin_end[key].append((ts, ph, e.get("name"), e, where))
        elif ph in ("i", "I"):
            if e.get("s", "t") not in ("t", "p", "g"):
                fail("%s: bad instant scope %r" % (where, e.get("s")))
        elif ph in ("b", "e"):
            if "id" not in e:
                fail(where + ": async event without id")
            async_open[(e.get("cat"), e["id"])] += 1 if ph == "b" else -1
        elif ph == "M":
            if e["name"] in ("process_name", "thread_name") and not isinstance(e.get("args", {}).get("name"), str):
                fail(where + ": name metadata without args.name")
    # B/E pair up as a viewer pairs them: in time order (file order where
    # the times are equal), each E closing the latest open B, of its name
    for key, evs in begin_end.items():
        evs.sort(key=lambda x: x[0])
        stack = []
        for ts, ph, name, e, where in evs:
            if ph == "B":
                task = e.get("args", {}).get("tid") if e.get("cat") == "sched" else None
                stack.append((name, ts, task))
                continue
            if not stack:
                fail("%s: E without its B on %r" % (where, key))
            bname, start, task = stack.pop()
            if name is not None and name != bname:
                fail("%s: E of %r closes %r, opened later on %r" % (where, name, bname, key))
            if task is not None:
                slices[task] += ts - start
        if stack:
            fail("B without its E on %r: %r" % (key, [n[0] for n in stack]))
    for key, n in async_open.items():
        if n:
            fail("async b/e unbalanced for %r" % (key,))
    # complete events of one track nest: each lies inside the one open
    # below it, or after it
    for key, evs in tracks.items():
        evs.sort(key=lambda x: (x[0], -(x[1] - x[0])))
        stack = []
        for s, t, name in evs:
            while stack and stack[-1][1] <= s and not (stack[-1][1] == s and stack[-1][0] == s):
                stack.pop()
            if stack and t > stack[-1][1]:
                fail("track %r: %s [%d, %d] overlaps %s [%d, %d] without nesting"
                     % (key, name, s, t, stack[-1][2], stack[-1][0], stack[-1][1]))
            stack.append((s, t, name))
    if mode == "--calls":
        for name in sorted(calls):
            print(name, calls[name][0], calls[name][1])
    elif mode == "--calls-by-tid":
        for (tid, name) in sorted(calls_tid):
            print(tid, name, calls_tid[(tid, name)])
    elif mode == "--slices":
        for tid in sorted(slices):
            if slices[tid]:
                print(tid, slices[tid])
    else:
        print(" ".join("%s=%d" % (p, phases[p]) for p in sorted(phases)), "tracks=%d" % len(tracks))


main()
