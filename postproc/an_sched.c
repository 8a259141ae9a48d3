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

static __attribute__((noinline)) struct an_task *task_slow(struct an_sched *s, int32_t tid, uint32_t *slot)
{
	uint32_t *i = hmap_get(&s->by_tid, (uint32_t)tid);
	if (i) {
		*slot = *i + 1;
		return &s->t[*i];
	}
	if (an_grow(&s->t, &s->cap, s->n + 1, sizeof(*s->t), 256))
		return NULL;
	if (hmap_put(&s->by_tid, (uint32_t)tid, (uint32_t)s->n))
		return NULL;
	*slot = (uint32_t)s->n + 1;
	struct an_task *t = &s->t[s->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = -1;
	t->cpu = -1;
	return t;
}

static inline struct an_task *task(struct an_sched *s, int32_t tid)
{
	/* A few tasks take most switches: a direct-mapped cache in front of
	 * the map (slot holds index + 1, 0 = empty), inline because a call
	 * per lookup showed in profiles. */
	uint32_t *slot = &s->recent[(uint32_t)tid & (AN_SCHED_RECENT - 1)];
	if (*slot && s->t[*slot - 1].tid == tid)
		return &s->t[*slot - 1];
	return task_slow(s, tid, slot);
}

static int set_curr(struct an_sched *s, int32_t cpu, int32_t tid, uint64_t ts)
{
	if (cpu < 0 || cpu > 65535)
		return 0;
	if ((size_t)cpu >= s->ncpu) {
		/* grows every per-CPU array together */
		size_t nc = (size_t)cpu + 1, c[5] = {s->ncpu, s->ncpu, s->ncpu, s->ncpu, s->ncpu};
		if (an_grow(&s->curr, &c[0], nc, sizeof(*s->curr), nc) ||
		    an_grow(&s->last_switch, &c[1], nc, sizeof(*s->last_switch), nc) ||
		    an_grow(&s->ev_tid, &c[2], nc, sizeof(*s->ev_tid), nc) ||
		    an_grow(&s->ev_ts, &c[3], nc, sizeof(*s->ev_ts), nc) ||
		    an_grow(&s->other_ts, &c[4], nc, sizeof(*s->other_ts), nc))
			return -ENOMEM;
		for (size_t i = s->ncpu; i < nc; i++) {
			s->curr[i] = s->ev_tid[i] = -1;
			s->last_switch[i] = s->ev_ts[i] = s->other_ts[i] = 0;
		}
		s->ncpu = nc;
	}
	s->curr[cpu] = tid;
	s->last_switch[cpu] = ts;
	return 0;
}

/* Kernel comm fields are char[16], NUL-padded: copied without measuring
 * (strnlen per switch was the top of the latency profile). */
static void comm_copy(struct an_task *t, const struct tpp_event *ev, int i)
{
	const char *p = ev->v[i].s.p;
	size_t n = ev->v[i].s.len;
	if (!p || !n || !p[0])
		return;
	if (n > sizeof(t->comm) - 1)
		n = sizeof(t->comm) - 1;
	memcpy(t->comm, p, n);
	t->comm[n] = 0;
}

static inline void comm(const struct an_sched *s, struct an_task *t, const struct tpp_event *ev,
			const struct an_tinfo *ti, int role)
{
	/* the check inline: latency wants no names, and a call per switch showed */
	if (!s->no_comm && ti->f[role] >= 0)
		comm_copy(t, ev, ti->f[role]);
}

/* Whether t's delays go into the distributions. */
static inline int sampled(const struct an_sched *s, struct an_task *t)
{
	if (!t->tid)
		return 0;
	if (!s->keep)
		return 1;
	if (!t->keep_known) {
		t->keep = (uint8_t)(s->keep(s->keep_ctx, t->tid) != 0);
		t->keep_known = 1;
	}
	return t->keep;
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
		comm(s, t, ev, ti, R_PREV_COMM);
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
			t->inferred_in++;
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
		comm(s, t, ev, ti, R_NEXT_COMM);
		if (t->runnable_since && ev->ts >= t->runnable_since) {
			uint64_t w = ev->ts - t->runnable_since;
			t->runq_wait_ns += w;
			if (t->woken && next) {
				t->wakeup_lat_n++;
				t->wakeup_lat_sum += w;
				if (w > t->wakeup_lat_max)
					t->wakeup_lat_max = w;
			}
			if (sampled(s, t)) {
				an_lat_add(&s->runq, w);
				if (t->woken)
					an_lat_add(&s->wakeup, w);
			}
		}
		if (t->off_since && ev->ts >= t->off_since) {
			t->offcpu_ns += ev->ts - t->off_since;
			if (sampled(s, t))
				an_lat_add(&s->offcpu, ev->ts - t->off_since);
		}
		t->cpu = ev->cpu;
		t->running = 1;
		t->on_since = ev->ts;
		t->runnable_since = 0;
		t->off_since = 0;
		t->woken = 0;
		if (ev->cpu >= 0 && (size_t)ev->cpu < s->ncpu) {
			/* the arrays were grown above: set_curr()'s fast case */
			s->curr[ev->cpu] = next;
			s->last_switch[ev->cpu] = ev->ts;
			return 0;
		}
		return set_curr(s, ev->cpu, next, ev->ts);
	}
	case AN_WAKEUP:
	case AN_WAKEUP_NEW:
		if (!(t = task(s, (int32_t)an_u(ev, ti, R_PID))))
			return -ENOMEM;
		comm(s, t, ev, ti, R_COMM);
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
		comm(s, t, ev, ti, R_COMM);
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
