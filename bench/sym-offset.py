#!/usr/bin/env python3
"""sym-offset.py ELF SYMBOL: the file offset of SYMBOL, as uprobe_events wants it
(the symbol's address mapped through the PT_LOAD segment that holds it)."""
import subprocess
import sys

elf, name = sys.argv[1], sys.argv[2]
out = subprocess.run(["readelf", "-Ws", elf], capture_output=True, text=True).stdout
addr = [int(l.split()[1], 16) for l in out.splitlines() if l.split()[-1:] == [name]][0]
ph = subprocess.run(["readelf", "-lW", elf], capture_output=True, text=True).stdout
for l in ph.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        o, v, fs = int(f[1], 16), int(f[2], 16), int(f[4], 16)
        if v <= addr < v + fs:
            print(hex(addr - v + o))
            break
