#!/usr/bin/env bash
# Runs every benchmark (bench/b-*.sh) and collects their result lines.
# Benchmarks compare side by side with peer tools in the same run and print
# ratios: this machine is shared and noisy, so absolute times mean little.
set -u
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
