/* mk-trace MODE FILE: small traces whose every call and timestamp is known,
 * written with the format library, for the merge and pairing tests.
 *
 *  overlap  two CPU streams and two thread streams whose chunks (4 events
 *           each) overlap in time, with events a little out of order inside
 *           a thread's stream (as a per-thread buffer drained late gives).
 *           Thread 100: 50 x { outer 1000 ns { inner 400 ns } }, one every
 *           2000 ns from t=1000000; thread 101: the same shifted by 500 ns.
 *           CPU streams: sched_switch every 700 ns alternating 100/101.
 *  broken   thread 100: "lost" enters at 1000 and never returns; "orphan"
 *           returns at 5000 without an entry; "ok" 2000..3000 inside lost.
 *           Thread 101: a { b { c } } where a returns at 9000 before b and
 *           c (longjmp-like: b and c are unwound).
 *  idle     CPU 0 alternates idle and task 100 for 30 cycles of 1000 ns:
 *           a wakeup of 100 from idle at +490, the switch idle -> 100 at
 *           +500, 100 sleeps at +1000. Every third switch-in (cycles 1, 4,
 *           ...) is left out, as this kernel does: 10 missing. The true
 *           on-CPU time is 30 x 500 ns.
 *  clock    the kernel's clock (sched_stat_runtime) against the tracepoints'
 *           (see the expected numbers in tests/t-sched-clock.sh):
 *           CPU 0: 100 woken from idle at 1000, switched in at 1600 but on
 *           the clock of the wakeup (its first report: 1100 at 2100); 100
 *           wakes 101 at 2500 (report 390 at 2490, the enqueue's clock:
 *           101 waits from there) and is preempted at 2700
 *           on that clock; 101 reports 450 at 3000, blocks at 3500 (report
 *           490 at 3490); 100 reports 500 at 4000, blocks at 4200 (report
 *           190 at 4190); 101 woken at 5000, its switch-in missing, reports
 *           580 at 5600 and blocks at 5700 (report 90 at 5690).
 *           CPU 1: 102 already running reports 5000 at 1200 and blocks at
 *           1210; 104 woken at 1450, in at 1500, in again at 1800 (its
 *           switch-out missing), out at 2000, reporting nothing; 103 woken
 *           at 6000, in at 6100, reports 900 at 7000.
 *  clock-ts the same without the runtime reports.
 *  keys     kernel events whose own fields are named like the keys dump
 *           writes around them: csd_queue_cpu (cpu, callsite, func, csd, as
 *           the kernel's) and own_ts (ts_ns, tid), 3 of each on CPU 0, and
 *           an own_ts of tid 300, a task whose process the file lacks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tpp_format.h"

enum { T_ENTRY = 1, T_EXIT, T_SWITCH, T_WAKEUP, T_RUNTIME, T_CSD, T_OWNTS };
static struct tpp_writer *w;

static void die(const char *what)
{
	fprintf(stderr, "mk-trace: %s: %s\n", what, w ? tpp_w_error(w) : "");
	exit(1);
}

static void ev(uint32_t stream, uint16_t type, uint64_t ts, int32_t tid, uint64_t addr)
{
	union tpp_val v[1] = {{.u = addr}};
	if (tpp_w_event(w, stream, type, ts, tid, v) < 0)
		die("event");
}

/* An event whose fields are comm ("t"), pid, then one more value (the
 * wakeup's prio, the runtime's ns). */
static void task_event(uint32_t stream, uint16_t type, uint64_t ts, int32_t tid, int32_t pid, uint64_t third)
{
	union tpp_val v[4];
	memset(v, 0, sizeof(v));
	v[0].s.p = "t";
	v[0].s.len = 1;
	v[1].i = pid;
	v[2].u = third;
	if (tpp_w_event(w, stream, type, ts, tid, v) < 0)
		die("task event");
}

static void wakeup(uint32_t stream, uint64_t ts, int32_t waker, int32_t pid)
{
	task_event(stream, T_WAKEUP, ts, waker, pid, 0);
}

static int no_runtime; /* clock-ts: the same trace without runtime reports */
static void runtime(uint32_t stream, uint64_t ts, int32_t pid, uint64_t ns)
{
	if (!no_runtime)
		task_event(stream, T_RUNTIME, ts, pid, pid, ns);
}

