/* tracepp report FILE -o DIR: one self-contained HTML page (DIR/index.html)
 * with the trace's facts, the sched/io/net/function summaries and every plot
 * the trace has events for, embedded as data: URIs. The plots' data files
 * and gnuplot scripts stay in DIR for editing. */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"
#include "commands.h"
#include "losses.h"
#include "plot_scan.h"
#include "report_dir.h"
#include "table.h"
#include "utf8.h"
#include "an_syms.h"
#include "an_lat.h"
#include "an_cg.h"
#include "an_sched.h"
#include "an_io.h"
#include "an_net.h"
#include "fieldfmt.h"

/* HTML text from the file's bytes: markup escaped, control bytes dropped,
 * each byte that is not UTF-8 as U+FFFD, so the page is valid UTF-8. */
static void esc(FILE *f, const char *s)
{
	const uint8_t *p = (const uint8_t *)(s ? s : ""), *end = p + strlen((const char *)p);
	while (p < end) {
		size_t k = *p >= 0x80 ? utf8_seq(p, (size_t)(end - p)) : 1;
		switch (*p) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (!k)
				fputs("\xef\xbf\xbd", f); /* U+FFFD */
			else if (*p >= 0x20 || *p == '\n')
				fwrite(p, 1, k, f);
		}
		p += k ? k : 1;
	}
}

static int embed_png(FILE *f, const char *path)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	FILE *in = fopen(path, "rb");
	if (!in)
		return -errno;
	unsigned char buf[3 * 1024];
	size_t n;
	fputs("data:image/png;base64,", f);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		/* Only the last read can be short, so padding appears only at the end. */
		for (size_t i = 0; i < n; i += 3) {
			uint32_t v = (uint32_t)buf[i] << 16 | (i + 1 < n ? (uint32_t)buf[i + 1] << 8 : 0) |
				     (i + 2 < n ? buf[i + 2] : 0);
			fputc(b64[v >> 18 & 63], f);
			fputc(b64[v >> 12 & 63], f);
			fputc(i + 1 < n ? b64[v >> 6 & 63] : '=', f);
			fputc(i + 2 < n ? b64[v & 63] : '=', f);
		}
	}
	fclose(in);
	return 0;
}

