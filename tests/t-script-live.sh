#!/usr/bin/env bash
# tracepp script against the real thing: bpftrace runs the one-liners live
# while tracerec records the same run of a deterministic workload, then
# tracepp script runs the same programs on the file; the printed maps must
# be equal, key for key and histogram bucket for bucket, short only by what
# the file itself says the kernel did not store or the recorder lost. The
# kernel's own filter (tracerec --filter) is the truth for --where.
# san: skip
. "$(dirname "$0")/lib.sh"

TFS=/sys/kernel/tracing
mountpoint -q $TFS 2>/dev/null || mount -t tracefs nodev $TFS 2>/dev/null
why=
if ! command -v bpftrace >/dev/null; then
	why="bpftrace is not installed"
elif [ "$(id -u)" != 0 ] || [ ! -w $TFS/uprobe_events ]; then
	why="needs root, tracefs and uprobe events"
elif ! out=$(timeout 60 bpftrace -e 'tracepoint:sched:sched_switch { printf("up\n"); exit(); }' 2>&1) ||
	! grep -q '^up$' <<<"$out"; then
	why="bpftrace cannot attach here: $(grep -m1 -i error <<<"$out")"
fi
if [ -n "$why" ]; then
	for t in 'syscalls and switches by comm' 'hist of read sizes' 'per-thread latency with a start map' \
		'hist of function durations' 'a speculation keeping only failing calls' 'tracerec --filter and dump --where'; do
		test_skip "$t: the same maps as bpftrace live" "$why"
	done
	test_done
	exit
fi

W=$_scratch/wl
mkdir -p "$W"
cat >"$W/wl.c" <<'EOF'
/* The workload: reads of six sizes on two threads, calls of op() that
 * fail for every third argument, and sleeps of known lengths in work(). */
#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
__attribute__((noinline)) int op(int i) { return i % 3 == 0 ? -1 : i * 2; }
__attribute__((noinline)) void work(int us)
{
	struct timespec t = {us / 1000000, (us % 1000000) * 1000L};
	syscall(SYS_nanosleep, &t, 0); /* glibc's nanosleep() is clock_nanosleep: lat.bt would see none */
}
static void *reader(void *arg)
{
	int fd = open("/dev/zero", O_RDONLY);
	static char buf[65536];
	static const int sizes[] = {1, 10, 100, 1000, 5000, 40000};
	for (int r = 0; r < 20 + (int)(long)arg; r++)
		for (int k = 0; k < 6; k++)
			if (read(fd, buf, sizes[k]) < 0)
				return 0;
	close(fd);
	return 0;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, 0, reader, (void *)7);
	reader(0);
	pthread_join(t, 0);
	for (int i = 0; i < 30; i++)
		op(i);
	/* just above a power of two: a busy machine's late wake-up moves a
	 * sleep away from the next bucket's edge, not onto it */
	static const int us[] = {2200, 2200, 9000, 9000, 9000, 36000};
	for (int i = 0; i < 6; i++)
		work(us[i]);
	return 0;
}
EOF
# names of this run's own: another run of this test at the same time on
# the same host must not be counted by this one's comm filters
N=w$(printf %04d $((RANDOM % 10000)))
cc -O0 -g -pthread -o "$W/$N-a" "$W/wl.c" && cp "$W/$N-a" "$W/$N-b" || exit 1

