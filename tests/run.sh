#!/usr/bin/env bash
# Runs every test: unit programs (tests/unit/*.c) and shell tests
# (tests/t-*.sh), first on build/, then on the ASan+UBSan build (build-san/)
# unless TPP_NO_SAN=1. Ends with "N passed, N failed".
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
export TOP
results=$(mktemp); export TPP_RESULTS=$results
builds=${TPP_BUILDS:-"$TOP/build $TOP/build-san"}
[ "${TPP_NO_SAN:-0}" = 1 ] && builds=${builds%% *}
only=${1:-}
# A test program or file that dies before reporting its tally (a syntax
# error, an unset variable, a crash) counts as one failure, never as nothing.
run_one() {
	local name=$1 before after t0
	shift
	before=$(wc -l < "$results")
	t0=$(date +%s%N)
	(cd "$TOP" && "$@")
	local rc=$?
	after=$(wc -l < "$results")
	# Per-file wall time keeps the suite's budget visible (CI limit: well under 15 min).
	echo "# time: $(basename "$name") $(( ($(date +%s%N) - t0) / 1000000 )) ms"
	if [ "$after" = "$before" ]; then
		echo "not ok - $(basename "$name") ended (exit $rc) without reporting its results"
		echo "0 1 0" >> "$results"
	fi
}
for b in $builds; do
	export TPP_B=$b
	case $b in *san*) export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ;; esac
	echo "## build: $(basename "$b")"
	for t in "$b"/tests/*; do
		[ -x "$t" ] || continue
		[ -n "$only" ] && [[ "$(basename "$t")" != *$only* ]] && continue
		run_one "$t" "$t"
	done
	for t in "$TOP"/tests/t-*.sh; do
		[ -n "$only" ] && [[ "$(basename "$t")" != *$only* ]] && continue
		# Slow end-to-end tests may opt out of the sanitizer pass.
		if [[ "$b" == *san* ]] && grep -q '^# san: skip' "$t"; then continue; fi
		run_one "$t" bash "$t"
	done
done
awk '{p+=$1; f+=$2; s+=$3} END {printf "%d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0 || p == 0)}' "$results"
rc=$?
rm -f "$results"
exit $rc
