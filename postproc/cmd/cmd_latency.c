/* tracepp latency: distributions of function durations, scheduler delays,
 * block IO and network queue latency, with exact percentiles and a log2
 * histogram like DTrace's quantize(). */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "an_merge.h"
#include "cli.h"
#include "commands.h"
#include "an_types.h"
#include "an_syms.h"
#include "an_lat.h"
#include "an_run.h"
#include "an_pair.h"
#include "an_sched.h"
#include "an_io.h"
#include "an_net.h"
#include "fieldfmt.h"

static const char usage_text[] =
	"usage: tracepp latency [OPTIONS] FILE...\n"
	"count, min, avg, p50, p90, p99, p99.9, max and a log2 histogram of:\n"
	"  --func=GLOB      durations of the functions matching GLOB (repeatable)\n"
	"  --sched          wakeup -> on-CPU, run-queue wait, off-CPU time\n"
	"  --io             block IO: issue -> complete (d2c), insert -> complete (q2c)\n"
	"  --net            net_dev_queue -> net_dev_xmit per device\n"
	"  (default: every kind the file has events for)\n"
	"  --no-hist        no histograms in text output\n"
	"  --tid=TID[,TID], --comm=NAME[,NAME] only these tasks' calls and scheduler delays\n"
	"  --format=text|json|csv, --time-range=FROM,TO\n"
	"Percentiles are exact (nearest rank) unless the 'exact' column says 0: then\n"
	"they are at most 1/128 (0.8%) above the true value.\n"
	"Calls that never returned (end of trace, longjmp) are left out and counted.\n"
	ACLI_MULTI_USAGE
	"                           (text: each host's histograms after the table)\n"
	"Merged (without --by-host): one row per function, scheduler delay, device and\n"
	"op or net device across the files, its percentiles those of every file's\n"
	"samples together (exact where every file's were, else 'exact' says 0).\n";

#define MAX_GLOBS 16
struct lat_run {
	struct acli *c;
	const struct an_types *ty;
	const char *globs[MAX_GLOBS];
	int nglobs;
	int want_func, want_sched, want_io, want_net;
	struct an_syms *syms;
	struct an_pair *pair;
	struct an_lat **flat; /* per function id, NULL = not matched (yet) */
	uint8_t *fmatch;      /* per function id: 0 unknown, 1 match, 2 no */
	size_t nf;
	uint64_t noret;
	struct an_sched sched;
	struct an_io io;
	struct an_net net;
	int err;
	int nohist, any; /* --no-hist; some kind was asked for */
	struct amerge *merged; /* several files merged: struct mlat per kind and name */
	uint32_t want[TPP_MAX_TYPES]; /* the fields decoded */
};

static int grow(struct lat_run *r, uint32_t id)
{
	if (id < r->nf)
		return 0;
	size_t nn = r->nf ? r->nf : 256;
	while (nn <= id)
		nn *= 2;
	struct an_lat **a = realloc(r->flat, nn * sizeof(*a));
	if (!a)
		return -ENOMEM;
	r->flat = a;
	uint8_t *m = realloc(r->fmatch, nn);
	if (!m)
		return -ENOMEM;
	r->fmatch = m;
	memset(r->flat + r->nf, 0, (nn - r->nf) * sizeof(*a));
	memset(r->fmatch + r->nf, 0, nn - r->nf);
	r->nf = nn;
	return 0;
}

static void on_exit_(void *ctx, struct an_thread *th, const struct an_call *call,
		     const struct tpp_event *ev)
{
	(void)ev;
	struct lat_run *r = ctx;
	uint32_t id = th->st[th->depth - 1].func;
	if (grow(r, id)) {
		r->err = -ENOMEM;
		return;
	}
	if (!r->fmatch[id]) {
		const char *name = an_func_name(r->syms, id);
		r->fmatch[id] = 2;
		for (int i = 0; i < r->nglobs; i++)
			if (!fnmatch(r->globs[i], name, 0))
				r->fmatch[id] = 1;
	}
	if (r->fmatch[id] != 1)
		return;
	if (call->flags & (AN_CALL_NORET | AN_CALL_UNWOUND | AN_CALL_RESUMED)) {
		r->noret++;
		return;
	}
	if (!r->flat[id]) {
		if (!(r->flat[id] = malloc(sizeof(struct an_lat)))) {
			r->err = -ENOMEM;
			return;
		}
		an_lat_init(r->flat[id]);
	}
	an_lat_add(r->flat[id], call->dur);
}

