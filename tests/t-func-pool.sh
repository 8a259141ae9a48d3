#!/usr/bin/env bash
# The function runtime's shared pool (recorder/rt/tpp_rt_abi.h): any number
# of threads traced from one bounded pool, every record either in the file
# or counted as lost in its thread's stream, shared memory never above the
# budget as the kernel counts it, no name in /dev/shm to attack, and a
# recorder killed with SIGKILL leaving a file that opens and names its
# functions. Truth: the sample's own call counts, the kernel's view of the
# memfd (/proc/PID/fd), the file system.
# san: skip
. "$(dirname "$0")/lib.sh"
S=$B/samples
NCPU=$(getconf _NPROCESSORS_ONLN)

# "tid entries exits thread_exits" per thread stream of a file, and per
# stream the lost records: "tid lost". Counted by tracepp script (checked
# against bpftrace in t-script): a JSON dump through python took 10-45 s
# on the millions of events these runs make.
per_thread() { # FILE
	"$TRACEPP" script -e 'tracepoint:tracepp:* { @[tid, probe] = count(); }' "$1" 2>/dev/null | python3 -c '
import re, sys, collections
n = collections.defaultdict(lambda: [0, 0, 0])
for l in sys.stdin:
    # -A entries are a type of their own per spec (a0:func_entry)
    m = re.match(r"@\[(\d+), tracepoint:tracepp:(?:\w+:)?func_(entry|exit|thread_exit)\]: (\d+)$", l)
    if m:
        n[int(m[1])][("entry", "exit", "thread_exit").index(m[2])] += int(m[3])
for tid, v in sorted(n.items()):
    print(tid, *v)'
}
lost_per_thread() { # FILE
	"$TRACEPP" info --format=json "$1" | python3 -c '
import json, sys, collections
d = json.load(sys.stdin)
tid = {s["id"]: s["tid"] for s in d["streams"]}
lost = collections.Counter()
for l in d["lost_by_stream"]:
    lost[tid.get(l["stream"], -1)] += l["count"]
for t, c in sorted(lost.items()):
    print(t, c)'
}
# The pool of a running recorder as the kernel sees it: "size blocks*512 mode".
pool_stat() { # PID
	for f in /proc/$1/fd/*; do
		case $(readlink "$f") in "/memfd:tpp-rt"*)
			stat -L -c '%s %b %B %a' "$f" | awk '{print $1, $2 * $3, $4}'; return 0 ;;
		esac
	done
	return 1
}

test_expect '1000 threads started one after another: every one traced, with all its calls' '
	"$TRACEREC" record -q -o t.tpp -- "$S/s-many-threads-pg" 1000 10 seq >/dev/null &&
	per_thread t.tpp >n.txt &&
	echo "threads: $(wc -l <n.txt)" && [ "$(wc -l <n.txt)" = 1001 ] &&
	# the main thread: main; each worker: worker and 10 leaf calls, one exit event
	[ "$(grep -c "^[0-9]* 11 11 1$" n.txt)" = 1000 ] && [ "$(grep -c "^[0-9]* 1 1 1$" n.txt)" = 1 ] &&
	[ -z "$(lost_per_thread t.tpp)" ]
'

test_expect '400 threads alive at once after one call each: each holds one page of the pool (a small first chunk), not a big chunk; all traced' '
	"$TRACEREC" record -q -o t.tpp -- "$S/s-many-threads-pg" 400 1 conc "$PWD/go" >/dev/null 2>err &
	rec=$!
	for i in $(seq 400); do
		p=$(pgrep -P $rec -f s-many-threads) && [ "$(awk "/^Threads:/ {print \$2}" /proc/$p/status)" = 401 ] && break
		sleep 0.05
	done
	st=$(pool_stat $rec); touch go; wait $rec; rc=$?
	cat err; echo "pool: $st (size, bytes allocated, mode)"
	# 400 pages of chunks, the rest (header, descriptors, maps) well under 1 MiB;
	# big first chunks (16 KiB) would be 6.5 MB
	set -- $st && [ $rc = 0 ] && [ "$2" -le $((400 * 4096 + (1 << 20))) ] &&
	per_thread t.tpp >n.txt && [ "$(grep -c "^[0-9]* 2 2 1$" n.txt)" = 400 ] && [ -z "$(lost_per_thread t.tpp)" ]
'

test_expect '300 threads at once, 64 MiB budget, recorder stopped meanwhile (SIGSTOP): the pool runs out, the program finishes after at most one wait per thread, every record is in the file or counted lost in its thread, memory never above the budget' '
	budget=$((64 << 20))
	"$TRACEREC" record -b $((64 / NCPU))M -o t.tpp -- "$S/s-many-threads-pg" 300 20000 conc "$PWD/go" >/dev/null 2>err &
	rec=$!
	# every thread made its first call (worker) and waits: then stop the drain
	for i in $(seq 200); do
		p=$(pgrep -P $rec -f s-many-threads) && [ "$(awk "/^Threads:/ {print \$2}" /proc/$p/status)" = 301 ] && break
		sleep 0.05
	done
	kill -STOP $rec && touch go &&
	for i in $(seq 600); do [ -e go.done ] && break; sleep 0.05; done
	st=$(pool_stat $rec); kill -CONT $rec; wait $rec; rc=$?
	cat err; echo "pool: $st (size, bytes allocated, mode)"
	# a stopped recorder gives nothing back: after one wait runs out (its
	# --blocking-timeout) no thread waits again, so at most one wait per
	# thread, far from the total cap (100 x --blocking-timeout each)
	waits=$(sed -n "s/.*waited [0-9.]* s for room (\([0-9]*\) times).*/\1/p" err) &&
	echo "waits: $waits" && [ "$waits" -ge 1 ] && [ "$waits" -le 300 ] && ! grep -q "as long as any may" err &&
	[ $rc = 0 ] && [ -e go.done ] && set -- $st && [ "$1" = $budget ] && [ "$2" -le $budget ] && [ "$3" = 600 ] &&
	per_thread t.tpp >n.txt && lost_per_thread t.tpp >l.txt && python3 - n.txt l.txt $budget <<-EOF
	import sys
	n = {l.split()[0]: list(map(int, l.split()[1:])) for l in open(sys.argv[1])}
	lost = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[2])}
	workers = [t for t, v in n.items() if v[0] > 1 or lost.get(t, 0)]
	print("threads", len(n), "workers", len(workers), "lost", sum(lost.values()))
	assert len(n) == 301 and len(workers) == 300, (len(n), len(workers))
	assert sum(lost.values()) > 0, "the budget never ran out"
	for t in workers:
	    # worker() and 20000 leaf() calls: 40002 records, each stored or counted
	    got = n[t][0] + n[t][1] + lost.get(t, 0)
	    assert got == 40002 and n[t][2] == 1, (t, n[t], lost.get(t))
	assert -1 not in map(int, lost), "losses not tied to a thread"
	EOF
	"$TRACEPP" info --format=json t.tpp | python3 -c "
