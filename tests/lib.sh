# Test helpers, sourced by every tests/t-*.sh. Modeled on git's test-lib:
#   test_expect 'what it proves' 'commands'   — passes when the commands exit 0
#   test_skip   'what it proves' 'reason'
# Each test runs in a fresh scratch directory $T; $B is the build to test
# (build or build-san); $TOP the source tree. The file ends with test_done.
set -u
# The system's programs before per-user shims: the tests need Debian's
# packages only, and pyenv's python3 shim takes ~2 s to start where
# /usr/bin/python3 takes 0.15 s (hundreds of starts per suite).
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
TOP=${TOP:-$(cd "$(dirname "$0")/.." && pwd)}
B=${TPP_B:-$TOP/build}
TRACEPP=$B/tracepp
TRACEREC=$B/tracerec
GEN=$B/bench/tpp-gen
_n=0 _pass=0 _fail=0 _skip=0
_file=$(basename "$0")
_scratch=$(mktemp -d /tmp/tpp-test.XXXXXX)
# uftrace (an oracle here) leaves its per-thread buffers in /dev/shm when a
# traced task dies before uftrace reads them: the sessions recorded under
# the scratch directory are removed with it.
_cleanup() {
	local sid
	for sid in $( (grep -rhos "sid=[0-9a-f]*" --include=task.txt "$_scratch"
		find "$_scratch" -name "sid-*.map" -printf "sid=%f\n" | sed "s/\.map$//; s/sid=sid-/sid=/") | sort -u); do
		rm -f /dev/shm/uftrace-"${sid#sid=}"-*
	done
	rm -rf "$_scratch"
}
trap _cleanup EXIT

test_expect() {
	_n=$((_n + 1))
	T=$_scratch/$_n; mkdir -p "$T"
	local t0=$(date +%s%N) ms
	if (cd "$T" && eval "$2") >"$T.log" 2>&1; then
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		_pass=$((_pass + 1)); echo "ok $_n - $_file: $1 [$ms ms]"
	else
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		_fail=$((_fail + 1)); echo "not ok $_n - $_file: $1 [$ms ms]"
		sed 's/^/#   /' "$T.log" | tail -n 40
	fi
}
test_skip() {
	_n=$((_n + 1)); _skip=$((_skip + 1)); echo "ok $_n - $_file: $1 # SKIP $2"
}
# Fail with a message (inside a test body).
die() { echo "FAILED: $*" >&2; return 1; }
# Pull one number out of JSON on stdin: jget KEY (top-level or first match).
jget() { python3 -c 'import json,sys
d=json.load(sys.stdin)
for k in sys.argv[1].split("."):
    d=d[int(k)] if isinstance(d,list) else d[k]
print(d)' "$1"; }
test_done() {
	echo "# $_file: $_pass passed, $_fail failed, $_skip skipped"
	echo "$_pass $_fail $_skip" >>"${TPP_RESULTS:-/dev/null}"
	[ "$_fail" = 0 ]
}
