/* `tracepp plot --type=timeline`: metrics on one time axis, stacked. */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "plot.h"

enum metric { M_EVENTS, M_CSWITCH, M_IOPS, M_THROUGHPUT, M_PACKETS, M_CALLS, M_LATENCY, M_N };
static const struct {
	const char *name, *title, *ylabel, *needs;
} metrics[M_N] = {
	{"events", "Event rate per type", "events/s", "any"},
	{"cswitch", "Context switches", "switches/s", "sched_switch"},
	{"iops", "Block I/O completions (IOPS)", "requests/s", "block_rq_complete"},
	{"throughput", "Block I/O throughput", "MB/s", "block_rq_complete"},
	{"packets", "Network packets", "packets/s", "net_dev_xmit or netif_receive_skb"},
	{"calls", "Function calls", "calls/s", "func_entry"},
	{"latency", "Latency over time (max per interval)", "latency (us, log)",
	 "sched_wakeup, block_rq_issue/complete or func_entry/exit"},
};

static int has(const struct plot_model *m, int k)
{
	switch (k) {
	case M_EVENTS:
		return m->nevents > 0;
	case M_CSWITCH:
		return m->cswitch.n > 0;
	case M_IOPS:
	case M_THROUGHPUT:
		return m->iops.n > 0;
	case M_PACKETS:
		return m->rx_pkts.n > 0 || m->tx_pkts.n > 0;
	case M_CALLS:
		return m->calls.n > 0;
	case M_LATENCY:
		for (int l = 0; l < PL_NLAT; l++)
			if (m->dist[l].count)
				return 1;
	}
	return 0;
}

/* Parses a comma list of metric names into sel[]; NULL = all with data. */
static int pick(const struct plot_model *m, const char *list, int *sel, char *err, size_t errlen)
{
	if (!list) {
		for (int k = 0; k < M_N; k++)
			sel[k] = has(m, k);
		return 0;
	}
	memset(sel, 0, M_N * sizeof(*sel));
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ",");
		int k;
		for (k = 0; k < M_N; k++)
			if (strlen(metrics[k].name) == n && !strncmp(p, metrics[k].name, n))
				break;
		if (k == M_N) {
			int o = snprintf(err, errlen, "unknown metric '%.*s' (known:", (int)n, p);
			for (k = 0; k < M_N && o > 0 && (size_t)o < errlen; k++)
				o += snprintf(err + o, errlen - (size_t)o, " %s", metrics[k].name);
			if (o > 0 && (size_t)o < errlen)
				snprintf(err + o, errlen - (size_t)o, ")");
			return -EINVAL;
		}
		if (!has(m, k)) {
			snprintf(err, errlen, "%s has no %s events, needed by metric '%s'", m->path,
				 metrics[k].needs, metrics[k].name);
			return -ENOENT;
		}
		sel[k] = 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static uint64_t at(const struct plot_vec *v, size_t i)
{
	return i < v->n ? v->v[i] : 0;
}

/* The event types shown individually; the rest are summed into "other". */
#define TOP_TYPES 8

static int cmp_types(const void *a, const void *b)
{
	const struct plot_type_series *x = a, *y = b;
	return x->total < y->total ? 1 : x->total > y->total ? -1 : strcmp(x->name, y->name);
}

/* One timeline being written: what plot_timeline's steps share. */
struct timeline {
	struct plot_model *m;
	struct plot_job *j;
	size_t ntop;   /* event types with a column of their own */
	int other;     /* and one column for the rest */
	double iv;     /* interval, s */
	const char *datname;
	int lat_col[PL_NLAT], type_col;
};

