/* tracepp io: block IO per device and direction. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "an_merge.h"
#include "commands.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_run.h"
#include "an_io.h"
#include "fieldfmt.h"
#include "out_fast.h"
#include "wallclock.h"

static const char usage_text[] =
	"usage: tracepp io [OPTIONS] FILE...\n"
	"Per device and direction: completed requests, IOPS, bytes, device latency\n"
	"(issue -> complete) percentiles, queue depth, from block_rq_* events.\n"
	"  --format=text|json|csv   output format (default text)\n"
	"  --time-range=FROM,TO     only this window (absolute ns, or 1.5s,2s from the start)\n"
	"  --interval=DURATION      also a time line: one row per device, op and interval\n"
	WALLCLOCK_USAGE
	"                           (the time line gets a wall column)\n"
	ACLI_MULTI_USAGE
	"                           (else time lines merge in wall-clock order, the\n"
	"                           alignment error said once, with the wall column)\n"
	"Merged (without --by-host or --interval): one row per device and op across the\n"
	"files (a device number names a disk on each host: the fleet's disks of that\n"
	"number): counts, bytes and errors added; iops and bytes/s the totals over the\n"
	"union of the files' wall-clock windows (the time any of them recorded: hosts\n"
	"side by side add up, runs at different times average), avg-qd the requests in\n"
	"flight over the union of the device's windows; max-qd the largest; latency\n"
	"percentiles those of every file's requests together.\n";

struct io_run {
	struct acli *c;
	int wall;       /* --clock=wall */
	int64_t worst;  /* the worst clock error of the files so far */
	int unknown;    /* a file's error is not known */
	struct an_io io;
	const struct an_types *ty;
	uint64_t interval, t0, cur;
	/* time line: each device slot's totals at the last interval boundary */
	uint64_t *cnt, *bytes;
	size_t ncnt;
	struct table *tl;
	struct amerge merged; /* several files merged: struct mdev by dev and op */
};

/* A device number and op across files. */
struct mdev {
	char dev[32];
	const char *op;
	uint64_t count, bytes, errors, max_qd;
	long double qd_area;  /* requests in flight x ns, all files */
	struct aspan files;   /* wall-clock windows of the files that have it */
	struct aspan busy;    /* the device's own windows (first request .. last change) */
	struct an_lat d2c, q2c;
};

static const struct tbl_col tl_cols[] = {
	{"t_ns", "time", TBL_NS}, {"dev", NULL, TBL_STR}, {"op", NULL, TBL_STR},
	{"count", NULL, TBL_INT}, {"bytes", NULL, TBL_BYTES}, {"inflight", NULL, TBL_INT},
	{"wall", NULL, TBL_STR}, /* --clock=wall only: the interval's start, UTC */
};

static int flush_interval(struct io_run *r)
{
	if (r->io.n > r->ncnt) {
		size_t nn = r->io.n * 2;
		uint64_t *a = realloc(r->cnt, nn * sizeof(*a));
		if (!a)
			return -ENOMEM;
		r->cnt = a;
		uint64_t *b = realloc(r->bytes, nn * sizeof(*b));
		if (!b)
			return -ENOMEM;
		r->bytes = b;
		memset(r->cnt + r->ncnt, 0, (nn - r->ncnt) * sizeof(*a));
		memset(r->bytes + r->ncnt, 0, (nn - r->ncnt) * sizeof(*b));
		r->ncnt = nn;
	}
	for (size_t i = 0; i < r->io.n; i++) {
		struct an_iodev *d = &r->io.d[i];
		if (d->count == r->cnt[i] && !d->inflight)
			continue;
		char dn[32], iso[40];
		ff_text(dn, sizeof(dn), FF_DEV, d->dev);
		/* on the wall clock: the column, and the order of several hosts'
		 * time lines merged */
		int64_t wall = tpp_clock_wall(tpp_r_clock(r->c->r), r->t0 + r->cur * r->interval, NULL);
		wall_iso(iso, sizeof(iso), wall);
		struct tbl_cell v[] = {{.i = (int64_t)(r->cur * r->interval)}, {.s = dn},
				       {.s = an_io_op_name[d->op]}, {.i = (int64_t)(d->count - r->cnt[i])},
				       {.i = (int64_t)(d->bytes - r->bytes[i])}, {.i = d->inflight}, {.s = iso}};
		if (acli_tbl_row(r->c, r->tl, v, -wall))
			return -ENOMEM;
		r->cnt[i] = d->count;
		r->bytes[i] = d->bytes;
	}
	return 0;
}