static const struct an_pair_ops lat_ops = {NULL, on_exit_, NULL};

/* --tid / --comm for the scheduler delays */
static int keep_task(void *ctx, int32_t tid)
{
	return acli_task_wanted(ctx, tid, NULL);
}

static int feed(void *ctx, const struct tpp_event *ev)
{
	struct lat_run *r = ctx;
	int rc = 0;
	uint8_t k = an_ti(r->ty, ev)->kind;
	if (r->want_func && k >= AN_FENTRY && k <= AN_URET) {
		if (acli_task_wanted(r->c, ev->tid, NULL))
			an_pair_feed(r->pair, ev, &rc);
	} else if (r->want_func && (k == AN_SWITCH || k == AN_EXIT)) {
		an_pair_feed(r->pair, ev, &rc);
	}
	if (!rc && r->want_sched)
		rc = an_sched_feed(&r->sched, r->ty, ev);
	if (!rc && r->want_io)
		rc = an_io_feed(&r->io, r->ty, ev);
	if (!rc && r->want_net)
		rc = an_net_feed(&r->net, r->ty, ev);
	return rc ? rc : r->err;
}

static int feed_cols(void *ctx, const struct tpp_run *runs, int n)
{
	return an_sched_feed_cols(&((struct lat_run *)ctx)->sched, runs, n);
}

static const struct tbl_col cols[] = {
	{"kind", NULL, TBL_STR},
	{"name", NULL, TBL_STR},
	{"func", NULL, TBL_DSTR}, /* issue 5's JSON key: function rows; null/empty else */
	{"count", NULL, TBL_INT},
	{"min_ns", "min", TBL_NS},
	{"avg_ns", "avg", TBL_NS},
	{"p50_ns", "p50", TBL_NS},
	{"p90_ns", "p90", TBL_NS},
	{"p99_ns", "p99", TBL_NS},
	{"p999_ns", "p99.9", TBL_NS},
	{"max_ns", "max", TBL_NS},
	{"exact", NULL, TBL_INT},
	{"hist", NULL, TBL_RAWJSON},
};

struct row {
	const char *kind;
	char name[160];
	int is_func;
	struct an_lat *l;
};

/* A kind and name's distribution merged across files. */
struct mlat {
	struct row w;   /* w.l points at l when printed */
	int kind_order; /* the order of one file's rows: func, sched, io, net */
	struct an_lat l;
};

static void quantize(FILE *f, const struct row *w)
{
	const struct an_lat *l = w->l;
	int lo = 64, hi = 0;
	uint64_t peak = 0;
	for (int b = 0; b < 65; b++)
		if (l->log2[b]) {
			if (b < lo)
				lo = b;
			hi = b;
			if (l->log2[b] > peak)
				peak = l->log2[b];
		}
	if (!peak)
		return;
	fprintf(f, "\n%s %s\n%16s  %s %s\n", w->kind, w->name, "value",
		"------------- Distribution -------------", "count");
	if (lo > 0)
		lo--;
	if (hi < 64)
		hi++;
	for (int b = lo; b <= hi; b++) {
		char v[32];
		human_ns(v, sizeof(v), b ? 1ULL << (b - 1) : 0);
		int bar = (int)((l->log2[b] * 40 + peak - 1) / peak);
		if (!l->log2[b])
			bar = 0;
		char bars[41];
		memset(bars, '@', (size_t)bar);
		memset(bars + bar, ' ', (size_t)(40 - bar));
		bars[40] = 0;
		/* human_ns may hold a 2-byte "µ": pad by display width */
		int pad = 16 - (int)strlen(v) + (strstr(v, "µ") ? 1 : 0);
		fprintf(f, "%*s%s |%s %llu\n", pad > 0 ? pad : 0, "", v, bars,
			(unsigned long long)l->log2[b]);
	}
}

static int own_opt(struct acli *c, void *ctx, int opt, const char *arg)
{
	struct lat_run *r = ctx;
	switch (opt) {
	case 'f':
		if (r->nglobs == MAX_GLOBS)
			return acli_usage_error(c, "--func: at most %d patterns", MAX_GLOBS);
		r->globs[r->nglobs++] = arg;
		r->want_func = r->any = 1;
		break;
	case 'S':
		r->want_sched = r->any = 1;
		break;
	case 'I':
		r->want_io = r->any = 1;
		break;
	case 'N':
		r->want_net = r->any = 1;
		break;
	default: /* --no-hist */
		r->nohist = 1;
	}
	return 0;
}