/* The data file: one row per interval (and one to close the last step). */
static int timeline_data(struct timeline *t)
{
	struct plot_model *m = t->m;
	FILE *d = plot_job_file(t->j, "timeline.dat", &t->datname);
	if (!d)
		return -EIO;
	double iv = t->iv;
	/* Columns are fixed so scripts and tests can rely on them. */
	fprintf(d, "# tracepp plot timeline of %s; interval %.9f s; rates per second\n"
		   "# time origin t0_ns=%llu (CLOCK_MONOTONIC)\n", m->path, iv, (unsigned long long)m->t0);
	fprintf(d, "# 1:t_s 2:events 3:cswitch 4:iops 5:MBps 6:rx_pkts 7:tx_pkts 8:calls");
	int col = 9;
	for (int l = 0; l < PL_NLAT; l++) {
		t->lat_col[l] = col;
		fprintf(d, " %d:%s_max_us %d:%s_mean_us", col, plot_lat_name[l], col + 1, plot_lat_name[l]);
		col += 2;
	}
	t->type_col = col;
	for (size_t k = 0; k < t->ntop; k++)
		fprintf(d, " %d:%s", col++, m->types[k].name);
	if (t->other)
		fprintf(d, " %d:other", col++);
	fputc('\n', d);
	/* One extra row at the end closes the last step. */
	for (size_t b = 0; b <= m->nbuckets; b++) {
		size_t i = b < m->nbuckets ? b : b - 1;
		uint64_t all = 0;
		for (size_t k = 0; k < m->ntypes; k++)
			all += at(&m->types[k].per_bucket, i);
		fprintf(d, "%.9f %.6g %.6g %.6g %.6g %.6g %.6g %.6g", (double)b * iv, all / iv,
			at(&m->cswitch, i) / iv, at(&m->iops, i) / iv, at(&m->io_bytes, i) / iv / 1e6,
			at(&m->rx_pkts, i) / iv, at(&m->tx_pkts, i) / iv, at(&m->calls, i) / iv);
		for (int l = 0; l < PL_NLAT; l++) {
			uint64_t c = at(&m->lat_cnt[l], i);
			if (c)
				fprintf(d, " %.6g %.6g", at(&m->lat_max[l], i) / 1e3,
					(double)at(&m->lat_sum[l], i) / (double)c / 1e3);
			else
				fprintf(d, " NaN NaN");
		}
		uint64_t rest = all;
		for (size_t k = 0; k < t->ntop; k++) {
			uint64_t c = at(&m->types[k].per_bucket, i);
			rest -= c;
			fprintf(d, " %.6g", c / iv);
		}
		if (t->other)
			fprintf(d, " %.6g", rest / iv);
		fputc('\n', d);
	}
	return plot_data_close(t->j, d, t->datname) ? -EIO : 0;
}

/* The latency panel's log axis, with explicit ends: a single sample would
 * make an empty range. */
static void latency_axis(FILE *f, const struct plot_model *m)
{
	double lo = 1e300, hi = 0;
	for (int l = 0; l < PL_NLAT; l++)
		for (size_t b = 0; b < m->lat_max[l].n; b++) {
			double v = m->lat_max[l].v[b] / 1e3;
			if (at(&m->lat_cnt[l], b) && v < lo)
				lo = v;
			if (v > hi)
				hi = v;
		}
	if (lo < 1e-3)
		lo = 1e-3;
	if (hi < lo)
		hi = lo;
	fprintf(f, "set logscale y\nset yrange [%g:%g]\nset format y '%%g'\n", lo / 2, hi * 2);
}

