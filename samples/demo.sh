#!/usr/bin/env bash
# make demo: record the bundled sample workload and turn it into a report.
#
# The workload runs a pipe ping-pong (context switches), O_DIRECT disk IO and
# a loopback TCP transfer side by side, recorded system-wide with the
# scheduler, block and network tracepoints; then a program built with
# -finstrument-functions is recorded for its calls. Where recording is not
# permitted (not root, no tracefs) the bundled traces in samples/traces/ are
# analysed instead, and the output says so.
#
#   samples/demo.sh [OUTDIR]      (default demo-out; build dir from $B, default build;
#                                  TPP_DEMO_RECORD=0 forces the bundled traces)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-build}
case $B in /*) ;; *) B=$TOP/$B ;; esac
OUT=${1:-$TOP/demo-out}
TRACEPP=$B/tracepp TRACEREC=$B/tracerec S=$B/samples
TFS=/sys/kernel/tracing

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
}

kernel=$OUT/workload.tpp func=$OUT/functions.tpp
if can_record; then
	echo "demo: recording the sample workload system-wide (sched, block, net) ..."
	scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tpp-demo.XXXXXX")
	trap 'rm -rf "$scratch"' EXIT
	"$TRACEREC" record -q -a -e sched,block,net -o "$kernel" -- sh -c "
		'$S/w-pingpong' 20000 >/dev/null &
		'$S/w-odirect' '$scratch/io.dat' 2000 >/dev/null &
		'$S/w-tcp' 3000 1000 >/dev/null &
		wait" || die "recording the workload failed"
	echo "demo: recording the function calls of s-threads (built with -finstrument-functions) ..."
	"$TRACEREC" record -q -e sched -o "$func" -- "$S/s-threads-fi" >/dev/null ||
		die "recording s-threads-fi failed"
	src="recorded on this machine"
else
	echo "demo: recording is not permitted here ($why): analysing the bundled sample traces instead"
	cp "$TOP/samples/traces/demo-workload.tpp" "$kernel" &&
		cp "$TOP/samples/traces/demo-functions.tpp" "$func" || die "bundled traces missing"
	src="bundled sample traces (recording not permitted: $why)"
fi

"$TRACEPP" info "$kernel" | sed -n '1,12p'
"$TRACEPP" report "$kernel" -o "$OUT/report" || die "report failed"
"$TRACEPP" report "$func" -o "$OUT/functions" || die "function report failed"
"$TRACEPP" plot "$func" --type=gantt --by call --keep -o "$OUT/flame.png" || die "flame chart failed"
cat <<EOF

demo: done, from $src.
  report of the workload:      $OUT/report/index.html
  report of the function trace: $OUT/functions/index.html
  flame chart:                 $OUT/flame.png (edit flame.gp, re-render with: cd $OUT && gnuplot flame.gp)
  traces:                      $kernel, $func
EOF
