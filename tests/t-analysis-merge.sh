#!/usr/bin/env bash
# Merging and pairing on files whose every event is known (written by
# tests/analysis/mk-trace.c with the format library): streams overlapping
# in time and out of order inside a stream, damaged chunks, calls that never
# returned and returns that never entered, time ranges, bounded memory.
. "$(dirname "$0")/lib.sh"

cflags="-std=gnu11 -O1 -g -I$TOP/format"
case $B in *san*) cflags="$cflags -fsanitize=address,undefined" ;; esac
cc $cflags -o "$_scratch/mk" "$TOP/tests/analysis/mk-trace.c" "$B/libtppformat.a" \
	$(pkg-config --libs liblz4 libcbor 2>/dev/null) -lm || exit 1
MK=$_scratch/mk

# cg FILE.json FUNC KEY
cg() { python3 -c 'import json,sys
rows = [r for r in json.load(open(sys.argv[1])) if r["func"] == sys.argv[2]]
print(rows[0][sys.argv[3]] if rows else "none")' "$@"; }
# is NAME GOT WANT
is() { echo "$1: got $2 want $3"; [ "$2" = "$3" ]; }

test_expect 'overlapping streams, out of order inside a thread: calls, total and self exact' '
	"$MK" overlap o.tpp && "$TRACEPP" callgraph --format=json o.tpp >o.json && cat o.json &&
	is "outer calls" "$(cg o.json outer calls)" 100 && is "outer total" "$(cg o.json outer total_ns)" 100000 &&
	is "outer self" "$(cg o.json outer self_ns)" 60000 && is "inner total" "$(cg o.json inner total_ns)" 40000 &&
	is "inner max" "$(cg o.json inner max_ns)" 400 && is "inner min" "$(cg o.json inner min_ns)" 400
'

test_expect 'replay merges CPU and thread streams: kernel events in time order, none lost' '
	"$MK" overlap o.tpp && "$TRACEPP" replay o.tpp >r.txt &&
	grep "\[sched_switch\]" r.txt | awk "{print \$1}" >ts && [ "$(wc -l <ts)" = 150 ] && sort -n -c ts &&
	grep "} /\* outer \*/" r.txt | awk "{print \$1}" >ex && [ "$(wc -l <ex)" = 100 ] && sort -n -c ex &&
	[ "$(grep -c -e "inner();" -e "} /\* inner \*/" r.txt)" = 100 ] && [ "$(grep -c "\[sched_in\]" r.txt)" -ge 50 ]
'

test_expect 'calls without return and returns without entry are kept, marked and counted' '
	"$MK" broken b.tpp && "$TRACEPP" callgraph --format=json b.tpp >b.json 2>warn && cat b.json warn &&
	is "lost noret" "$(cg b.json lost noret)" 1 && is "lost total (to the thread end)" "$(cg b.json lost total_ns)" 5500 &&
	is "orphan" "$(cg b.json orphan orphans)" 1 && is "ok calls" "$(cg b.json ok calls)" 2 &&
	is "ok noret" "$(cg b.json ok noret)" 0 && is "b noret" "$(cg b.json b noret)" 1 &&
	is "c noret" "$(cg b.json c noret)" 1 && is "a calls" "$(cg b.json a calls)" 2 &&
	is "a max" "$(cg b.json a max_ns)" 2000 && is "a noret" "$(cg b.json a noret)" 0 &&
	grep -q "1 return(s) without entry, 1 call(s) without return, 2 unwound" warn &&
	"$TRACEPP" replay b.tpp >r.txt 2>/dev/null && cat r.txt &&
	grep -q "} /\* orphan \*/ \[return without entry\]" r.txt && grep -q "c(); \[unwound\]" r.txt &&
	grep -q "} /\* lost \*/ \[no return\]" r.txt &&
	"$TRACEPP" latency --func=a --format=json b.tpp >l.json && is "a latency max" "$(cg l.json a max_ns)" 2000 &&
	"$TRACEPP" latency --func=b --format=json b.tpp >l.json && is "b (never returned) samples" "$(cg l.json b count)" none
'

test_expect 'a damaged chunk is reported and skipped; what remains is never paired wrong' '
	"$MK" overlap o.tpp && size=$(stat -c %s o.tpp) &&
	printf "\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377\377" |
		dd of=o.tpp bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null &&
	"$TRACEPP" callgraph --format=json o.tpp >d.json 2>warn; rc=$?; cat d.json warn; [ $rc = 0 ] &&
	grep -qi "damaged" warn && [ "$(grep -ci damaged warn)" = 1 ] &&
	c=$(cg d.json outer calls) && [ "$c" -le 100 ] && [ "$c" -ge 80 ] &&
	is "outer max" "$(cg d.json outer max_ns)" 1000 && is "inner max" "$(cg d.json inner max_ns)" 400 &&
	"$TRACEPP" replay o.tpp >/dev/null 2>warn2 && grep -qi damaged warn2
