/* Scheduler accounting per task, the way /proc/PID/task/TID/schedstat does
 * it: on-CPU time between switch-in and switch-out; run-queue wait from the
 * moment a task becomes runnable (wakeup, new task, or preempted while
 * runnable) until it runs.
 *
 * The kernel counts both on its run queue's clock, read when it updates it,
 * not when the tracepoints fire, and the two differ by more than the waits
 * themselves (measured on a pipe ping-pong, where a wait is a few µs: 43 to
 * 131% more run-queue wait from the timestamps than schedstat's run_delay):
 * a switch that follows a wakeup which asked for preemption reads the clock
 * of that wakeup (the kernel skips the update: rq_clock_skip_update), a CPU
 * leaving idle reads it at the wakeup or at any later update, and the clock
 * is read microseconds before the tracepoint fires (in __schedule before the
 * dequeue and the pick, at a wakeup before the enqueue). sched_stat_runtime
 * reports each of the kernel's own steps of a running task's clock. Where
 * the file has them: a task's on-CPU time is their sum, exactly what
 * schedstat adds up; a slice starts, on that clock, at its first report's
 * time less the runtime it reports, and the wait that ended with the slice
 * ends there (it is left open at the switch-in until that report comes); a
 * preempted task waits from its slice's end, start plus the runtime
 * reported. Without them (older files, other recorders) both come from the
 * switch and wakeup timestamps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "an_sched.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_run.h"
#include "an_grow.h"

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
	free(s->cpu);
	free(s->cmap);
	free(s->run_tid);
	free(s->run_end);
	free(s->rq_n);
	free(s->rq_epoch);
	hmap_free(&s->by_tid);
	an_lat_free(&s->wakeup);
	an_lat_free(&s->runq);
	an_lat_free(&s->offcpu);
	memset(s, 0, sizeof(*s));
}

static __attribute__((noinline)) struct an_task *task_slow(struct an_sched *s, int32_t tid)
{
	struct an_task **slot = &s->recent[(uint32_t)tid & (AN_SCHED_RECENT - 1)];
	uint32_t *i = hmap_get(&s->by_tid, (uint32_t)tid);
	if (i)
		return *slot = &s->t[*i];
	const struct an_task *old = s->t;
	if (an_grow(&s->t, &s->cap, s->n + 1, sizeof(*s->t), 256))
		return NULL;
	if (s->t != old)
		memset(s->recent, 0, sizeof(s->recent)); /* they pointed into the old array */
	if (hmap_put(&s->by_tid, (uint32_t)tid, (uint32_t)s->n))
		return NULL;
	struct an_task *t = *slot = &s->t[s->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = -1;
	t->cpu = -1;
	t->rq_cpu = -1;
	t->fresh = 1;
	return t;
}

static inline struct an_task *task(struct an_sched *s, int32_t tid)
{
	/* A few tasks take most switches: a direct-mapped cache in front of
	 * the map, inline because a call per lookup showed in profiles. It
	 * holds pointers: an index had to be added to the array's base, one
	 * more load in the chain every event waits on. */
	struct an_task *t = s->recent[(uint32_t)tid & (AN_SCHED_RECENT - 1)];
	if (t && t->tid == tid)
		return t;
	return task_slow(s, tid);
}

/* CPU cpu's state, the array grown to hold it; NULL when cpu is not one
 * (a thread's stream) or on -ENOMEM (*err set). */
static struct an_cpu *cpu_at(struct an_sched *s, int32_t cpu, int *err)
{
	if (cpu < 0 || cpu > 65535)
		return NULL;
	if ((size_t)cpu >= s->ncpu) {
		size_t nc = (size_t)cpu + 1, c = s->ncpu;
		if (an_grow(&s->cpu, &c, nc, sizeof(*s->cpu), nc)) {
			*err = -ENOMEM;
			return NULL;
		}
		memset(s->cpu + s->ncpu, 0, (nc - s->ncpu) * sizeof(*s->cpu));
		s->ncpu = nc;
	}
	return &s->cpu[cpu];
}

/* A wakeup's enqueue, on the kernel's clock: the wakeup preemption check
 * between the enqueue and the tracepoint reports the target CPU's current
 * task's runtime up to the clock the enqueue read, so that report's time is
 * when the wait began, not the tracepoint's, 1.2 µs later (median; a
 * ping-pong of 20,000 waits of a few µs under load: run-queue wait 3.7%
 * below run_delay from the tracepoint, 0.7% above from the report). Only a
 * report right before the wakeup, fired by the same task, of another task,
 * and not older than this: an earlier report (the check found nothing to
 * update) says nothing about the enqueue. */
