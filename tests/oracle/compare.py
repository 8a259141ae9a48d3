#!/usr/bin/env python3
"""Records each oracle program with tracerec and with uftrace, the way
uftrace's own test suite does, and compares what the two show: the calls per
function and each task's call tree (durations and tids dropped).

usage: compare.py BUILD [--known FILE] [--jobs N] [--table] [PROGRAM ...]

BUILD holds tracerec, tracepp and oracle/ (the programs, built by `make
oracle` as NAME-{pg,fi}-{O0,O2}). Only functions the program's own objects
define are compared: uftrace also shows the library calls it hooks through
the PLT, tracerec records compiled-in instrumentation only. A task's tree is
the sequence of (depth, function) of its calls in replay order; tasks are
compared as a multiset, so thread interleaving and tids do not matter.

With --known, every disagreement must be listed there (one line:
"PROGRAM-VARIANT counts|trees|status: reason") and every listed one must
still disagree; the exit status says whether that holds. --table prints the
per-program agreement for -pg and -finstrument-functions side by side.
"""
import collections
import json
import concurrent.futures
import fnmatch
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

VARIANTS = ["pg-O0", "pg-O2", "fi-O0", "fi-O2"]


class Ran:
    def __init__(self, rc, out):
        self.returncode, self.stdout = rc, out


TIMEOUT = 124


