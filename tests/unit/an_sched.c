/* The scheduler state machine (an_sched), the one place runs, waits,
 * wakeup delays and missing switch-ins are worked out, on a hand-built
 * schedule of two CPUs whose every number is known by construction:
 *
 *   CPU0: 100 idle->1 | 200 1 wakes 2 | 300 1->2 (1 preempted) | 500 2->1 (2 sleeps) | 600 1->idle
 *   CPU1: 100 idle->4 | 200 4->idle | [3's switch-in missing] 250 3 wakes 5 | 400 3->idle
 *
 * task 1: on CPU 100..300 and 500..600 = 300, waited 300..500 = 200 (no wakeup);
 * task 2: woken at 200, on at 300 (wakeup delay 100), on CPU 300..500 = 200;
 * task 3: its switch-in inferred at CPU1's last switch (200): on CPU 200 ns;
 * task 4: 100 ns, already running before (partial start) as task 1 was;
 * task 5: woken at 250, still waiting at the end (600): partial end. */
#include <string.h>

#include "tpp_test.h"
#include "../../postproc/analysis/an_sched.h"

enum { T_SWITCH = 1, T_WAKEUP, T_RUNTIME };
static struct an_types ty;
static uint64_t ran_ns[10]; /* on_run's intervals per tid */
static uint64_t cpu_end[4];  /* per CPU, the end of the run on_run told last */
static int overlaps;	     /* runs told that begin before the CPU's last told run ended */

static int on_run(void *ctx, int32_t cpu, int32_t tid, uint64_t from, uint64_t to)
{
	(void)ctx;
	if (tid >= 0 && tid < 10)
		ran_ns[tid] += to - from;
	if (cpu >= 0 && cpu < 4) {
		overlaps += from < cpu_end[cpu] || to < from;
		cpu_end[cpu] = to;
	}
	return 0;
}

static int feed_rc(struct an_sched *s, int type, uint64_t ts, int cpu, int tid, uint64_t v0, uint64_t v1,
		   uint64_t v2)
{
	struct tpp_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.ts = ts;
	ev.cpu = cpu;
	ev.tid = tid;
	ev.type = (uint16_t)type;
	ev.nvals = 3;
	ev.v[0].u = v0;
	ev.v[1].u = v1;
	ev.v[2].u = v2;
	return an_sched_feed(s, &ty, &ev);
}

static void feed(struct an_sched *s, int type, uint64_t ts, int cpu, int tid, uint64_t v0, uint64_t v1,
		 uint64_t v2)
{
	CHECK(feed_rc(s, type, ts, cpu, tid, v0, v1, v2) == 0, "feed at %llu", (unsigned long long)ts);
}
/* sched_switch: prev_pid, prev_state, next_pid; sched_wakeup: pid */
#define SWITCH(ts, cpu, prev, state, next) feed(&s, T_SWITCH, ts, cpu, prev, prev, state, next)
#define WAKEUP(ts, cpu, by, pid) feed(&s, T_WAKEUP, ts, cpu, by, pid, 0, 0)

/* A state machine for one hand-built schedule, on_run's tallies zeroed. */
static void fresh(struct an_sched *s)
{
	CHECK(an_sched_init(s) == 0, "init");
	s->no_comm = 1;
	s->on_run = on_run;
	memset(ran_ns, 0, sizeof(ran_ns));
	memset(cpu_end, 0, sizeof(cpu_end));
}

static const struct an_task *task(const struct an_sched *s, int32_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return &s->t[i];
	return NULL;
}

/* Switches lost on both CPUs (as `tracepp info`'s unstored): a task
 * leaves a CPU with its switch-in there missing while the file has it
 * running on the other, and comes back on the other with its switch-out
 * missing. Each CPU still runs one task at a time, and on_run tells each
 * CPU's runs in time order (a Chrome export's CPU track nests only so):
 *
 *   CPU0: 100 9->1 | [1's switch-out, 2's switch-in missing] 200 2->3 | 300 3->idle
 *   CPU1: 110 8->2 | [2's switch-out, 7's switch-in missing] 250 7->1 | 400 1->idle */
static void lost_switches(void)
{
	struct an_sched s;
	fresh(&s);
	SWITCH(100, 0, 9, 1, 1);
	SWITCH(110, 1, 8, 1, 2);
	SWITCH(200, 0, 2, 1, 3);
	SWITCH(250, 1, 7, 1, 1);
	SWITCH(300, 0, 3, 1, 0);
	SWITCH(400, 1, 1, 1, 0);
	CHECK(an_sched_finish(&s, 400) == 0, "finish");
	CHECK(!overlaps, "lost switches: %d runs overlap their CPU's last", overlaps);
	uint64_t sum = 0;
	for (int tid = 1; tid <= 9; tid++) {
		const struct an_task *t = task(&s, tid);
		CHECK(!t || ran_ns[tid] == t->oncpu_ns, "lost switches: on_run of %d", tid);
		sum += ran_ns[tid];
	}
	/* two CPUs, each running from its first switch to its last */
	CHECK(sum == (300 - 100) + (400 - 110), "lost switches: %llu ns of runs", (unsigned long long)sum);
	CHECK(task(&s, 3)->oncpu_ns == 100 && task(&s, 1)->oncpu_ns >= 150, "lost switches: tasks 3 and 1");
	an_sched_free(&s);
}