# The programs. Each bpftrace has its own run; tracepp reads one file.
P=$_scratch/p
mkdir -p "$P"
cat >"$P/sys.bt" <<EOF
tracepoint:raw_syscalls:sys_enter /strncmp(comm, "$N-", 6) == 0/ { @sys[comm] = count(); @calls[comm, args->id] = count(); }
tracepoint:sched:sched_switch /strncmp(args->prev_comm, "$N-", 6) == 0/ { @sw[args->prev_comm, args->prev_state] = count(); }
EOF
cat >"$P/read.bt" <<EOF
tracepoint:syscalls:sys_exit_read /strncmp(comm, "$N-", 6) == 0/ { @bytes = hist(args->ret); @by[comm] = hist(args->ret); @n[comm] = sum(args->ret); }
EOF
cat >"$P/lat.bt" <<EOF
tracepoint:syscalls:sys_enter_nanosleep /comm == "$N-a" || comm == "$N-b"/ { @start[tid] = nsecs; printf("%s %s\n", comm, strftime("%H:%M", nsecs)); }
tracepoint:syscalls:sys_exit_nanosleep /@start[tid]/ { @ms[comm] = lhist((nsecs - @start[tid]) / 1000000, 0, 100, 25); @n = count(); delete(@start[tid]); }
EOF
cat >"$P/dur.bt" <<EOF
uprobe:$W/$N-a:work { @s[tid] = nsecs; @calls[probe] = count(); }
uretprobe:$W/$N-a:work /@s[tid]/ { @ms = hist((nsecs - @s[tid]) / 1000000); @arg = stats((nsecs - @s[tid]) / 1000000); delete(@s[tid]); }
EOF
# bpftrace has no speculations: the same lines from saved arguments
cat >"$P/fail.bt" <<EOF
uprobe:$W/$N-a:op { @a[tid] = arg0; }
uretprobe:$W/$N-a:op /(int32)retval < 0/ { printf("op(%d)\nfailed %d\n", @a[tid], (int32)retval); @fails[comm] = count(); }
uretprobe:$W/$N-a:op { delete(@a[tid]); }
EOF
cat >"$P/spec.bt" <<EOF
uprobe:$W/$N-a:op { self->s = speculation(); speculate(self->s); printf("op(%d)\n", args->i); }
uretprobe:$W/$N-a:op /self->s/ { speculate(self->s); printf("failed %d\n", (int32)retval); }
uretprobe:$W/$N-a:op /self->s && (int32)retval < 0/ { commit(self->s); self->s = 0; @fails[comm] = count(); }
uretprobe:$W/$N-a:op /self->s/ { discard(self->s); self->s = 0; }
EOF

# bpftrace attaches its probes one at a time after it prints "Attaching",
# and a SIGINT that comes meanwhile is lost. It attaches them in two
# passes: tracepoints first, in the order declared, then uprobes and
# uretprobes, in reverse order (bpftrace's attach_reverse); on a loaded
# machine the second pass came after tracepoint markers had printed, and
# the workload's calls went unseen (#4, #5). So each bpftrace runs its
# program between markers of both kinds, one of each declared first and
# one of each last, fired by runs of ${N}p (a name the programs' filters
# do not take): once all four have printed, every probe between them is
# in, whichever way each pass goes.
cat >"$P/ready1.bt" <<EOF
uprobe:$W/${N}p:ready { printf("ready1\n"); }
tracepoint:sched:sched_process_exec /comm == "${N}p"/ { printf("ready2\n"); }
EOF
cat >"$P/ready2.bt" <<EOF
tracepoint:sched:sched_process_exit /comm == "${N}p"/ { printf("ready3\n"); }
uprobe:$W/${N}p:ready { printf("ready4\n"); }
EOF
printf '%s\n' '__attribute__((noinline)) void ready(void) { __asm__ volatile(""); }' \
	'int main(void) { ready(); return 0; }' >"$W/ready.c" &&
	cc -O0 -g -o "$W/${N}p" "$W/ready.c" || exit 1

