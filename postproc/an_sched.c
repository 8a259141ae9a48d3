/* Scheduler accounting per task, the way the kernel's schedstat does it:
 * on-CPU time between switch-in and switch-out; run-queue wait from the
 * moment a task becomes runnable (wakeup, new task, or preempted while
 * runnable) until it runs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze.h"

/* prev_state bits that mean "still runnable": none. The kernel reports a
 * preempted task as 0 (plus TASK_REPORT_MAX, 0x100, when preempted). */
#define STATE_MASK 0xffu

int an_sched_init(struct an_sched *s)
{
	memset(s, 0, sizeof(*s));
	an_lat_init(&s->wakeup);
	an_lat_init(&s->runq);
	an_lat_init(&s->offcpu);
	return 0;
}

void an_sched_free(struct an_sched *s)
{
	free(s->t);
	free(s->curr);
	free(s->last_switch);
	free(s->ev_tid);
	free(s->ev_ts);
	free(s->other_ts);
	hmap_free(&s->by_tid);
	an_lat_free(&s->wakeup);
	an_lat_free(&s->runq);
	an_lat_free(&s->offcpu);
	memset(s, 0, sizeof(*s));
}

static struct an_task *task(struct an_sched *s, int32_t tid)
{
	uint32_t *i = hmap_get(&s->by_tid, (uint32_t)tid);
	if (i)
		return &s->t[*i];
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		struct an_task *n = realloc(s->t, nc * sizeof(*n));
		if (!n)
			return NULL;
		s->t = n;
		s->cap = nc;
	}
	if (hmap_put(&s->by_tid, (uint32_t)tid, (uint32_t)s->n))
		return NULL;
	struct an_task *t = &s->t[s->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = -1;
	t->cpu = -1;
	return t;
}

