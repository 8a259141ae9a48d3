/* `tracepp plot --type=heatmap`: per-CPU busy fraction over time (--by cpu,
 * the default) or latency x time with counts as colour (--by latency). */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <string.h>
#include "plot.h"

static int cpu_heat(struct plot_model *m, struct plot_job *j, const struct plot_req *q)
{
	if (!m->n_switch) {
		snprintf(j->err, sizeof(j->err),
			 "%s has no sched_switch events: the CPU heat map needs a scheduler trace",
			 m->path);
		return -ENOENT;
	}
	const struct tpp_file_info *fi = tpp_r_info(m->r);
	int ncpu = fi && fi->ncpus > m->ncpus && fi->ncpus < 4096 ? fi->ncpus : m->ncpus;
	double iv = (double)m->o.cpu_interval / 1e9;
	size_t nb = m->cpu_nbuckets ? m->cpu_nbuckets : 1;
	const char *datname;
	FILE *d = plot_job_file(j, "busy.dat", &datname);
	if (!d)
		return -EIO;
	fprintf(d, "# tracepp plot heatmap of %s: CPU busy time (not idle, pid 0) per %.6g s\n"
		   "# time origin t0_ns=%llu (CLOCK_MONOTONIC); busy_ns over all rows = %llu\n"
		   "# 1:t_lo_s 2:t_hi_s 3:cpu 4:busy_fraction 5:busy_ns\n",
		m->path, iv, (unsigned long long)m->t0, (unsigned long long)m->busy_total);
	for (int c = 0; c < ncpu; c++) {
		for (size_t b = 0; b < nb; b++) {
			uint64_t lo = m->t0 + b * m->o.cpu_interval, hi = lo + m->o.cpu_interval;
			if (hi > m->t1 && m->t1 > lo)
				hi = m->t1; /* the last bucket is only partly covered */
			uint64_t busy = c < m->ncpus && b < m->cpu_busy[c].n ? m->cpu_busy[c].v[b] : 0;
			double frac = hi > lo ? (double)busy / (double)(hi - lo) : 0;
			fprintf(d, "%.9f %.9f %d %.4f %llu\n", plot_sec(m, lo), plot_sec(m, hi), c,
				frac > 1 ? 1 : frac, (unsigned long long)busy);
		}
	}
	if (plot_data_close(j, d, datname))
		return -EIO;
	FILE *f = plot_job_file(j, "gp", NULL);
	if (!f)
		return -EIO;
	int h = 160 + 28 * ncpu;
	plot_gp_prologue(f, j, h < 360 ? 360 : h > 1600 ? 1600 : h);
	char title[600];
	snprintf(title, sizeof(title), "%s: CPU utilisation (busy fraction per %g ms)", q->title,
		 iv * 1e3);
	fprintf(f, "set title ");
	plot_gp_str(f, title);
	fprintf(f, " font ',13'\nset xlabel 'time since trace start (s)'\nset ylabel 'CPU'\n"
		   "set cblabel 'busy fraction'\nset cbrange [0:1]\n"
		   "set palette defined (0 '#ffffff', 0.25 '#fed976', 0.5 '#fd8d3c', 0.75 '#e31a1c', 1 '#67000d')\n"
		   "set xrange [0:%.9f]\nset yrange [%g:%g] reverse\nset ytics %d\nunset grid\n"
		   "plot '%s' using (($1+$2)/2):3:1:2:($3-0.5):($3+0.5):4 with boxxyerror "
		   "fs solid 1.0 noborder lc palette notitle\n",
		   plot_sec(m, m->t1) > 0 ? plot_sec(m, m->t1) : iv, -0.5, ncpu - 0.5,
		   ncpu > 32 ? ncpu / 16 : 1, datname);
	return plot_data_close(j, f, "the gnuplot script");
}