BTS="sys read lat dur fail"
bt_ready() {
	local i b n
	for i in $(seq 600); do
		"$W/${N}p"
		n=0
		for b in $BTS; do
			grep -q '^ready1$' "$b.bt.out" && grep -q '^ready2$' "$b.bt.out" &&
				grep -q '^ready3$' "$b.bt.out" && grep -q '^ready4$' "$b.bt.out" && n=$((n + 1))
		done
		[ $n = 5 ] && return 0
		sleep 0.2
	done
	for b in $BTS; do echo "$b:"; cat "$b.bt.out" "$b.bt.err"; done
	return 1
}
# One SIGINT each, then wait for all: a second SIGINT while bpftrace prints
# its maps cuts the printing short (bpftrace PR 714), which a loaded machine
# made happen (the maps came out empty). Both sides are ready by now.
# timeout (the guard against a bpftrace that never ends) passes that SIGINT
# on: with --foreground once (else twice: to bpftrace and to its process
# group), and without -k (a signal passed on starts -k's clock: bpftrace
# detaching its probes under load was SIGKILLed before it printed).
stop_all() {
	local k p alive
	for p in "$@"; do kill -INT "$p" 2>/dev/null; done
	for k in $(seq 240); do
		alive=
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ -z "$alive" ] && break
		sleep 0.5
	done
	wait "$@"
}