static void sw_state(uint32_t stream, uint64_t ts, int32_t prev, int32_t next, int64_t state)
{
	union tpp_val v[7];
	memset(v, 0, sizeof(v));
	v[0].s.p = "t";
	v[0].s.len = 1;
	v[1].i = prev;
	v[3].i = state; /* 1: S, 0: R (preempted) */
	v[4].s.p = "t";
	v[4].s.len = 1;
	v[5].i = next;
	if (tpp_w_event(w, stream, T_SWITCH, ts, prev, v) < 0)
		die("switch");
}

static void sw(uint32_t stream, uint64_t ts, int32_t prev, int32_t next)
{
	sw_state(stream, ts, prev, next, 1);
}

#define BASE 0x400000ull
static const struct tpp_sym syms[] = {
	{0x1000, 0x100, "outer"}, {0x1100, 0x100, "inner"}, {0x1200, 0x100, "lost"},
	{0x1300, 0x100, "orphan"}, {0x1400, 0x100, "ok"}, {0x1500, 0x100, "a"},
	{0x1600, 0x100, "b"}, {0x1700, 0x100, "c"},
};
static uint64_t A(const char *name)
{
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!strcmp(syms[i].name, name))
			return BASE + syms[i].addr;
	abort();
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	struct tpp_w_opts o = {.sz = sizeof(o), .chunk_events = 4, .producer = "mk-trace"};
	if (tpp_w_open(&w, argv[2], &o) < 0)
		die("open");
	static const struct tpp_field_def addr[] = {{"addr", TPP_F_U64}};
	static const struct tpp_field_def swf[] = {
		{"prev_comm", TPP_F_STR}, {"prev_pid", TPP_F_S64}, {"prev_prio", TPP_F_S64},
		{"prev_state", TPP_F_S64}, {"next_comm", TPP_F_STR}, {"next_pid", TPP_F_S64},
		{"next_prio", TPP_F_S64}};
	struct tpp_type_def t1 = {T_ENTRY, "func_entry", "tracepp", 1, addr};
	struct tpp_type_def t2 = {T_EXIT, "func_exit", "tracepp", 1, addr};
	struct tpp_type_def t3 = {T_SWITCH, "sched_switch", "sched", 7, swf};
	static const struct tpp_field_def wkf[] = {
		{"comm", TPP_F_STR}, {"pid", TPP_F_S64}, {"prio", TPP_F_S64}, {"target_cpu", TPP_F_S64}};
	struct tpp_type_def t4 = {T_WAKEUP, "sched_wakeup", "sched", 4, wkf};
	static const struct tpp_field_def rtf[] = {{"comm", TPP_F_STR}, {"pid", TPP_F_S64}, {"runtime", TPP_F_U64}};
	struct tpp_type_def t5 = {T_RUNTIME, "sched_stat_runtime", "sched", 3, rtf};
	no_runtime = !strcmp(argv[1], "clock-ts");
	if (tpp_w_add_type(w, &t1) < 0 || tpp_w_add_type(w, &t2) < 0 || tpp_w_add_type(w, &t3) < 0 ||
	    tpp_w_add_type(w, &t4) < 0 || (!no_runtime && tpp_w_add_type(w, &t5) < 0))
		die("types");
	static const struct tpp_field_def csdf[] = {
		{"cpu", TPP_F_S64}, {"callsite", TPP_F_U64}, {"func", TPP_F_U64}, {"csd", TPP_F_U64}};
	static const struct tpp_field_def otf[] = {{"ts_ns", TPP_F_U64}, {"tid", TPP_F_S64}};
	struct tpp_type_def t6 = {T_CSD, "csd_queue_cpu", "csd", 4, csdf};
	struct tpp_type_def t7 = {T_OWNTS, "own_ts", "test", 2, otf};
	int keys = !strcmp(argv[1], "keys");
	if (keys && (tpp_w_add_type(w, &t6) < 0 || tpp_w_add_type(w, &t7) < 0))
		die("types");
	if (tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1) < 0 || tpp_w_stream(w, 1, TPP_S_CPU, 1, -1, -1) < 0 ||
	    tpp_w_stream(w, 10, TPP_S_THREAD, -1, 100, 100) < 0 ||
	    tpp_w_stream(w, 11, TPP_S_THREAD, -1, 100, 101) < 0)
		die("streams");
	if (tpp_w_task(w, 1, 100, 100, "mk") < 0 || tpp_w_task(w, 1, 100, 101, "mk-2") < 0)
		die("tasks");
	static const uint8_t bid[4] = {1, 2, 3, 4};
	if (tpp_w_mmap(w, 1, 100, BASE, BASE + 0x10000, 0, "/mk", bid, 4) < 0 ||
	    tpp_w_symtab(w, bid, 4, "/mk", sizeof(syms) / sizeof(syms[0]), syms) < 0)
		die("symbols");
	if (!strcmp(argv[1], "overlap")) {
		for (int i = 0; i < 50; i++) {
			for (int th = 0; th < 2; th++) {
				uint64_t t = 1000000 + i * 2000 + th * 500;
				uint32_t s = 10 + th;
				int32_t tid = 100 + th;
				/* inner's entry written before outer's: out of order by
				 * 100 ns inside the stream */
				ev(s, T_ENTRY, t + 100, tid, A("inner"));
				ev(s, T_ENTRY, t, tid, A("outer"));
				ev(s, T_EXIT, t + 500, tid, A("inner"));
				ev(s, T_EXIT, t + 1000, tid, A("outer"));
			}
		}
		for (int i = 0; i < 150; i++)
			sw(i % 2, 1000000 + i * 700, 100 + i % 2, 101 - i % 2);
	} else if (keys) {
		for (int i = 0; i < 3; i++) {
			union tpp_val c[4] = {{.i = 1}, {.u = 0xffffffff81000000ull + (uint64_t)i}, {.u = A("outer")}, {.u = 0xffff888000001000ull}};
			union tpp_val t[2] = {{.u = 42 + (uint64_t)i}, {.i = 7}};
			if (tpp_w_event(w, 0, T_CSD, 1000 + (uint64_t)i * 100, 100, c) < 0 ||
			    tpp_w_event(w, 0, T_OWNTS, 1050 + (uint64_t)i * 100, 100, t) < 0)
				die("keys event");
		}
		union tpp_val t[2] = {{.u = 99}, {.i = 7}};
		if (tpp_w_event(w, 0, T_OWNTS, 2000, 300, t) < 0) /* a task of no known process */
			die("keys event");
	} else if (!strcmp(argv[1], "broken")) {
		ev(10, T_ENTRY, 1000, 100, A("lost"));
		ev(10, T_ENTRY, 2000, 100, A("ok"));
		ev(10, T_EXIT, 3000, 100, A("ok"));
		ev(10, T_EXIT, 5000, 100, A("orphan"));
		ev(10, T_ENTRY, 6000, 100, A("ok"));
		ev(10, T_EXIT, 6500, 100, A("ok"));
		ev(11, T_ENTRY, 7000, 101, A("a"));
		ev(11, T_ENTRY, 7100, 101, A("b"));
		ev(11, T_ENTRY, 7200, 101, A("c"));
		ev(11, T_EXIT, 9000, 101, A("a"));
		ev(11, T_ENTRY, 9500, 101, A("a"));
		ev(11, T_EXIT, 9600, 101, A("a"));
	} else if (!strcmp(argv[1], "idle")) {
		for (int i = 0; i < 30; i++) {
			uint64_t t = 1000000 + (uint64_t)i * 1000;
			wakeup(0, t + 490, 0, 100);
			if (i % 3 != 1)
				sw(0, t + 500, 0, 100);
			sw(0, t + 1000, 100, 0);
		}
	} else if (!strncmp(argv[1], "clock", 5)) {
		/* in time order across both CPUs: the writer keeps each stream's */
		wakeup(0, 1000, 0, 100);
		runtime(1, 1200, 102, 5000);
		sw(1, 1210, 102, 0);
		wakeup(1, 1450, 0, 104);
		sw(1, 1500, 0, 104);
		sw(1, 1800, 0, 104); /* 104's switch-out before it is missing */
		sw(1, 2000, 104, 0);
		sw(0, 1600, 0, 100);
		runtime(0, 2100, 100, 1100);
		runtime(0, 2490, 100, 390);
		wakeup(0, 2500, 100, 101);
		sw_state(0, 2700, 100, 101, 0);
		runtime(0, 3000, 101, 450);
		runtime(0, 3490, 101, 490);
		sw(0, 3500, 101, 100);
		runtime(0, 4000, 100, 500);
		runtime(0, 4190, 100, 190);
		sw(0, 4200, 100, 0);
		wakeup(0, 5000, 0, 101);
		runtime(0, 5600, 101, 580);
		runtime(0, 5690, 101, 90);
		sw(0, 5700, 101, 0);
		wakeup(1, 6000, 0, 103);
		sw(1, 6100, 0, 103);
		runtime(1, 7000, 103, 900);
	} else {
		return 2;
	}
	if (tpp_w_close(w) < 0) {
		w = NULL;
		die("close");
	}
	return 0;
}
