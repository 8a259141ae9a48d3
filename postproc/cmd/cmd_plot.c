/* tracepp plot FILE --type=TYPE -o OUT.(png|svg|pdf): render a diagram with gnuplot. */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "commands.h"
#include "plot_scan.h"
#include "table.h"

static const struct {
	const char *name;
	int (*fn)(struct plot_model *, struct plot_job *, const struct plot_req *);
	const char *help;
} types[] = {
	{"timeline", plot_timeline, "metrics over time, stacked (--metrics, --interval)"},
	{"hist", plot_hist, "latency distributions, log axes, p50/p99 marked (--metrics)"},
	{"heatmap", plot_heatmap, "per-CPU busy fraction (--by cpu) or latency x time (--by latency)"},
	{"gantt", plot_gantt, "who ran on which CPU (--by cpu|task) or one thread's calls (--by call)"},
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

int plot_type_index(const char *name)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (!strcmp(types[i].name, name))
			return (int)i;
	return -1;
}

int plot_render(struct plot_model *m, int type, const struct plot_req *q, const char *out, int keep,
		int data_only, const char *gnuplot, char *err, size_t errlen)
{
	struct plot_job j;
	int rc = plot_job_init(&j, out, keep, data_only);
	if (!rc && (rc = types[type].fn(m, &j, q)) < 0)
		plot_job_abort(&j);
	else if (!rc && (rc = plot_job_finish(&j, gnuplot)))
		rc = -EIO;
	if (rc)
		snprintf(err, errlen, "%s", j.err[0] ? j.err : strerror(-rc));
	return rc;
}

void plot_default_opts(struct tpp_reader *r, struct plot_opts *o)
{
	uint64_t span = plot_index_span(r);
	if (!o->interval)
		o->interval = plot_nice_interval(span, 300, 1000);
	if (!o->cpu_interval) {
		/* 100 ms as the issue asks, finer for short traces so the map
		 * still has columns, coarser for long ones to stay legible. */
		o->cpu_interval = 100000000;
		if (span < 4000000000ULL)
			o->cpu_interval = plot_nice_interval(span, 40, 1000);
		else if (span / o->cpu_interval > 1500)
			o->cpu_interval = plot_nice_interval(span, 1500, 1000);
	}
}

void plot_trace_title(struct tpp_reader *r, const char *path, char *buf, size_t len)
{
	const struct tpp_file_info *fi = tpp_r_info(r);
	const char *b = strrchr(path, '/');
	snprintf(buf, len, "%s%s%s", b ? b + 1 : path, fi && fi->hostname && *fi->hostname ? " on " : "",
		 fi && fi->hostname ? fi->hostname : "");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tracepp plot FILE --type=TYPE -o OUT.(png|svg|pdf) [options]\n\ntypes:\n");
	for (size_t i = 0; i < NTYPES; i++)
		fprintf(f, "  %-9s %s\n", types[i].name, types[i].help);
	fprintf(f, "\noptions:\n"
		   "  --metrics=LIST  timeline: events,cswitch,iops,throughput,packets,calls,latency\n"
		   "                  hist, heatmap --by latency: wakeup,runq,io,func (default: all present)\n"
		   "  --interval=DUR  bucket width (timeline, latency heat map; CPU heat map: 100ms)\n"
		   "  --by=WHAT       heatmap: cpu|latency; gantt: cpu|task|call\n"
		   "  --tid=TID[,TID...]  only these threads' runs, waits, calls and events (as every\n"
		   "                  command's --tid; block I/O and packets stay the devices')\n"
		   "  --comm=NAME[,NAME]  only the tasks of these names, likewise\n"
		   "  --call-tid=TID  gantt --by call: the thread whose calls are drawn (default: the\n"
		   "                  one with most events that --tid/--comm let through)\n"
		   "  --exact         gantt: one bar per interval, even past 20000 (slow to render)\n"
		   "  --keep          keep OUT.gp and the OUT.*.dat data files beside the image\n"
		   "  --data-only     write data and script only (no gnuplot needed)\n"
		   "  -o, --output=OUT  the image to write (its name says the format)\n"
		   "  -h, --help      this text\n"
		   "\nThe files are made in a private directory and moved into place: an existing one\n"
		   "is replaced only when it is a regular file of yours. gnuplot is taken from PATH\n"
		   "only where no user but root and you can change it (or TPP_GNUPLOT=/path).\n");
}

struct plot_args {
	const char *type, *out;
	struct plot_req q;
	struct plot_opts o;
	int keep, data_only;
	struct acli tasks; /* --tid, --comm: the parser and filter of every command */
};