/* The analyses the file (or the options) ask for, opened. 0, or acli's
 * exit status. */
static int lat_open(struct lat_run *r, struct acli *c)
{
	int rc;
	if (!r->any) {
		r->want_func = r->ty->has[AN_FENTRY] || r->ty->has[AN_UENTRY];
		r->want_sched = r->ty->has[AN_SWITCH] > 0;
		r->want_io = r->ty->has[AN_BLK_COMPLETE] > 0;
		r->want_net = r->ty->has[AN_NET_QUEUE] && r->ty->has[AN_NET_XMIT];
		if (r->want_func)
			r->globs[r->nglobs++] = "*";
	}
	if (r->want_func)
		acli_need(c, r->ty->has[AN_FENTRY] || r->ty->has[AN_UENTRY], "function entry");
	/* block and packet latencies are not a task's: the task filter
	 * takes calls and scheduler delays only (--help) */
	c->tasks_unfiltered = !r->want_func && !r->want_sched;
	an_sched_init(&r->sched);
	r->sched.no_comm = 1; /* distributions only */
	if (c->f.tids || c->f.comm) {
		r->sched.keep = keep_task;
		r->sched.keep_ctx = c;
	}
	an_io_init(&r->io);
	an_net_init(&r->net);
	if ((rc = an_syms_open(&r->syms, c->names)) ||
	    (rc = an_pair_open(&r->pair, r->ty, r->syms, c->names, &lat_ops, r)))
		return acli_fail(c, rc, NULL);
	return 0;
}

/* Feeds the file to them (columns for scheduler delays alone) and
 * finishes them. 0, or acli's exit status. */
static int lat_feed_all(struct lat_run *r, struct acli *c, struct an_run_stats *st)
{
	/* only the fields the chosen analyses read are decoded */
	uint32_t *want = r->want;
	if (r->want_func)
		an_want_pairing(r->ty, want);
	/* scheduler delays alone read a few numbers of every event: columns */
	int scan = r->want_sched && !r->want_func && !r->want_io && !r->want_net &&
		   an_sched_want_cols(&r->sched, r->ty, c->r, want, &c->f) == 0;
	if (r->want_sched && !scan)
		an_want_sched(r->ty, want, !r->sched.no_comm);
	for (int k = AN_BLK_INSERT; r->want_io && k <= AN_BLK_COMPLETE; k++)
		an_want_kind(r->ty, want, k);
	for (int k = AN_NET_QUEUE; r->want_net && k <= AN_SOCK_RECV; k++)
		an_want_kind(r->ty, want, k);
	c->f.want = want;
	int rc = scan ? acli_run_cols(c, feed_cols, r, st) : ACLI_GO;
	if (rc == ACLI_GO)
		rc = acli_run(c, feed, r, st);
	if (rc)
		return rc;
	an_pair_finish(r->pair);
	if (r->want_sched) {
		/* waits a switch-in left open for a runtime report end here, as in sched */
		if ((rc = an_sched_finish(&r->sched, c->f.to_ts && c->f.to_ts < st->last_ts ? c->f.to_ts : st->last_ts)))
			return acli_fail(c, rc, NULL);
		c->inferred = (int64_t)r->sched.inferred;
	}
	return 0;
}

/* One row per distribution with samples: functions, scheduler delays,
 * devices. NULL on -ENOMEM. */
