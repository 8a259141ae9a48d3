/* tracepp sched: per-task scheduler accounting (schedstat-compatible). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "an_merge.h"
#include "commands.h"
#include "losses.h"
#include "an_types.h"
#include "an_run.h"
#include "an_sched.h"

static const char usage_text[] =
	"usage: tracepp sched [OPTIONS] FILE...\n"
	"Per task: on-CPU time, switches (voluntary / involuntary), migrations,\n"
	"run-queue wait and wakeup latency, from sched_switch/sched_wakeup events,\n"
	"on the kernel's own clock where the file has sched_stat_runtime (as\n"
	"/proc/PID/schedstat counts them). 'partial' marks bounds: start = the task\n"
	"was running or waiting before the first event, end = after the last (lower\n"
	"bounds); gaps = switch-outs missing from the file (its runs end where inferred).\n"
	"  --format=text|json|csv   output format (default text)\n"
	"  --time-range=FROM,TO     only this window (absolute ns, or 1.5s,2s from the start)\n"
	"  --tid=TID[,TID]          only these threads     --comm=NAME[,NAME] only these task names\n"
	"  --sort=oncpu|runq|switches|tid   row order (default oncpu)\n"
	"  --idle                   include the idle tasks (tid 0)\n"
	ACLI_MULTI_USAGE
	"                           (text: then the sum over the files)\n"
	"Merged (without --by-host): one row per task name (comm) across the files, as\n"
	"perf sched latency groups by comm: 'tasks' threads of that name, their numbers\n"
	"added (wakeup-avg over all their wakeups, wakeup-max the largest); a tid means\n"
	"nothing on another host. --sort=tid sorts these by name.\n";

static int feed(void *ctx, const struct tpp_event *ev)
{
	struct acli *c = ctx;
	return an_sched_feed(c->user, c->ty, ev);
}

static uint64_t total_switches(const struct an_sched *s)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->t[i].tid) /* the idle task's switch-outs are others' switch-ins */
			n += s->t[i].switches;
	return n;
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
	{"inferred_switch_ins", "inferred", TBL_INT},
	{"partial", NULL, TBL_STR},
};

/* Merged across files: per task name (see sched_done). */
struct mtask {
	uint64_t tasks;
	/* the tasks' counters added; tid and pid the first task's (its row's
	 * when it is the only one) */
	struct an_task sum;
};

static void merge_task(struct mtask *m, const struct an_task *k, int32_t pid)
{
	struct an_task *s = &m->sum;
	if (!m->tasks++) {
		s->tid = k->tid;
		s->pid = pid;
	}
	s->oncpu_ns += k->oncpu_ns;
	s->switches += k->switches;
	s->voluntary += k->voluntary;
	s->involuntary += k->involuntary;
	s->migrations += k->migrations;
	s->runq_wait_ns += k->runq_wait_ns;
	s->wakeups += k->wakeups;
	s->wakeup_lat_n += k->wakeup_lat_n;
	s->wakeup_lat_sum += k->wakeup_lat_sum;
	if (k->wakeup_lat_max > s->wakeup_lat_max)
		s->wakeup_lat_max = k->wakeup_lat_max;
	s->offcpu_ns += k->offcpu_ns;
	s->inferred_in += k->inferred_in;
	s->partial |= k->partial;
}

/* "start", "end", "gaps" joined by commas (enum an_partial), or NULL for a
 * task seen whole */
static const char *partial_name(unsigned p)
{
	static const char *const names[8] = {NULL, "start", "end", "start,end", "gaps", "start,gaps",
					     "end,gaps", "start,end,gaps"};
	return names[p & 7];
}

/* A task's counters as the cells after tid, pid and comm (cols[3..]):
 * one file's task and a name's tasks merged alike. */
#define NCOUNTERS (sizeof(cols) / sizeof(cols[0]) - 3)
static void counter_cells(struct tbl_cell *v, const struct an_task *k)
{
	const struct tbl_cell c[NCOUNTERS] = {
		{.i = (int64_t)k->oncpu_ns},
		{.i = (int64_t)k->switches},
		{.i = (int64_t)k->voluntary},
		{.i = (int64_t)k->involuntary},
		{.i = (int64_t)k->migrations},
		{.i = (int64_t)k->runq_wait_ns},
		{.i = (int64_t)k->wakeups},
		{.i = (int64_t)an_task_wakeup_avg(k)},
		{.i = (int64_t)k->wakeup_lat_max},
		{.i = (int64_t)k->offcpu_ns},
		{.i = (int64_t)k->inferred_in},
		{.s = partial_name(k->partial)},
	};
	memcpy(v, c, sizeof(c));
}

