/* The single sorted pass that fills a plot model from the analyses (see
 * plot_scan.h). */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_run.h"
#include "an_pair.h"
#include "an_grow.h"
#include "plot_scan.h"

/* ------------------------------------------------------------- scanner */

/* The scan a callback's ctx is: m is its first member. */
static struct plot_scan *S(struct plot_model *m)
{
	return (struct plot_scan *)m;
}

/* 1 when the task filter lets tid through; its answer is kept per task
 * (acli_task_wanted counts one question per task, for "no task matches"). */
static int wanted(struct plot_scan *s, int32_t tid)
{
	if (!s->tasks)
		return 1;
	uint32_t *v = hmap_get(&s->want, (uint32_t)tid);
	if (v)
		return (int)*v;
	int w = acli_task_wanted(s->tasks, tid, NULL);
	(void)hmap_put(&s->want, (uint32_t)tid, (uint32_t)w); /* no room: asked again */
	return w;
}

static int bucket(struct plot_model *m, uint64_t ts, size_t *b)
{
	uint64_t i = ts >= m->t0 ? (ts - m->t0) / m->o.interval : 0;
	/* A corrupt timestamp far in the future must not allocate gigabytes. */
	if (i >= (1u << 22)) {
		snprintf(m->err, sizeof(m->err),
			 "%s: event at +%.3f s is beyond %u intervals; pick a larger --interval",
			 m->path, plot_sec(m, ts), 1u << 22);
		return -EFBIG;
	}
	*b = (size_t)i;
	if (*b >= m->nbuckets)
		m->nbuckets = *b + 1;
	return 0;
}

/* A latency sample of kind k ending at ts: its bucket's series and heat map
 * row; the distribution (m->lat[k]) takes it from its analysis. */
static int lat_sample(struct plot_model *m, int k, uint64_t ts, uint64_t ns)
{
	size_t b;
	int rc = bucket(m, ts, &b);
	if (rc)
		return rc;
	if (plot_vec_add(&m->lat_sum[k], b, ns) ||
	    plot_vec_add(&m->lat_cnt[k], b, 1) || plot_vec_add(&m->lat_max[k], b, 0))
		return -ENOMEM;
	if (ns > m->lat_max[k].v[b])
		m->lat_max[k].v[b] = ns;
	if (plot_vec_add(&m->heat[k], b * PLOT_NBINS + plot_lat_bin(ns), 1))
		return -ENOMEM;
	return 0;
}

/* tid ran on cpu during [a, b): busy time per bucket and a Gantt bar. */
static int ran(struct plot_model *m, int32_t cpu, int32_t tid, uint64_t a, uint64_t b)
{
	if (b <= a || tid <= 0)
		return 0;
	m->busy_total += b - a;
	struct plot_vec *cb = &m->cpu_busy[cpu];
	uint64_t w = m->o.cpu_interval;
	for (uint64_t x = a; x < b;) {
		uint64_t i = (x - m->t0) / w, edge = m->t0 + (i + 1) * w;
		uint64_t y = edge < b ? edge : b;
		if (i >= (1u << 22))
			break; /* bucket() has reported the same timestamps */
		if (plot_vec_add(cb, (size_t)i, y - x))
			return -ENOMEM;
		if (i + 1 > m->cpu_nbuckets)
			m->cpu_nbuckets = (size_t)i + 1;
		x = y;
	}
	if (m->o.want_bars) {
		if (an_grow(&m->bars, &m->bars_cap, m->nbars + 1, sizeof(*m->bars), 1024))
			return -ENOMEM;
		m->bars[m->nbars++] = (struct plot_bar){a, b, cpu, tid};
	}
	return 0;
}