static struct row *lat_rows(struct lat_run *r, size_t *nrows)
{
	size_t cap = r->nf + 16 + 4 * r->io.n + r->net.n, n = 0;
	struct row *rows = calloc(cap, sizeof(*rows));
	if (!rows)
		return NULL;
	for (size_t i = 0; i < r->nf; i++)
		if (r->flat[i] && r->flat[i]->count) {
			struct row *w = &rows[n++];
			w->kind = "func";
			w->is_func = 1;
			snprintf(w->name, sizeof(w->name), "%s", an_func_name(r->syms, (uint32_t)i));
			w->l = r->flat[i];
		}
	if (r->want_sched) {
		struct an_lat *ls[] = {&r->sched.wakeup, &r->sched.runq, &r->sched.offcpu};
		const char *names[] = {"wakeup", "runq", "offcpu"};
		for (int i = 0; i < 3; i++) {
			struct row *w = &rows[n++];
			w->kind = "sched";
			snprintf(w->name, sizeof(w->name), "%s", names[i]);
			w->l = ls[i];
		}
	}
	for (size_t i = 0; r->want_io && i < r->io.n; i++) {
		struct an_iodev *d = &r->io.d[i];
		for (int k = 0; k < 2; k++) {
			struct an_lat *l = k ? &d->q2c : &d->d2c;
			if (!l->count)
				continue;
			struct row *w = &rows[n++];
			w->kind = "io";
			char dev[24];
			ff_text(dev, sizeof(dev), FF_DEV, d->dev);
			snprintf(w->name, sizeof(w->name), "%s %s %s", dev, an_io_op_name[d->op], k ? "q2c" : "d2c");
			w->l = l;
		}
	}
	for (size_t i = 0; r->want_net && i < r->net.n; i++) {
		if (!r->net.d[i].qlat.count)
			continue;
		struct row *w = &rows[n++];
		w->kind = "net";
		snprintf(w->name, sizeof(w->name), "%s queue", r->net.d[i].name);
		w->l = &r->net.d[i].qlat;
	}
	*nrows = n;
	return rows;
}

/* The table (and in text the histograms): 0, or 1 when output failed. */
static int lat_print(struct acli *c, const struct lat_run *r, struct row *rows, size_t nrows, int merged)
{
	struct an_lat **ls = malloc((nrows ? nrows : 1) * sizeof(*ls));
	for (size_t i = 0; ls && i < nrows; i++)
		ls[i] = rows[i].l;
	if (ls)
		an_lat_prepare(ls, nrows);
	free(ls);
	/* merged: one table of the files together, as one file's */
	struct table *t = merged ? tbl_open(stdout, c->fmt, cols, sizeof(cols) / sizeof(cols[0]))
				 : acli_tbl_open(c, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; t && i < nrows; i++) {
		struct an_lat *l = rows[i].l;
		char *hist = c->fmt == TBL_JSON ? an_lat_hist_json(l) : NULL;
		struct tbl_cell v[] = {
			{.s = rows[i].kind},
			{.s = rows[i].name},
			{.s = rows[i].is_func ? rows[i].name : NULL},
			{.i = (int64_t)l->count},
			{.i = (int64_t)(l->count ? l->min : 0)},
			{.i = (int64_t)an_lat_avg(l)},
			{.i = (int64_t)an_lat_pct(l, 50)},
			{.i = (int64_t)an_lat_pct(l, 90)},
			{.i = (int64_t)an_lat_pct(l, 99)},
			{.i = (int64_t)an_lat_pct(l, 99.9)},
			{.i = (int64_t)l->max},
			{.i = an_lat_exact(l)},
			{.s = hist},
		};
		if (merged ? tbl_row(t, v) : acli_tbl_row(c, t, v, 0)) {
			if (merged)
				tbl_close(t);
			t = NULL;
		}
		free(hist);
	}
	int rc = t && (merged ? tbl_close(t) : acli_tbl_close(c, t)) == 0 ? 0 : 1;
	FILE *nf = c->fmt != TBL_TEXT || r->nohist ? NULL : merged ? stdout : acli_notes(c);
	if (nf)
		for (size_t i = 0; i < nrows; i++)
			quantize(nf, &rows[i]);
	return rc;
}

/* Calls left out, and a --func that matched nothing. */
static void lat_notes(const struct acli *c, const struct lat_run *r)
{
	if (r->noret)
		fprintf(stderr, "tracepp latency: %s%s%llu call(s) without a return left out\n",
			c->m ? c->path : "", c->m ? ": " : "", (unsigned long long)r->noret);
	if (r->any && r->want_func) { /* --func given: say when it matched nothing */
		size_t i = 0;
		while (i < r->nf && r->fmatch[i] != 1)
			i++;
		if (i == r->nf) {
			char fl[512] = "";
			for (int g = 0; g < r->nglobs; g++)
				cli_filter_add(fl, sizeof(fl), "func", r->globs[g]);
			cli_no_match("latency", c->path, fl);
		}
	}
}

static const char *const kinds[] = {"func", "sched", "io", "net"};

/* A file's distributions into the merged ones (theirs left empty). 0 or
 * -ENOMEM. */
