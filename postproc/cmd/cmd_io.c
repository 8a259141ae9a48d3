/* tracepp io: block IO per device and direction. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "commands.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_run.h"
#include "an_io.h"
#include "fieldfmt.h"

static const char usage_text[] =
	"usage: tracepp io [OPTIONS] FILE\n"
	"Per device and direction: completed requests, IOPS, bytes, device latency\n"
	"(issue -> complete) percentiles, queue depth, from block_rq_* events.\n"
	"  --format=text|json|csv   output format (default text)\n"
	"  --time-range=FROM,TO     only this window (absolute ns, or 1.5s,2s from the start)\n"
	"  --interval=DURATION      also a time line: one row per device, op and interval\n";

struct io_run {
	struct an_io io;
	const struct an_types *ty;
	uint64_t interval, t0, cur;
	/* time line: each device slot's totals at the last interval boundary */
	uint64_t *cnt, *bytes;
	size_t ncnt;
	struct table *tl;
};

static const struct tbl_col tl_cols[] = {
	{"t_ns", "time", TBL_NS}, {"dev", NULL, TBL_STR}, {"op", NULL, TBL_STR},
	{"count", NULL, TBL_INT}, {"bytes", NULL, TBL_BYTES}, {"inflight", NULL, TBL_INT},
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
		char dn[32];
		ff_text(dn, sizeof(dn), FF_DEV, d->dev);
		struct tbl_cell v[] = {{.i = (int64_t)(r->cur * r->interval)}, {.s = dn},
				       {.s = an_io_op_name[d->op]}, {.i = (int64_t)(d->count - r->cnt[i])},
				       {.i = (int64_t)(d->bytes - r->bytes[i])}, {.i = d->inflight}};
		tbl_row(r->tl, v);
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

static int own_opt(struct acli *c, void *ctx, int opt, const char *arg)
{
	struct io_run *r = ctx;
	(void)opt; /* --interval only */
	if (parse_duration(arg, "s", &r->interval) || !r->interval)
		return acli_usage_error(c, "--interval: bad duration '%s'", arg);
	return 0;
}

int cmd_io(int argc, char **argv)
{
	static const struct option lo[] = {{"interval", required_argument, 0, 'i'}, {0, 0, 0, 0}};
	struct io_run r;
	memset(&r, 0, sizeof(r));
	const struct acli_spec spec = {.cmd = "io", .usage = usage_text, .opts = lo,
				       .opt = own_opt, .ctx = &r, .no_tasks = 1};
	struct acli c;
	int rc = acli_start(&c, &spec, argc, argv);
	if (rc != ACLI_GO)
		return rc;
	an_io_init(&r.io);
	r.ty = c.ty;
	acli_need(&c, r.ty->has[AN_BLK_COMPLETE], "block_rq_complete");
	r.t0 = c.f.from_ts ? c.f.from_ts : c.t0;
	struct an_run_stats st;
	if (r.interval && !(r.tl = tbl_open(stdout, c.fmt, tl_cols, sizeof(tl_cols) / sizeof(tl_cols[0])))) {
		rc = 1;
		goto out;
	}
	if ((rc = acli_run(&c, feed, &r, &st))) {
		if (r.tl)
			tbl_close(r.tl);
		goto out;
	}
	if (r.tl) {
		/* With --interval the output is the time line alone, so that JSON
		 * and CSV stay one table. */
		flush_interval(&r);
		rc = tbl_close(r.tl) ? 1 : 0;
		acli_report_run(&c, &st);
		goto out;
	}
	uint64_t span = st.last_ts > st.first_ts ? st.last_ts - st.first_ts : 0;
	struct table *t = tbl_open(stdout, c.fmt, cols, sizeof(cols) / sizeof(cols[0]));
	for (size_t i = 0; t && i < r.io.n; i++) {
		struct an_iodev *d = &r.io.d[i];
		if (!d->count)
			continue;
		char dn[32];
		ff_text(dn, sizeof(dn), FF_DEV, d->dev);
		uint64_t dspan = d->qd_ts > d->first_ts ? d->qd_ts - d->first_ts : 0;
		struct tbl_cell v[] = {
			{.s = dn},
			{.s = an_io_op_name[d->op]},
			{.i = (int64_t)d->count},
			{.i = (int64_t)d->bytes},
			{.f = span ? d->count * 1e9 / span : 0},
			{.i = (int64_t)(span ? d->bytes * 1e9 / span : 0)},
			{.i = (int64_t)an_lat_avg(&d->d2c)},
			{.i = (int64_t)an_lat_pct(&d->d2c, 50)},
			{.i = (int64_t)an_lat_pct(&d->d2c, 99)},
			{.i = (int64_t)(d->d2c.count ? d->d2c.max : 0)},
			{.i = (int64_t)an_lat_pct(&d->q2c, 50)},
			{.f = dspan ? (double)(d->qd_area / dspan) : 0},
			{.i = d->max_qd},
			{.i = (int64_t)d->errors},
		};
		tbl_row(t, v);
	}
	rc = t && tbl_close(t) == 0 ? 0 : 1;
	acli_report_run(&c, &st);
out:
	an_io_free(&r.io);
	free(r.cnt);
	free(r.bytes);
	acli_close(&c);
	return rc;
}