static int set_curr(struct an_sched *s, int32_t cpu, int32_t tid, uint64_t ts)
{
	if (cpu < 0 || cpu > 65535)
		return 0;
	if ((size_t)cpu >= s->ncpu) {
		/* grows every per-CPU array together */
		size_t nc = (size_t)cpu + 1;
		int32_t *n = realloc(s->curr, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->curr = n;
		uint64_t *l = realloc(s->last_switch, nc * sizeof(*l));
		if (!l)
			return -ENOMEM;
		s->last_switch = l;
		int32_t *et = realloc(s->ev_tid, nc * sizeof(*et));
		if (!et)
			return -ENOMEM;
		s->ev_tid = et;
		uint64_t *es = realloc(s->ev_ts, nc * sizeof(*es));
		if (!es)
			return -ENOMEM;
		s->ev_ts = es;
		uint64_t *os = realloc(s->other_ts, nc * sizeof(*os));
		if (!os)
			return -ENOMEM;
		s->other_ts = os;
		for (size_t i = s->ncpu; i < nc; i++) {
			n[i] = et[i] = -1;
			l[i] = es[i] = os[i] = 0;
		}
		s->ncpu = nc;
	}
	s->curr[cpu] = tid;
	s->last_switch[cpu] = ts;
	return 0;
}

static void comm(struct an_task *t, const struct tpp_event *ev, const struct an_tinfo *ti, int role)
{
	char buf[sizeof(t->comm)];
	an_s(ev, ti, role, buf, sizeof(buf));
	if (buf[0])
		memcpy(t->comm, buf, sizeof(buf));
}

static void runnable(struct an_task *t, uint64_t ts, int woken)
{
	if (t->running || t->runnable_since)
		return;
	t->runnable_since = ts;
	t->woken = (uint8_t)woken;
}

int an_sched_feed(struct an_sched *s, const struct an_types *ty, const struct tpp_event *ev)
{
	const struct an_tinfo *ti = an_ti(ty, ev);
	struct an_task *t;
	if (!s->first_ts)
		s->first_ts = ev->ts;
	s->last_ts = ev->ts;
	if (ev->cpu >= 0 && ev->cpu <= 65535) {
		if ((size_t)ev->cpu >= s->ncpu && set_curr(s, ev->cpu, -1, 0))
			return -ENOMEM;
		if (s->ev_tid[ev->cpu] != ev->tid) {
			s->other_ts[ev->cpu] = s->ev_ts[ev->cpu];
			s->ev_tid[ev->cpu] = ev->tid;
		}
		s->ev_ts[ev->cpu] = ev->ts;
	}
	switch (ti->kind) {
	case AN_SWITCH: {
		int32_t prev = (int32_t)an_u(ev, ti, R_PREV_PID);
		int32_t next = (int32_t)an_u(ev, ti, R_NEXT_PID);
		uint64_t state = an_u(ev, ti, R_PREV_STATE);
		if (!(t = task(s, prev)))
			return -ENOMEM;
		comm(t, ev, ti, R_PREV_COMM);
		if (!t->running && prev && ev->cpu >= 0 && (size_t)ev->cpu < s->ncpu &&
		    s->last_switch[ev->cpu] && s->curr[ev->cpu] != prev) {
			/* Its switch-in is missing: it ran since it became
			 * runnable, or since the CPU last switched. */
			uint64_t since = s->last_switch[ev->cpu];
			if (s->other_ts[ev->cpu] > since)
				since = s->other_ts[ev->cpu];
			if (t->runnable_since > since)
				since = t->runnable_since;
			t->running = 1;
			t->on_since = since;
			if (t->runnable_since && since >= t->runnable_since) {
				t->runq_wait_ns += since - t->runnable_since;
				t->runnable_since = 0;
			}
			t->off_since = 0;
			s->inferred++;
		}
		if (t->running && t->on_since && ev->ts >= t->on_since)
			t->oncpu_ns += ev->ts - t->on_since;
		t->running = 0;
		t->on_since = 0;
		t->switches++;
		if (!(state & STATE_MASK)) {
			t->involuntary++;
			runnable(t, ev->ts, 0);
		} else {
			t->voluntary++;
			t->off_since = ev->ts;
		}
		if (!(t = task(s, next)))
			return -ENOMEM;
		comm(t, ev, ti, R_NEXT_COMM);
		if (t->runnable_since && ev->ts >= t->runnable_since) {
			uint64_t w = ev->ts - t->runnable_since;
			t->runq_wait_ns += w;
			if (next) {
				an_lat_add(&s->runq, w);
				if (t->woken) {
					an_lat_add(&s->wakeup, w);
					t->wakeup_lat_n++;
					t->wakeup_lat_sum += w;
					if (w > t->wakeup_lat_max)
						t->wakeup_lat_max = w;
				}
			}
		}
		if (t->off_since && ev->ts >= t->off_since) {
			t->offcpu_ns += ev->ts - t->off_since;
			if (next)
				an_lat_add(&s->offcpu, ev->ts - t->off_since);
		}
		t->cpu = ev->cpu;
		t->running = 1;
		t->on_since = ev->ts;
		t->runnable_since = 0;
		t->off_since = 0;
		t->woken = 0;
		return set_curr(s, ev->cpu, next, ev->ts);
	}
	case AN_WAKEUP:
	case AN_WAKEUP_NEW:
		if (!(t = task(s, (int32_t)an_u(ev, ti, R_PID))))
			return -ENOMEM;
		comm(t, ev, ti, R_COMM);
		t->wakeups++;
		runnable(t, ev->ts, 1);
		return 0;
	case AN_MIGRATE:
		if (!(t = task(s, (int32_t)an_u(ev, ti, R_PID))))
			return -ENOMEM;
		t->migrations++;
		return 0;
	case AN_FORK:
		if (!(t = task(s, (int32_t)an_u(ev, ti, R_PID))))
			return -ENOMEM;
		comm(t, ev, ti, R_COMM);
		return 0;
	default:
		return 0;
	}
}

void an_sched_finish(struct an_sched *s, uint64_t end_ts)
{
	for (size_t i = 0; i < s->n; i++) {
		struct an_task *t = &s->t[i];
		if (t->running && t->on_since && end_ts >= t->on_since)
			t->oncpu_ns += end_ts - t->on_since;
		t->on_since = end_ts;
	}
}
