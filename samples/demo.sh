#!/usr/bin/env bash
# make demo: record the bundled sample workload and turn it into one report.
#
# The workload is samples/src/s-demo.c, built with -finstrument-functions: a
# pipe ping-pong (context switches), O_DIRECT disk IO, a loopback TCP
# transfer and a checksum, one after another, all in instrumented functions.
# Recording it system-wide with the scheduler, block and network tracepoints
# puts the kernel's view and the program's calls in one trace, so the one
# page shows the kernel tables and plots next to the functions table and the
# flame chart. Where recording is not permitted (not root, no tracefs) the
# bundled samples/traces/demo.tpp is analysed instead, and the output says so.
#
#   samples/demo.sh [OUTDIR]      (default demo-out; build dir from $B, default build;
#                                  TPP_DEMO_RECORD=0 forces the bundled trace)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-build}
case $B in /*) ;; *) B=$TOP/$B ;; esac
OUT=${1:-$TOP/demo-out}
TRACEPP=$B/tracepp TRACEREC=$B/tracerec DRIVER=$B/samples/s-demo-fi
TFS=/sys/kernel/tracing
# ping-pong rounds, 4 KiB blocks written and read, TCP messages: about 0.1 s
# of work and a trace well under 200 KB.
ARGS="3000 300 500"

die() { echo "demo: $*" >&2; exit 1; }
[ -x "$TRACEPP" ] || die "$TRACEPP not built (run 'make all' first)"
mkdir -p "$OUT" || die "cannot create $OUT"

can_record() {
	[ "${TPP_DEMO_RECORD:-1}" != 0 ] || { why="TPP_DEMO_RECORD=0"; return 1; }
	[ "$(id -u)" = 0 ] || { why="not root"; return 1; }
	[ -d $TFS/instances ] || mount -t tracefs nodev $TFS 2>/dev/null ||
		{ why="no tracefs at $TFS"; return 1; }
	[ -d $TFS/instances ] || { why="no tracefs instances at $TFS"; return 1; }
	[ -x "$TRACEREC" ] || { why="$TRACEREC not built"; return 1; }
	[ -x "$DRIVER" ] || { why="$DRIVER not built"; return 1; }
}

trace=$OUT/demo.tpp
if can_record; then
	echo "demo: recording s-demo (ping-pong, disk IO, TCP; built with -finstrument-functions)"
	echo "demo:   system-wide with the sched, block and net tracepoints ..."
	# O_DIRECT needs a real file system, not the tmpfs /tmp often is.
	scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tpp-demo.XXXXXX") || die "cannot create a scratch directory"
	trap 'rm -rf "$scratch"' EXIT
	# shellcheck disable=SC2086 # ARGS is a list of numbers
	"$TRACEREC" record -q -a -e sched,block,net -o "$trace" -- "$DRIVER" $ARGS "$scratch/io.dat" \
		>/dev/null || die "recording the workload failed"
	src="recorded on this machine"
else
	echo "demo: recording is not permitted here ($why): analysing the bundled sample trace instead"
	cp "$TOP/samples/traces/demo.tpp" "$trace" || die "bundled trace samples/traces/demo.tpp missing"
	src="from the bundled sample trace samples/traces/demo.tpp (recording not permitted: $why)"
fi

"$TRACEPP" info "$trace" | sed -n '1,12p'
"$TRACEPP" report "$trace" -o "$OUT/report" || die "report failed"
cat <<EOT

demo: done, trace $src.
  report:  $OUT/report/index.html
           (kernel tables and plots, the functions table and the flame chart of s-demo's main thread;
            each plot's data and gnuplot script are beside it: cd $OUT/report && gnuplot flame.gp)
  trace:   $trace
EOT