def run(cmd, timeout=60, **kw):
    """cmd's exit status and output; TIMEOUT (its process group killed)
    when it runs longer than timeout seconds."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         errors="replace", start_new_session=True, **kw)
    try:
        out, _ = p.communicate(timeout=timeout)
        return Ran(p.returncode, out)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        p.communicate()
        return Ran(TIMEOUT, "")


OPERATORS = sorted(["()", "[]", "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&",
                    "||", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "->", ",", "<",
                    ">", "=", "!", "+", "-", "*", "/", "%", "^", "&", "|", "~"], key=len, reverse=True)


def skip_group(s, i):
    depth = 0
    while i < len(s):
        if s[i] in "(<":
            depth += 1
        elif s[i] in ")>":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def simple(full):
    """A demangled C++ name in uftrace's "simple" form: the qualified name
    without template arguments, parameters or return type
    ("app::work" for "app::work(std::vector<int, ...>&, int)")."""
    out, i = "", 0
    while i < len(full):
        if full.startswith("operator", i):
            k = i + 8
            if full[k:k + 1] == " ":
                while k < len(full) and full[k] != "(":
                    k += 1
            else:
                k += next((len(o) for o in OPERATORS if full.startswith(o, k)), 0)
            out, i = out + full[i:k], k
        elif full.startswith("(anonymous namespace)", i):
            out, i = out + "(anonymous namespace)", i + 21
        elif full.startswith("{lambda(", i):
            k = full.find("}", i)
            k = len(full) if k < 0 else k + 1
            out, i = out + full[i:k], k
        elif full[i] == "<":
            i = skip_group(full, i)
        elif full[i] == "(":
            k = skip_group(full, i)
            if not full.startswith("::", k):
                break
            i = k
        elif full[i] == " ":
            out, i = "", i + 1  # what came before was a return type
        else:
            out, i = out + full[i], i + 1
    return out


def defined_functions(paths):
    """Text symbols the program's own objects define, each mapped to one
    name per address: aliases (a C++ constructor's C1 and C2 symbols) are
    one function, whichever name a tool picks."""
    by_addr = collections.defaultdict(set)
    for p in paths:
        out = run(["nm", "--defined-only", p]).stdout
        # the same symbols demangled (nm -C keeps the order): C++ names
        # as uftrace shows them, in its default "simple" form
        dem = run(["nm", "--defined-only", "-C", p]).stdout.splitlines()
        for i, line in enumerate(out.splitlines()):
            f = line.split()
            if len(f) == 3 and f[1] in "tTwWiI":
                d = dem[i].split(None, 2) if i < len(dem) else []
                name = simple(d[2]) if f[2].startswith("_Z") and len(d) == 3 else f[2]
                by_addr[(p, f[0])].add(name)
    canon = {}
    for names in by_addr.values():
        first = min(names)
        for n in names:
            canon.setdefault(n, first)
    return canon


UF_LINE = re.compile(r"^\s*\[\s*(\d+)\]\s*\|( *)(.*)$")


def uftrace_lines(text):
    for line in text.splitlines():
        m = UF_LINE.match(line)
        if m:
            yield int(m.group(1)), len(m.group(2)) - 1, m.group(3)


def tracepp_lines(text):
    """replay --format=json: exact depths (the text view caps its indent)."""
    try:
        lines = json.loads(text) if text.strip() else []
    except ValueError:
        return
    for d in lines:
        if d.get("kind") in ("entry", "call"):
            yield d["tid"], 2 * d["depth"], "%s() %s" % (d["func"], "{" if d["kind"] == "entry" else ";")


CALL = re.compile(r"^([^\s(][^(]*)\((.*)\)( \{| ?;)")


def trees(lines, funcs):
    """Per task: the (depth, name) of each call of a program function,
    library calls spliced out (their callees move up a level)."""
    out = collections.OrderedDict()
    stacks = {}
    for tid, indent, text in lines:
        m = CALL.match(text)
        if not m:
            continue
        name, opens = m.group(1).strip(), m.group(3) == " {"
        d = indent // 2
        st = stacks.setdefault(tid, [])
        while st and st[-1][0] >= d:
            st.pop()
        kept = name in funcs and "@" not in name
        if kept:
            out.setdefault(tid, []).append((sum(1 for x in st if x[1]), funcs[name]))
        if opens:
            st.append((d, kept))
    return out


def summarise(t):
    counts = collections.Counter(n for seq in t.values() for _, n in seq)
    shape = sorted(tuple(seq) for seq in t.values())
    return counts, shape


def record_both(build, prog, work, uf_tries):
    """(uftrace summary, tracerec summary, exit statuses) for one binary."""
    exe = os.path.join(build, "oracle", prog)
    objs = [exe]
    variant = "-".join(prog.split("-")[-2:])
    if "dlopen" in prog or "s-lib" in prog:
        objs.append(os.path.join(build, "oracle", "libplugin-%s.so" % variant))
    funcs = defined_functions(objs)
    plain = run([exe], cwd=work).returncode
    ud = os.path.join(work, "uftrace.data")
    # uftrace as its users run it (library calls hooked: that is how it sees
    # setjmp and fork), deep enough for s-deep; --libname marks those
    # library calls (name@lib), which are dropped, as tracerec has none.
    for _ in range(uf_tries):
        shutil.rmtree(ud, ignore_errors=True)
        ur = run(["uftrace", "record", "--max-stack=8192", "-d", ud, exe], timeout=20, cwd=work)
        if ur.returncode == plain:
            break
    ut = run(["uftrace", "replay", "-d", ud, "--no-pager", "-f", "tid", "--libname"],
             cwd=work).stdout
    tf = os.path.join(work, "t.tpp")
    tr = run([os.path.join(build, "tracerec"), "record", "-q", "-o", tf, "--", exe], cwd=work)
    tt = run([os.path.join(build, "tracepp"), "replay", "--format=json", tf], cwd=work).stdout
    return (summarise(trees(uftrace_lines(ut), funcs)), summarise(trees(tracepp_lines(tt), funcs)),
            (plain, ur.returncode, tr.returncode), ut, tt)


def diff_counts(a, b):
    keys = sorted(set(a) | set(b))
    return ", ".join("%s uftrace %d tracerec %d" % (k, a[k], b[k]) for k in keys if a[k] != b[k])


def drop_uftrace_shm(work):
    """uftrace leaves its buffers in /dev/shm when a traced task dies before
    they are read (s-abort, kills): remove those of the sessions recorded here."""
    ud = os.path.join(work, "uftrace.data")
    # task.txt is written at the end; sid-*.map at the start (a killed record)
    sids = {f[4:-4] for f in glob.glob1(ud, "sid-*.map")}
    try:
        sids |= set(re.findall(r"sid=([0-9a-f]+)", open(os.path.join(ud, "task.txt"), errors="replace").read()))
    except OSError:
        pass
    for sid in sids:
        for f in glob.glob("/dev/shm/uftrace-%s-*" % sid):
            try:
                os.unlink(f)
            except OSError:
                pass


def compare_one(build, prog, verbose, uf_tries):
    work = tempfile.mkdtemp(prefix="tpp-oracle.")
    try:
        (uc, us), (tc, ts), (plain, urc, trc), ut, tt = record_both(build, prog, work, uf_tries(prog))
    finally:
        drop_uftrace_shm(work)
        shutil.rmtree(work, ignore_errors=True)
    res = {}
    res["counts"] = "" if uc == tc else diff_counts(uc, tc)
    res["trees"] = "" if us == ts else "trees differ"
    # Never harm: the traced run exits as the plain run does.
    res["status"] = "" if trc == plain else "plain run exits %d, traced by tracerec %d" % (plain, trc)
    if urc != plain:
        res["uftrace"] = "plain run exits %d, under uftrace %d%s" % (
            plain, urc, " (timed out)" if urc == TIMEOUT else "")
    if verbose and (res["trees"] or res["counts"]):
        res["detail"] = "--- uftrace\n%s--- tracerec\n%s" % (ut, tt)
    return prog, res


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    build = os.path.abspath(args.pop(0))
    known, jobs, table, verbose, only = None, 2, False, False, []
    while args:
        a = args.pop(0)
        if a == "--known":
            known = args.pop(0)
        elif a == "--jobs":
            jobs = int(args.pop(0))
        elif a == "--table":
            table = True
        elif a == "-v":
            verbose = True
        else:
            only.append(a)
    odir = os.path.join(build, "oracle")
    names = sorted({f.rsplit("-", 2)[0] for f in os.listdir(odir) if f.startswith("s-")})
    if only:
        names = [n for n in names if n in only or any(n + "-" + v in only for v in VARIANTS)]
    progs = [n + "-" + v for n in names for v in VARIANTS
             if os.path.exists(os.path.join(odir, n + "-" + v)) and
             (not only or n in only or n + "-" + v in only)]
    # uftrace itself fails now and then on a busy machine (a fork in a
    # thread once hung it): such a run is tried again, unless the failure
    # is a known one.
    known_uf = []
    if known:
        with open(known) as f:
            known_uf = [l.split()[0] for l in f if l.strip() and not l.startswith("#") and
                        len(l.split()) > 1 and l.split()[1] == "uftrace:"]

    def uf_tries(prog):
        return 1 if any(fnmatch.fnmatch(prog, k) for k in known_uf) else 3
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for prog, res in ex.map(lambda p: compare_one(build, p, verbose, uf_tries), progs):
            results[prog] = res
    seen = set()
    for prog in progs:
        for what in ("status", "uftrace", "counts", "trees"):
            if results[prog].get(what):
                seen.add("%s %s" % (prog, what))
                print("disagree: %s %s: %s" % (prog, what, results[prog][what]))
        if results[prog].get("detail"):
            print(results[prog]["detail"])
    if table:
        agree = {}
        print("%-18s %-11s %-11s %-11s %-11s" % ("program", "counts -pg", "trees -pg", "counts -fi", "trees -fi"))
        for n in names:
            row = []
            for fl in ("pg", "fi"):
                for what in ("counts", "trees"):
                    vs = [n + "-%s-%s" % (fl, o) for o in ("O0", "O2")]
                    ok = all(v in results and not results[v][what] and not results[v]["status"] for v in vs)
                    agree[(fl, what)] = agree.get((fl, what), 0) + ok
                    row.append("yes" if ok else "NO")
            print("%-18s %-11s %-11s %-11s %-11s" % (n, row[0], row[1], row[2], row[3]))
        print("agree, of %d programs: counts %d -pg / %d -fi, trees %d -pg / %d -fi" %
              (len(names), agree[("pg", "counts")], agree[("fi", "counts")],
               agree[("pg", "trees")], agree[("fi", "trees")]))
    if known is None:
        return 0
    listed = {}
    rc = 0
    with open(known) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, reason = line.partition(":")
            if not reason.strip() or len(key.split()) != 2:
                print("known list: '%s' needs 'PROGRAM-VARIANT WHAT: reason'" % line)
                rc = 1
            listed[key.strip()] = reason.strip()

    def covered(k):
        prog, what = k.split()
        return [p for p in listed if fnmatch.fnmatch(prog, p.split()[0]) and what == p.split()[-1]]
    used = set()
    for k in sorted(seen):
        c = covered(k)
        used.update(c)
        if not c:
            print("NEW disagreement: %s" % k)
            rc = 1
    for p in sorted(set(listed) - used):
        if any(fnmatch.fnmatch(r, p.split()[0]) for r in results):
            print("stale known entry (they agree now): %s" % p)
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
