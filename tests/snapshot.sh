#!/usr/bin/env bash
# Every tracepp command in every output format on every sample trace (and a
# few generated ones), outputs stored, so that a refactor can prove it
# changed no byte (issue 16):
#   tests/snapshot.sh save DIR        run everything, store in DIR
#   tests/snapshot.sh compare DIR     run again, diff against DIR: exit 1 on any change
# B=build-san or TRACEPP=... picks the binary; SNAP_TRACES="a.tpp b.tpp" adds traces.
# Not part of tests/run.sh: it takes ~1 min and guards refactors, not behaviour.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-$TOP/build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
TRACEPP=${TRACEPP:-$B/tracepp}
GEN=$B/bench/tpp-gen
mode=${1:-}
dir=${2:-}
case $mode in save|compare) ;; *) echo "usage: $0 save|compare DIR" >&2; exit 2 ;; esac
[ -n "$dir" ] || { echo "$0: DIR missing" >&2; exit 2; }
[ -x "$TRACEPP" ] || { echo "$0: no $TRACEPP (make all first)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/out
mkdir -p "$out" "$work/traces"
cp "$TOP"/samples/traces/*.tpp "$work/traces/"
# generated ones (their clock base is the generating host's uptime): made
# by save, kept in DIR/traces and reused by compare
if [ "$mode" = save ]; then
	(cd "$work/traces" && "$GEN" -o g-all.tpp -n 20000 --mix func,sched,block,net --cpus 2 --threads 3 --seed 7) >/dev/null 2>&1
	(cd "$work/traces" && "$GEN" -o g-abandoned.tpp -n 3000 --abandon --chunk-events 100 --seed 3) >/dev/null 2>&1
else
	cp "$dir"/traces/g-*.tpp "$work/traces/"
fi
for t in ${SNAP_TRACES:-}; do cp "$t" "$work/traces/"; done

# one case: NAME then the command; stdout, stderr (the work dir's path
# replaced) and the exit code stored as NAME.out / NAME.err / NAME.rc
run() {
	local name=$1
	shift
	(cd "$work/run" && "$@") >"$out/$name.out" 2>"$out/$name.err"
	echo $? >"$out/$name.rc"
	sed -i "s#$work#WORK#g" "$out/$name.out" "$out/$name.err"
}
mkdir -p "$work/run"
for tf in "$work"/traces/*.tpp; do
	t=$(basename "$tf" .tpp)
	run "$t.info.text" "$TRACEPP" info "$tf"
	run "$t.info.json" "$TRACEPP" info --format=json "$tf"
	run "$t.dump.text" "$TRACEPP" dump "$tf"
	run "$t.dump.sorted" "$TRACEPP" dump --sorted "$tf"
	run "$t.dump.json" "$TRACEPP" dump --format=json "$tf"
	run "$t.dump.csv" "$TRACEPP" dump --format=csv "$tf"
	run "$t.info.csv" "$TRACEPP" info --format=csv "$tf"
	for f in text json csv; do
		run "$t.replay.$f" "$TRACEPP" replay --format=$f "$tf"
		run "$t.callgraph.$f" "$TRACEPP" callgraph --format=$f "$tf"
		run "$t.callgraph-tree.$f" "$TRACEPP" callgraph --tree --format=$f "$tf"
		run "$t.latency.$f" "$TRACEPP" latency --format=$f "$tf"
		run "$t.sched.$f" "$TRACEPP" sched --format=$f "$tf"
		run "$t.io.$f" "$TRACEPP" io --format=$f "$tf"
		run "$t.net.$f" "$TRACEPP" net --format=$f "$tf"
		run "$t.net-conns.$f" "$TRACEPP" net --conns --format=$f "$tf"
	done
	run "$t.callgraph.folded" "$TRACEPP" callgraph --folded "$tf"
	run "$t.callgraph.callers" "$TRACEPP" callgraph --callers=leaf "$tf"
	run "$t.latency.sched" "$TRACEPP" latency --sched "$tf"
	run "$t.sched.idle" "$TRACEPP" sched --idle --sort=tid "$tf"
	run "$t.io.interval" "$TRACEPP" io --interval=1ms "$tf"
	run "$t.export.chrome" "$TRACEPP" export --format=chrome "$tf"
	run "$t.export.folded" "$TRACEPP" export --format=folded --root=thread "$tf"
	run "$t.script.count" "$TRACEPP" script -e 'tracepoint:sched:sched_switch { @[args->next_comm] = count(); }' "$tf"
	# plots and the report: their data files and scripts (no gnuplot: images differ by build)
	for ty in timeline hist heatmap gantt; do
		for by in "" cpu task call latency; do
			case $ty:$by in timeline:?* | hist:?* | heatmap:task | heatmap:call | gantt:latency) continue ;; esac
			d=$work/run/$t.plot.$ty.${by:-default}
			mkdir -p "$d"
			run "$t.plot.$ty.${by:-default}" "$TRACEPP" plot "$tf" --type=$ty ${by:+--by=$by} -o "$d/p.svg" --data-only
			for f in "$d"/*; do
				[ -f "$f" ] || continue
				c=$out/$t.plot.$ty.${by:-default}.$(basename "$f")
				cp "$f" "$c" && sed -i "s#$work#WORK#g" "$c"
			done
		done
	done
	run "$t.plot.hist.func" "$TRACEPP" plot "$tf" --type=hist --metrics=func -o "$work/run/f.svg" --data-only
	rm -rf "$work/run/report"
	run "$t.report" env PATH=/nonexistent "$TRACEPP" report "$tf" -o "$work/run/report"
	for f in "$work"/run/report/*; do
		[ -f "$f" ] && cp "$f" "$out/$t.report.$(basename "$f")" && sed -i "s#$work#WORK#g" "$out/$t.report.$(basename "$f")"
	done
	rm -rf "$work/run"/*
done

if [ "$mode" = save ]; then
	rm -rf "$dir" && mkdir -p "$dir/traces" && cp -r "$out"/. "$dir"/ && cp "$work"/traces/g-*.tpp "$dir/traces/"
	echo "snapshot: $(ls "$out" | wc -l) files in $dir"
	exit 0
fi
if diff -r -x traces "$dir" "$out" >"$work/diff"; then
	echo "snapshot: $(ls "$out" | wc -l) files, all identical to $dir"
	exit 0
fi
grep -E '^(Only in|diff )' "$work/diff" | sed "s#$out#NEW#g"
echo "snapshot: outputs differ from $dir (diff -r $dir NEW, NEW kept in ${SNAP_KEEP:-nowhere: set SNAP_KEEP=DIR})"
[ -n "${SNAP_KEEP:-}" ] && rm -rf "$SNAP_KEEP" && cp -r "$out" "$SNAP_KEEP"
exit 1