static void th(FILE *f, const char *const *h)
{
	fputs("<table><tr>", f);
	for (; *h; h++) {
		fputs("<th>", f);
		esc(f, *h);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
}

static void td(FILE *f, const char *s)
{
	fputs("<td>", f);
	esc(f, s);
	fputs("</td>", f);
}

static void tdn(FILE *f, uint64_t ns)
{
	char b[32];
	fprintf(f, "<td class=n>%s</td>", human_ns(b, sizeof(b), ns));
}

static void tdi(FILE *f, uint64_t v)
{
	fprintf(f, "<td class=n>%llu</td>", (unsigned long long)v);
}

static void tdb(FILE *f, uint64_t v)
{
	char b[32];
	fprintf(f, "<td class=n>%s</td>", human_bytes(b, sizeof(b), v));
}

static int by_oncpu(const void *a, const void *b)
{
	const struct an_task *x = *(const struct an_task *const *)a, *y = *(const struct an_task *const *)b;
	return x->oncpu_ns < y->oncpu_ns ? 1 : x->oncpu_ns > y->oncpu_ns ? -1 : (x->tid > y->tid) - (x->tid < y->tid);
}

static int by_count(const void *a, const void *b)
{
	const struct plot_type_series *x = a, *y = b;
	return x->total < y->total ? 1 : x->total > y->total ? -1 : strcmp(x->name, y->name);
}

static void facts(FILE *f, struct plot_model *m, struct tpp_reader *r, const char *path)
{
	const struct tpp_file_info *fi = tpp_r_info(r);
	const struct tpp_meta *me = tpp_r_meta(r);
	char b[64];
	fputs("<h2>Trace</h2>\n<table class=facts>\n", f);
#define ROW(k, ...)                                   \
	do {                                          \
		fprintf(f, "<tr><th>%s</th><td>", k); \
		__VA_ARGS__;                          \
		fputs("</td></tr>\n", f);             \
	} while (0)
	ROW("file", esc(f, path));
	ROW("host", esc(f, fi->hostname ? fi->hostname : "?"));
	ROW("kernel", esc(f, fi->kernel ? fi->kernel : "?"); fputs(" ", f); esc(f, fi->arch));
	ROW("CPUs", fprintf(f, "%d", fi->ncpus));
	ROW("recorded by", esc(f, fi->producer); fputs(" ", f); esc(f, fi->producer_version));
	if (fi->argc > 0)
		ROW("command", for (int i = 0; i < fi->argc; i++) {
			esc(f, fi->argv[i]);
			fputc(' ', f);
		});
	if (m->nevents) {
		time_t wall = (time_t)((int64_t)m->t0 / 1000000000 + fi->wall_offset_ns / 1000000000);
		struct tm tm;
		char when[64] = "?";
		if (fi->wall_offset_ns && gmtime_r(&wall, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
		ROW("start", esc(f, when));
		ROW("span", esc(f, human_ns(b, sizeof(b), m->t1 - m->t0)));
	}
	ROW("events", fprintf(f, "%llu", (unsigned long long)m->nevents));
	struct tpp_losses lo;
	tpp_losses(me, &lo);
	ROW("lost events", fprintf(f, "%s%llu%s", lo.lost ? "<b class=bad>" : "", (unsigned long long)lo.lost,
				   lo.lost ? "</b>" : ""));
	if (lo.note)
		ROW("unstored events", fprintf(f, "%llu (fired by the kernel, never stored)",
					       (unsigned long long)lo.unstored));
	if (m->damaged || fi->damaged_chunks || !fi->has_trailer)
		ROW("damage", fprintf(f, "<b class=bad>%llu damaged chunk(s) skipped%s</b>",
				      (unsigned long long)(m->damaged + fi->damaged_chunks),
				      fi->has_trailer ? "" : "; no trailer (recorder died?)"));
	ROW("file size", esc(f, human_bytes(b, sizeof(b), fi->file_size)));
#undef ROW
	fputs("</table>\n", f);
	if (m->ntypes) /* qsort(NULL, 0) is undefined */
		qsort(m->types, m->ntypes, sizeof(*m->types), by_count);
	static const char *const h[] = {"event type", "count", "per second", NULL};
	fputs("<h3>Events by type</h3>\n", f);
	th(f, h);
	double span = m->t1 > m->t0 ? (double)(m->t1 - m->t0) / 1e9 : 0;
	for (size_t i = 0; i < m->ntypes; i++) {
		fputs("<tr>", f);
		td(f, m->types[i].name);
		tdi(f, m->types[i].total);
		fprintf(f, "<td class=n>%.1f</td></tr>\n", span > 0 ? (double)m->types[i].total / span : 0);
	}
	fputs("</table>\n", f);
}

static void lat_row(FILE *f, const char *name, struct an_lat *l)
{
	if (!l->count)
		return;
	fputs("<tr>", f);
	td(f, name);
	tdi(f, l->count);
	tdn(f, an_lat_pct(l, 50));
	tdn(f, an_lat_pct(l, 99));
	tdn(f, l->max);
	fputs("</tr>\n", f);
}

static void sched_table(FILE *f, struct plot_scan *s)
{
	const struct plot_model *m = &s->m;
	if (!m->n_switch)
		return;
	fputs("<h2>Scheduler</h2>\n", f);
	static const char *const hl[] = {"latency", "samples", "p50", "p99", "max", NULL};
	th(f, hl);
	lat_row(f, "wakeup -> running", &s->sch.wakeup);
	lat_row(f, "runnable -> running", &s->sch.runq);
	fputs("</table>\n", f);
	const struct an_task **t = malloc((s->sch.n + 1) * sizeof(*t));
	size_t n = 0;
	if (!t)
		return;
	for (size_t i = 0; i < s->sch.n; i++)
		if (s->sch.t[i].tid > 0)
			t[n++] = &s->sch.t[i];
	qsort(t, n, sizeof(*t), by_oncpu);
	fprintf(f, "<h3>Tasks by CPU time (top %zu of %zu)</h3>\n", n < 20 ? n : 20, n);
	static const char *const h[] = {"tid", "comm", "on-CPU", "switches", "voluntary", "involuntary",
					"run-queue wait", "wakeups", "wakeup avg", "wakeup max", "partial", NULL};
	th(f, h);
	for (size_t i = 0; i < n && i < 20; i++) {
		fputs("<tr>", f);
		tdi(f, (uint64_t)t[i]->tid);
		td(f, t[i]->comm);
		tdn(f, t[i]->oncpu_ns);
		tdi(f, t[i]->switches);
		tdi(f, t[i]->voluntary);
		tdi(f, t[i]->involuntary);
		tdn(f, t[i]->runq_wait_ns);
		tdi(f, t[i]->wakeups);
		tdn(f, an_task_wakeup_avg(t[i]));
		tdn(f, t[i]->wakeup_lat_max);
		/* lower bounds: it ran or waited before the first event or after the last */
		static const char *const part[8] = {"", "start", "end", "start,end", "gaps", "start,gaps",
						     "end,gaps", "start,end,gaps"};
		td(f, part[t[i]->partial & 7]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	free(t);
}

static void io_table(FILE *f, struct plot_scan *s)
{
	if (!s->io.n)
		return;
	fputs("<h2>Block I/O</h2>\n", f);
	static const char *const h[] = {"device", "op", "requests", "bytes", "errors", "latency p50",
					"latency p99", "latency max", "max queue depth", NULL};
	th(f, h);
	for (size_t i = 0; i < s->io.n; i++) {
		struct an_iodev *d = &s->io.d[i];
		char dev[32];
		ff_text(dev, sizeof(dev), FF_DEV, d->dev);
		fputs("<tr>", f);
		td(f, dev);
		td(f, an_io_op_name[d->op < AN_IO_NOPS ? d->op : AN_IO_OTHER]);
		tdi(f, d->count);
		tdb(f, d->bytes);
		tdi(f, d->errors);
		tdn(f, an_lat_pct(&d->d2c, 50));
		tdn(f, an_lat_pct(&d->d2c, 99));
		tdn(f, d->d2c.max);
		tdi(f, d->max_qd);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void net_table(FILE *f, struct plot_scan *s)
{
	if (!s->netw.n)
		return;
	fputs("<h2>Network</h2>\n", f);
	static const char *const h[] = {"device", "tx packets", "tx bytes", "tx errors", "rx packets",
					"rx bytes", NULL};
	th(f, h);
	for (size_t i = 0; i < s->netw.n; i++) {
		struct an_netdev *d = &s->netw.d[i];
		fputs("<tr>", f);
		td(f, d->name);
		tdi(f, d->tx_packets);
		tdb(f, d->tx_bytes);
		tdi(f, d->tx_errors);
		tdi(f, d->rx_packets);
		tdb(f, d->rx_bytes);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static const struct an_cg *sort_cg;
static int by_total(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t tx = sort_cg->fs[x].total_ns, ty = sort_cg->fs[y].total_ns;
	return tx < ty ? 1 : tx > ty ? -1 : (x > y) - (x < y);
}

/* Functions need a second pass (the call graph pairs entries and exits
 * with its own rules); only traces with function events pay for it. */
static void func_table(FILE *f, struct plot_model *m, struct tpp_reader *r)
{
	if (!m->n_func || !m->names)
		return;
	struct an_syms *syms;
	struct an_cg cg;
	if (an_syms_open(&syms, m->names) < 0)
		return;
	if (an_cg_build(&cg, r, m->names, syms, NULL) < 0) {
		an_syms_close(syms);
		return;
	}
	uint32_t *ids = malloc((cg.nfs + 1) * sizeof(*ids));
	size_t n = 0;
	for (size_t i = 0; ids && i < cg.nfs; i++)
		if (cg.fs[i].calls)
			ids[n++] = (uint32_t)i;
	sort_cg = &cg;
	if (ids)
		qsort(ids, n, sizeof(*ids), by_total);
	fputs("<h2>Functions</h2>\n", f);
	fprintf(f, "<p>%llu calls paired (%llu without return, %llu returns without entry).</p>\n",
		(unsigned long long)cg.ps.calls, (unsigned long long)cg.ps.noret,
		(unsigned long long)cg.ps.orphans);
	fprintf(f, "<h3>By total time (top %zu of %zu)</h3>\n", n < 25 ? n : 25, n);
	static const char *const h[] = {"function", "calls", "total", "self", "average", "max", NULL};
	th(f, h);
	for (size_t i = 0; i < n && i < 25; i++) {
		const struct an_func_stat *s = &cg.fs[ids[i]];
		fputs("<tr>", f);
		td(f, an_func_name(syms, ids[i]));
		tdi(f, s->calls);
		tdn(f, s->total_ns);
		tdn(f, s->self_ns);
		tdn(f, s->calls ? s->total_ns / s->calls : 0);
		tdn(f, s->max_ns);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	free(ids);
	an_cg_free(&cg);
	an_syms_close(syms);
}

struct figure {
	const char *file, *type, *by, *caption;
	int (*wanted)(const struct plot_model *m);
};
static int w_any(const struct plot_model *m) { return m->nevents > 0; }
static int w_lat(const struct plot_model *m)
{
	for (int k = 0; k < PL_NLAT; k++)
		if (m->dist[k].count)
			return 1;
	return 0;
}
static int w_sched(const struct plot_model *m) { return m->nbars > 0; }
static int w_calls(const struct plot_model *m) { return m->ncalls > 0; }
static const struct figure figures[] = {
	{"timeline", "timeline", NULL, "Activity over time: every metric the trace has, on one time axis.", w_any},
	{"latency-hist", "hist", NULL, "Latency distributions (log axes); dashed lines mark p50 and p99.", w_lat},
	{"cpu-heatmap", "heatmap", "cpu", "CPU utilisation: busy (non-idle) fraction of each CPU per interval.", w_sched},
	{"latency-heatmap", "heatmap", "latency", "Latency over time: samples per interval and latency bucket.", w_lat},
	{"gantt-cpu", "gantt", "cpu", "Who ran on which CPU when; the longest runs are labelled.", w_sched},
	{"gantt-task", "gantt", "task", "The busiest tasks' runs, one row per task.", w_sched},
	{"flame", "gantt", "call", "Calls of the busiest traced thread as nested bars (flame chart).", w_calls},
};

static const char css[] =
	"body{font:14px/1.45 system-ui,sans-serif;max-width:1240px;margin:2em auto;padding:0 1em;color:#222}"
	"h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}"
	"table{border-collapse:collapse;margin:.6em 0}th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left}"
	"th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	"table.facts th{width:10em}.bad{color:#b00}figure{margin:1.2em 0}img{max-width:100%;border:1px solid #eee}"
	"figcaption{color:#555;font-size:.95em}.note{background:#fff7d6;padding:.5em .8em;border-left:4px solid #e0b000}"
	"@media print{body{max-width:none}}";

static void usage(FILE *f)
{
	fprintf(f, "usage: tracepp report FILE -o DIR\n"
		   "Writes DIR/index.html: the trace's facts, sched/io/net/function summaries and\n"
		   "every plot the trace has events for (PNG embedded; data and gnuplot scripts\n"
		   "kept in DIR). Without gnuplot the plots' data and scripts are still written.\n"
		   "A new DIR is made private (0700). An existing DIR is reused only when it is a\n"
		   "directory of yours no one else can write; a file in it is replaced only when\n"
		   "it is a regular file of yours.\n"
		   "  -o, --output=DIR   the directory to write\n"
		   "  -h, --help         this text\n");
}

/* The plots section: each figure the trace has data for, rendered into
 * dirpath (or its data and script only, without gnuplot). The number that
 * failed. */
static int plots_section(FILE *f, struct plot_model *m, struct plot_req *q, const char *dirpath, const char *gp)
{
	fputs("<h2>Plots</h2>\n", f);
	int failed = 0, shown = 0;
	char errmsg[512];
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		const struct figure *g = &figures[i];
		if (!g->wanted(m))
			continue;
		char out[4600];
		snprintf(out, sizeof(out), "%s/%s.png", dirpath, g->file);
		q->by = g->by;
		if (plot_render(m, plot_type_index(g->type), q, out, 1, !gp, gp, errmsg, sizeof(errmsg))) {
			fprintf(stderr, "tracepp report: %s: %s\n", g->file, errmsg);
			fprintf(f, "<p class=note>%s: not rendered: ", g->file);
			esc(f, errmsg);
			fputs("</p>\n", f);
			failed++;
			continue;
		}
		fputs("<figure>", f);
		if (gp) {
			fputs("<img alt=\"", f);
			esc(f, g->file);
			fputs("\" src=\"", f);
			embed_png(f, out);
			fputs("\">", f);
		}
		fprintf(f, "<figcaption>%s Data and script: <code>%s.*.dat</code>, <code>%s.gp</code>.</figcaption></figure>\n",
			g->caption, g->file, g->file);
		shown++;
	}
	if (!shown)
		fputs("<p>The trace has no events to plot.</p>\n", f);
	return failed;
}

int cmd_report(int argc, char **argv)
{
	static const struct option lo[] = {{"output", required_argument, 0, 'o'},
					   {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	const char *dir = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		if (c == 'o')
			dir = optarg;
		else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || !dir) {
		fprintf(stderr, "tracepp report: need one FILE and -o DIR\n");
		usage(stderr);
		return 2;
	}
	const char *path = argv[optind];
	char errmsg[512];
	/* everything is made in a private directory, put in place at the end */
	static struct report_dir rd;
	FILE *f = NULL;
	if (report_dir_open(&rd, dir) || !(f = report_dir_file(&rd, "index.html"))) {
		fprintf(stderr, "tracepp report: %s\n", rd.err);
		report_dir_abort(&rd);
		return 1;
	}
	struct tpp_reader *r;
	if (tpp_r_open(&r, path, errmsg, sizeof(errmsg)) < 0) {
		fprintf(stderr, "tracepp report: %s\n", errmsg);
		fclose(f);
		report_dir_abort(&rd);
		return 1;
	}
	struct plot_opts o = {.want_bars = 1, .call_tid = plot_busiest_thread(r, NULL, NULL)};
	plot_default_opts(r, &o);
	struct plot_scan s;
	if (plot_scan(&s, r, path, &o, NULL) < 0) {
		fprintf(stderr, "tracepp report: %s\n", s.m.err);
		plot_scan_free(&s);
		tpp_r_close(r);
		fclose(f);
		report_dir_abort(&rd);
		return 1;
	}
	struct plot_model *m = &s.m;
	cli_warn_damaged("report", m->damaged + tpp_r_info(r)->damaged_chunks, tpp_r_error(r));
	char title[300];
	plot_trace_title(r, path, title, sizeof(title));
	struct plot_req q = {.title = title};
	char why[700];
	const char *gp = plot_gp_find(why, sizeof(why));
	if (why[0])
		fprintf(stderr, "tracepp report: %s%s\n", gp ? "warning: " : "", why);

	fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n<title>tracepp report: ", f);
	esc(f, title);
	fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>Trace report: ", css);
	esc(f, title);
	fputs("</h1>\n", f);
	if (!gp)
		fputs("<p class=note>gnuplot was not found, so the plots are not rendered. Their data and "
		      "scripts are in the report directory: install gnuplot and run "
		      "<code>gnuplot NAME.gp</code> there.</p>\n", f);
	facts(f, m, r, path);
	sched_table(f, &s);
	io_table(f, &s);
	net_table(f, &s);
	func_table(f, m, r);

	int failed = plots_section(f, m, &q, rd.path, gp);
	fprintf(f, "<p style=\"color:#888\">Generated by tracepp report.</p>\n</body></html>\n");
	plot_scan_free(&s);
	tpp_r_close(r);
	if (fclose(f)) {
		fprintf(stderr, "tracepp report: writing %s/index.html: %s\n", rd.dir, strerror(errno));
		report_dir_abort(&rd);
		return 1;
	}
	if (report_dir_finish(&rd)) {
		fprintf(stderr, "tracepp report: %s\n", rd.err);
		return 1;
	}
	printf("tracepp report: wrote %s/index.html%s\n", rd.dir, gp ? "" : " (plots not rendered: gnuplot not found)");
	return failed ? 1 : 0;
}