import json, sys
r = json.load(sys.stdin)[\"recorder\"]; print(r)
assert r[\"shm_budget_bytes\"] == $budget and 0 < r[\"shm_peak_bytes\"] <= $budget"
'

# Records stored + lost of each worker of s-many-threads-pg N CALLS: worker()
# and CALLS leaf() calls make 2 * CALLS + 2, exactly; prints the total lost.
kept_lost() { # FILE CALLS NWORKERS
	per_thread "$1" >n.txt && lost_per_thread "$1" >l.txt && python3 - n.txt l.txt "$2" "$3" <<-EOF
	import sys
	n = {l.split()[0]: list(map(int, l.split()[1:])) for l in open(sys.argv[1])}
	lost = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[2])}
	workers = [t for t, v in n.items() if v[0] > 1 or lost.get(t, 0)]
	assert len(workers) == int(sys.argv[4]), (len(n), len(workers))
	for t in workers:
	    got = n[t][0] + n[t][1] + lost.get(t, 0)
	    assert got == 2 * int(sys.argv[3]) + 2 and n[t][2] == 1, (t, n[t], lost.get(t))
	assert -1 not in map(int, lost), "losses not tied to a thread"
	print(sum(lost.values()))
	EOF
}

test_expect 'a pool 6x too small for 8 busy threads: they wait for room and nothing is lost, memory never above the budget; with --blocking-timeout 0 the same run loses records, each counted in its thread' '
	# 8 x 25000 calls: 400,000 records, 6.4 MB, through a 1 MiB pool
	"$TRACEREC" record -b $((1024 / NCPU))K --blocking-timeout 2000 -o w.tpp -- "$S/s-many-threads-pg" 8 25000 conc >/dev/null 2>err &&
	cat err && grep -q "threads waited [0-9.]* s for room ([1-9][0-9]* times)" err &&
	lost=$(kept_lost w.tpp 25000 8) && echo "lost while waiting: $lost" && [ "$lost" = 0 ] &&
	"$TRACEPP" info --format=json w.tpp | python3 -c "
