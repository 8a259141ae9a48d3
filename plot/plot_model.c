/* The single sorted pass that fills a plot_model (see plot.h). */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "plot.h"

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

/* A map from a key to a timestamp, for requests in flight. */
struct tsmap {
	struct hmap ix;
	struct plot_vec pool, freel;
};

struct frame {
	uint64_t ts, addr;
};
struct stack {
	struct frame *f;
	size_t n, cap;
};

struct scan {
	struct tsmap blk;
	size_t ncpu; /* CPUs m->cpu_busy has room for */
	struct stack *stacks;
	size_t nstacks;
	struct hmap stack_ix;
	int32_t slot[TPP_MAX_TYPES]; /* type id -> index in m->types */
};

static int tsmap_put(struct tsmap *t, uint64_t key, uint64_t ts)
{
	uint32_t *v = hmap_get(&t->ix, key);
	if (v) {
		t->pool.v[*v] = ts;
		return 0;
	}
	uint32_t slot;
	if (t->freel.n) {
		slot = (uint32_t)t->freel.v[--t->freel.n];
		t->pool.v[slot] = ts;
	} else {
		slot = (uint32_t)t->pool.n;
		if (plot_vec_push(&t->pool, ts))
			return -ENOMEM;
	}
	return hmap_put(&t->ix, key, slot);
}

/* Removes key; returns its timestamp or 0 when absent. */
static uint64_t tsmap_take(struct tsmap *t, uint64_t key)
{
	uint32_t *v = hmap_get(&t->ix, key);
	if (!v)
		return 0;
	uint32_t slot = *v;
	uint64_t ts = t->pool.v[slot];
	hmap_del(&t->ix, key);
	plot_vec_push(&t->freel, slot);
	return ts;
}