/* The switch that puts a task on a CPU from idle, with the switch-out of
 * the task the CPU ran before missing (and idle's switch-in): that task
 * runs until then, and no longer once another task is on.
 *
 *   CPU0: 100 9->1 | [1's switch-out missing] 200 idle->2 | 300 2->idle | 400 idle->1 | 500 1->idle */
static void idle_leaves(void)
{
	struct an_sched s;
	fresh(&s);
	SWITCH(100, 0, 9, 1, 1);
	SWITCH(200, 0, 0, 0, 2);
	SWITCH(300, 0, 2, 1, 0);
	SWITCH(400, 0, 0, 0, 1);
	SWITCH(500, 0, 1, 1, 0);
	CHECK(an_sched_finish(&s, 500) == 0, "finish");
	CHECK(!overlaps, "idle leaves: %d runs overlap their CPU's last", overlaps);
	CHECK(ran_ns[1] == 200 && ran_ns[2] == 100 && task(&s, 1)->oncpu_ns == 200 &&
		      task(&s, 1)->partial & AN_PARTIAL_GAPS,
	      "idle leaves: task 1 ran %llu, task 2 %llu", (unsigned long long)ran_ns[1], (unsigned long long)ran_ns[2]);
	an_sched_free(&s);
}

/* Random schedules of 4 CPUs and 12 tasks, true by construction (a task
 * runs on one CPU at a time), fed with a third to an eleventh of their
 * switches and wakeups dropped: whatever the analysis infers, each CPU runs one task at
 * a time and on_run tells its runs in time order. */
static void dropped_events(void)
{
	uint64_t seed = 7;
	int bad = 0;
	for (int round = 0; round < 2000; round++) {
		struct an_sched s;
		if (an_sched_init(&s)) {
			bad++;
			break;
		}
		s.no_comm = 1;
		s.on_run = on_run;
		memset(cpu_end, 0, sizeof(cpu_end));
		int cur[4] = {0, 0, 0, 0}, on[13] = {0};
		uint64_t ts = 1000, upd[4] = {1000, 1000, 1000, 1000};
		ty.has[AN_RUNTIME] = round & 1; /* half the rounds with runtime reports */
		for (int i = 0; i < 200; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			uint32_t r = (uint32_t)(seed >> 33);
			ts += 1 + r % 50;
			int cpu = (int)(r >> 8 & 3), next = (int)(r >> 10) % 13, drop = (r >> 20) % (unsigned)(3 + round % 8) == 0;
			if (next && on[next]) /* running elsewhere: wake another, or go idle */
				next = 0;
			if ((round & 1) && (r >> 14 & 3) == 1 && cur[cpu]) {
				/* the kernel's update of the running task's clock */
				if (!drop)
					bad += feed_rc(&s, T_RUNTIME, ts, cpu, cur[cpu], (uint64_t)cur[cpu], ts - upd[cpu],
						       0) != 0;
				upd[cpu] = ts;
				continue;
			}
			if ((r >> 14 & 3) == 0) {
				if (next && !drop)
					bad += feed_rc(&s, T_WAKEUP, ts, cpu, cur[cpu], (uint64_t)next, 0, 0) != 0;
				continue;
			}
			if (next == cur[cpu])
				continue;
			if (!drop)
				bad += feed_rc(&s, T_SWITCH, ts, cpu, cur[cpu], (uint64_t)cur[cpu], (r >> 16) & 1,
					       (uint64_t)next) != 0;
			on[cur[cpu]] = 0;
			on[next] = next != 0;
			cur[cpu] = next;
			upd[cpu] = ts;
		}
		bad += an_sched_finish(&s, ts) != 0;
		an_sched_free(&s);
		if (overlaps || bad)
			break;
	}
	ty.has[AN_RUNTIME] = 0;
	CHECK(!bad, "dropped events: %d feeds failed", bad);
	CHECK(!overlaps, "dropped events: %d runs overlap their CPU's last", overlaps);
}

/* The idle task runs on every CPU at once: its switch-in on one CPU says
 * nothing of when another CPU's inferred run began.
 *
 *   CPU0: 100 6->5 | 200 5->idle
 *   CPU1: 100 7->idle | 150 wakes 3 | [idle->3 missing] 300 3->idle: 3 ran 150..300 */
