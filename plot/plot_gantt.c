/* `tracepp plot --type=gantt`: who ran where and when (--by cpu | task), or
 * one thread's calls as nested bars, a flame chart (--by call). */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "plot.h"

/* Above this many bars gnuplot gets slow and bars narrower than a pixel
 * vanish anyway: merge them to display resolution (PIXELS per axis). */
#define MAX_EXACT_BARS 20000
#define PIXELS 2400
#define NLABELS 16
#define NLEGEND 10

struct gbar {
	uint64_t start, end;
	int32_t row, tid; /* tid: task (cpu/task rows) or index into the call list */
	uint64_t key;     /* colour key */
};

static int cmp_gbar(const void *a, const void *b)
{
	const struct gbar *x = a, *y = b;
	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_len_desc(const void *a, const void *b)
{
	const struct gbar *x = a, *y = b;
	uint64_t lx = x->end - x->start, ly = y->end - y->start;
	return lx < ly ? 1 : lx > ly ? -1 : 0;
}

/* Coalesces bars of a row closer than px ns; a merged bar takes the colour
 * of the key with the most time in it and is drawn only when the row is
 * busy for at least half of its extent (as a pixel would look). */
static size_t merge(struct gbar *v, size_t n, uint64_t px)
{
	size_t out = 0;
	for (size_t i = 0; i < n;) {
		struct gbar g = v[i];
		uint64_t busy = 0, best_t = 0;
		struct {
			uint64_t key, t;
			int32_t tid;
		} top[8];
		int ntop = 0;
		size_t k = i;
		for (; k < n && v[k].row == g.row && v[k].start < g.start + px; k++) {
			uint64_t d = v[k].end - v[k].start;
			busy += d;
			if (v[k].end > g.end)
				g.end = v[k].end;
			int t;
			for (t = 0; t < ntop && top[t].key != v[k].key; t++)
				;
			if (t == ntop && ntop < 8)
				top[ntop++] = (typeof(top[0])){v[k].key, 0, v[k].tid};
			if (t < ntop)
				top[t].t += d;
		}
		for (int t = 0; t < ntop; t++)
			if (top[t].t > best_t) {
				best_t = top[t].t;
				g.key = top[t].key;
				g.tid = top[t].tid;
			}
		if (busy * 2 >= g.end - g.start)
			v[out++] = g;
		i = k;
	}
	return out;
}

/* Colours by rank: the busiest keys get distinct palette colours, the rest
 * share hashed pale ones, so the legend's entries never share a colour. */
struct cmap {
	struct hmap rank;
};
static uint32_t colour(const struct cmap *c, uint64_t key)
{
	static const uint32_t pal[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
				       0xe377c2, 0x17becf, 0xbcbd22, 0x7f7f7f, 0x393b79, 0xad494a,
				       0x637939, 0x8c6d31, 0x7b4173, 0x3182bd};
	static const uint32_t pale[] = {0xc6dbef, 0xfdd0a2, 0xc7e9c0, 0xfcbba1, 0xdadaeb, 0xd9d9d9};
	uint32_t *r = hmap_get(&c->rank, key);
	if (r && *r < sizeof(pal) / sizeof(pal[0]))
		return pal[*r];
	return pale[hmap_hash(key) % (sizeof(pale) / sizeof(pale[0]))];
}

/* Functions ranked by total time in the traced thread; the first (up to
 * 16) addresses by rank go to top, their number is returned. */
static size_t rank_calls(const struct plot_model *m, struct cmap *c, uint64_t top[16])
{
	size_t ntop = 0;
	struct hmap ix;
	struct plot_vec tot = {0}, addr = {0};
	hmap_init(&ix);
	for (size_t i = 0; i < m->ncalls; i++) {
		const struct plot_call *k = &m->calls_v[i];
		uint32_t *p = hmap_get(&ix, k->addr);
		if (!p) {
			if (hmap_put(&ix, k->addr, (uint32_t)addr.n) || plot_vec_push(&addr, k->addr) ||
			    plot_vec_push(&tot, 0))
				break;
			p = hmap_get(&ix, k->addr);
		}
		tot.v[*p] += k->end - k->start;
	}
	/* Selection of the 16 largest: few functions, a quadratic pick is fine. */
	for (uint32_t r = 0; r < 16 && r < addr.n; r++) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < addr.n; i++)
			if (tot.v[i] != UINT64_MAX && (best == SIZE_MAX || tot.v[i] > tot.v[best]))
				best = i;
		if (best == SIZE_MAX)
			break;
		hmap_put(&c->rank, addr.v[best], r);
		top[ntop++] = addr.v[best];
		tot.v[best] = UINT64_MAX;
	}
	hmap_free(&ix);
	plot_vec_free(&tot);
	plot_vec_free(&addr);
	return ntop;
}