static int lat_merge(struct lat_run *r, const struct row *rows, size_t nrows)
{
	for (size_t i = 0; i < nrows; i++) {
		char key[sizeof(rows[i].name) + 8];
		int kl = snprintf(key, sizeof(key), "%s%c%s", rows[i].kind, 0, rows[i].name), made;
		struct mlat *e = amerge_get(r->merged, key, (size_t)kl, &made);
		if (!e)
			return -ENOMEM;
		if (made) {
			e->w = rows[i];
			while (e->kind_order < 3 && strcmp(kinds[e->kind_order], rows[i].kind))
				e->kind_order++;
			an_lat_init(&e->l);
		}
		an_lat_merge(&e->l, rows[i].l);
	}
	return 0;
}

static int by_kind(const void *a, const void *b)
{
	const struct mlat *x = *(const struct mlat *const *)a, *y = *(const struct mlat *const *)b;
	if (x->kind_order != y->kind_order)
		return x->kind_order < y->kind_order ? -1 : 1;
	return x < y ? -1 : x > y; /* first come first: the entries' order */
}

/* After the last file: the merged rows, in one file's order of kinds. */
static int lat_done(struct acli *c, void *ctx)
{
	struct lat_run *r = ctx;
	size_t n = r->merged->n;
	struct mlat **es = malloc((n ? n : 1) * sizeof(*es));
	struct row *rows = malloc((n ? n : 1) * sizeof(*rows));
	int rc = 1;
	if (!es || !rows) {
		fprintf(stderr, "tracepp latency: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		es[i] = amerge_at(r->merged, i);
	qsort(es, n, sizeof(*es), by_kind);
	for (size_t i = 0; i < n; i++) {
		rows[i] = es[i]->w;
		rows[i].l = &es[i]->l;
	}
	rc = lat_print(c, r, rows, n, 1);
out:
	free(es);
	free(rows);
	return rc;
}

/* One file: its analyses, rows and notes, from the options in *opt.
 * 0 or the exit status. */
static int lat_file(struct acli *c, void *ctx)
{
	struct lat_run r = *(const struct lat_run *)ctx;
	r.c = c;
	r.ty = c->ty;
	struct row *rows = NULL;
	size_t nrows = 0;
	struct an_run_stats st;
	int rc;
	if ((rc = lat_open(&r, c)) || (rc = lat_feed_all(&r, c, &st)))
		goto out;
	if (!(rows = lat_rows(&r, &nrows))) {
		rc = acli_fail(c, -ENOMEM, NULL);
		goto out;
	}
	if (acli_merged(c))
		rc = lat_merge(&r, rows, nrows) ? acli_fail(c, -ENOMEM, NULL) : 0;
	else
		rc = lat_print(c, &r, rows, nrows, 0);
	lat_notes(c, &r);
	acli_report_run(c, &st);
out:
	free(rows);
	for (size_t i = 0; i < r.nf; i++)
		if (r.flat[i]) {
			an_lat_free(r.flat[i]);
			free(r.flat[i]);
		}
	free(r.flat);
	free(r.fmatch);
	an_pair_close(r.pair);
	an_syms_close(r.syms);
	an_sched_free(&r.sched);
	an_io_free(&r.io);
	an_net_free(&r.net);
	return rc;
}

int cmd_latency(int argc, char **argv)
{
	static const struct option lo[] = {{"func", required_argument, 0, 'f'},
					   {"sched", no_argument, 0, 'S'},
					   {"io", no_argument, 0, 'I'},
					   {"net", no_argument, 0, 'N'},
					   {"no-hist", no_argument, 0, 'H'},
					   {0, 0, 0, 0}};
	struct lat_run opt; /* the options alone: each file starts from them */
	memset(&opt, 0, sizeof(opt));
	struct amerge merged;
	amerge_init(&merged, sizeof(struct mlat));
	opt.merged = &merged;
	const struct acli_spec spec = {.cmd = "latency", .usage = usage_text, .opts = lo,
				       .shortopts = "f:", .opt = own_opt, .ctx = &opt, .multi_file = 1};
	struct acli c;
	int rc = acli_start(&c, &spec, argc, argv);
	if (rc != ACLI_GO)
		return rc;
	rc = acli_each(&c, lat_file, lat_done, &opt);
	for (size_t i = 0; i < merged.n; i++)
		an_lat_free(&((struct mlat *)amerge_at(&merged, i))->l);
	amerge_free(&merged);
	acli_close(&c);
	return rc;
}