static int feed(void *ctx, const struct tpp_event *ev)
{
	struct io_run *r = ctx;
	if (r->interval && ev->ts >= r->t0) {
		uint64_t slot = (ev->ts - r->t0) / r->interval;
		while (slot > r->cur) {
			int rc = flush_interval(r);
			if (rc < 0)
				return rc;
			r->cur++;
		}
	}
	return an_io_feed(&r->io, r->ty, ev);
}

static const struct tbl_col cols[] = {
	{"dev", NULL, TBL_STR},
	{"op", NULL, TBL_STR},
	{"count", NULL, TBL_INT},
	{"bytes", NULL, TBL_BYTES},
	{"iops", NULL, TBL_F64},
	{"bytes_per_s", "bytes/s", TBL_BYTES},
	{"avg_ns", "avg", TBL_NS},
	{"p50_ns", "p50", TBL_NS},
	{"p99_ns", "p99", TBL_NS},
	{"max_ns", "max", TBL_NS},
	{"q2c_p50_ns", "q2c-p50", TBL_NS},
	{"avg_qd", "avg-qd", TBL_F64},
	{"max_qd", "max-qd", TBL_INT},
	{"errors", NULL, TBL_INT},
};

/* One row's numbers, from one file's device or the merged ones. */
static void io_row(struct tbl_cell *v, const char *dev, const char *op, uint64_t count, uint64_t bytes,
		   double iops, double bps, struct an_lat *d2c, struct an_lat *q2c, double avg_qd,
		   uint64_t max_qd, uint64_t errors)
{
	v[0] = (struct tbl_cell){.s = dev};
	v[1] = (struct tbl_cell){.s = op};
	v[2] = (struct tbl_cell){.i = (int64_t)count};
	v[3] = (struct tbl_cell){.i = (int64_t)bytes};
	v[4] = (struct tbl_cell){.f = iops};
	v[5] = (struct tbl_cell){.i = (int64_t)bps};
	v[6] = (struct tbl_cell){.i = (int64_t)an_lat_avg(d2c)};
	v[7] = (struct tbl_cell){.i = (int64_t)an_lat_pct(d2c, 50)};
	v[8] = (struct tbl_cell){.i = (int64_t)an_lat_pct(d2c, 99)};
	v[9] = (struct tbl_cell){.i = (int64_t)(d2c->count ? d2c->max : 0)};
	v[10] = (struct tbl_cell){.i = (int64_t)an_lat_pct(q2c, 50)};
	v[11] = (struct tbl_cell){.f = avg_qd};
	v[12] = (struct tbl_cell){.i = (int64_t)max_qd};
	v[13] = (struct tbl_cell){.i = (int64_t)errors};
}