static int lat_heat(struct plot_model *m, struct plot_job *j, const struct plot_req *q)
{
	int sel[PL_NLAT], rc, npanels = 0;
	if ((rc = plot_pick_lat(m, q->metrics, sel, j->err, sizeof(j->err))))
		return rc;
	double iv = (double)m->o.interval / 1e9;
	const char *datname;
	FILE *d = plot_job_file(j, "latheat.dat", &datname);
	if (!d)
		return -EIO;
	fprintf(d, "# tracepp plot heatmap of %s: latency samples per interval (%.6g s) and latency bin,\n"
		   "# one block per latency kind (gnuplot 'index N')\n"
		   "# 1:t_lo_s 2:t_hi_s 3:lat_lo_us 4:lat_hi_us 5:count\n",
		m->path, iv);
	int index[PL_NLAT];
	uint64_t maxc = 2; /* a colour range needs two distinct ends */
	for (int k = 0; k < PL_NLAT; k++) {
		if (!sel[k])
			continue;
		for (size_t i = 0; i < m->heat[k].n; i++)
			if (m->heat[k].v[i] > maxc)
				maxc = m->heat[k].v[i];
		index[k] = npanels++;
		fprintf(d, "%s# %s samples=%llu\n", index[k] ? "\n\n" : "", plot_lat_name[k],
			(unsigned long long)m->dist[k].count);
		for (size_t b = 0; b < m->nbuckets; b++)
			for (int l = 0; l < PLOT_NBINS; l++) {
				size_t i = b * PLOT_NBINS + (size_t)l;
				uint64_t c = i < m->heat[k].n ? m->heat[k].v[i] : 0;
				if (!c)
					continue;
				fprintf(d, "%.9f %.9f %.6g %.6g %llu\n", (double)b * iv, (double)(b + 1) * iv,
					plot_bin_lo(l) / 1e3,
					plot_bin_hi(l) / 1e3,
					(unsigned long long)c);
			}
	}
	if (plot_data_close(j, d, datname))
		return -EIO;
	FILE *f = plot_job_file(j, "gp", NULL);
	if (!f)
		return -EIO;
	plot_gp_prologue(f, j, 80 + 360 * npanels);
	char title[600];
	snprintf(title, sizeof(title), "%s: latency over time (%g ms intervals)", q->title, iv * 1e3);
	fprintf(f, "set multiplot layout %d,1 title ", npanels);
	plot_gp_str(f, title);
	fprintf(f, " font ',13'\nset lmargin 12\nset rmargin 14\n"
		   "set xlabel 'time since trace start (s)'\nset logscale y\nset format y '%%g'\n"
		   "set cblabel 'samples'\nset logscale cb\nset cbrange [1:%llu]\n"
		   "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')\n"
		   "set xrange [0:%.9f]\nunset grid\n",
		   (unsigned long long)maxc, (double)m->nbuckets * iv);
	for (int k = 0; k < PL_NLAT; k++) {
		if (!sel[k])
			continue;
		fprintf(f, "\nset title ");
		plot_gp_str(f, plot_lat_title[k]);
		fprintf(f, "\nset ylabel '%s (us, log scale)'\n"
			   "plot '%s' index %d using (($1+$2)/2):(sqrt($3*$4)):1:2:3:4:5 with boxxyerror "
			   "fs solid 1.0 noborder lc palette notitle\n",
			plot_lat_name[k], datname, index[k]);
	}
	fprintf(f, "unset multiplot\n");
	return plot_data_close(j, f, "the gnuplot script");
}

int plot_heatmap(struct plot_model *m, struct plot_job *j, const struct plot_req *q)
{
	if (!q->by || !strcmp(q->by, "cpu"))
		return cpu_heat(m, j, q);
	if (!strcmp(q->by, "latency"))
		return lat_heat(m, j, q);
	snprintf(j->err, sizeof(j->err), "heatmap: unknown --by '%s' (use cpu or latency)", q->by);
	return -EINVAL;
}