#define WAKE_CLOCK_NS 100000u

/* The per-CPU half of the state machine: it depends on that CPU's events
 * alone, so a column scan runs it per stream where slices are decoded. For
 * a switch, the earliest a task whose switch-in is missing can have come on
 * the CPU: max(last switch, the CPU's latest event of another task), or 0
 * when it cannot be told (no switch seen yet, or the task was the CPU's
 * current one). For a wakeup, the enqueue's time when a runtime report
 * gives it (WAKE_CLOCK_NS), else 0. */
static inline uint64_t cpu_step(struct an_cpu *c, int k, uint64_t ts, int32_t tid, int32_t prev, int32_t next)
{
	if (!c->seen) {
		c->seen = 1;
		c->curr = c->ev_tid = -1;
	}
	uint64_t rt_ts = c->rt_ts;
	int rt_ok = rt_ts && c->rt_tid == tid && c->rt_pid != prev && ts - rt_ts <= WAKE_CLOCK_NS;
	c->rt_ts = 0;
	if (k == AN_RUNTIME) {
		c->rt_ts = ts;
		c->rt_pid = prev;
		c->rt_tid = tid;
	}
	if (c->ev_tid != tid) {
		c->other_ts = c->ev_ts;
		c->ev_tid = tid;
	}
	c->ev_ts = ts;
	if (k == AN_WAKEUP || k == AN_WAKEUP_NEW)
		return rt_ok ? rt_ts : 0;
	if (k != AN_SWITCH)
		return 0;
	uint64_t since = 0;
	if (c->last_switch && c->curr != prev)
		since = c->last_switch > c->other_ts ? c->last_switch : c->other_ts;
	c->curr = next;
	c->last_switch = ts;
	return since;
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

/* t became runnable at ts (trace time), its wait starting at wait (the
 * kernel's clock where known) */
static void runnable(struct an_task *t, uint64_t ts, uint64_t wait, int woken)
{
	if (t->running || t->runnable_since || t->ready_ts)
		return;
	t->runnable_since = wait;
	t->ready_ts = ts;
	t->woken = (uint8_t)woken;
}

/* t's run-queue wait ends at end: its totals, its wakeup delay, the
 * distributions and on_wait all take the same number. */
static int wait_end(struct an_sched *s, struct an_task *t, uint64_t end)
{
	uint64_t w = end > t->runnable_since ? end - t->runnable_since : 0;
	t->runq_wait_ns += w;
	if (t->woken && t->tid) {
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
	t->runnable_since = 0;
	int rc = s->on_wait && t->tid ? s->on_wait(s->cb_ctx, t, end, w) : 0;
	t->woken = 0;
	return rc;
}

/* t, on cpu since on_since, is off it from to on: its on-CPU time
 * switch to switch. A wait left open for a runtime report that never came
 * ended at the switch-in. */
static int ran(struct an_sched *s, struct an_task *t, uint64_t to)
{
	int rc = 0;
	if (t->running && t->runnable_since && (rc = wait_end(s, t, t->on_since ? t->on_since : to)))
		return rc;
	if (t->running && t->on_since && to >= t->on_since) {
		t->oncpu_ns += to - t->on_since;
		/* not the idle task's: one for every CPU, its state says
		 * nothing of any one of them */
		if (t->tid && t->cpu >= 0 && (size_t)t->cpu < s->nrun && to > s->run_end[t->cpu])
			s->run_end[t->cpu] = to;
		if (s->on_run && t->tid)
			rc = s->on_run(s->cb_ctx, t->cpu, t->tid, t->on_since, to);
	}
	t->running = 0;
	t->on_since = 0;
	t->k_start = t->k_run = 0;
	return rc;
}

/* *slot: the task switched in last on cpu (whose switch-out the file may
 * lack), -1 for none; NULL when cpu is not one (a thread's stream). 0 or
 * -ENOMEM. */
static int run_slot(struct an_sched *s, int32_t cpu, int32_t **slot)
{
	*slot = NULL;
	if (cpu < 0 || cpu > 65535)
		return 0;
	if ((size_t)cpu >= s->nrun) {
		size_t nc = (size_t)cpu + 1, c = s->nrun, c2 = s->nrun;
		if (an_grow(&s->run_tid, &c, nc, sizeof(*s->run_tid), nc) ||
		    an_grow(&s->run_end, &c2, nc, sizeof(*s->run_end), nc))
			return -ENOMEM;
		for (size_t i = s->nrun; i < nc; i++) {
			s->run_tid[i] = -1;
			s->run_end[i] = 0;
		}
		s->nrun = nc;
	}
	*slot = &s->run_tid[cpu];
	return 0;
}

/* A runtime report of t: r ns of the kernel's clock, ending about ts. */
static int runtime(struct an_sched *s, struct an_task *t, uint64_t ts, uint64_t r)
{
	s->runtime_reports++;
	t->rt_seen = 1;
	if (!t->k_start) {
		/* the slice's first report: its start on the kernel's clock,
		 * which ends the wait (left open at the switch-in, or with the
		 * switch-in itself missing from the file) */
		uint64_t start = ts > r ? ts - r : 1;
		if (start < s->t0) {
			/* it ran before the events begin: count what is inside
			 * (unless they show it waking: the clock the kernel read
			 * for the slice is then a little older than the wakeup) */
			r = ts - s->t0;
			start = s->t0;
			if (!t->runnable_since)
				t->partial |= AN_PARTIAL_START;
		}
		t->k_start = start;
		if (t->runnable_since) {
			int rc = wait_end(s, t, start);
			if (rc)
				return rc;
		}
	}
	t->k_run += r;
	t->rt_ns += r;
	return 0;
}

/* A switch's task leaving cpu at ts (prev, st its state): a missing
 * switch-in inferred (since: cpu_step's answer), with the switch-out of the
 * task the CPU ran; its slice closed and its wait begun. *slotp: the CPU's
 * running-task slot, for switch_in. */
static inline __attribute__((always_inline)) int switch_out(struct an_sched *s, int32_t prev, uint64_t ts,
							    int32_t cpu, uint64_t st, uint64_t since,
							    const struct tpp_event *ev, const struct an_tinfo *ti,
							    int32_t **slotp)
{
	struct an_task *t;
	int rc;
	if (!(t = task(s, prev)))
		return -ENOMEM;
	if (ev)
		comm(s, t, ev, ti, R_PREV_COMM);
	if ((rc = run_slot(s, cpu, slotp)))
		return rc;
	int32_t *slot = *slotp;
	/* An inferred start comes after the CPU's last switch, and after the
	 * end of what it was told to have run since (a task closed there
	 * when it turned up on another CPU, its switch-out missing). */
	if (since && slot && s->run_end[cpu] > since)
		since = s->run_end[cpu] < ts ? s->run_end[cpu] : ts;
	if (t->running && t->cpu != cpu && prev && since) {
		/* It ran here, so it left the CPU it ran on before: that
		 * switch-out and its switch-in here are missing. Its slice
		 * there ends where its run here can begin; left open until
		 * ts, it would overlap what that CPU ran since. */
		uint64_t left = since > t->on_since ? since : t->on_since;
		t->partial |= AN_PARTIAL_GAPS;
		if ((rc = ran(s, t, left)))
			return rc;
		since = left;
	}
	if (!t->running && prev && !since && t->k_start)
		since = t->k_start; /* the CPU's first switch: the slice's reports say when it began */
	if (!t->running && prev && since && t->ready_ts > since)
		since = t->ready_ts; /* its switch-in is missing: it ran since it became runnable */
	if (slot && *slot >= 0 && *slot != prev) {
		/* The task the CPU ran is not the one leaving: its
		 * switch-out is missing. One task per CPU at a time: it
		 * left by the time the leaving task came on (since), or,
		 * the leaving one being idle, whose time is not told, it
		 * is taken to have run until now, as a task switched in
		 * again without its switch-out. */
		struct an_task *o = task(s, *slot);
		if (!o)
			return -ENOMEM;
		if (o->running && o->cpu == cpu) {
			o->partial |= o->tid ? AN_PARTIAL_GAPS : 0;
			if ((rc = ran(s, o, prev && since ? since : ts)))
				return rc;
		}
	}
	if (!t->running && prev && since) {
		/* Its switch-in is missing: it ran since it became
		 * runnable, or since the CPU last switched. */
		if (t->runnable_since && (rc = wait_end(s, t, since)))
			return rc;
		t->running = 1;
		t->cpu = cpu;
		t->on_since = since;
		t->off_since = 0;
		s->inferred++;
		t->inferred_in++;
	}
	if (t->fresh && prev) /* it ran before the events begin */
		t->partial |= AN_PARTIAL_START;
	t->fresh = 0;
	/* where a preempted task starts waiting: its slice's end */
	uint64_t end = t->k_start ? t->k_start + t->k_run : ts;
	if ((rc = ran(s, t, ts)))
		return rc;
	t->switches++;
	t->ready_ts = 0;
	if (!(st & STATE_MASK)) {
		t->involuntary++;
		runnable(t, ts, end < ts ? end : ts, 0);
	} else {
		t->voluntary++;
		t->off_since = ts;
	}
	return 0;
}

/* A switch's task entering cpu at ts (next): a missing switch-out closed,
 * its wait and off-CPU time ended; it runs from ts. */
static inline __attribute__((always_inline)) int switch_in(struct an_sched *s, int32_t next, uint64_t ts,
							   int32_t cpu, int32_t *slot, const struct tpp_event *ev,
							   const struct an_tinfo *ti)
{
	struct an_task *t;
	int rc;
	if (!(t = task(s, next)))
		return -ENOMEM;
	if (ev)
		comm(s, t, ev, ti, R_NEXT_COMM);
	if (t->fresh && next && !t->runnable_since) /* it waited before the events begin */
		t->partial |= AN_PARTIAL_START;
	t->fresh = 0;
	if (t->running) { /* its switch-out is missing */
		t->partial |= next ? AN_PARTIAL_GAPS : 0;
		if ((rc = ran(s, t, ts)))
			return rc;
	}
	/* With runtime reports in the file, the wait goes on until the
	 * slice's first report says when, on the kernel's clock, the
	 * slice started (a slice without one ends it at this switch-in,
	 * when it closes: ran()). */
	if (t->runnable_since && !s->has_runtime && (rc = wait_end(s, t, ts)))
		return rc;
	if (t->off_since && ts >= t->off_since) {
		t->offcpu_ns += ts - t->off_since;
		if (sampled(s, t))
			an_lat_add(&s->offcpu, ts - t->off_since);
	}
	if (slot)
		*slot = next;
	t->ready_ts = 0;
	t->cpu = cpu;
	t->running = 1;
	t->on_since = ts;
	t->k_start = t->k_run = 0;
	t->off_since = 0;
	return 0;
}

/* The per-task half both feeds share: one event of kind k at ts on cpu;
 * a, b, st: prev pid, next pid and prev state of a switch, a the pid of the
 * others; since: cpu_step's answer for a switch, the runtime of a runtime
 * report. Task names come from ev (NULL: none). */
static inline __attribute__((always_inline)) int step(struct an_sched *s, int k, uint64_t ts, int32_t cpu, uint64_t a,
						      uint64_t b, uint64_t st, uint64_t since,
						      const struct tpp_event *ev, const struct an_tinfo *ti)
{
	struct an_task *t;
	int rc;
	if (__builtin_expect(!s->t0, 0))
		s->t0 = ts;
	switch (k) {
	case AN_SWITCH: {
		int32_t *slot;
		if ((rc = switch_out(s, (int32_t)a, ts, cpu, st, since, ev, ti, &slot)))
			return rc;
		return switch_in(s, (int32_t)b, ts, cpu, slot, ev, ti);
	}
	case AN_RUNTIME:
		if (!(t = task(s, (int32_t)a)))
			return -ENOMEM;
		if (ev)
			comm(s, t, ev, ti, R_COMM);
		if (t->fresh)
			t->partial |= AN_PARTIAL_START;
		t->fresh = 0;
		return runtime(s, t, ts, since);
	case AN_WAKEUP:
	case AN_WAKEUP_NEW:
		if (!(t = task(s, (int32_t)a)))
			return -ENOMEM;
		if (ev)
			comm(s, t, ev, ti, R_COMM);
		t->fresh = 0; /* it slept, or was new */
		t->wakeups++;
		runnable(t, ts, since && since < ts ? since : ts, 1);
		return 0;
	case AN_MIGRATE: /* before the wakeup of a task woken on another CPU: no state */
		if (!(t = task(s, (int32_t)a)))
			return -ENOMEM;
		t->migrations++;
		return 0;
	case AN_FORK:
		if (!(t = task(s, (int32_t)a)))
			return -ENOMEM;
		if (ev)
			comm(s, t, ev, ti, R_COMM);
		t->fresh = 0;
		return 0;
	default:
		return 0;
	}
}

static int rq_grow(struct an_sched *s, int32_t cpu)
{
	if ((size_t)cpu < s->nrq)
		return 0;
	size_t c = s->nrq, c2 = s->nrq, n = (size_t)cpu + 1;
	if (an_grow(&s->rq_n, &c, n, sizeof(*s->rq_n), n) || an_grow(&s->rq_epoch, &c2, n, sizeof(*s->rq_epoch), n))
		return -ENOMEM;
	memset(s->rq_n + s->nrq, 0, (n - s->nrq) * sizeof(*s->rq_n));
	memset(s->rq_epoch + s->nrq, 0, (n - s->nrq) * sizeof(*s->rq_epoch));
	s->nrq = n;
	return 0;
}

/* The run queue t is on, -1 none: a CPU that went idle since t joined
 * emptied its queue. */
static int32_t rq_of(const struct an_sched *s, const struct an_task *t)
{
	return t->rq_cpu >= 0 && t->rq_epoch == s->rq_epoch[t->rq_cpu] ? t->rq_cpu : -1;
}

/* t moves to cpu's run queue (-1: off every one) at ts: both lengths
 * told to on_rq. */
static int rq_move(struct an_sched *s, struct an_task *t, int32_t cpu, uint64_t ts)
{
	int32_t old = rq_of(s, t);
	if (cpu > 65535)
		cpu = -1;
	if (cpu == old || !t->tid)
		return 0;
	int rc;
	if (cpu >= 0 && (rc = rq_grow(s, cpu)))
		return rc;
	t->rq_cpu = cpu;
	t->rq_epoch = cpu >= 0 ? s->rq_epoch[cpu] : 0;
	if (old >= 0 && s->rq_n[old] > 0 && (rc = s->on_rq(s->cb_ctx, old, ts, --s->rq_n[old])))
		return rc;
	return cpu >= 0 ? s->on_rq(s->cb_ctx, cpu, ts, ++s->rq_n[cpu]) : 0;
}

/* Who is on which run queue after an event of kind k (a, b, st as step
 * takes them; was: the task switched in last on the event's CPU before
 * it, -1 none): a woken task joins its target CPU's, a switched-out one
 * leaves unless preempted, a switched-in one is on its CPU's, a migrated
 * one that is queued moves. A CPU runs its idle task only with nothing
 * else to run: a switch to idle empties its queue. A switch whose prev is
 * not the task the CPU ran last says that task's switch-out is missing
 * (the kernel fired it and did not store it: `tracepp info`'s unstored);
 * the task is taken to have left the queue, slept: were it preempted
 * instead, it is counted again when it next runs, where kept it would be
 * counted until it next sleeps, however long that is. */
static int rq_step(struct an_sched *s, int k, const struct tpp_event *ev, const struct an_tinfo *ti, uint64_t a,
		   uint64_t b, uint64_t st, int32_t was)
{
	struct an_task *t;
	int rc;
	int32_t to = ti->f[R_CPU] >= 0 ? (int32_t)an_u(ev, ti, R_CPU) : ev->cpu, cpu = ev->cpu;
	switch (k) {
	case AN_SWITCH:
		if (cpu < 0 || cpu > 65535)
			return 0;
		if (was > 0 && (uint64_t)was != a) {
			if (!(t = task(s, was)))
				return -ENOMEM;
			if (rq_of(s, t) == cpu && (rc = rq_move(s, t, -1, ev->ts)))
				return rc;
		}
		if (!(t = task(s, (int32_t)a)))
			return -ENOMEM;
		if ((rc = rq_move(s, t, st & STATE_MASK ? -1 : cpu, ev->ts)))
			return rc;
		if (!b) {
			if ((rc = rq_grow(s, cpu)))
				return rc;
			s->rq_epoch[cpu]++;
			if (s->rq_n[cpu] && (rc = s->on_rq(s->cb_ctx, cpu, ev->ts, s->rq_n[cpu] = 0)))
				return rc;
		}
		if (!(t = task(s, (int32_t)b)))
			return -ENOMEM;
		return rq_move(s, t, cpu, ev->ts);
	case AN_WAKEUP:
	case AN_WAKEUP_NEW:
		if (!(t = task(s, (int32_t)a)))
			return -ENOMEM;
		return rq_of(s, t) < 0 ? rq_move(s, t, to, ev->ts) : 0;
	case AN_MIGRATE:
		if (!(t = task(s, (int32_t)a)))
			return -ENOMEM;
		return rq_of(s, t) >= 0 ? rq_move(s, t, to, ev->ts) : 0;
	default:
		return 0;
	}
}

int an_sched_feed(struct an_sched *s, const struct an_types *ty, const struct tpp_event *ev)
{
	const struct an_tinfo *ti = an_ti(ty, ev);
	int k = ti->kind, err = 0;
	uint64_t a = an_u(ev, ti, k == AN_SWITCH ? R_PREV_PID : R_PID), b = 0, st = 0, since = 0;
	if (k == AN_SWITCH) {
		b = an_u(ev, ti, R_NEXT_PID);
		st = an_u(ev, ti, R_PREV_STATE);
	}
	struct an_cpu *c = cpu_at(s, ev->cpu, &err);
	if (err)
		return err;
	if (c)
		since = cpu_step(c, k, ev->ts, ev->tid, (int32_t)a, (int32_t)b);
	if (__builtin_expect(!s->t0, 0))
		s->has_runtime = ty->has[AN_RUNTIME] > 0;
	if (k == AN_RUNTIME)
		since = an_u(ev, ti, R_RUNTIME);
	int32_t was = s->on_rq && ev->cpu >= 0 && (size_t)ev->cpu < s->nrun ? s->run_tid[ev->cpu] : -1;
	int rc = step(s, k, ev->ts, ev->cpu, a, b, st, since, ev, ti);
	return rc || !s->on_rq ? rc : rq_step(s, k, ev, ti, a, b, st, was);
}

/* Column feeding: per type, its kind and the column of each value step
 * reads (-1: the type lacks it, and it reads 0 as an_u does). */
struct an_sched_cmap {
	uint8_t kind;
	int8_t col[3];
};

/* The column a role's field lands in: its rank among the type's wanted
 * fields. A role the type lacks reads the first column the type leaves
 * empty, which holds 0 (as an_u gives); -1 when there is none. */
static int col_of(const struct an_tinfo *ti, uint32_t want, int role)
{
	int f = ti->f[role];
	if (f < 0 || f >= 32 || !(want >> f & 1))
		return __builtin_popcount(want) < TPP_SCAN_COLS ? __builtin_popcount(want) : -1;
	return __builtin_popcount(want & ((1u << f) - 1));
}

/* Runs where a slice is decoded (tpp_scan_opts.prep): the per-CPU half,
 * and the slice rewritten for an_sched_feed_cols, packed because the other
 * thread reads it across cores: the type column holds the kind, plus
 * PREP_VOLUNTARY for a switch-out that slept; col[0] the two pids (prev
 * and next, or the one), col[1] cpu_step's since, or a runtime report's
 * runtime (its second value, whole). */
#define PREP_VOLUNTARY 0x100u
_Static_assert(sizeof(struct an_cpu) <= TPP_SCAN_STATE, "prep's per-stream state");
static void prep(void *ctx, struct tpp_slice *sl, void *state)
{
	const struct an_sched *s = ctx;
	/* the CPU's state and the arrays in locals: the stores below could
	 * alias them, and reloading each per event showed */
	struct an_cpu c = *(struct an_cpu *)state; /* zeroed by the scan: not seen yet */
	int cpu = sl->cpu >= 0 && sl->cpu <= 65535;
	const uint64_t *col[TPP_SCAN_COLS] = {sl->col[0], sl->col[1], sl->col[2], sl->col[3]}, *ts = sl->ts;
	uint64_t *ab = sl->col[0], *since = sl->col[1];
	const int32_t *tid = sl->tid;
	uint16_t *type = sl->type;
	for (uint32_t i = 0, n = sl->n; i < n; i++) {
		const struct an_sched_cmap *m = &s->cmap[type[i]]; /* the decoder's ids are < TPP_MAX_TYPES */
		uint64_t a = col[m->col[0]][i], b = col[m->col[1]][i], st = col[m->col[2]][i];
		since[i] = cpu ? cpu_step(&c, m->kind, ts[i], tid[i], (int32_t)a, (int32_t)b) : 0;
		if (m->kind == AN_RUNTIME)
			since[i] = b;
		type[i] = (uint16_t)(m->kind | (st & STATE_MASK ? PREP_VOLUNTARY : 0));
		ab[i] = (uint32_t)a | (uint64_t)(uint32_t)b << 32;
	}
	*(struct an_cpu *)state = c;
}

int an_sched_want_cols(struct an_sched *s, const struct an_types *ty, const struct tpp_reader *r, uint32_t *want,
		       struct an_filter *f)
{
	if (!s->no_comm)
		return -ENOTSUP; /* names are strings: rows only */
	/* the per-CPU half runs per stream: one stream a CPU, each declared */
	for (size_t i = 0; i < tpp_r_nchunks(r); i++)
		if (tpp_r_chunk(r, i)->kind == TPP_C_EVENTS && !tpp_r_stream_by_id(r, tpp_r_chunk(r, i)->stream))
			return -ENOTSUP;
	for (size_t i = 0; i < tpp_r_nstreams(r); i++)
		for (size_t j = 0; j < i; j++) {
			const struct tpp_stream_info *a = tpp_r_stream(r, i), *b = tpp_r_stream(r, j);
			if (a->kind != TPP_S_THREAD && b->kind != TPP_S_THREAD && a->cpu == b->cpu)
				return -ENOTSUP;
		}
	an_want_sched(ty, want, 0);
	s->has_runtime = ty->has[AN_RUNTIME] > 0;
	if (!s->cmap && !(s->cmap = calloc(TPP_MAX_TYPES, sizeof(*s->cmap))))
		return -ENOMEM;
	for (unsigned id = 0; id < TPP_MAX_TYPES; id++) {
		const struct an_tinfo *ti = &ty->t[id];
		struct an_sched_cmap *m = &s->cmap[id];
		if (!want[id] && !ti->kind)
			continue; /* calloc's zeroes say the same */
		m->kind = ti->kind;
		int sw = ti->kind == AN_SWITCH;
		int k[3] = {col_of(ti, want[id], sw ? R_PREV_PID : R_PID),
			    col_of(ti, want[id], ti->kind == AN_RUNTIME ? R_RUNTIME : R_NEXT_PID),
			    col_of(ti, want[id], R_PREV_STATE)};
		for (int i = 0; i < 3; i++)
			if (k[i] < 0)
				return -ENOTSUP; /* no empty column to read 0 from */
			else
				m->col[i] = (int8_t)k[i];
	}
	f->want = want;
	f->prep = prep;
	f->prep_ctx = s;
	return 0;
}

int an_sched_feed_cols(struct an_sched *s, const struct tpp_run *runs, int n)
{
	for (int r = 0; r < n; r++) {
		/* in locals: step's stores could alias the slice's pointers */
		const struct tpp_cols *c = runs[r].c;
		const uint64_t *ts = c->ts, *ab = c->col[0], *since = c->col[1];
		const uint16_t *ty = c->type;
		const int32_t cpu = c->cpu;
		for (uint32_t i = runs[r].from, e = runs[r].to; i < e; i++) {
			int rc = step(s, ty[i] & 0xff, ts[i], cpu, (uint32_t)ab[i], ab[i] >> 32, ty[i] >> 8, since[i],
				      NULL, NULL);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int an_sched_finish(struct an_sched *s, uint64_t end_ts)
{
	int rc = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct an_task *t = &s->t[i];
		if (t->running || t->k_start) { /* k_start: reported runtime, its switch-in missing */
			if (t->rt_seen && t->running) {
				/* the tail after its last report, on the trace's clock
				 * (without its switch-in, it may have left long ago) */
				uint64_t last = t->k_start ? t->k_start + t->k_run : t->on_since;
				if (last && end_ts > last)
					t->rt_ns += end_ts - last;
			}
			uint8_t running = t->running;
			if (!rc)
				rc = ran(s, t, end_ts);
			t->running = running; /* the state stays what the events left */
			t->on_since = end_ts;
			if (t->tid)
				t->partial |= AN_PARTIAL_END;
		} else if (t->runnable_since && end_ts > t->runnable_since) {
			/* still waiting: what is known, kept out of the distributions */
			t->runq_wait_ns += end_ts - t->runnable_since;
			t->runnable_since = end_ts;
			if (t->tid)
				t->partial |= AN_PARTIAL_END;
		}
		if (t->rt_seen)
			t->oncpu_ns = t->rt_ns;
	}
	return rc;
}