static const char *task_name(const struct plot_model *m, int32_t tid, char *buf, size_t len)
{
	const struct plot_task *t = plot_model_task(m, tid);
	const char *c = t && t->comm[0] ? t->comm : m->names ? tpp_names_comm(m->names, tid) : NULL;
	snprintf(buf, len, "%s/%d", c ? c : "?", tid);
	return buf;
}

static const char *call_name(const struct plot_model *m, uint64_t addr, char *buf, size_t len)
{
	uint64_t off = 0;
	int32_t pid = -1;
	/* The thread's stream knows its process even when no task record of
	 * a short-lived thread made it into the metadata. */
	for (size_t i = 0; i < tpp_r_nstreams(m->r); i++) {
		const struct tpp_stream_info *si = tpp_r_stream(m->r, i);
		if (si->kind == TPP_S_THREAD && si->tid == m->o.call_tid)
			pid = si->pid;
	}
	if (pid <= 0 && m->names)
		pid = tpp_names_pid(m->names, m->o.call_tid);
	const char *s = m->names ? tpp_names_sym(m->names, pid > 0 ? pid : m->o.call_tid, addr, &off)
				 : NULL;
	if (s)
		snprintf(buf, len, "%s", s);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	return buf;
}

static void data_str(FILE *f, const char *s)
{
	plot_data_str(f, s);
}

static int cmp_task_oncpu(const void *a, const void *b)
{
	const struct plot_task *x = *(const struct plot_task *const *)a, *y = *(const struct plot_task *const *)b;
	return x->oncpu_ns < y->oncpu_ns ? 1 : x->oncpu_ns > y->oncpu_ns ? -1 : (x->tid > y->tid) - (x->tid < y->tid);
}

/* One Gantt chart being written: what plot_gantt's steps share. */
struct gantt {
	struct plot_model *m;
	struct plot_job *j;
	const struct plot_req *q;
	const char *by;
	int bycall, bytask;
	const struct plot_task **top; /* tasks by CPU time */
	size_t ntasks, nrows;
	struct hmap rowof;            /* --by task: tid -> row */
	struct cmap cm;
	uint64_t topf[16];            /* --by call: functions by time */
	size_t ntopf;
	struct gbar *v;
	size_t nb, nexact;
	uint64_t exact_total, lo, hi, span;
	int maxrow, nlabels;
	double unit;
	const char *datname, *lblname;
	char buf[256];
};

/* Seconds (ms for a flame chart) since the trace start. */
static double gx(const struct gantt *g, uint64_t ts)
{
	return (double)(ts - g->m->t0) / g->unit;
}

static const char *bar_name(struct gantt *g, const struct gbar *b)
{
	return g->bycall ? call_name(g->m, b->key, g->buf, sizeof(g->buf))
			 : task_name(g->m, b->tid, g->buf, sizeof(g->buf));
}

