#!/usr/bin/env python3
"""tracepp's include rules (postproc/README.md's table): every #include "x"
of a room's files names a header of its own room or of a room the table
allows; no include reaches a header by path ("../"); the rooms' imports
have no loop. Prints one line per breach; exit 1 on any."""
import glob, os, re, sys

top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
os.chdir(top)
ROOT = {"analysis/": "postproc/analysis", "out/": "postproc/out", "cmd/": "postproc/cmd",
        "script/": "postproc/script", "plot/": "plot", "util/": "util", "decoders/": "decoders",
        "format/": "format", "postproc/": "postproc"}
rooms = {}
for line in open("postproc/README.md", encoding="utf-8"):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 3 or not cells[0].startswith("`"):
        continue
    room = cells[0].split("`")[1].rstrip("/")
    allowed = {ROOT.get(n.split("/")[0] + "/", n.rstrip("/")) for n in re.findall(r"`([^`]+)`", cells[2])}
    rooms[room] = allowed
if len(rooms) < 7:
    sys.exit("layers: postproc/README.md's table not found (%d rooms)" % len(rooms))
# where each header lives (tracepp's rooms, the libraries it builds on)
owner = {}
for d in list(rooms) + ["format", "decoders", "recorder"]:
    for h in glob.glob(d + "/*.h"):
        owner.setdefault(os.path.basename(h), set()).add(d)
bad = 0
edges = {r: set() for r in rooms}
for room, allowed in sorted(rooms.items()):
    for f in sorted(glob.glob(room + "/*.[ch]")):
        for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            inc = m.group(1)
            if "/" in inc:
                print("%s:%d: includes %s by path" % (f, n, inc)); bad += 1
                continue
            where = owner.get(inc, set())
            if room in where:
                continue
            ok = where & allowed
            if not ok:
                print("%s:%d: includes %s of %s, which %s may not include" %
                      (f, n, inc, " ".join(sorted(where)) or "no room", room)); bad += 1
                continue
            edges[room] |= {r for r in ok if r in rooms}
# a loop between rooms: depth-first search over the edges actually used
state = {}
def visit(r, path):
    global bad
    state[r] = 1
    for s in sorted(edges.get(r, ())):
        if state.get(s) == 1:
            print("import loop: " + " -> ".join(path[path.index(s):] + [s])); bad += 1
        elif s not in state:
            visit(s, path + [s])
    state[r] = 2
for r in sorted(rooms):
    if r not in state:
        visit(r, [r])
print("layers: %d rooms, %d breaches" % (len(rooms), bad))
sys.exit(1 if bad else 0)
