#!/usr/bin/env bash
# The outside oracle: small programs of the kind uftrace's own test suite
# records (tests/oracle/src: recursion, fork, exec, threads, signals,
# longjmp, exceptions, ucontext, dlopen, posix_spawn, ...), each built with
# -pg and -finstrument-functions at -O0 and -O2 (make oracle), recorded by
# tracerec and by uftrace; the calls per function and every task's call tree
# (durations and tids dropped) must agree, but where tests/oracle/known.txt
# names a uftrace bug. Prints the agreement per program (compare.py --table).
# san: skip
. "$(dirname "$0")/lib.sh"

if ! command -v uftrace >/dev/null; then
	test_skip "tracerec agrees with uftrace on the oracle programs" "uftrace is not installed"
elif [ ! -d "$B/oracle" ]; then
	test_skip "tracerec agrees with uftrace on the oracle programs" "$B/oracle is not built (make oracle)"
else
	test_expect "tracerec agrees with uftrace on every oracle program's calls and trees, but for uftrace's known bugs" "
		python3 '$TOP/tests/oracle/compare.py' '$B' --known '$TOP/tests/oracle/known.txt' --table"
fi
test_done
