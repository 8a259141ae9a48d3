#!/usr/bin/env bash
# The second threads under ThreadSanitizer: the column scan read in step
# with tpp_iter (tests/unit/roundtrip.c) and over thousands of damaged files
# (tests/unit/robust.c, a tenth of its files: TSan is slow), both thread modes, and latency percentiles readied
# on two threads (tests/unit/an_lat.c), built from the sources with
# -fsanitize=thread: any data race is a report, and a failure here.
# san: skip
. "$(dirname "$0")/lib.sh"

TSAN="cc -std=gnu11 -O1 -g -fsanitize=thread -D_GNU_SOURCE -DTPP_VERSION=\"$(cat "$TOP/VERSION")\" -I$TOP/format -I$TOP/decoders -I$TOP/util -I$TOP/tests/unit $(pkg-config --cflags libcbor liblz4)"
# The library is compiled once for both programs (TSan compiles slowly).
lib() { [ -s "$_scratch/tsan.a" ] || (mkdir -p "$_scratch/tsan" && cd "$_scratch/tsan" &&
	$TSAN -c "$TOP"/format/*.c "$TOP"/decoders/*.c "$TOP"/util/*.c && ar rcs "$_scratch/tsan.a" ./*.o); }
build() { lib && $TSAN -o "$2" "$TOP/tests/unit/$1.c" "$_scratch/tsan.a" $(pkg-config --libs libcbor liblz4) -lpthread -lm; }

test_expect "an_lat.c under ThreadSanitizer: percentiles readied on two threads, no data race" '
	cc -std=gnu11 -O1 -g -fsanitize=thread -D_GNU_SOURCE -I"$TOP/format" -I"$TOP/decoders" -I"$TOP/util" -I"$TOP/tests/unit" \
		-o an_lat "$TOP/tests/unit/an_lat.c" "$TOP/postproc/analysis/an_lat.c" "$TOP/util/hugemem.c" "$TOP/util/spawn_away.c" \
		-lpthread -lm && TSAN_OPTIONS=halt_on_error=1 ./an_lat >out 2>&1; rc=$?
	tail -3 out; [ $rc = 0 ] && ! grep -q "ThreadSanitizer" out && grep -q " 0 failed" out
'
for t in roundtrip robust; do
	test_expect "$t.c under ThreadSanitizer: no data race, every check passes" '
		build '"$t"' ./'"$t"' && TSAN_OPTIONS=halt_on_error=1 TPP_ROBUST_QUICK=1 ./'"$t"' >out 2>&1; rc=$?
		tail -3 out; [ $rc = 0 ] && ! grep -q "ThreadSanitizer" out && grep -q " 0 failed" out
	'
done
test_done