static void idle_elsewhere(void)
{
	struct an_sched s;
	fresh(&s);
	SWITCH(100, 0, 6, 1, 5);
	SWITCH(100, 1, 7, 1, 0);
	WAKEUP(150, 1, 0, 3);
	SWITCH(200, 0, 5, 1, 0);
	SWITCH(300, 1, 3, 1, 0);
	CHECK(an_sched_finish(&s, 300) == 0, "finish");
	CHECK(ran_ns[3] == 150 && ran_ns[5] == 100, "idle elsewhere: task 3 ran %llu (want 150), task 5 %llu",
	      (unsigned long long)ran_ns[3], (unsigned long long)ran_ns[5]);
	an_sched_free(&s);
}

int main(void)
{
	memset(&ty, 0, sizeof(ty));
	for (int t = 0; t < TPP_MAX_TYPES; t++)
		memset(ty.t[t].f, -1, sizeof(ty.t[t].f));
	ty.t[T_SWITCH].kind = AN_SWITCH;
	ty.t[T_SWITCH].f[R_PREV_PID] = 0;
	ty.t[T_SWITCH].f[R_PREV_STATE] = 1;
	ty.t[T_SWITCH].f[R_NEXT_PID] = 2;
	ty.t[T_WAKEUP].kind = AN_WAKEUP;
	ty.t[T_WAKEUP].f[R_PID] = 0;
	ty.t[T_RUNTIME].kind = AN_RUNTIME;
	ty.t[T_RUNTIME].f[R_PID] = 0;
	ty.t[T_RUNTIME].f[R_RUNTIME] = 1;
	ty.has[AN_SWITCH] = ty.has[AN_WAKEUP] = 1;

	struct an_sched s;
	CHECK(an_sched_init(&s) == 0, "init");
	s.no_comm = 1;
	s.on_run = on_run;
	SWITCH(100, 0, 0, 0, 1);
	SWITCH(100, 1, 0, 0, 4);
	WAKEUP(200, 0, 1, 2);
	SWITCH(200, 1, 4, 1, 0);
	WAKEUP(250, 1, 3, 5);
	SWITCH(300, 0, 1, 0, 2);
	SWITCH(400, 1, 3, 1, 0);
	SWITCH(500, 0, 2, 1, 1);
	SWITCH(600, 0, 1, 1, 0);
	CHECK(an_sched_finish(&s, 600) == 0, "finish");

	const struct an_task *t1 = task(&s, 1), *t2 = task(&s, 2), *t3 = task(&s, 3), *t4 = task(&s, 4),
			     *t5 = task(&s, 5);
	CHECK(t1 && t2 && t3 && t4 && t5, "every task known");
	if (!(t1 && t2 && t3 && t4 && t5))
		TEST_DONE();
	CHECK(t1->oncpu_ns == 300 && t1->runq_wait_ns == 200 && t1->switches == 2 && t1->voluntary == 1 &&
		      t1->involuntary == 1 && t1->wakeup_lat_n == 0 && t1->partial == AN_PARTIAL_START,
	      "task 1: oncpu %llu runq %llu partial %u", (unsigned long long)t1->oncpu_ns,
	      (unsigned long long)t1->runq_wait_ns, t1->partial);
	CHECK(t2->oncpu_ns == 200 && t2->runq_wait_ns == 100 && t2->wakeup_lat_n == 1 && t2->wakeup_lat_sum == 100 &&
		      t2->wakeups == 1 && t2->voluntary == 1 && t2->partial == 0,
	      "task 2: oncpu %llu wakeup %llu partial %u", (unsigned long long)t2->oncpu_ns,
	      (unsigned long long)t2->wakeup_lat_sum, t2->partial);
	CHECK(t3->oncpu_ns == 200 && t3->inferred_in == 1 && s.inferred == 1,
	      "task 3 (switch-in inferred): oncpu %llu inferred %llu", (unsigned long long)t3->oncpu_ns,
	      (unsigned long long)s.inferred);
	CHECK(t4->oncpu_ns == 100 && t4->partial == AN_PARTIAL_START, "task 4: %llu", (unsigned long long)t4->oncpu_ns);
	CHECK(t5->oncpu_ns == 0 && t5->runq_wait_ns == 350 && t5->partial == AN_PARTIAL_END,
	      "task 5 (still waiting): runq %llu partial %u", (unsigned long long)t5->runq_wait_ns, t5->partial);
	/* the distributions hold the waits that ended, and only those */
	CHECK(s.wakeup.count == 1 && s.wakeup.max == 100, "wakeup distribution: %llu", (unsigned long long)s.wakeup.count);
	CHECK(s.runq.count == 2 && an_lat_pct(&s.runq, 100) == 200 && an_lat_pct(&s.runq, 50) == 100,
	      "runq distribution: %llu", (unsigned long long)s.runq.count);
	/* on_run saw the same runs the totals add up */
	for (int tid = 1; tid <= 5; tid++)
		CHECK(ran_ns[tid] == task(&s, tid)->oncpu_ns, "on_run of %d: %llu", tid, (unsigned long long)ran_ns[tid]);
	CHECK(!overlaps, "%d runs overlap their CPU's last", overlaps);
	an_sched_free(&s);
	lost_switches();
	idle_leaves();
	idle_elsewhere();
	dropped_events();
	TEST_DONE();
}
