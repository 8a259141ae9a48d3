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

int plot_gantt(struct plot_model *m, struct plot_job *j, const struct plot_req *q)
{
	const char *by = q->by ? q->by : "cpu";
	int bycall = !strcmp(by, "call"), bytask = !strcmp(by, "task");
	if (!bycall && !bytask && strcmp(by, "cpu")) {
		snprintf(j->err, sizeof(j->err), "gantt: unknown --by '%s' (use cpu, task or call)", by);
		return -EINVAL;
	}
	if (bycall && !m->ncalls) {
		if (!m->n_func)
			snprintf(j->err, sizeof(j->err),
				 "%s has no func_entry/func_exit events: --by call needs a function trace", m->path);
		else
			snprintf(j->err, sizeof(j->err), "%s: thread %d completed no calls", m->path,
				 m->o.call_tid);
		return -ENOENT;
	}
	if (!bycall && !m->nbars) {
		snprintf(j->err, sizeof(j->err), "%s has no %s: the Gantt chart needs a scheduler trace",
			 m->path, m->n_switch ? "complete run intervals" : "sched_switch events");
		return -ENOENT;
	}

	/* Tasks by CPU time: rows of --by task, legend, colour ranks. */
	const struct plot_task **top = malloc((m->ntasks + 1) * sizeof(*top));
	size_t ntasks = 0, nrows = 0;
	struct hmap rowof;
	struct cmap cm;
	uint64_t topf[16];
	size_t ntopf = 0;
	hmap_init(&rowof);
	hmap_init(&cm.rank);
	if (!top)
		return -ENOMEM;
	for (size_t i = 0; i < m->ntasks; i++)
		if (m->tasks[i].tid > 0 && m->tasks[i].oncpu_ns)
			top[ntasks++] = &m->tasks[i];
	qsort(top, ntasks, sizeof(*top), cmp_task_oncpu);
	if (bytask) {
		nrows = ntasks < 30 ? ntasks : 30;
		for (size_t i = 0; i < nrows; i++)
			hmap_put(&rowof, (uint32_t)top[i]->tid, (uint32_t)i);
	}
	if (bycall)
		ntopf = rank_calls(m, &cm, topf);
	else
		for (size_t i = 0; i < ntasks && i < 64; i++)
			hmap_put(&cm.rank, (uint64_t)top[i]->tid, (uint32_t)i);
	size_t n = bycall ? m->ncalls : m->nbars, nb = 0;
	struct gbar *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v) {
		free(top);
		hmap_free(&cm.rank);
		return -ENOMEM;
	}
	uint64_t exact_total = 0;
	int maxrow = 0;
	for (size_t i = 0; i < n; i++) {
		struct gbar g;
		if (bycall) {
			const struct plot_call *c = &m->calls_v[i];
			g = (struct gbar){c->start, c->end, (int32_t)c->depth, (int32_t)i, c->addr};
		} else {
			const struct plot_bar *b = &m->bars[i];
			g = (struct gbar){b->start, b->end, b->cpu, b->tid, (uint64_t)b->tid};
			if (bytask) {
				uint32_t *r = hmap_get(&rowof, (uint32_t)b->tid);
				if (!r)
					continue;
				g.row = (int32_t)*r;
			}
		}
		exact_total += g.end - g.start;
		if (g.row > maxrow)
			maxrow = g.row;
		v[nb++] = g;
	}
	hmap_free(&rowof);
	qsort(v, nb, sizeof(*v), cmp_gbar);
	size_t nexact = nb;
	/* A flame chart spans one thread's calls, often microseconds: its own
	 * range, in ms. Run charts span the trace, in s. */
	uint64_t lo = m->t0, hi = m->t1;
	if (bycall && nb) {
		lo = UINT64_MAX, hi = 0;
		for (size_t i = 0; i < nb; i++) {
			lo = v[i].start < lo ? v[i].start : lo;
			hi = v[i].end > hi ? v[i].end : hi;
		}
	}
	uint64_t span = hi > lo ? hi - lo : 1;
	double unit = bycall ? 1e6 : 1e9;
