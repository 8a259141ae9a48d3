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

enum { T_SWITCH = 1, T_WAKEUP };
static struct an_types ty;
static uint64_t ran_ns[8]; /* on_run's intervals per tid */

static int on_run(void *ctx, int32_t cpu, int32_t tid, uint64_t from, uint64_t to)
{
	(void)ctx, (void)cpu;
	if (tid >= 0 && tid < 8)
		ran_ns[tid] += to - from;
	return 0;
}

static void feed(struct an_sched *s, int type, uint64_t ts, int cpu, int tid, uint64_t v0, uint64_t v1,
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
	CHECK(an_sched_feed(s, &ty, &ev) == 0, "feed at %llu", (unsigned long long)ts);
}
/* sched_switch: prev_pid, prev_state, next_pid; sched_wakeup: pid */
#define SWITCH(ts, cpu, prev, state, next) feed(&s, T_SWITCH, ts, cpu, prev, prev, state, next)
#define WAKEUP(ts, cpu, by, pid) feed(&s, T_WAKEUP, ts, cpu, by, pid, 0, 0)

static const struct an_task *task(const struct an_sched *s, int32_t tid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid == tid)
			return &s->t[i];
	return NULL;
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
	an_sched_free(&s);
	TEST_DONE();
}