static int grow_cpus(struct plot_model *m, struct plot_scan *s, int32_t cpu)
{
	if (cpu < 0 || cpu >= 4096) {
		snprintf(m->err, sizeof(m->err), "%s: event on CPU %d, out of range", m->path, cpu);
		return -EINVAL;
	}
	if ((size_t)cpu < s->ncpu)
		return 0;
	size_t n = (size_t)cpu + 1;
	struct plot_vec *nb = realloc(m->cpu_busy, n * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	m->cpu_busy = nb;
	for (size_t i = s->ncpu; i < n; i++)
		memset(&m->cpu_busy[i], 0, sizeof(m->cpu_busy[i]));
	s->ncpu = n;
	m->ncpus = (int)n;
	return 0;
}

/* counted in the series when w: the task leaving the CPU is wanted */
static int on_switch(struct plot_model *m, struct plot_scan *s, const struct tpp_event *ev, int w)
{
	size_t b;
	int rc;
	m->n_switch++;
	if (ev->cpu < 0 || !w)
		return 0;
	if ((rc = bucket(m, ev->ts, &b)) || (rc = grow_cpus(m, s, ev->cpu)))
		return rc;
	return plot_vec_add(&m->cswitch, b, 1) ? -ENOMEM : 0;
}

/* The runs and waits come from the scheduler analysis as it settles them,
 * so the plots show exactly what `tracepp sched` and `latency` count,
 * inferred switches included. */
static int sched_ran(void *ctx, int32_t cpu, int32_t tid, uint64_t from, uint64_t to)
{
	struct plot_model *m = ctx;
	if (cpu < 0 || cpu >= m->ncpus || !wanted(S(m), tid))
		return 0;
	return ran(m, cpu, tid, from, to);
}

static int sched_waited(void *ctx, const struct an_task *t, uint64_t ts, uint64_t ns)
{
	struct plot_model *m = ctx;
	struct plot_scan *s = S(m);
	if (s->tasks) {
		if (!wanted(s, t->tid))
			return 0;
		an_lat_add(&s->runq_lat, ns);
		if (t->woken)
			an_lat_add(&s->wake_lat, ns);
	}
	int rc = lat_sample(m, PL_RUNQ, ts, ns);
	if (!rc && t->woken)
		rc = lat_sample(m, PL_WAKEUP, ts, ns);
	return rc;
}

/* A completed request: its bucket's IOPS and bytes. Its latency comes
 * from the IO analysis' own pairing (io_d2c). */
static int on_block(struct plot_model *m, const struct an_tinfo *ti, const struct tpp_event *ev)
{
	m->n_blk++;
	if (ti->kind == AN_BLK_ISSUE)
		return 0;
	size_t b;
	int rc = bucket(m, ev->ts, &b);
	if (rc)
		return rc;
	uint64_t bytes = an_u(ev, ti, R_NSECT) * 512;
	if (plot_vec_add(&m->iops, b, 1) || plot_vec_add(&m->io_bytes, b, bytes))
		return -ENOMEM;
	return 0;
}

static int io_d2c(void *ctx, uint64_t ts, uint64_t ns)
{
	struct plot_model *m = ctx;
	an_lat_add(&S(m)->io_lat, ns);
	return lat_sample(m, PL_IO, ts, ns);
}

static int on_net(struct plot_model *m, const struct an_tinfo *ti, const struct tpp_event *ev)
{
	size_t b;
	int rc = bucket(m, ev->ts, &b);
	if (rc)
		return rc;
	m->n_net++;
	return plot_vec_add(ti->kind == AN_NET_XMIT ? &m->tx_pkts : &m->rx_pkts, b, 1) ? -ENOMEM : 0;
}

/* an_pair's callbacks: a call entered (counted in its bucket), a call
 * returned (a duration sample, and a bar of the flame chart for call_tid).
 * Frames resumed without a call, and calls left without their return (end
 * of trace, longjmp, exit) are no samples, as in `tracepp latency`. */
static void call_entry(void *ctx, struct an_thread *th, const struct tpp_event *ev)
{
	struct plot_model *m = ctx;
	struct plot_scan *s = S(m);
	size_t b;
	if (s->cb_err || th->st[th->depth - 1].fl & AN_FRAME_RESUMED || !wanted(s, th->tid))
		return;
	if ((s->cb_err = bucket(m, ev->ts, &b)))
		return;
	/* a file without per-thread streams (uprobes) names no busiest thread */
	if (!m->o.call_tid)
		m->o.call_tid = th->tid;
	if (plot_vec_add(&m->calls, b, 1))
		s->cb_err = -ENOMEM;
}

static void call_exit(void *ctx, struct an_thread *th, const struct an_call *c,
		      const struct tpp_event *ev)
{
	struct plot_model *m = ctx;
	struct plot_scan *s = S(m);
	(void)ev;
	if (s->cb_err || c->flags & (AN_CALL_NORET | AN_CALL_UNWOUND | AN_CALL_RESUMED) || !wanted(s, th->tid))
		return;
	an_lat_add(&S(m)->func_lat, c->dur);
	if ((s->cb_err = lat_sample(m, PL_FUNC, c->exit_ts, c->dur)))
		return;
	if (!m->o.call_tid || th->tid != m->o.call_tid)
		return;
	if (m->ncalls == m->calls_cap) {
		size_t nc = m->calls_cap ? m->calls_cap * 2 : 1024;
		struct plot_call *nv = realloc(m->calls_v, nc * sizeof(*nv));
		if (!nv) {
			s->cb_err = -ENOMEM;
			return;
		}
		m->calls_v = nv;
		m->calls_cap = nc;
	}
	m->calls_v[m->ncalls++] = (struct plot_call){c->entry_ts, c->exit_ts, th->st[th->depth - 1].addr, c->depth};
}

static const struct an_pair_ops call_ops = {call_entry, call_exit, NULL};

static int on_func(struct plot_model *m, struct plot_scan *s, const struct an_tinfo *ti,
		   const struct tpp_event *ev)
{
	if (ti->kind != AN_FUNWIND && ti->kind != AN_FRESUME)
		m->n_func++;
	if (!S(m)->pair)
		return 0; /* returns or markers without a declared entry type */
	int rc = an_pair_feed_ti(S(m)->pair, ev, ti);
	return rc ? rc : s->cb_err;
}

static int type_count(struct plot_model *m, int32_t *slot, const struct tpp_event *ev)
{
	if (*slot < 0) {
		struct plot_type_series *nt = realloc(m->types, (m->ntypes + 1) * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		m->types = nt;
		*slot = (int32_t)m->ntypes;
		struct plot_type_series *t = &nt[m->ntypes++];
		memset(t, 0, sizeof(*t));
		t->id = ev->type;
		t->name = ev->t && ev->t->name ? ev->t->name : "?";
	}
	size_t b;
	int rc = bucket(m, ev->ts, &b);
	if (rc)
		return rc;
	struct plot_type_series *t = &m->types[*slot];
	t->total++;
	return plot_vec_add(&t->per_bucket, b, 1) ? -ENOMEM : 0;
}

static int feed(void *ctx, const struct tpp_event *ev)
{
	struct plot_model *m = ctx;
	struct plot_scan *s = S(m);
	const struct an_tinfo *ti = an_ti(S(m)->ty, ev);
	int rc;
	if (!m->nevents)
		m->t0 = ev->ts;
	m->nevents++;
	if (ev->ts > m->t1)
		m->t1 = ev->ts;
	int w = wanted(s, ev->tid);
	size_t b;
	if (w ? (rc = type_count(m, &s->slot[ev->type % TPP_MAX_TYPES], ev)) : (rc = bucket(m, ev->ts, &b)))
		return rc; /* (the time axis stays the file's) */
	if (ev->cpu >= 0 && ev->cpu < 4096 && (rc = grow_cpus(m, s, ev->cpu)))
		return rc;
	switch (ti->kind) {
	case AN_SWITCH:
		if ((rc = on_switch(m, s, ev, w)) || (S(m)->pair && (rc = an_pair_feed_ti(S(m)->pair, ev, ti))))
			return rc;
		return an_sched_feed(&S(m)->sch, S(m)->ty, ev);
	case AN_RUNTIME:
		return an_sched_feed(&S(m)->sch, S(m)->ty, ev);
	case AN_WAKEUP:
	case AN_WAKEUP_NEW:
		m->n_wakeup++;
		/* fall through */
	case AN_MIGRATE:
	case AN_FORK:
	case AN_EXEC:
		return an_sched_feed(&S(m)->sch, S(m)->ty, ev);
	case AN_EXIT:
		if (S(m)->pair && (rc = an_pair_feed_ti(S(m)->pair, ev, ti)))
			return rc;
		return an_sched_feed(&S(m)->sch, S(m)->ty, ev);
	case AN_BLK_INSERT:
		return an_io_feed(&S(m)->io, S(m)->ty, ev);
	case AN_BLK_ISSUE:
	case AN_BLK_COMPLETE:
		if ((rc = on_block(m, ti, ev)))
			return rc;
		return an_io_feed(&S(m)->io, S(m)->ty, ev);
	case AN_NET_QUEUE:
		return an_net_feed(&S(m)->netw, S(m)->ty, ev);
	case AN_NET_XMIT:
	case AN_NET_RECV:
		if ((rc = on_net(m, ti, ev)))
			return rc;
		return an_net_feed(&S(m)->netw, S(m)->ty, ev);
	case AN_FENTRY:
	case AN_FEXIT:
	case AN_FUNWIND:
	case AN_FRESUME:
	case AN_UENTRY:
	case AN_URET:
		return on_func(m, s, ti, ev);
	}
	return 0;
}

/* What the diagrams draw, from the analyses: each latency kind's summary
 * (percentiles from an_lat, the one implementation) and the tasks' names
 * and on-CPU time. */
static int hand_over(struct plot_scan *s)
{
	struct plot_model *m = &s->m;
	for (int k = 0; k < PL_NLAT; k++) {
		struct an_lat *l = s->lat[k];
		m->dist[k] = (struct plot_dist){l->count, l->max, 0, 0};
		if (l->count) {
			m->dist[k].p50 = an_lat_pct(l, 50);
			m->dist[k].p99 = an_lat_pct(l, 99);
		}
	}
	for (size_t i = 0; i < s->sch.n; i++) {
		const struct an_task *t = &s->sch.t[i];
		if (wanted(s, t->tid) && plot_model_add_task(m, t->tid, t->comm, t->oncpu_ns)) {
			snprintf(m->err, sizeof(m->err), "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

int plot_scan(struct plot_scan *s, struct tpp_reader *r, const char *path, const struct plot_opts *o,
	      struct acli *tasks)
{
	memset(s, 0, sizeof(*s));
	s->tasks = tasks;
	hmap_init(&s->want);
	struct plot_model *m = &s->m;
	m->o = *o;
	m->r = r;
	m->path = path;
	if (!m->o.interval)
		m->o.interval = 1000000;
	if (!m->o.cpu_interval)
		m->o.cpu_interval = 100000000;
	s->ty = malloc(sizeof(*s->ty));
	if (!s->ty) {
		snprintf(m->err, sizeof(m->err), "out of memory");
		return -ENOMEM;
	}
	an_types_init(s->ty, r);
	an_sched_init(&s->sch);
	s->sch.on_run = sched_ran;
	s->sch.on_wait = sched_waited;
	s->sch.cb_ctx = m;
	an_io_init(&s->io);
	s->io.on_d2c = io_d2c;
	s->io.cb_ctx = m;
	an_net_init(&s->netw);
	an_lat_init(&s->io_lat);
	an_lat_init(&s->func_lat);
	an_lat_init(&s->runq_lat);
	an_lat_init(&s->wake_lat);
	s->lat[PL_WAKEUP] = tasks ? &s->wake_lat : &s->sch.wakeup;
	s->lat[PL_RUNQ] = tasks ? &s->runq_lat : &s->sch.runq;
	s->lat[PL_IO] = &s->io_lat;
	s->lat[PL_FUNC] = &s->func_lat;
	for (size_t i = 0; i < TPP_MAX_TYPES; i++)
		s->slot[i] = -1;
	if (tpp_names_open(&m->names, r) < 0)
		m->names = NULL; /* names only decorate; go on without */
	int rc;
	if ((s->ty->has[AN_FENTRY] || s->ty->has[AN_UENTRY]) &&
	    ((rc = an_syms_open(&s->syms, m->names)) ||
	     (rc = an_pair_open(&s->pair, s->ty, s->syms, m->names, &call_ops, m)))) {
		snprintf(m->err, sizeof(m->err), "out of memory");
		return rc;
	}

	struct an_run_stats st;
	rc = an_run(r, NULL, 1, feed, m, &st);
	m->damaged = st.damaged;
	if (rc < 0) {
		if (!m->err[0])
			snprintf(m->err, sizeof(m->err), "%s: %s", path,
				 rc == -ENOMEM ? "out of memory" : st.last_error[0] ? st.last_error : tpp_strerror(rc));
		return rc;
	}
	if (s->pair)
		an_pair_finish(s->pair);
	/* the tasks still on a CPU ran at least until the last event */
	if ((rc = an_sched_finish(&s->sch, m->t1))) {
		if (!m->err[0])
			snprintf(m->err, sizeof(m->err), "%s: %s", path, tpp_strerror(rc));
		return rc;
	}
	m->inferred = s->sch.inferred;
	if (m->nbuckets == 0)
		m->nbuckets = 1;
	return hand_over(s);
}


void plot_scan_free(struct plot_scan *s)
{
	an_sched_free(&s->sch);
	an_io_free(&s->io);
	an_net_free(&s->netw);
	an_lat_free(&s->io_lat);
	an_lat_free(&s->func_lat);
	an_lat_free(&s->runq_lat);
	an_lat_free(&s->wake_lat);
	hmap_free(&s->want);
	an_pair_close(s->pair);
	an_syms_close(s->syms);
	free(s->ty);
	plot_model_free(&s->m);
	memset(s, 0, sizeof(*s));
}
