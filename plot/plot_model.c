/* The single sorted pass that fills a plot_model (see plot.h). */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "plot.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_run.h"
#include "an_pair.h"
#include "an_sched.h"
#include "an_io.h"
#include "an_net.h"

const char *const plot_lat_name[PL_NLAT] = {"wakeup", "runq", "io", "func"};
const char *const plot_lat_title[PL_NLAT] = {"wakeup latency", "run-queue latency",
					      "block I/O latency", "function duration"};

int plot_vec_push(struct plot_vec *a, uint64_t x)
{
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 256;
		uint64_t *nv = realloc(a->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		a->v = nv;
		a->cap = nc;
	}
	a->v[a->n++] = x;
	return 0;
}

int plot_vec_add(struct plot_vec *a, size_t i, uint64_t x)
{
	if (i >= a->cap) {
		size_t nc = a->cap ? a->cap : 64;
		while (nc <= i)
			nc *= 2;
		uint64_t *nv = realloc(a->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		memset(nv + a->cap, 0, (nc - a->cap) * sizeof(*nv));
		a->v = nv;
		a->cap = nc;
	}
	if (i >= a->n)
		a->n = i + 1;
	a->v[i] += x;
	return 0;
}

void plot_vec_free(struct plot_vec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

/* Bin edges are 10^(k/10) ns rounded; a table keeps the hot path free of log10. */
static uint64_t bin_edge[PLOT_NBINS + 1];

static void init_bins(void)
{
	if (bin_edge[1])
		return;
	double e = 1;
	double step = 1.2589254117941673; /* 10^(1/10) */
	for (int i = 0; i <= PLOT_NBINS; i++, e *= step)
		bin_edge[i] = (uint64_t)(e + 0.5);
}

int plot_lat_bin(uint64_t ns)
{
	init_bins();
	int lo = 0, hi = PLOT_NBINS; /* answer in [lo, hi) : edge[b] <= ns < edge[b+1] */
	if (ns < bin_edge[0])
		return 0;
	if (ns >= bin_edge[PLOT_NBINS])
		return PLOT_NBINS - 1;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (bin_edge[mid] <= ns)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

double plot_bin_lo(int bin)
{
	init_bins();
	return (double)bin_edge[bin];
}

double plot_bin_hi(int bin)
{
	double lo = plot_bin_lo(bin), hi = bin + 1 < PLOT_NBINS ? plot_bin_lo(bin + 1) : 0;
	/* Rounded edges leave the lowest bins no width; gnuplot then warns of an
	 * empty range when they are all a panel holds. */
	return hi > lo ? hi : lo * 1.2589;
}

/* ------------------------------------------------------------- scanner */

struct scan {
	size_t ncpu; /* CPUs m->cpu_busy has room for */
	int cb_err;  /* an error in an_pair's callbacks, returned from the feed */
	int32_t slot[TPP_MAX_TYPES]; /* type id -> index in m->types */
};

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

const struct an_task *plot_model_task(const struct plot_model *m, int32_t tid)
{
	uint32_t *v = hmap_get(&m->sch.by_tid, (uint32_t)tid);
	return v ? &m->sch.t[*v] : NULL;
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
		if (m->nbars == m->bars_cap) {
			size_t nc = m->bars_cap ? m->bars_cap * 2 : 1024;
			struct plot_bar *nb = realloc(m->bars, nc * sizeof(*nb));
			if (!nb)
				return -ENOMEM;
			m->bars = nb;
			m->bars_cap = nc;
		}
		m->bars[m->nbars++] = (struct plot_bar){a, b, cpu, tid};
	}
	return 0;
}

static int grow_cpus(struct plot_model *m, struct scan *s, int32_t cpu)
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

static int on_switch(struct plot_model *m, struct scan *s, const struct tpp_event *ev)
{
	size_t b;
	int rc;
	m->n_switch++;
	if (ev->cpu < 0)
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
	if (cpu < 0 || cpu >= m->ncpus)
		return 0;
	return ran(m, cpu, tid, from, to);
}

static int sched_waited(void *ctx, const struct an_task *t, uint64_t ts, uint64_t ns)
{
	struct plot_model *m = ctx;
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
	an_lat_add(&m->io_lat, ns);
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
	struct scan *s = m->priv;
	size_t b;
	if (s->cb_err || th->st[th->depth - 1].fl & AN_FRAME_RESUMED)
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
	struct scan *s = m->priv;
	(void)ev;
	if (s->cb_err || c->flags & (AN_CALL_NORET | AN_CALL_UNWOUND | AN_CALL_RESUMED))
		return;
	an_lat_add(&m->func_lat, c->dur);
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

static int on_func(struct plot_model *m, struct scan *s, const struct an_tinfo *ti,
		   const struct tpp_event *ev)
{
	if (ti->kind != AN_FUNWIND && ti->kind != AN_FRESUME)
		m->n_func++;
	if (!m->pair)
		return 0; /* returns or markers without a declared entry type */
	int rc = an_pair_feed_ti(m->pair, ev, ti);
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
	struct scan *s = m->priv;
	const struct an_tinfo *ti = an_ti(m->ty, ev);
	int rc;
	if (!m->nevents)
		m->t0 = ev->ts;
	m->nevents++;
	if (ev->ts > m->t1)
		m->t1 = ev->ts;
	if ((rc = type_count(m, &s->slot[ev->type % TPP_MAX_TYPES], ev)))
		return rc;
	if (ev->cpu >= 0 && ev->cpu < 4096 && (rc = grow_cpus(m, s, ev->cpu)))
		return rc;
	switch (ti->kind) {
	case AN_SWITCH:
		if ((rc = on_switch(m, s, ev)) || (m->pair && (rc = an_pair_feed_ti(m->pair, ev, ti))))
			return rc;
		return an_sched_feed(&m->sch, m->ty, ev);
	case AN_RUNTIME:
		return an_sched_feed(&m->sch, m->ty, ev);
	case AN_WAKEUP:
	case AN_WAKEUP_NEW:
		m->n_wakeup++;
		/* fall through */
	case AN_MIGRATE:
	case AN_FORK:
	case AN_EXEC:
		return an_sched_feed(&m->sch, m->ty, ev);
	case AN_EXIT:
		if (m->pair && (rc = an_pair_feed_ti(m->pair, ev, ti)))
			return rc;
		return an_sched_feed(&m->sch, m->ty, ev);
	case AN_BLK_INSERT:
		return an_io_feed(&m->io, m->ty, ev);
	case AN_BLK_ISSUE:
	case AN_BLK_COMPLETE:
		if ((rc = on_block(m, ti, ev)))
			return rc;
		return an_io_feed(&m->io, m->ty, ev);
	case AN_NET_QUEUE:
		return an_net_feed(&m->netw, m->ty, ev);
	case AN_NET_XMIT:
	case AN_NET_RECV:
		if ((rc = on_net(m, ti, ev)))
			return rc;
		return an_net_feed(&m->netw, m->ty, ev);
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

uint64_t plot_index_span(struct tpp_reader *r)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		if (c->kind != TPP_C_EVENTS || !c->count)
			continue;
		if (c->first_ts < lo)
			lo = c->first_ts;
		if (c->last_ts > hi)
			hi = c->last_ts;
	}
	return hi > lo ? hi - lo : 0;
}

int32_t plot_busiest_thread(struct tpp_reader *r)
{
	size_t ns = tpp_r_nstreams(r);
	uint64_t *cnt = calloc(ns ? ns : 1, sizeof(*cnt));
	int32_t best = 0;
	uint64_t bestn = 0;
	if (!cnt)
		return 0;
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		if (c->kind != TPP_C_EVENTS)
			continue;
		for (size_t k = 0; k < ns; k++)
			if (tpp_r_stream(r, k)->id == c->stream) {
				cnt[k] += c->count;
				break;
			}
	}
	for (size_t k = 0; k < ns; k++) {
		const struct tpp_stream_info *si = tpp_r_stream(r, k);
		if (si->kind == TPP_S_THREAD && cnt[k] > bestn) {
			bestn = cnt[k];
			best = si->tid;
		}
	}
	free(cnt);
	return best;
}

uint64_t plot_nice_interval(uint64_t span, unsigned n, uint64_t min_ns)
{
	uint64_t want = span / (n ? n : 1), x = 1;
	while (x * 10 <= want)
		x *= 10;
	if (x * 5 <= want)
		x *= 5;
	else if (x * 2 <= want)
		x *= 2;
	return x < min_ns ? min_ns : x;
}

int plot_model_scan(struct plot_model *m, struct tpp_reader *r, const char *path,
		    const struct plot_opts *o)
{
	memset(m, 0, sizeof(*m));
	m->o = *o;
	m->r = r;
	m->path = path;
	if (!m->o.interval)
		m->o.interval = 1000000;
	if (!m->o.cpu_interval)
		m->o.cpu_interval = 100000000;
	struct scan *s = calloc(1, sizeof(*s));
	m->ty = malloc(sizeof(*m->ty));
	if (!s || !m->ty) {
		free(s);
		snprintf(m->err, sizeof(m->err), "out of memory");
		return -ENOMEM;
	}
	m->priv = s;
	an_types_init(m->ty, r);
	an_sched_init(&m->sch);
	m->sch.on_run = sched_ran;
	m->sch.on_wait = sched_waited;
	m->sch.cb_ctx = m;
	an_io_init(&m->io);
	m->io.on_d2c = io_d2c;
	m->io.cb_ctx = m;
	an_net_init(&m->netw);
	an_lat_init(&m->io_lat);
	an_lat_init(&m->func_lat);
	m->lat[PL_WAKEUP] = &m->sch.wakeup;
	m->lat[PL_RUNQ] = &m->sch.runq;
	m->lat[PL_IO] = &m->io_lat;
	m->lat[PL_FUNC] = &m->func_lat;
	for (size_t i = 0; i < TPP_MAX_TYPES; i++)
		s->slot[i] = -1;
	if (tpp_names_open(&m->names, r) < 0)
		m->names = NULL; /* names only decorate; go on without */
	int rc;
	if ((m->ty->has[AN_FENTRY] || m->ty->has[AN_UENTRY]) &&
	    ((rc = an_syms_open(&m->syms, m->names)) ||
	     (rc = an_pair_open(&m->pair, m->ty, m->syms, m->names, &call_ops, m)))) {
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
	if (m->pair)
		an_pair_finish(m->pair);
	/* the tasks still on a CPU ran at least until the last event */
	if ((rc = an_sched_finish(&m->sch, m->t1))) {
		if (!m->err[0])
			snprintf(m->err, sizeof(m->err), "%s: %s", path, tpp_strerror(rc));
		return rc;
	}
	m->inferred = m->sch.inferred;
	if (m->nbuckets == 0)
		m->nbuckets = 1;
	return 0;
}

void plot_model_free(struct plot_model *m)
{
	struct scan *s = m->priv;
	if (s) {
		free(s);
		an_sched_free(&m->sch);
		an_io_free(&m->io);
		an_net_free(&m->netw);
		an_lat_free(&m->io_lat);
		an_lat_free(&m->func_lat);
	}
	an_pair_close(m->pair);
	an_syms_close(m->syms);
	free(m->ty);
	for (size_t i = 0; i < m->ntypes; i++)
		plot_vec_free(&m->types[i].per_bucket);
	free(m->types);
	struct plot_vec *vs[] = {&m->cswitch, &m->iops, &m->io_bytes, &m->rx_pkts, &m->tx_pkts,
				 &m->calls};
	for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
		plot_vec_free(vs[i]);
	for (int k = 0; k < PL_NLAT; k++) {
		plot_vec_free(&m->lat_max[k]);
		plot_vec_free(&m->lat_sum[k]);
		plot_vec_free(&m->lat_cnt[k]);
		plot_vec_free(&m->heat[k]);
	}
	for (int c = 0; c < m->ncpus; c++)
		plot_vec_free(&m->cpu_busy[c]);
	free(m->cpu_busy);
	free(m->bars);
	free(m->calls_v);
	if (m->names)
		tpp_names_close(m->names);
	memset(m, 0, sizeof(*m));
}