struct sched_opts {
	int idle;
};

static int own_opt(struct acli *c, void *ctx, int opt, const char *arg)
{
	struct sched_opts *o = ctx;
	if (opt == 'i') {
		o->idle = 1;
		return 0;
	}
	if (!strcmp(arg, "oncpu"))
		sort_key = 0;
	else if (!strcmp(arg, "runq"))
		sort_key = 1;
	else if (!strcmp(arg, "switches"))
		sort_key = 2;
	else if (!strcmp(arg, "tid"))
		sort_key = 3;
	else
		return acli_usage_error(c, "--sort: unknown key '%s'", arg);
	return 0;
}

/* The sum over the files, for several. */
struct sched_sum {
	uint64_t tasks, oncpu, switches, inferred;
};

static int64_t row_key(const struct an_task *k)
{
	switch (sort_key) {
	case 1: return (int64_t)k->runq_wait_ns;
	case 2: return (int64_t)k->switches;
	case 3: return -(int64_t)k->tid;
	default: return (int64_t)k->oncpu_ns;
	}
}

/* One file: its analysis, its rows, its notes. 0 or the exit status. */
struct sched_ctx {
	const struct sched_opts *o;
	struct sched_sum sum;
	struct amerge merged; /* several files merged: struct mtask by comm */
};