/* After the last file: one row per device number and op. 0 or 1. */
static int io_done(struct acli *c, void *ctx)
{
	struct io_run *r = ctx;
	if (r->interval)
		return 0; /* time lines: kept by acli, in wall-clock order */
	struct table *t = tbl_open(stdout, c->fmt, cols, sizeof(cols) / sizeof(cols[0]));
	if (!t)
		return acli_fail(c, -ENOMEM, NULL);
	int rc = 0;
	for (size_t i = 0; !rc && i < r->merged.n; i++) {
		struct mdev *d = amerge_at(&r->merged, i);
		uint64_t span = aspan_union(&d->files), dspan = aspan_union(&d->busy);
		double iops = span ? d->count * 1e9 / span : 0, bps = span ? d->bytes * 1e9 / span : 0;
		double avg_qd = dspan ? (double)(d->qd_area / dspan) : 0;
		struct tbl_cell v[14];
		io_row(v, d->dev, d->op, d->count, d->bytes, iops, bps, &d->d2c, &d->q2c, avg_qd, d->max_qd,
		       d->errors);
		rc = tbl_row(t, v);
	}
	return tbl_close(t) || rc ? 1 : 0;
}

static int own_opt(struct acli *c, void *ctx, int opt, const char *arg)
{
	struct io_run *r = ctx;
	if (opt == 'k') {
		if ((r->wall = wallclock_parse("io", arg)) < 0)
			return 2;
		return 0;
	}
	if (parse_duration(arg, "s", &r->interval) || !r->interval)
		return acli_usage_error(c, "--interval: bad duration '%s'", arg);
	return 0;
}

/* One file: its time line or its table. 0 or the exit status. */
static int io_file(struct acli *c, void *ctx)
{
	struct io_run *r = ctx;
	/* the worst clock error of the files, for the merged time line */
	int64_t err, drift;
	if (wallclock_error(c->r, &err, &drift) < 0 || err < 0)
		r->unknown = 1;
	else if (err > r->worst)
		r->worst = err;
	if (!c->m && r->wall && r->interval)
		wallclock_note("io", c->path, c->r);
	an_io_init(&r->io);
	r->ty = c->ty;
	r->cur = 0;
	if (r->ncnt) {
		memset(r->cnt, 0, r->ncnt * sizeof(*r->cnt));
		memset(r->bytes, 0, r->ncnt * sizeof(*r->bytes));
	}
	acli_need(c, r->ty->has[AN_BLK_COMPLETE], "block_rq_complete");
	r->t0 = c->f.from_ts ? c->f.from_ts : c->t0;
	struct an_run_stats st;
	int rc;
	/* several files' time lines merge in wall-clock order: the column
	 * that shows it, with or without --clock=wall (t_ns is each file's own) */
	size_t ntl = sizeof(tl_cols) / sizeof(tl_cols[0]) - !(r->wall || c->m);
	if (r->interval && !(r->tl = acli_tbl_open(c, tl_cols, ntl))) {
		rc = 1;
		goto out;
	}
	if ((rc = acli_run(c, feed, r, &st))) {
		if (r->tl)
			acli_tbl_close(c, r->tl);
		goto out;
	}
	if (r->tl) {
		/* With --interval the output is the time line alone, so that JSON
		 * and CSV stay one table. */
		rc = flush_interval(r) ? 1 : 0;
		rc = acli_tbl_close(c, r->tl) || rc ? 1 : 0;
		r->tl = NULL;
		acli_report_run(c, &st);
		goto out;
	}
	uint64_t span = st.last_ts > st.first_ts ? st.last_ts - st.first_ts : 0;
	int merged = acli_merged(c);
	const struct tpp_clock *clk = tpp_r_clock(c->r);
	struct table *t = merged ? NULL : acli_tbl_open(c, cols, sizeof(cols) / sizeof(cols[0]));
	int failed = !merged && !t;
	for (size_t i = 0; !failed && i < r->io.n; i++) {
		struct an_iodev *d = &r->io.d[i];
		if (!d->count)
			continue;
		char dn[32];
		ff_text(dn, sizeof(dn), FF_DEV, d->dev);
		uint64_t dspan = d->qd_ts > d->first_ts ? d->qd_ts - d->first_ts : 0;
		double iops = span ? d->count * 1e9 / span : 0, bps = span ? d->bytes * 1e9 / span : 0;
		double avg_qd = dspan ? (double)(d->qd_area / dspan) : 0;
		if (merged) {
			char key[48];
			int kl = snprintf(key, sizeof(key), "%s %s", dn, an_io_op_name[d->op]), made;
			struct mdev *e = amerge_get(&r->merged, key, (size_t)kl, &made);
			if (!(failed = !e)) {
				if (made) {
					snprintf(e->dev, sizeof(e->dev), "%s", dn);
					e->op = an_io_op_name[d->op];
					an_lat_init(&e->d2c);
					an_lat_init(&e->q2c);
				}
				e->count += d->count;
				e->bytes += d->bytes;
				e->errors += d->errors;
				e->qd_area += d->qd_area;
				/* rates over wall-clock windows: the hosts' clocks as NTP keeps them */
				failed = aspan_add(&e->files, tpp_clock_wall(clk, st.first_ts, NULL),
						   tpp_clock_wall(clk, st.first_ts + span, NULL)) ||
					 aspan_add(&e->busy, tpp_clock_wall(clk, d->first_ts, NULL),
						   tpp_clock_wall(clk, d->first_ts + dspan, NULL));
				if (d->max_qd > e->max_qd)
					e->max_qd = d->max_qd;
				an_lat_merge(&e->d2c, &d->d2c);
				an_lat_merge(&e->q2c, &d->q2c);
			}
			continue;
		}
		struct tbl_cell v[14];
		io_row(v, dn, an_io_op_name[d->op], d->count, d->bytes, iops, bps, &d->d2c, &d->q2c, avg_qd,
		       d->max_qd, d->errors);
		if (acli_tbl_row(c, t, v, 0))
			failed = 1;
	}
	if (failed)
		acli_fail(c, -ENOMEM, NULL);
	rc = !failed && (merged || acli_tbl_close(c, t) == 0) ? 0 : 1;
	acli_report_run(c, &st);
out:
	an_io_free(&r->io);
	return rc;
}