static void tsmap_free(struct tsmap *t)
{
	hmap_free(&t->ix);
	plot_vec_free(&t->pool);
	plot_vec_free(&t->freel);
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

const struct an_task *plot_model_task(const struct plot_model *m, int32_t tid)
{
	uint32_t *v = hmap_get(&m->sch.by_tid, (uint32_t)tid);
	return v ? &m->sch.t[*v] : NULL;
}

static int lat_sample(struct plot_model *m, int k, uint64_t ts, uint64_t ns)
{
	size_t b;
	int rc = bucket(m, ts, &b);
	if (rc)
		return rc;
	if (plot_vec_push(&m->lat[k], ns) || plot_vec_add(&m->lat_sum[k], b, ns) ||
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

static uint64_t blk_key(const struct an_tinfo *ti, const struct tpp_event *ev)
{
	return hmap_hash(an_u(ev, ti, R_DEV)) ^ an_u(ev, ti, R_SECTOR);
}

static int on_block(struct plot_model *m, struct scan *s, const struct an_tinfo *ti,
		    const struct tpp_event *ev)
{
	uint64_t key = blk_key(ti, ev);
	m->n_blk++;
	if (ti->kind == AN_BLK_ISSUE)
		return tsmap_put(&s->blk, key, ev->ts) ? -ENOMEM : 0;
	size_t b;
	int rc = bucket(m, ev->ts, &b);
	if (rc)
		return rc;
	uint64_t bytes = an_u(ev, ti, R_NSECT) * 512;
	if (plot_vec_add(&m->iops, b, 1) || plot_vec_add(&m->io_bytes, b, bytes))
		return -ENOMEM;
	uint64_t t0 = tsmap_take(&s->blk, key);
	if (t0 && ev->ts >= t0)
		return lat_sample(m, PL_IO, ev->ts, ev->ts - t0);
	return 0;
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

static struct stack *stack_get(struct scan *s, int32_t tid)
{
	uint32_t *v = hmap_get(&s->stack_ix, (uint32_t)tid);
	if (v)
		return &s->stacks[*v];
	struct stack *ns = realloc(s->stacks, (s->nstacks + 1) * sizeof(*ns));
	if (!ns)
		return NULL;
	s->stacks = ns;
	if (hmap_put(&s->stack_ix, (uint32_t)tid, (uint32_t)s->nstacks))
		return NULL;
	struct stack *st = &ns[s->nstacks++];
	memset(st, 0, sizeof(*st));
	return st;
}

static int on_func(struct plot_model *m, struct scan *s, const struct an_tinfo *ti,
		   const struct tpp_event *ev)
{
	struct stack *st = stack_get(s, ev->tid);
	uint64_t addr = an_u(ev, ti, R_ADDR);
	size_t b;
	int rc;
	if (!st)
		return -ENOMEM;
	m->n_func++;
	if (ti->kind == AN_FENTRY) {
		if ((rc = bucket(m, ev->ts, &b)))
			return rc;
		if (plot_vec_add(&m->calls, b, 1))
			return -ENOMEM;
		if (st->n == st->cap) {
			size_t nc = st->cap ? st->cap * 2 : 32;
			struct frame *nf = realloc(st->f, nc * sizeof(*nf));
			if (!nf)
				return -ENOMEM;
			st->f = nf;
			st->cap = nc;
		}
		st->f[st->n++] = (struct frame){ev->ts, addr};
		return 0;
	}
	if (!st->n)
		return 0; /* the entry was before the recording started */
	/* An exit for a frame below the top means the frames above it never
	 * returned normally (longjmp, exceptions): unwind them. */
	size_t k = st->n - 1;
	if (addr && st->f[k].addr != addr) {
		size_t j = k;
		while (j > 0 && st->f[j].addr != addr)
			j--;
		if (st->f[j].addr == addr)
			k = j;
		else
			return 0; /* no open frame for it: an orphan return */
	}
	struct frame fr = st->f[k];
	st->n = k;
	uint64_t ns = ev->ts >= fr.ts ? ev->ts - fr.ts : 0;
	if ((rc = lat_sample(m, PL_FUNC, ev->ts, ns)))
		return rc;
	if (m->o.call_tid && ev->tid == m->o.call_tid) {
		if (m->ncalls == m->calls_cap) {
			size_t nc = m->calls_cap ? m->calls_cap * 2 : 1024;
			struct plot_call *nv = realloc(m->calls_v, nc * sizeof(*nv));
			if (!nv)
				return -ENOMEM;
			m->calls_v = nv;
			m->calls_cap = nc;
		}
		m->calls_v[m->ncalls++] = (struct plot_call){fr.ts, ev->ts, fr.addr, (uint32_t)k};
	}
	return 0;
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
		if ((rc = on_switch(m, s, ev)))
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
	case AN_EXIT:
		return an_sched_feed(&m->sch, m->ty, ev);
	case AN_BLK_INSERT:
		return an_io_feed(&m->io, m->ty, ev);
	case AN_BLK_ISSUE:
	case AN_BLK_COMPLETE:
		if ((rc = on_block(m, s, ti, ev)))
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

static void swap64(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;
	*a = *b;
	*b = t;
}

/* Hoare-style quickselect: linear on average, no full sort of millions. */
static uint64_t select_k(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	while (lo < hi) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t pivot = v[lo + (seed >> 33) % (hi - lo + 1)];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				swap64(&v[i], &v[j]);
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

uint64_t plot_percentile(struct plot_vec *a, double p)
{
	if (!a->n)
		return 0;
	double r = p / 100.0 * (double)a->n;
	size_t rank = (size_t)r;
	if ((double)rank < r)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > a->n)
		rank = a->n;
	return select_k(a->v, a->n, rank - 1);
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
	hmap_init(&s->blk.ix);
	hmap_init(&s->stack_ix);
	an_types_init(m->ty, r);
	an_sched_init(&m->sch);
	m->sch.on_run = sched_ran;
	m->sch.on_wait = sched_waited;
	m->sch.cb_ctx = m;
	an_io_init(&m->io);
	an_net_init(&m->netw);
	for (size_t i = 0; i < TPP_MAX_TYPES; i++)
		s->slot[i] = -1;
	if (tpp_names_open(&m->names, r) < 0)
		m->names = NULL; /* names only decorate; go on without */

	struct an_run_stats st;
	int rc = an_run(r, NULL, 1, feed, m, &st);
	m->damaged = st.damaged;
	if (rc < 0) {
		if (!m->err[0])
			snprintf(m->err, sizeof(m->err), "%s: %s", path,
				 rc == -ENOMEM ? "out of memory" : st.last_error[0] ? st.last_error : tpp_strerror(rc));
		return rc;
	}
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
		tsmap_free(&s->blk);
		for (size_t i = 0; i < s->nstacks; i++)
			free(s->stacks[i].f);
		free(s->stacks);
		hmap_free(&s->stack_ix);
		free(s);
		an_sched_free(&m->sch);
		an_io_free(&m->io);
		an_net_free(&m->netw);
	}
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
		plot_vec_free(&m->lat[k]);
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
