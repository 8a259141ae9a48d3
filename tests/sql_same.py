#!/usr/bin/env python3
"""The fleet tests' one comparison: an SQL engine's answer beside tracepp's.

usage: sql_same.py ANSWER FILTER KEYS TRACEPP_CSV

ANSWER is ClickHouse's (TSV, a row a line) or DuckDB's (one JSON array of
rows), told apart by its first byte. TRACEPP_CSV is a tracepp command's
--format=csv output: with a host column (--by-host, several files) each of
its rows is (host, KEYS...), without (merged, or one file) (KEYS...). Rows
FILTER (a Python expression over r, the CSV row) leaves out are not asked
for. The two sets of rows must be equal and not empty.
"""
import csv
import json
import sys


def main():
    answer, flt, keys, path = sys.argv[1:5]
    keys = keys.split(",")
    want = set()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if eval(flt, {}, {"r": r}):
                want.add(((r["host"],) if "host" in r else ()) + tuple(r[k] for k in keys))
    with open(answer) as f:
        text = f.read()
    if text.startswith("["):
        got = {tuple(x) for x in json.loads(text)}
    else:
        got = {tuple(line.split("\t")) for line in text.split("\n") if line}
    if not want or want != got:
        print("tracepp only", sorted(want - got)[:5], "SQL only", sorted(got - want)[:5], file=sys.stderr)
        return 1
    hosts = {w[0] for w in want}
    print(len(got), "rows agree" + (" (%d hosts)" % len(hosts) if len(keys) < len(next(iter(want))) else ""))
    return 0


sys.exit(main())