/* The plot command of metric k's panel. */
static void panel_plot(FILE *f, const struct timeline *t, int k)
{
	const struct plot_model *m = t->m;
	const char *datname = t->datname;
	fprintf(f, "plot ");
	switch (k) {
	case M_EVENTS:
		/* gnuplot's default line colours repeat after eight: name
		 * TOP_TYPES distinct ones, and a grey for the sum of the rest. */
		for (size_t i = 0; i < t->ntop + (size_t)t->other; i++) {
			static const char *const pal[TOP_TYPES] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
								   "#9467bd", "#8c564b", "#e377c2", "#17becf"};
			fprintf(f, "%s'%s' using 1:%zu with steps lw 1.5 lc rgb '%s' title ", i ? ", " : "",
				datname, t->type_col + i, i < t->ntop ? pal[i] : "#7f7f7f");
			plot_gp_str(f, i < t->ntop ? m->types[i].name : "other");
		}
		break;
	case M_CSWITCH:
		fprintf(f, "'%s' using 1:3 with steps lw 1.5 lc rgb '#1f77b4' title 'sched_switch'", datname);
		break;
	case M_IOPS:
		fprintf(f, "'%s' using 1:4 with steps lw 1.5 lc rgb '#2ca02c' title 'completed requests'", datname);
		break;
	case M_THROUGHPUT:
		fprintf(f, "'%s' using 1:5 with steps lw 1.5 lc rgb '#9467bd' title 'bytes completed'", datname);
		break;
	case M_PACKETS:
		fprintf(f, "'%s' using 1:6 with steps lw 1.5 lc rgb '#1f77b4' title 'received', "
			   "'%s' using 1:7 with steps lw 1.5 lc rgb '#ff7f0e' title 'transmitted'",
			datname, datname);
		break;
	case M_CALLS:
		fprintf(f, "'%s' using 1:8 with steps lw 1.5 lc rgb '#d62728' title 'func_entry'", datname);
		break;
	case M_LATENCY: {
		/* Max only: it is what incidents are about; means stay in the data. */
		static const char *const col[PL_NLAT] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"};
		int first = 1;
		for (int l = 0; l < PL_NLAT; l++) {
			if (!m->dist[l].count)
				continue;
			fprintf(f, "%s'%s' using 1:%d with steps lw 1.5 lc rgb '%s' title '%s max'",
				first ? "" : ", ", datname, t->lat_col[l], col[l], plot_lat_name[l]);
			first = 0;
		}
		break;
	}
	}
	fprintf(f, "\n");
}

static int timeline_script(struct timeline *t, const struct plot_req *q, const int *sel)
{
	struct plot_model *m = t->m;
	int npanels = 0;
	for (int k = 0; k < M_N; k++)
		npanels += sel[k];
	FILE *f = plot_job_file(t->j, "gp", NULL);
	if (!f)
		return -EIO;
	plot_gp_prologue(f, t->j, 70 + 210 * npanels);
	char title[600];
	snprintf(title, sizeof(title), "%s: activity over time (%g ms intervals)", q->title, t->iv * 1e3);
	fprintf(f, "set multiplot layout %d,1 title ", npanels);
	plot_gp_str(f, title);
	fprintf(f, " font ',13'\n");
	/* Fixed margins keep the stacked panels' time axes aligned. */
	fprintf(f, "set lmargin at screen 0.08\nset rmargin at screen 0.84\nset xrange [0:%.9f]\nset yrange [0:*]\n"
		   "set key outside right top vertical font ',9' samplen 2\n"
		   "set format y '%%.1s%%c'\n",
		   (double)m->nbuckets * t->iv);
	int done = 0;
	for (int k = 0; k < M_N; k++) {
		if (!sel[k])
			continue;
		done++;
		fprintf(f, "\nset title ");
		plot_gp_str(f, metrics[k].title);
		fprintf(f, "\nset ylabel ");
		plot_gp_str(f, metrics[k].ylabel);
		fprintf(f, "\n");
		if (done == npanels)
			fprintf(f, "set xlabel 'time since trace start (s)'\n");
		else
			fprintf(f, "unset xlabel\n");
		if (k == M_LATENCY)
			latency_axis(f, m);
		panel_plot(f, t, k);
		if (k == M_LATENCY)
			fprintf(f, "unset logscale y\nset yrange [0:*]\nset format y '%%.1s%%c'\n");
	}
	fprintf(f, "unset multiplot\n");
	return plot_data_close(t->j, f, "the gnuplot script");
}

int plot_timeline(struct plot_model *m, struct plot_job *j, const struct plot_req *q)
{
	int sel[M_N], rc;
	if (!m->nevents) {
		snprintf(j->err, sizeof(j->err), "%s holds no events", m->path);
		return -ENOENT;
	}
	if ((rc = pick(m, q->metrics, sel, j->err, sizeof(j->err))))
		return rc;
	qsort(m->types, m->ntypes, sizeof(*m->types), cmp_types);
	struct timeline t = {.m = m, .j = j, .iv = (double)m->o.interval / 1e9};
	t.ntop = m->ntypes < TOP_TYPES ? m->ntypes : TOP_TYPES;
	t.other = m->ntypes > TOP_TYPES;
	if ((rc = timeline_data(&t)))
		return rc;
	return timeline_script(&t, q, sel);
}