/* The model holds what the chart needs, else -ENOENT/-EINVAL with why. */
static int gantt_check(struct gantt *g)
{
	struct plot_model *m = g->m;
	struct plot_job *j = g->j;
	if (!g->bycall && !g->bytask && strcmp(g->by, "cpu")) {
		snprintf(j->err, sizeof(j->err), "gantt: unknown --by '%s' (use cpu, task or call)", g->by);
		return -EINVAL;
	}
	if (g->bycall && !m->ncalls) {
		if (!m->n_func)
			snprintf(j->err, sizeof(j->err),
				 "%s has no func_entry/func_exit events: --by call needs a function trace", m->path);
		else
			snprintf(j->err, sizeof(j->err), "%s: thread %d completed no calls", m->path,
				 m->o.call_tid);
		return -ENOENT;
	}
	if (!g->bycall && !m->nbars) {
		snprintf(j->err, sizeof(j->err), "%s has no %s: the Gantt chart needs a scheduler trace",
			 m->path, m->n_switch ? "complete run intervals" : "sched_switch events");
		return -ENOENT;
	}
	return 0;
}

/* Tasks by CPU time: rows of --by task, legend, colour ranks. */
static int gantt_rank(struct gantt *g)
{
	struct plot_model *m = g->m;
	g->top = malloc((m->ntasks + 1) * sizeof(*g->top));
	if (!g->top)
		return -ENOMEM;
	for (size_t i = 0; i < m->ntasks; i++)
		if (m->tasks[i].tid > 0 && m->tasks[i].oncpu_ns)
			g->top[g->ntasks++] = &m->tasks[i];
	qsort(g->top, g->ntasks, sizeof(*g->top), cmp_task_oncpu);
	if (g->bytask) {
		g->nrows = g->ntasks < 30 ? g->ntasks : 30;
		for (size_t i = 0; i < g->nrows; i++)
			hmap_put(&g->rowof, (uint32_t)g->top[i]->tid, (uint32_t)i);
	}
	if (g->bycall)
		g->ntopf = rank_calls(m, &g->cm, g->topf);
	else
		for (size_t i = 0; i < g->ntasks && i < 64; i++)
			hmap_put(&g->cm.rank, (uint64_t)g->top[i]->tid, (uint32_t)i);
	return 0;
}

/* The bars in time order (merged to display resolution past
 * MAX_EXACT_BARS unless exact), and the time range they span. */
static int gantt_bars(struct gantt *g)
{
	struct plot_model *m = g->m;
	size_t n = g->bycall ? m->ncalls : m->nbars;
	g->v = malloc((n ? n : 1) * sizeof(*g->v));
	if (!g->v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct gbar b;
		if (g->bycall) {
			const struct plot_call *c = &m->calls_v[i];
			b = (struct gbar){c->start, c->end, (int32_t)c->depth, (int32_t)i, c->addr};
		} else {
			const struct plot_bar *pb = &m->bars[i];
			b = (struct gbar){pb->start, pb->end, pb->cpu, pb->tid, (uint64_t)pb->tid};
			if (g->bytask) {
				uint32_t *r = hmap_get(&g->rowof, (uint32_t)pb->tid);
				if (!r)
					continue;
				b.row = (int32_t)*r;
			}
		}
		g->exact_total += b.end - b.start;
		if (b.row > g->maxrow)
			g->maxrow = b.row;
		g->v[g->nb++] = b;
	}
	qsort(g->v, g->nb, sizeof(*g->v), cmp_gbar);
	g->nexact = g->nb;
	/* A flame chart spans one thread's calls, often microseconds: its own
	 * range, in ms. Run charts span the trace, in s. */
	g->lo = m->t0, g->hi = m->t1;
	if (g->bycall && g->nb) {
		g->lo = UINT64_MAX, g->hi = 0;
		for (size_t i = 0; i < g->nb; i++) {
			g->lo = g->v[i].start < g->lo ? g->v[i].start : g->lo;
			g->hi = g->v[i].end > g->hi ? g->v[i].end : g->hi;
		}
	}
	g->span = g->hi > g->lo ? g->hi - g->lo : 1;
	g->unit = g->bycall ? 1e6 : 1e9;
	if (g->nb > MAX_EXACT_BARS && !g->q->exact)
		g->nb = merge(g->v, g->nb, g->span / PIXELS ? g->span / PIXELS : 1);
	return 0;
}

