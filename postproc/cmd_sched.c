/* tracepp sched: per-task scheduler accounting (schedstat-compatible). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "commands.h"

static const char usage_text[] =
	"usage: tracepp sched [OPTIONS] FILE\n"
	"Per task: on-CPU time, switches (voluntary / involuntary), migrations,\n"
	"run-queue wait and wakeup latency, from sched_switch/sched_wakeup events.\n"
	"  --format=text|json|csv   output format (default text)\n"
	"  --time-range=START:END   only this window, times from the first event\n"
	"  --tid=TID[,TID]          only these threads     --comm=NAME  only this task name\n"
	"  --sort=oncpu|runq|switches|tid   row order (default oncpu)\n"
	"  --idle                   include the idle tasks (tid 0)\n";

struct sched_run {
	struct an_sched s;
	struct an_types *ty;
};

static int feed(void *ctx, const struct tpp_event *ev)
{
	struct sched_run *r = ctx;
	return an_sched_feed(&r->s, r->ty, ev);
}

static int sort_key;
static int by_key(const void *a, const void *b)
{
	const struct an_task *x = a, *y = b;
	uint64_t kx, ky;
	switch (sort_key) {
	case 1: kx = x->runq_wait_ns; ky = y->runq_wait_ns; break;
	case 2: kx = x->switches; ky = y->switches; break;
	case 3: return x->tid < y->tid ? -1 : x->tid > y->tid;
	default: kx = x->oncpu_ns; ky = y->oncpu_ns;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static const struct tbl_col cols[] = {
	{"tid", NULL, TBL_INT},
	{"pid", NULL, TBL_INT},
	{"comm", NULL, TBL_STR},
	{"oncpu_ns", "on-cpu", TBL_NS},
	{"switches", NULL, TBL_INT},
	{"voluntary", "vol", TBL_INT},
	{"involuntary", "invol", TBL_INT},
	{"migrations", "migr", TBL_INT},
	{"runq_wait_ns", "runq-wait", TBL_NS},
	{"wakeups", NULL, TBL_INT},
	{"wakeup_avg_ns", "wakeup-avg", TBL_NS},
	{"wakeup_max_ns", "wakeup-max", TBL_NS},
	{"offcpu_ns", "off-cpu", TBL_NS},
};

int cmd_sched(int argc, char **argv)
{
	static const struct option lo[] = {ACLI_LONGOPTS, {"sort", required_argument, 0, 's'},
					   {"idle", no_argument, 0, 'i'}, {0, 0, 0, 0}};
	struct acli c;
	acli_init(&c, "sched");
	int opt, idle = 0, rc;
	sort_key = 0;
	while ((opt = getopt_long(argc, argv, "ht:c:", lo, NULL)) != -1) {
		if ((rc = acli_opt(&c, opt, optarg)) < 0)
			return 2;
		if (rc)
			continue;
		switch (opt) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'i':
			idle = 1;
			break;
		case 's':
			if (!strcmp(optarg, "oncpu"))
				sort_key = 0;
			else if (!strcmp(optarg, "runq"))
				sort_key = 1;
			else if (!strcmp(optarg, "switches"))
				sort_key = 2;
			else if (!strcmp(optarg, "tid"))
				sort_key = 3;
			else
				return acli_usage_error(&c, "--sort: unknown key '%s'", optarg);
			break;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if ((rc = acli_open(&c, argc, argv)))
		return rc;
	struct sched_run r;
	an_sched_init(&r.s);
	r.ty = malloc(sizeof(*r.ty));
	if (!r.ty) {
		acli_close(&c);
		return 1;
	}
	an_types_init(r.ty, c.r);
	if (!r.ty->has[AN_SWITCH])
		fprintf(stderr, "tracepp %s: warning: %s has no sched_switch events\n", c.cmd, c.path);
	struct an_run_stats st;
	rc = an_run(c.r, &c.f, 1, feed, &r, &st);
	if (rc < 0) {
		rc = acli_fail(&c, rc, &st);
		goto out;
	}
	an_sched_finish(&r.s, c.f.to_ts && c.f.to_ts < st.last_ts ? c.f.to_ts : st.last_ts);
	qsort(r.s.t, r.s.n, sizeof(*r.s.t), by_key);
	struct table *t = tbl_open(stdout, c.fmt, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; t && i < r.s.n; i++) {
		struct an_task *k = &r.s.t[i];
		if (!k->tid && !idle)
			continue;
		const char *comm = k->comm[0] ? k->comm : tpp_names_comm(c.names, k->tid);
		if (!acli_task_wanted(&c, k->tid, comm))
			continue;
		int32_t pid = tpp_names_pid(c.names, k->tid);
		struct tbl_cell v[] = {
			{.i = k->tid},
			{.i = pid},
			{.s = comm},
			{.i = (int64_t)k->oncpu_ns},
			{.i = (int64_t)k->switches},
			{.i = (int64_t)k->voluntary},
			{.i = (int64_t)k->involuntary},
			{.i = (int64_t)k->migrations},
			{.i = (int64_t)k->runq_wait_ns},
			{.i = (int64_t)k->wakeups},
			{.i = (int64_t)(k->wakeup_lat_n ? k->wakeup_lat_sum / k->wakeup_lat_n : 0)},
			{.i = (int64_t)k->wakeup_lat_max},
			{.i = (int64_t)k->offcpu_ns},
		};
		tbl_row(t, v);
	}
	rc = t && tbl_close(t) == 0 ? 0 : 1;
	if (r.s.inferred)
		fprintf(stderr, "tracepp sched: warning: %llu switch-in(s) missing from the file were "
			"inferred (recorded with a pid filter?)\n", (unsigned long long)r.s.inferred);
	acli_report_run(&c, &st);
out:
	an_sched_free(&r.s);
	free(r.ty);
	acli_close(&c);
	return rc;
}
