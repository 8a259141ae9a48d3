/* The plot model's own parts (see plot.h): growable series, latency bins,
 * the task table, what the chunk index says without decoding. */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
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

int plot_vec_grow_add(struct plot_vec *a, size_t i, uint64_t x)
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

/* Bin edges are 10^(k/10) ns rounded; a table keeps the hot path free of
 * log10. octave_bin[b] is the last bin whose edge is <= 2^b: a sample's
 * bin is then a few steps from where its highest bit puts it. */
static uint64_t bin_edge[PLOT_NBINS + 1];
static uint8_t octave_bin[64];

static void init_bins(void)
{
	if (bin_edge[1])
		return;
	double e = 1;
	double step = 1.2589254117941673; /* 10^(1/10) */
	for (int i = 0; i <= PLOT_NBINS; i++, e *= step)
		bin_edge[i] = (uint64_t)(e + 0.5);
	for (int b = 0, k = 0; b < 64; b++) {
		while (k + 1 < PLOT_NBINS && bin_edge[k + 1] <= (uint64_t)1 << b)
			k++;
		octave_bin[b] = (uint8_t)k;
	}
}

/* The last bin whose low edge is <= ns (edges repeat below 10 ns). */
int plot_lat_bin(uint64_t ns)
{
	init_bins();
	if (ns < bin_edge[0])
		return 0;
	int k = octave_bin[63 - __builtin_clzll(ns)];
	while (k + 1 < PLOT_NBINS && bin_edge[k + 1] <= ns)
		k++;
	return k;
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

int32_t plot_busiest_thread(struct tpp_reader *r, int (*want)(void *ctx, int32_t tid), void *ctx)
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
		if (si->kind == TPP_S_THREAD && cnt[k] > bestn && (!want || want(ctx, si->tid))) {
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

void plot_model_free(struct plot_model *m)
{
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
	free(m->tasks);
	hmap_free(&m->task_ix);
	if (m->names)
		tpp_names_close(m->names);
	memset(m, 0, sizeof(*m));
}

const struct plot_task *plot_model_task(const struct plot_model *m, int32_t tid)
{
	uint32_t *v = hmap_get(&m->task_ix, (uint32_t)tid);
	return v ? &m->tasks[*v] : NULL;
}

int plot_model_add_task(struct plot_model *m, int32_t tid, const char *comm, uint64_t oncpu_ns)
{
	if (m->ntasks == m->tasks_cap) {
		size_t nc = m->tasks_cap ? m->tasks_cap * 2 : 64;
		struct plot_task *nt = realloc(m->tasks, nc * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		m->tasks = nt;
		m->tasks_cap = nc;
	}
	struct plot_task *t = &m->tasks[m->ntasks];
	t->tid = tid;
	t->oncpu_ns = oncpu_ns;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	if (hmap_put(&m->task_ix, (uint32_t)tid, (uint32_t)m->ntasks))
		return -ENOMEM;
	m->ntasks++;
	return 0;
}
