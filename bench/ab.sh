#!/usr/bin/env bash
# Interleaved A/B timing: runs two commands alternately N times and prints
# the median wall time of each. Alternating spreads the noise of a shared
# machine over both, which separate runs of A then B do not.
# Usage: bench/ab.sh N "command A" "command B"
set -u
[ $# -eq 3 ] || { echo "usage: bench/ab.sh N 'command A' 'command B'" >&2; exit 2; }
n=$1 a=$2 b=$3
t=$(mktemp)
trap 'rm -f "$t"' EXIT
for _ in $(seq "$n"); do
	for w in A B; do
		c=$a
		[ "$w" = B ] && c=$b
		s=${EPOCHREALTIME//[.,]/} # bash's clock: no fork to read it
		$c >/dev/null 2>&1
		e=${EPOCHREALTIME//[.,]/}
		echo "$w $((e - s))" >>"$t"
	done
done
for w in A B; do
	grep "^$w " "$t" | awk '{print $2}' | sort -n |
		awk -v w="$w" '{v[NR] = $1} END {printf "%s median %.1f ms  ", w, v[int((NR + 1) / 2)] / 1000}'
done
echo