import json, sys
r = json.load(sys.stdin)[\"recorder\"]; print(r)
assert r[\"shm_budget_bytes\"] == 1 << 20 and 0 < r[\"shm_peak_bytes\"] <= 1 << 20
assert 0 < r[\"own_rss_bytes\"] < r[\"peak_rss_bytes\"]" &&
	"$TRACEREC" record -b $((1024 / NCPU))K --blocking-timeout 0 -o d.tpp -- "$S/s-many-threads-pg" 8 25000 conc >/dev/null 2>err &&
	cat err && ! grep -q "for room" err &&
	lost=$(kept_lost d.tpp 25000 8) && echo "lost without waiting: $lost" && [ "$lost" -gt 0 ]
'

test_expect '-A values dropped for want of room are counted apart, not as lost events: kept + lost is still each worker'"'"'s calls' '
	"$TRACEREC" record -A leaf:i -b $((1024 / NCPU))K --blocking-timeout 0 -o a.tpp -- "$S/s-many-threads-pg" 8 25000 conc >/dev/null 2>err &&
	cat err && lost=$(kept_lost a.tpp 25000 8) && echo "lost: $lost" && [ "$lost" -gt 0 ] &&
	grep -q "warning: [1-9][0-9]* -A values dropped for want of room" err
'

# s-many-threads exits 3 when errno changed across a traced call: a wait
# that times out (1 ms) must not leave its ETIMEDOUT in the program errno
test_expect 'waits that time out leave the program errno alone' '
	"$TRACEREC" record -b $((1024 / NCPU))K --blocking-timeout 1 -o t.tpp -- "$S/s-many-threads-pg" 8 25000 conc >/dev/null 2>err ||
		{ cat err; exit 1; }
	cat err
'

if command -v setpriv >/dev/null && [ -w /proc/sys/fs/protected_symlinks ]; then
test_expect 'no /dev/shm name: symlinks planted by another user at the old names are neither followed nor replaced, and a SIGKILL leaves nothing behind' '
	chmod 755 . && echo precious >victim && chmod 644 victim
	ps0=$(cat /proc/sys/fs/protected_symlinks); echo 0 >/proc/sys/fs/protected_symlinks
	last=$(cat /proc/sys/kernel/ns_last_pid)
	# one process plants them all: the pids it would use up itself are the ones to catch
	# (perl: part of every Debian system, and no interpreter shim nobody cannot read)
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/perl -e '"'"'
		symlink($ARGV[2], "/dev/shm/tpp-rt-$_") for $ARGV[0] .. $ARGV[1]'"'"' $((last + 1)) $((last + 2999)) "$PWD/victim"
	planted=$(find /dev/shm -maxdepth 1 -name "tpp-rt-*" -user 65534 -lname "$PWD/victim" | wc -l)
	ok=1 pids=
	for i in 1 2 3; do
		"$TRACEREC" record -q -o t$i.tpp -- "$S/s-threads-pg" >/dev/null & pids="$pids $!"; wait $! || ok=0
	done
	"$TRACEREC" record -q -o k.tpp -- "$S/s-calls-pg" 2000000000 >/dev/null & rec=$!; pids="$pids $rec"
	sleep 1; child=$(pgrep -P $rec -f s-calls-pg); kill -9 $rec; wait $rec
	sleep 0.2; kill -0 $child && kill $child
	# at the names the old code used for these recorders: only the planted links, unchanged
	mine=0 inrange=1
	for p in $pids; do
		[ "$p" -gt "$last" ] && [ "$p" -lt $((last + 3000)) ] || inrange=0
		f=/dev/shm/tpp-rt-$p
		[ -e "$f" ] || [ -L "$f" ] || continue
		[ -L "$f" ] && [ "$(stat -c %U "$f")" = nobody ] && [ "$(readlink "$f")" = "$PWD/victim" ] || mine=$((mine + 1))
	done
	find /dev/shm -maxdepth 1 -name "tpp-rt-*" -user 65534 -lname "$PWD/victim" -delete
	echo $ps0 >/proc/sys/fs/protected_symlinks
	echo "planted $planted; recorders $pids (at planted names: $inrange); victim: $(cat victim); not the planted link: $mine"
	[ $ok = 1 ] && [ "$planted" -gt 2000 ] && [ $inrange = 1 ] && [ "$(cat victim)" = precious ] && [ "$mine" = 0 ] &&
	"$TRACEPP" info k.tpp >/dev/null
'
else
	test_skip 'planted /dev/shm symlinks' 'setpriv or a writable fs.protected_symlinks missing'
fi

test_expect 'SIGKILL of the recorder in its first second: the file has its header and opens' '
	"$TRACEREC" record -q -o k.tpp -- "$S/s-calls-pg" 2000000000 >/dev/null & rec=$!
	for i in $(seq 100); do child=$(pgrep -P $rec -f s-calls-pg) && break; sleep 0.01; done
	sleep 0.2; kill -9 $rec; wait $rec; kill $child
	ls -l k.tpp && [ -s k.tpp ] && "$TRACEPP" info k.tpp
'

# A sleeper (w-nap: three calls, then 1 ms naps): 2.5 s of s-calls made
# ~100 M events, and reading them back took 6-50 s of the suite.
test_expect 'SIGKILL of the recorder later: symbols, maps and task names are in the file' '
	"$TRACEREC" record -q -o k.tpp -- "$S/w-nap-pg" 100000 >/dev/null & rec=$!
	sleep 2.5; child=$(pgrep -P $rec -f w-nap-pg); kill -9 $rec; wait $rec
	sleep 0.2; alive=0; kill -0 $child && alive=1 && kill $child
	echo "the traced program outlived the recorder: $alive"
	"$TRACEPP" info k.tpp | grep -E "^(metadata|events)" &&
	"$TRACEPP" dump k.tpp --format=json | python3 -c "
import json, sys, collections
c = collections.Counter(); comm = set()
for l in sys.stdin:
    d = json.loads(l)
    if d[\"type\"] == \"func_entry\":
        c[d.get(\"sym\", \"?\")] += 1; comm.add(d.get(\"task\"))
print(dict(c), comm)
assert c == {\"main\": 1, \"counters\": 1, \"mono\": 1}, c
assert comm == {\"w-nap-pg\"}, comm" && [ $alive = 1 ]
'
test_done