int cmd_io(int argc, char **argv)
{
	static const struct option lo[] = {{"interval", required_argument, 0, 'i'},
					   {"clock", required_argument, 0, 'k'}, {0, 0, 0, 0}};
	struct io_run r;
	memset(&r, 0, sizeof(r));
	const struct acli_spec spec = {.cmd = "io", .usage = usage_text, .opts = lo,
				       .opt = own_opt, .ctx = &r, .no_tasks = 1, .multi_file = 1};
	struct acli c;
	int rc = acli_start(&c, &spec, argc, argv);
	if (rc != ACLI_GO)
		return rc;
	r.c = &c;
	if (r.wall && !r.interval) {
		rc = acli_usage_error(&c, "--clock=wall needs --interval: only the time line has times");
		acli_close(&c);
		return rc;
	}
	amerge_init(&r.merged, sizeof(struct mdev));
	rc = acli_each(&c, io_file, io_done, &r);
	if (!rc && c.m) {
		if (r.interval) {
			char b[32];
			if (r.unknown)
				fprintf(stderr, "tracepp io: note: time lines merged in wall-clock order; a file's "
					"offset has no known error (an older file), so the order across hosts may be off\n");
			else
				fprintf(stderr, "tracepp io: note: time lines merged in wall-clock order, aligned within "
					"+-%s (the worst file's clock samples; each host's own clock as NTP keeps it)\n",
					human_ns(b, sizeof(b), (uint64_t)r.worst));
		}
	}
	free(r.cnt);
	free(r.bytes);
	for (size_t i = 0; i < r.merged.n; i++) {
		an_lat_free(&((struct mdev *)amerge_at(&r.merged, i))->d2c);
		an_lat_free(&((struct mdev *)amerge_at(&r.merged, i))->q2c);
		aspan_free(&((struct mdev *)amerge_at(&r.merged, i))->files);
		aspan_free(&((struct mdev *)amerge_at(&r.merged, i))->busy);
	}
	amerge_free(&r.merged);
	acli_close(&c);
	return rc;
}