static int by_mkey(const void *a, const char *ka, const void *b, const char *kb)
{
	const struct mtask *x = a, *y = b;
	uint64_t kx = (uint64_t)row_key(&x->sum), ky = (uint64_t)row_key(&y->sum);
	if (sort_key != 3 && kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(ka, kb);
}

/* After the last file: one row per task name, the columns of one file's
 * with comm and the number of tasks in front. JSON and CSV keep issue 5's
 * tid and pid (its rows are per task): the task's when the name has one
 * task in all the files, else -1 (as a pid the file does not know). 0 or 1. */
static int sched_done(struct acli *c, void *ctx)
{
	const struct amerge *m = &((struct sched_ctx *)ctx)->merged;
	const size_t ncols = sizeof(cols) / sizeof(cols[0]);
	struct tbl_col mcols[sizeof(cols) / sizeof(cols[0]) + 1];
	int ids_too = c->fmt != TBL_TEXT; /* a text table of names reads without them */
	size_t nc = 0;
	if (ids_too) {
		mcols[nc++] = cols[0];
		mcols[nc++] = cols[1];
	}
	mcols[nc++] = cols[2];
	mcols[nc++] = (struct tbl_col){"tasks", NULL, TBL_INT};
	memcpy(mcols + nc, cols + 3, (ncols - 3) * sizeof(*mcols));
	nc += ncols - 3;
	uint32_t *ids = amerge_sorted(m, by_mkey);
	struct table *t = ids ? tbl_open(stdout, c->fmt, mcols, nc) : NULL;
	if (!t) {
		free(ids);
		return acli_fail(c, -ENOMEM, NULL);
	}
	int rc = 0;
	for (size_t i = 0; !rc && i < m->n; i++) {
		const struct mtask *k = amerge_at(m, ids[i]);
		struct tbl_cell all[4 + NCOUNTERS] = {
			{.i = k->tasks == 1 ? k->sum.tid : -1},
			{.i = k->tasks == 1 ? k->sum.pid : -1},
			{.s = m->keys[ids[i]]},
			{.i = (int64_t)k->tasks},
		};
		counter_cells(all + 4, &k->sum);
		rc = tbl_row(t, all + (ids_too ? 0 : 2));
	}
	free(ids);
	return tbl_close(t) || rc ? 1 : 0;
}

static int sched_file(struct acli *c, void *ctx)
{
	const struct sched_opts *o = ((struct sched_ctx *)ctx)->o;
	struct amerge *merged = acli_merged(c) ? &((struct sched_ctx *)ctx)->merged : NULL;
	struct sched_sum *sum = &((struct sched_ctx *)ctx)->sum;
	struct an_sched s;
	an_sched_init(&s);
	c->user = &s;
	acli_need(c, c->ty->has[AN_SWITCH], "sched_switch");
	uint32_t want[TPP_MAX_TYPES] = {0};
	an_want_sched(c->ty, want, 1);
	c->f.want = want;
	struct an_run_stats st;
	int rc;
	if ((rc = acli_run(c, feed, c, &st)))
		goto out;
	if ((rc = an_sched_finish(&s, c->f.to_ts && c->f.to_ts < st.last_ts ? c->f.to_ts : st.last_ts))) {
		rc = acli_fail(c, rc, NULL);
		goto out;
	}
	if (s.n) /* qsort(NULL, 0) is undefined */
		qsort(s.t, s.n, sizeof(*s.t), by_key);
	struct table *t = merged ? NULL : acli_tbl_open(c, cols, sizeof(cols) / sizeof(cols[0]));
	size_t partial_rows = 0;
	int failed = !merged && !t;
	for (size_t i = 0; !failed && i < s.n; i++) {
		struct an_task *k = &s.t[i];
		if (!k->tid && !o->idle)
			continue;
		const char *comm = k->comm[0] ? k->comm : tpp_names_comm(c->names, k->tid);
		if (!acli_task_wanted(c, k->tid, comm))
			continue;
		partial_rows += k->partial != 0;
		sum->tasks++;
		sum->oncpu += k->oncpu_ns;
		sum->switches += k->switches;
		if (merged) {
			int made;
			const char *key = comm ? comm : "";
			struct mtask *e = amerge_get(merged, key, strlen(key), &made);
			if (e)
				merge_task(e, k, tpp_names_pid(c->names, k->tid));
			failed = !e;
			continue;
		}
		struct tbl_cell v[3 + NCOUNTERS] = {
			{.i = k->tid},
			{.i = tpp_names_pid(c->names, k->tid)},
			{.s = comm},
		};
		counter_cells(v + 3, k);
		if (acli_tbl_row(c, t, v, row_key(k)))
			failed = 1;
	}
	if (failed)
		acli_fail(c, -ENOMEM, NULL);
	rc = !failed && (merged || acli_tbl_close(c, t) == 0) ? 0 : 1;
	/* text only: a fleet's JSON or CSV keeps no notes per file */
	FILE *nf = c->fmt == TBL_TEXT ? acli_notes(c) : NULL;
	if (nf) {
		fprintf(nf, "\nclock: %s\n", s.runtime_reports
			? "the kernel's (sched_stat_runtime), as /proc/PID/schedstat counts"
			: "switch and wakeup timestamps (the file has no sched_stat_runtime): run-queue waits "
			  "can differ from /proc/PID/schedstat's");
		/* The kernel does not store every switch from idle into a task
		 * (and a pid filter drops more): how many on-CPU intervals began
		 * at an inferred time rather than a recorded one. */
		fprintf(nf, "switch-ins inferred: %llu of %llu (the file lacks them; %s)\n",
			(unsigned long long)s.inferred, (unsigned long long)total_switches(&s),
			s.runtime_reports ? "where the kernel reported runtime, its clock says when they ran"
					  : "their on-CPU time starts at the CPU's latest earlier event");
		if (partial_rows)
			fprintf(nf, "partial: %zu task(s) ran or waited before the first event (start) or after the "
				"last (end): their on-CPU time and waits are lower bounds; gaps: switch-outs missing "
				"from the file\n", partial_rows);
	}
	sum->inferred += s.inferred;
	c->inferred = (int64_t)s.inferred;
	struct tpp_losses loss;
	tpp_losses(tpp_r_meta(c->r), &loss);
	if (c->fmt != TBL_TEXT && s.inferred && !loss.unstored) /* else the unstored note says it */
		fprintf(stderr, "tracepp sched: note: %s: %llu switch-in(s) missing from the file were "
			"inferred (inferred_switch_ins per task)\n", c->path, (unsigned long long)s.inferred);
	acli_report_run(c, &st);
out:
	an_sched_free(&s);
	c->user = NULL;
	return rc;
}

int cmd_sched(int argc, char **argv)
{
	static const struct option lo[] = {{"sort", required_argument, 0, 's'},
					   {"idle", no_argument, 0, 'i'}, {0, 0, 0, 0}};
	struct sched_opts o = {0};
	const struct acli_spec spec = {.cmd = "sched", .usage = usage_text, .opts = lo,
				       .opt = own_opt, .ctx = &o, .multi_file = 1};
	struct acli c;
	sort_key = 0;
	int rc = acli_start(&c, &spec, argc, argv);
	if (rc != ACLI_GO)
		return rc;
	struct sched_ctx x = {.o = &o};
	amerge_init(&x.merged, sizeof(struct mtask));
	const struct sched_sum *sum = &x.sum;
	rc = acli_each(&c, sched_file, sched_done, &x);
	if (!rc && c.m) {
		if (c.fmt == TBL_TEXT) {
			char b[32];
			printf("\nall %d files: %llu task(s), on-cpu %s, %llu switches, %llu switch-in(s) inferred\n",
			       c.nfiles, (unsigned long long)sum->tasks, human_ns(b, sizeof(b), sum->oncpu),
			       (unsigned long long)sum->switches, (unsigned long long)sum->inferred);
		}
	}
	amerge_free(&x.merged);
	acli_close(&c);
	return rc;
}