static int gantt_write_bars(struct gantt *g)
{
	FILE *d = plot_job_file(g->j, "bars.dat", &g->datname);
	if (!d)
		return -EIO;
	fprintf(d, "# tracepp plot gantt --by %s of %s\n# time origin t0_ns=%llu (CLOCK_MONOTONIC)\n", g->by,
		g->m->path, (unsigned long long)g->m->t0);
	if (g->nb != g->nexact)
		fprintf(d, "# merged to display resolution: %zu bars drawn for %zu intervals\n", g->nb, g->nexact);
	fprintf(d, "# total bar time of the intervals: %llu ns\n"
		   "# 1:start_%s 2:end_%s 3:row 4:rgb 5:%s 6:name\n",
		(unsigned long long)g->exact_total, g->bycall ? "ms" : "s", g->bycall ? "ms" : "s",
		g->bycall ? "depth" : "tid");
	for (size_t i = 0; i < g->nb; i++) {
		const struct gbar *b = &g->v[i];
		fprintf(d, "%.9f %.9f %d %u %d ", gx(g, b->start), gx(g, b->end), b->row, colour(&g->cm, b->key),
			g->bycall ? b->row : b->tid);
		data_str(d, bar_name(g, b));
		fputc('\n', d);
	}
	return plot_data_close(g->j, d, g->datname) ? -EIO : 0;
}

/* Labels: the names of the longest bars, where the name fits and does not
 * run into a neighbour's. Reorders g->v. */
static int gantt_write_labels(struct gantt *g)
{
	FILE *l = plot_job_file(g->j, "labels.dat", &g->lblname);
	if (!l)
		return -EIO;
	qsort(g->v, g->nb, sizeof(*g->v), cmp_len_desc);
	fprintf(l, "# names of the longest bars: 1:x (as in bars.dat) 2:row 3:name\n");
	struct {
		int32_t row;
		double lo, hi; /* extent of the text, ns */
	} placed[64];
	double ns_per_char = (double)g->span / 1100 * 7; /* ~7 px a character, 1100 px of plot */
	for (size_t i = 0; i < g->nb && g->nlabels < (g->bycall ? 40 : NLABELS) && g->nlabels < 64; i++) {
		const struct gbar *b = &g->v[i];
		uint64_t len = b->end - b->start;
		size_t fit = (size_t)((double)len / ns_per_char);
		const char *name = bar_name(g, b);
		if (strlen(name) > fit && !g->bycall) {
			/* Drop the tid rather than cut it: a cut tid is another tid. */
			char *slash = strrchr(g->buf, '/');
			if (slash)
				*slash = 0;
		}
		if (strlen(name) > fit) {
			if (fit < 5)
				continue; /* a stub of a name says nothing */
			strcpy(g->buf + fit - 2, "..");
			name = g->buf;
		}
		/* Texts of neighbouring long bars must not run into each other. */
		double mid = (double)(b->start - g->lo) + (double)len / 2, half = strlen(name) * ns_per_char / 2 + ns_per_char;
		int clash = 0;
		for (int k = 0; k < g->nlabels && !clash; k++)
			clash = placed[k].row == b->row && mid - half < placed[k].hi && mid + half > placed[k].lo;
		if (clash)
			continue;
		placed[g->nlabels].row = b->row;
		placed[g->nlabels].lo = mid - half;
		placed[g->nlabels].hi = mid + half;
		fprintf(l, "%.9f %d ", gx(g, b->start + len / 2), b->row);
		data_str(l, name);
		fputc('\n', l);
		g->nlabels++;
	}
	fclose(l);
	return 0;
}

/* The legend: the functions with the most time in the thread (short calls
 * are too narrow for a label), or the busiest tasks, by their colours. */
