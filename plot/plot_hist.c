/* `tracepp plot --type=hist`: latency distributions on log axes, p50/p99 marked. */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <string.h>
#include "plot.h"

int plot_pick_lat(const struct plot_model *m, const char *list, int *sel, char *err, size_t len)
{
	static const char *const needs[PL_NLAT] = {"sched_wakeup and sched_switch", "sched_switch",
						   "block_rq_issue and block_rq_complete",
						   "function entry and return (func_entry/func_exit or uprobes)"};
	int any = 0;
	for (int k = 0; k < PL_NLAT; k++) {
		sel[k] = !list && m->dist[k].count > 0;
		any |= sel[k];
	}
	if (!list) {
		if (!any) {
			snprintf(err, len, "%s has no latency to show: it holds no sched_wakeup/"
				 "sched_switch, block_rq_issue/complete or func_entry/exit pairs", m->path);
			return -ENOENT;
		}
		return 0;
	}
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		int k;
		for (k = 0; k < PL_NLAT; k++)
			if (strlen(plot_lat_name[k]) == n && !strncmp(p, plot_lat_name[k], n))
				break;
		if (k == PL_NLAT) {
			snprintf(err, len, "unknown latency '%.*s' (known: wakeup runq io func)", (int)n, p);
			return -EINVAL;
		}
		if (!m->dist[k].count) {
			snprintf(err, len, "%s has no %s samples: it needs %s events", m->path,
				 plot_lat_title[k], needs[k]);
			return -ENOENT;
		}
		sel[k] = 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

int plot_hist(struct plot_model *m, struct plot_job *j, const struct plot_req *q)
{
	int sel[PL_NLAT], rc, npanels = 0;
	if ((rc = plot_pick_lat(m, q->metrics, sel, j->err, sizeof(j->err))))
		return rc;
	const char *datname;
	FILE *d = plot_job_file(j, "hist.dat", &datname);
	if (!d)
		return -EIO;
	uint64_t p50[PL_NLAT], p99[PL_NLAT], mx[PL_NLAT];
	int index[PL_NLAT];
	fprintf(d, "# tracepp plot hist of %s: one block per latency kind (gnuplot 'index N')\n"
		   "# columns: 1:lo_us 2:hi_us 3:count; bins are 1/%d decade wide\n",
		m->path, PLOT_BINS_PER_DECADE);
	for (int k = 0; k < PL_NLAT; k++) {
		if (!sel[k])
			continue;
		static uint64_t cnt[PLOT_NBINS];
		memset(cnt, 0, sizeof(cnt));
		mx[k] = 0;
		/* the bins are the heat map's rows summed: every sample is in one */
		for (size_t i = 0; i < m->heat[k].n; i++)
			cnt[i % PLOT_NBINS] += m->heat[k].v[i];
		mx[k] = m->dist[k].max;
		p50[k] = m->dist[k].p50;
		p99[k] = m->dist[k].p99;
		index[k] = npanels++;
		fprintf(d, "%s# %s n=%llu p50_ns=%llu p99_ns=%llu max_ns=%llu\n", index[k] ? "\n\n" : "",
			plot_lat_name[k], (unsigned long long)m->dist[k].count, (unsigned long long)p50[k],
			(unsigned long long)p99[k], (unsigned long long)mx[k]);
		for (int b = 0; b < PLOT_NBINS; b++) {
			if (!cnt[b])
				continue;
			/* The rounded edges give the lowest bins no width; gnuplot
			 * refuses a panel whose only bar is empty ("empty x range"). */
			double lo = plot_bin_lo(b), hi = plot_bin_hi(b);
			if (hi <= lo)
				hi = lo * 1.2589254117941673;
			fprintf(d, "%.6g %.6g %llu\n", lo / 1e3, hi / 1e3,
				(unsigned long long)cnt[b]);
		}
	}
	if (plot_data_close(j, d, datname))
		return -EIO;

	FILE *f = plot_job_file(j, "gp", NULL);
	if (!f)
		return -EIO;
	plot_gp_prologue(f, j, 80 + 300 * npanels);
	char title[600];
	snprintf(title, sizeof(title), "%s: latency distributions", q->title);
	fprintf(f, "set multiplot layout %d,1 title ", npanels);
	plot_gp_str(f, title);
	fprintf(f, " font ',13'\nset lmargin 12\nset rmargin 4\nset logscale xy\n"
		   "set xlabel 'latency (us, log scale)'\nset ylabel 'count (log scale)'\n"
		   "set format x '%%g'\nset key top right inside\n"
		   "set style textbox opaque noborder margins 1,1\n");
	for (int k = 0; k < PL_NLAT; k++) {
		if (!sel[k])
			continue;
		char a[32], b[32], c[32], t[256];
		plot_fmt_ns(a, sizeof(a), (double)p50[k]);
		plot_fmt_ns(b, sizeof(b), (double)p99[k]);
		plot_fmt_ns(c, sizeof(c), (double)mx[k]);
		snprintf(t, sizeof(t), "%s: %llu samples, p50 %s, p99 %s, max %s", plot_lat_title[k],
			 (unsigned long long)m->dist[k].count, a, b, c);
		fprintf(f, "\nset title ");
		plot_gp_str(f, t);
		/* Bars start below 1 so single counts show on the log axis. */
		fprintf(f, "\nset yrange [0.7:*]\nunset arrow\nunset label\n");
		fprintf(f, "set arrow 1 from %.6g, graph 0 to %.6g, graph 1 nohead front lw 2 dt 2 lc rgb '#2ca02c'\n",
			p50[k] / 1e3, p50[k] / 1e3);
		fprintf(f, "set arrow 2 from %.6g, graph 0 to %.6g, graph 1 nohead front lw 2 dt 2 lc rgb '#d62728'\n",
			p99[k] / 1e3, p99[k] / 1e3);
		fprintf(f, "set label 1 'p50 %s' at %.6g, graph 0.93 left offset 0.5,0 front boxed tc rgb '#2ca02c'\n", a,
			p50[k] / 1e3);
		fprintf(f, "set label 2 'p99 %s' at %.6g, graph 0.83 left offset 0.5,0 front boxed tc rgb '#d62728'\n", b,
			p99[k] / 1e3);
		fprintf(f, "plot '%s' index %d using (sqrt($1*$2)):3:1:2:(0.7):3 with boxxyerror "
			   "fs solid 0.75 border lc rgb '#1f4e79' fc rgb '#4a90c8' title '%s'\n",
			datname, index[k], plot_lat_name[k]);
	}
	fprintf(f, "unset multiplot\n");
	return plot_data_close(j, f, "the gnuplot script");
}