#define X(ts) ((double)((ts) - m->t0) / unit)
	if (nb > MAX_EXACT_BARS && !q->exact)
		nb = merge(v, nb, span / PIXELS ? span / PIXELS : 1);

	const char *datname, *lblname;
	FILE *d = plot_job_file(j, "bars.dat", &datname);
	if (!d) {
		free(v);
		free(top);
		hmap_free(&cm.rank);
		return -EIO;
	}
	char buf[256];
	fprintf(d, "# tracepp plot gantt --by %s of %s\n# time origin t0_ns=%llu (CLOCK_MONOTONIC)\n", by,
		m->path, (unsigned long long)m->t0);
	if (nb != nexact)
		fprintf(d, "# merged to display resolution: %zu bars drawn for %zu intervals\n", nb, nexact);
	fprintf(d, "# total bar time of the intervals: %llu ns\n"
		   "# 1:start_%s 2:end_%s 3:row 4:rgb 5:%s 6:name\n",
		(unsigned long long)exact_total, bycall ? "ms" : "s", bycall ? "ms" : "s",
		bycall ? "depth" : "tid");
	for (size_t i = 0; i < nb; i++) {
		const struct gbar *g = &v[i];
		fprintf(d, "%.9f %.9f %d %u %d ", X(g->start), X(g->end), g->row, colour(&cm, g->key),
			bycall ? g->row : g->tid);
		data_str(d, bycall ? call_name(m, g->key, buf, sizeof(buf)) : task_name(m, g->tid, buf, sizeof(buf)));
		fputc('\n', d);
	}
	if (plot_data_close(j, d, datname)) {
		free(v);
		free(top);
		hmap_free(&cm.rank);
		return -EIO;
	}
	/* Labels: the longest bars, where the name fits. */
	FILE *l = plot_job_file(j, "labels.dat", &lblname);
	if (!l) {
		free(v);
		free(top);
		hmap_free(&cm.rank);
		return -EIO;
	}
	qsort(v, nb, sizeof(*v), cmp_len_desc);
	fprintf(l, "# names of the longest bars: 1:x (as in bars.dat) 2:row 3:name\n");
	int nlabels = 0;
	struct {
		int32_t row;
		double lo, hi; /* extent of the text, ns */
	} placed[64];
	double ns_per_char = (double)span / 1100 * 7; /* ~7 px a character, 1100 px of plot */
	for (size_t i = 0; i < nb && nlabels < (bycall ? 40 : NLABELS) && nlabels < 64; i++) {
		uint64_t len = v[i].end - v[i].start;
		size_t fit = (size_t)((double)len / ns_per_char);
		const char *name = bycall ? call_name(m, v[i].key, buf, sizeof(buf))
					  : task_name(m, v[i].tid, buf, sizeof(buf));
		if (strlen(name) > fit && !bycall) {
			/* Drop the tid rather than cut it: a cut tid is another tid. */
			char *slash = strrchr(buf, '/');
			if (slash)
				*slash = 0;
		}
		if (strlen(name) > fit) {
			if (fit < 5)
				continue; /* a stub of a name says nothing */
			strcpy(buf + fit - 2, "..");
			name = buf;
		}
		/* Texts of neighbouring long bars must not run into each other. */
		double mid = (double)(v[i].start - lo) + (double)len / 2, half = strlen(name) * ns_per_char / 2 + ns_per_char;
		int clash = 0;
		for (int k = 0; k < nlabels && !clash; k++)
			clash = placed[k].row == v[i].row && mid - half < placed[k].hi && mid + half > placed[k].lo;
		if (clash)
			continue;
		placed[nlabels].row = v[i].row;
		placed[nlabels].lo = mid - half;
		placed[nlabels].hi = mid + half;
		fprintf(l, "%.9f %d ", X(v[i].start + len / 2), v[i].row);
		data_str(l, name);
		fputc('\n', l);
		nlabels++;
	}
	fclose(l);

	FILE *f = plot_job_file(j, "gp", NULL);
	if (!f) {
		free(v);
		free(top);
		hmap_free(&cm.rank);
		return -EIO;
	}
	int rows = bycall ? maxrow + 1 : bytask ? (int)nrows : m->ncpus;
	int h = 170 + 34 * rows;
	plot_gp_prologue(f, j, h < 360 ? 360 : h > 1800 ? 1800 : h);
	char title[600];
	if (bycall)
		snprintf(title, sizeof(title), "%s: calls of thread %s (flame chart)", q->title,
			 task_name(m, m->o.call_tid, buf, sizeof(buf)));
	else
		snprintf(title, sizeof(title), "%s: who ran %s", q->title,
			 bytask ? "when (busiest tasks)" : "on which CPU when");
	fprintf(f, "set title ");
	plot_gp_str(f, title);
	fprintf(f, " font ',13'\nset xlabel 'time since trace start (s)'\nset ylabel '%s'\n"
		   "set xrange [%.9f:%.9f]\nset yrange [%d.6:-0.6]\nunset grid\nset grid xtics\n",
		bycall ? "call depth" : bytask ? "" : "CPU", X(lo), X(hi), rows - 1);
	if (bycall)
		fprintf(f, "set xlabel 'time since trace start (ms)'\n");
	if (bytask) {
		fprintf(f, "set ytics (");
		for (size_t i = 0; i < nrows; i++) {
			fprintf(f, "%s", i ? ", " : "");
			plot_gp_str(f, task_name(m, top[i]->tid, buf, sizeof(buf)));
			fprintf(f, " %zu", i);
		}
		fprintf(f, ") font ',9'\nset lmargin 22\n");
	} else {
		fprintf(f, "set ytics %d\n", rows > 32 ? rows / 16 : 1);
	}
	fprintf(f, "set key outside right top font ',9' title '%s'\n",
		bycall ? "most time" : "most CPU time");
	fprintf(f, "plot '%s' using (($1+$2)/2):3:1:2:($3-0.4):($3+0.4):4 with boxxyerror "
		   "fs solid 1.0 noborder lc rgb variable notitle", datname);
	/* An empty data file would make gnuplot warn. */
	if (nlabels)
		fprintf(f, ", \\\n     '%s' using 1:2:3 with labels font ',8' tc rgb '#000000' notitle",
			lblname);
	/* Short calls are too narrow for a label: the legend names the
	 * functions with the most time in the thread by their colours. */
	for (size_t i = 0; bycall && i < ntopf && i < NLEGEND; i++) {
		fprintf(f, ", \\\n     NaN with boxes fc rgb '#%06x' title ", colour(&cm, topf[i]));
		plot_gp_str(f, call_name(m, topf[i], buf, sizeof(buf)));
	}
	if (!bycall) {
		/* The legend names the busiest tasks with their colours. */
		for (size_t i = 0; i < ntasks && i < NLEGEND; i++) {
			fprintf(f, ", \\\n     NaN with boxes fc rgb '#%06x' title ",
				colour(&cm, (uint64_t)top[i]->tid));
			plot_gp_str(f, task_name(m, top[i]->tid, buf, sizeof(buf)));
		}
	}
	fprintf(f, "\n");
	free(v);
	free(top);
	hmap_free(&cm.rank);
	return plot_data_close(j, f, "the gnuplot script");
}
