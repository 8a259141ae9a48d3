#!/usr/bin/env python3
"""w-nr-running CMD...: runs CMD and, until it exits, reads the kernel's
count of running and runnable tasks (the 4th field of /proc/loadavg, the sum
of every CPU's nr_running) every 2 ms. Prints one line per reading:
  MONO_NS NR_RUNNING
MONO_NS is CLOCK_MONOTONIC (the trace clock) right after the reading."""
import subprocess
import sys
import time

p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
out = []
while p.poll() is None:
    with open("/proc/loadavg") as f:
        s = f.read()
    out.append("%d %s" % (time.monotonic_ns(), s.split()[3].split("/")[0]))
    time.sleep(0.002)
print("\n".join(out))
sys.exit(p.returncode)