static void gantt_legend(struct gantt *g, FILE *f)
{
	for (size_t i = 0; g->bycall && i < g->ntopf && i < NLEGEND; i++) {
		fprintf(f, ", \\\n     NaN with boxes fc rgb '#%06x' title ", colour(&g->cm, g->topf[i]));
		plot_gp_str(f, call_name(g->m, g->topf[i], g->buf, sizeof(g->buf)));
	}
	for (size_t i = 0; !g->bycall && i < g->ntasks && i < NLEGEND; i++) {
		fprintf(f, ", \\\n     NaN with boxes fc rgb '#%06x' title ",
			colour(&g->cm, (uint64_t)g->top[i]->tid));
		plot_gp_str(f, task_name(g->m, g->top[i]->tid, g->buf, sizeof(g->buf)));
	}
}

static int gantt_write_script(struct gantt *g)
{
	struct plot_model *m = g->m;
	FILE *f = plot_job_file(g->j, "gp", NULL);
	if (!f)
		return -EIO;
	int rows = g->bycall ? g->maxrow + 1 : g->bytask ? (int)g->nrows : m->ncpus;
	int h = 170 + 34 * rows;
	plot_gp_prologue(f, g->j, h < 360 ? 360 : h > 1800 ? 1800 : h);
	char title[600];
	if (g->bycall)
		snprintf(title, sizeof(title), "%s: calls of thread %s (flame chart)", g->q->title,
			 task_name(m, m->o.call_tid, g->buf, sizeof(g->buf)));
	else
		snprintf(title, sizeof(title), "%s: who ran %s", g->q->title,
			 g->bytask ? "when (busiest tasks)" : "on which CPU when");
	fprintf(f, "set title ");
	plot_gp_str(f, title);
	fprintf(f, " font ',13'\nset xlabel 'time since trace start (s)'\nset ylabel '%s'\n"
		   "set xrange [%.9f:%.9f]\nset yrange [%d.6:-0.6]\nunset grid\nset grid xtics\n",
		g->bycall ? "call depth" : g->bytask ? "" : "CPU", gx(g, g->lo), gx(g, g->hi), rows - 1);
	if (g->bycall)
		fprintf(f, "set xlabel 'time since trace start (ms)'\n");
	if (g->bytask) {
		fprintf(f, "set ytics (");
		for (size_t i = 0; i < g->nrows; i++) {
			fprintf(f, "%s", i ? ", " : "");
			plot_gp_str(f, task_name(m, g->top[i]->tid, g->buf, sizeof(g->buf)));
			fprintf(f, " %zu", i);
		}
		fprintf(f, ") font ',9'\nset lmargin 22\n");
	} else {
		fprintf(f, "set ytics %d\n", rows > 32 ? rows / 16 : 1);
	}
	fprintf(f, "set key outside right top font ',9' title '%s'\n",
		g->bycall ? "most time" : "most CPU time");
	fprintf(f, "plot '%s' using (($1+$2)/2):3:1:2:($3-0.4):($3+0.4):4 with boxxyerror "
		   "fs solid 1.0 noborder lc rgb variable notitle", g->datname);
	/* An empty data file would make gnuplot warn. */
	if (g->nlabels)
		fprintf(f, ", \\\n     '%s' using 1:2:3 with labels font ',8' tc rgb '#000000' notitle",
			g->lblname);
	gantt_legend(g, f);
	fprintf(f, "\n");
	return plot_data_close(g->j, f, "the gnuplot script");
}

int plot_gantt(struct plot_model *m, struct plot_job *j, const struct plot_req *q)
{
	struct gantt g = {.m = m, .j = j, .q = q, .by = q->by ? q->by : "cpu"};
	g.bycall = !strcmp(g.by, "call");
	g.bytask = !strcmp(g.by, "task");
	int rc = gantt_check(&g);
	if (rc)
		return rc;
	hmap_init(&g.rowof);
	hmap_init(&g.cm.rank);
	if (!(rc = gantt_rank(&g)) && !(rc = gantt_bars(&g)) && !(rc = gantt_write_bars(&g)) &&
	    !(rc = gantt_write_labels(&g)))
		rc = gantt_write_script(&g);
	free(g.v);
	free(g.top);
	hmap_free(&g.rowof);
	hmap_free(&g.cm.rank);
	return rc;
}
