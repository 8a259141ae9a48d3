#!/usr/bin/env bash
# Runs every benchmark (bench/b-*.sh) and collects their result lines.
# Benchmarks compare side by side with peer tools in the same run and print
# ratios: this machine is shared and noisy, so absolute times mean little.
set -u
# The system's programs before per-user shims (pyenv's python3 shim takes
# ~2 s to start): the peers and helpers come from Debian packages.
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
TOP=$(cd "$(dirname "$0")/.." && pwd)
export TOP B=${TPP_B:-$TOP/build}
out=${BENCH_OUT:-$TOP/build/bench-results.txt}
: > "$out"
for b in "$TOP"/bench/b-*.sh; do
	[ -n "${1:-}" ] && [[ "$(basename "$b")" != *$1* ]] && continue
	echo "## $(basename "$b")" | tee -a "$out"
	bash "$b" 2>&1 | tee -a "$out"
done
echo "results in $out"