'

# sched TID KEY < JSON
sj() { python3 -c 'import json,sys
rows = [r for r in json.load(sys.stdin) if r["tid"] == int(sys.argv[1])]
print(rows[0][sys.argv[2]] if rows else "none")' "$@"; }

test_expect 'switch-ins missing from the file (idle -> task) are inferred, counted and bounded' '
	"$MK" idle i.tpp && "$TRACEPP" sched --format=json i.tpp >i.json 2>i.err && cat i.json i.err &&
	is "switches" "$(sj 100 switches <i.json)" 30 &&
	is "inferred_switch_ins" "$(sj 100 inferred_switch_ins <i.json)" 10 &&
	grep -q "10 switch-in(s) missing" i.err &&
	on=$(sj 100 oncpu_ns <i.json) && echo "on-cpu $on, true 15000, bound 15000 + 10 x 10" &&
	[ "$on" -ge 15000 ] && [ "$on" -le 15100 ] &&
	"$TRACEPP" sched i.tpp >i.txt && cat i.txt &&
	grep -q "^switch-ins inferred: 10 of 30 " i.txt && head -1 i.txt | grep -q inferred
'

test_expect '--time-range keeps exactly the window (replay, callgraph)' '
	"$MK" overlap o.tpp &&
	"$TRACEPP" replay --time-range=1010000,1019999 o.tpp >r.txt 2>/dev/null &&
	grep "\[sched_switch\]" r.txt | awk "{print \$1}" >ts && cat ts | head -3 &&
	[ "$(wc -l <ts)" = 14 ] &&
	"$TRACEPP" callgraph --format=json --time-range=1010000,1019999 o.tpp >w.json 2>/dev/null &&
	is "whole outer calls in 10 us" "$(python3 -c "import json; r=[x for x in json.load(open(\"w.json\")) if x[\"func\"]==\"outer\"][0]; print(r[\"calls\"] - r[\"noret\"])")" 10 &&
	! "$TRACEPP" replay --time-range=oops o.tpp 2>e && [ "$(wc -l <e)" = 1 ]
'

test_expect 'bad input gives one error line and exit != 0 for every analysis command' '
	echo "not a trace" >bad.tpp &&
	for c in replay callgraph latency sched io net; do
		"$TRACEPP" $c bad.tpp >/dev/null 2>e && exit 1
		echo "$c: $(cat e)"; [ "$(wc -l <e)" = 1 ] || exit 1
		"$TRACEPP" $c --format=yaml bad.tpp >/dev/null 2>e && exit 1
		[ "$(wc -l <e)" = 1 ] || exit 1
	done
'

case $B in *san*)
	test_skip 'memory stays bounded as the file grows' 'sanitizer build: RSS not comparable'
	test_skip 'memory per stream stays small' 'sanitizer build: RSS not comparable' ;; *)
test_expect 'memory stays bounded as the file grows (replay, sched: 0.5M vs 4M events)' '
	"$GEN" -o s.tpp -n 500000 --mix func,sched,block,net >/dev/null 2>&1 &&
	"$GEN" -o l.tpp -n 4000000 --mix func,sched,block,net >/dev/null 2>&1 &&
	for c in replay sched io; do
		/usr/bin/time -f %M -o ms "$TRACEPP" $c s.tpp >/dev/null 2>&1 &&
		/usr/bin/time -f %M -o ml "$TRACEPP" $c l.tpp >/dev/null 2>&1 &&
		echo "$c: max RSS $(cat ms) KiB at 0.5M events, $(cat ml) KiB at 4M" &&
		# + 6 MiB: sched keeps three latency distributions, each of
		# which may have moved to a 2 MiB huge page (an_lat.c)
		[ "$(cat ml)" -lt $(( $(cat ms) * 3 / 2 + 4096 + 6144 )) ] || exit 1
	done
'
test_expect 'memory per stream stays small: 1024 thread streams replay in under 64 MiB' '
	"$GEN" -o t.tpp -n 4000000 --mix func --threads 1024 >/dev/null 2>&1 &&
	for c in replay "dump --sorted"; do
		/usr/bin/time -f %M -o mt "$TRACEPP" $c t.tpp >/dev/null 2>&1 &&
		echo "$c: max RSS $(cat mt) KiB" &&
		[ "$(cat mt)" -lt 65536 ] || exit 1
	done
'
;; esac
test_done