/* -1 to go on, else the exit status. */
static int plot_args(int argc, char **argv, struct plot_args *a)
{
	static const struct option lo[] = {
		{"type", required_argument, 0, 't'}, {"output", required_argument, 0, 'o'},
		{"metrics", required_argument, 0, 'm'}, {"interval", required_argument, 0, 'i'},
		{"by", required_argument, 0, 'b'}, {"call-tid", required_argument, 0, 'T'},
		{"tid", required_argument, 0, 'p'}, {"comm", required_argument, 0, 'c'},
		{"keep", no_argument, 0, 'k'}, {"exact", no_argument, 0, 'x'}, {"data-only", no_argument, 0, 'd'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	int c;
	char *end;
	acli_init(&a->tasks, "plot");
	while ((c = getopt_long(argc, argv, "t:o:m:i:b:T:kdxh", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			a->type = optarg;
			break;
		case 'o':
			a->out = optarg;
			break;
		case 'm':
			a->q.metrics = optarg;
			break;
		case 'i':
			if (parse_duration(optarg, "ms", &a->o.interval) || !a->o.interval) {
				fprintf(stderr, "tracepp plot: bad --interval '%s' (e.g. 10ms, 1s)\n", optarg);
				return 2;
			}
			a->o.cpu_interval = a->o.interval;
			break;
		case 'b':
			a->q.by = optarg;
			break;
		case 'T':
			a->o.call_tid = (int32_t)strtol(optarg, &end, 10);
			if (*end || a->o.call_tid <= 0) {
				fprintf(stderr, "tracepp plot: bad --call-tid '%s'\n", optarg);
				return 2;
			}
			break;
		case 'p':
		case 'c':
			if (acli_opt(&a->tasks, c == 'p' ? 't' : 'c', optarg) < 0)
				return 2;
			break;
		case 'k':
			a->keep = 1;
			break;
		case 'x':
			a->q.exact = 1;
			break;
		case 'd':
			a->data_only = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1 || !a->type || !a->out) {
		fprintf(stderr, "tracepp plot: need one FILE, --type=TYPE and -o OUT\n");
		usage(stderr);
		return 2;
	}
	return -1;
}

static int want_task(void *ctx, int32_t tid)
{
	return acli_task_wanted(ctx, tid, NULL);
}

int cmd_plot(int argc, char **argv)
{
	struct plot_args a = {0};
	int rc = plot_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	const char *type = a.type, *out = a.out;
	struct plot_req q = a.q;
	struct plot_opts o = a.o;
	int keep = a.keep, data_only = a.data_only;
	const char *path = argv[optind];
	int ti = plot_type_index(type);
	if (ti < 0) {
		fprintf(stderr, "tracepp plot: unknown type '%s' (timeline, hist, heatmap, gantt)\n", type);
		return 2;
	}
	/* Cheap checks first: a bad output or missing gnuplot should not cost
	 * a pass over a large trace. */
	struct plot_job probe;
	if (plot_job_init(&probe, out, keep, data_only)) {
		fprintf(stderr, "tracepp plot: %s\n", probe.err);
		return 1;
	}
	plot_job_abort(&probe); /* only its checks and names were wanted */
	char why[700];
	const char *gp = data_only ? NULL : plot_gp_find(why, sizeof(why));
	if (!data_only && !gp) {
		fprintf(stderr, "tracepp plot: %s%sgnuplot not found in PATH (where only root or you can change it): "
				"install it (apt-get install gnuplot-nox) or use --data-only to write the data and script\n",
			why, why[0] ? "; " : "");
		return 1;
	}
	if (why[0])
		fprintf(stderr, "tracepp plot: warning: %s\n", why);
	char errmsg[512];
	struct tpp_reader *r;
	if (tpp_r_open(&r, path, errmsg, sizeof(errmsg)) < 0) {
		fprintf(stderr, "tracepp plot: %s\n", errmsg);
		return 1;
	}
	plot_default_opts(r, &o);
	struct acli *tasks = a.tasks.f.tids || a.tasks.f.comm ? &a.tasks : NULL;
	if (tasks) {
		tasks->path = path;
		if (tpp_names_open(&tasks->names, r) < 0)
			tasks->names = NULL; /* then --comm matches no task */
	}
	if (!strcmp(type, "gantt") && q.by && !strcmp(q.by, "call")) {
		if (!o.call_tid)
			o.call_tid = plot_busiest_thread(r, tasks ? want_task : NULL, tasks);
	} else if (!strcmp(type, "gantt")) {
		o.want_bars = 1;
	}
	char title[300];
	plot_trace_title(r, path, title, sizeof(title));
	q.title = title;

	struct plot_scan s;
	rc = plot_scan(&s, r, path, &o, tasks);
	if (rc < 0) {
		fprintf(stderr, "tracepp plot: %s\n", s.m.err);
		plot_scan_free(&s);
		tpp_r_close(r);
		return 1;
	}
	cli_warn_damaged("plot", s.m.damaged + tpp_r_info(r)->damaged_chunks, tpp_r_error(r));
	if (tasks)
		acli_report_tasks(tasks);
	rc = plot_render(&s.m, ti, &q, out, keep, data_only, gp, errmsg, sizeof(errmsg));
	plot_scan_free(&s);
	if (tasks && tasks->names)
		tpp_names_close(tasks->names);
	tpp_r_close(r);
	if (rc) {
		fprintf(stderr, "tracepp plot: %s\n", errmsg);
		return 1;
	}
	if (data_only)
		printf("tracepp plot: wrote %s/%s.gp and its data; gnuplot not run (--data-only).\n"
		       "Render with:  cd %s && gnuplot %s.gp\n",
		       probe.dir, probe.base, probe.dir, probe.base);
	return 0;
}