# Runs every bpftrace program and one tracerec over the same run of the
# workload ($N-a, then $N-b), then tracepp script on the file.
live() {
	rm -f t.tpp f.tpp ./*.bt.out
	"$TRACEREC" record -q -a -b 8192 -e sched,syscalls,syscalls:sys_exit_read,syscalls:sys_enter_nanosleep,syscalls:sys_exit_nanosleep \
		-u "$W/$N-a:work" -u "$W/$N-a:op" -A op:i -o t.tpp 2>rec.err & rp=$!
	"$TRACEREC" record -q -a -b 4096 -e sched:sched_switch --filter "prev_state == 1 && prev_comm ~ \"$N-*\"" -o f.tpp 2>recf.err & fp=$!
	local bps= b ok=1
	for b in $BTS; do
		cat "$P/ready1.bt" "$P/$b.bt" "$P/ready2.bt" >"$b.live.bt"
		timeout --foreground -k 150 300 bpftrace "$b.live.bt" >"$b.bt.out" 2>"$b.bt.err" & bps="$bps $!"
	done
	bt_ready || ok=0
	# both recorders recording: their instances on, and tracerec's own
	# uprobe group (tpp_PID, not another suite's) enabled; then a margin
	local d i
	for i in $(seq 300); do
		d=$TFS/instances/tracepp-$rp
		[ "$(cat $d/tracing_on 2>/dev/null)" = 1 ] && [ "$(cat $d/events/tpp_$rp/enable 2>/dev/null)" = 1 ] &&
			[ "$(cat $TFS/instances/tracepp-$fp/tracing_on 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	sleep 1
	if [ $ok = 1 ]; then
		"$W/$N-a" && "$W/$N-b" || ok=0
		sleep 0.5
	fi
	stop_all $bps
	stop_all $rp $fp
	"$TRACEPP" info t.tpp | sed -n "/^events/p;/^lost/p"
	[ $ok = 1 ]
}

# same NAME [MINE]: bpftrace's NAME.bt.out against tracepp script on the
# file (MINE: another program with the same output), maps and printf lines.
same() {
	"$TRACEPP" script "$P/${2:-$1}.bt" t.tpp >"$1.mine" 2>"$1.err" || { cat "$1.err"; return 1; }
	cat "$1.err"
	python3 - "$1.bt.out" "$1.mine" "$1.err" <<-\PY
	import re, sys, btmaps
	bt = open(sys.argv[1]).read().replace("Attaching", "#", 1).split("\n", 1)[1]
	bt = "\n".join(l for l in bt.split("\n") if l not in ("ready1", "ready2", "ready3", "ready4"))
	mine, err = open(sys.argv[2]).read(), open(sys.argv[3]).read()
	# what the file says it does not hold: events the kernel fired but
	# did not store, events the recorder lost
	allow = sum(int(n) for n in re.findall(r"(?:fired|lost) (\d+)", err))
	b, _ = btmaps.parse(bt)
	m, _ = btmaps.parse(mine)
	assert b and all(b.values()), ("bpftrace printed no map, or an empty one: nothing compared", b)
	short = 0
	for name in b:
	    for k, v in b[name].items():
	        w = m.get(name, {}).get(k)
	        if w == v:
	            continue
	        if isinstance(v, str) and w is not None and v.isdigit() and w.isdigit() and int(w) < int(v):
	            short += int(v) - int(w)
	            continue
	        if isinstance(v, list) and isinstance(w, list):
	            # a histogram short of what the file says it lost: fewer
	            # in some buckets, never more in any
	            bv, wv = dict(v), dict(w)
	            if all(wv.get(x, 0) <= bv.get(x, 0) for x in set(bv) | set(wv)):
	                short += sum(bv.values()) - sum(wv.values())
	                continue
	        sys.exit("%s[%s]: bpftrace %r, tracepp %r" % (name, k, v, w))
	    extra = set(m.get(name, {})) - set(b[name])
	    assert not extra, (name, "tracepp has more keys", extra)
	assert set(m) == set(b), (set(m), set(b))
	assert short <= allow, ("short by", short, "the file accounts for", allow)
	lines = lambda t: [l for l in t.split("\n") if l and not l.startswith("@") and not l.startswith("[") and not l.startswith("(")]
	assert lines(bt) == lines(mine), (lines(bt)[:5], lines(mine)[:5])
	print("same:", {n: len(b[n]) for n in b}, "printf lines:", len(lines(bt)), "short:", short, "of", allow)
	PY
}

export PYTHONPATH=$TOP/tests	# btmaps.py

cd "$_scratch" && live >live.log 2>&1
ok=$?
cd - >/dev/null
if [ $ok != 0 ]; then
	test_expect 'the live run: bpftrace and tracerec on the same workload' "cat '$_scratch/live.log'; false"
	test_done
	exit
fi
R=$_scratch
test_expect 'syscalls and switches by comm: the same maps as bpftrace live' "cd '$R' && same sys"
test_expect 'hist of read sizes: the same maps as bpftrace live' "cd '$R' && same read"
test_expect 'per-thread latency with a start map: the same maps as bpftrace live' "cd '$R' && same lat"
test_expect 'hist of function durations: the same maps as bpftrace live' "cd '$R' && same dur"
test_expect 'a speculation keeping only failing calls: the lines and maps bpftrace prints from saved arguments' "cd '$R' && same fail spec"
test_expect 'tracerec --filter and dump --where: the kernel filter and the offline one keep the same events' "
	cd '$R' && '$TRACEPP' dump --format=json f.tpp >kf.json &&
	'$TRACEPP' dump --format=json --where 'prev_state == 1 && prev_comm ~ \"$N-*\"' t.tpp >wf.json &&
	python3 - <<-\PY
	import json
	# two instances stamp one event each with its own clock reading; where
	# either recorder lost events (a loaded machine), that CPU and time span
	# (with a margin for the two readings) is left out of both sides
	ev = {f: [json.loads(l) for l in open(f)] for f in ('kf.json', 'wf.json')}
	gaps = [(e['cpu'], e['ts'] - 1000000, e['to'] + 1000000) for f in ev for e in ev[f] if e.get('type') == 'lost']
	keep = lambda e: e.get('type') != 'lost' and not any(c == e['cpu'] and a <= e['ts'] <= b for c, a, b in gaps)
	key = lambda e: (e['cpu'], e['prev_comm'], e['prev_pid'], e['prev_state'], e['next_pid'])
	k = [key(e) for e in ev['kf.json'] if keep(e)]
	w = [key(e) for e in ev['wf.json'] if keep(e)]
	print(len(k), 'events kept by the kernel,', len(w), 'by --where,', len(gaps), 'lost spans left out')
	assert k and sorted(k) == sorted(w), set(k) ^ set(w)
	PY
"
test_done
