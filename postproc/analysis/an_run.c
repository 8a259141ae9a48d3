/* The one event loop every analysis runs: sorted k-way merge through the
 * decoders, damaged chunks counted and skipped, progress on a terminal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "an_run.h"

uint64_t an_first_ts(const struct tpp_reader *r)
{
	uint64_t t = 0;
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		if (c->kind == TPP_C_EVENTS && c->count && (!t || c->first_ts < t))
			t = c->first_ts;
	}
	return t;
}

uint64_t an_last_ts(const struct tpp_reader *r)
{
	uint64_t t = 0;
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		if (c->kind == TPP_C_EVENTS && c->count && c->last_ts > t)
			t = c->last_ts;
	}
	return t;
}

static int progress_off;

void an_progress_off(void)
{
	progress_off = 1;
}

void an_progress_start(struct an_progress *p, const struct tpp_reader *r, int show)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < tpp_r_nchunks(r); i++)
		if (tpp_r_chunk(r, i)->kind == TPP_C_EVENTS)
			p->total += tpp_r_chunk(r, i)->count;
	p->on = show && !progress_off && isatty(2) && p->total > (4u << 20);
	p->last_pct = -1;
	p->next = 1u << 20;
}

void an_progress_show(struct an_progress *p, uint64_t events)
{
	p->next = events + (1u << 20);
	int pct = (int)(events * 100 / p->total);
	if (pct != p->last_pct)
		fprintf(stderr, "\r%3d%% %llu events", pct, (unsigned long long)events);
	p->last_pct = pct;
}

void an_progress_end(const struct an_progress *p)
{
	if (p->on)
		fputs("\r\033[K", stderr);
}

/* A damaged chunk is counted and skipped; 1 when the damage keeps coming
 * with no progress, and the loop must stop. */
static int damaged(const struct tpp_reader *r, struct an_run_stats *st, const char *msg)
{
	st->damaged++;
	snprintf(st->last_error, sizeof(st->last_error), "%s", msg);
	return st->damaged > tpp_r_nchunks(r) + 16;
}

/* an_run and an_run_rows: fn per event, or fn_rows per run */
static int run(struct tpp_reader *r, const struct an_filter *f, int show_progress,
	       int (*fn)(void *ctx, const struct tpp_event *ev),
	       int (*fn_rows)(void *ctx, const struct tpp_event *first, size_t stride, int n), void *ctx,
	       struct an_run_stats *st)
{
	memset(st, 0, sizeof(*st));
	struct tpp_iter_opts o = {.sz = sizeof(o), .sorted = 1};
	int (*keep)(void *, const struct tpp_event *) = NULL;
	void *keep_ctx = NULL;
	uint32_t *want = NULL;
	if (f) {
		o.from_ts = f->from_ts;
		o.to_ts = f->to_ts;
		o.want = f->want;
		keep = f->keep;
		keep_ctx = f->keep_ctx;
		if (keep && f->want && f->keep_want) {
			if (!(want = malloc(TPP_MAX_TYPES * sizeof(*want))))
				return -ENOMEM;
			for (unsigned i = 0; i < TPP_MAX_TYPES; i++)
				want[i] = f->want[i] | f->keep_want[i];
			o.want = want;
		}
	}
	struct an_progress p;
	an_progress_start(&p, r, show_progress);
	struct tpp_iter *it;
	int rc = tpp_iter_open(&it, r, &o);
	if (rc < 0) {
		free(want);
		snprintf(st->last_error, sizeof(st->last_error), "%s", tpp_r_error(r));
		return rc;
	}
	const struct tpp_event *ev;
	for (;;) {
		/* a run of one stream at a time: one call for many events */
		size_t stride;
		rc = tpp_iter_run(it, &ev, &stride);
		if (rc == 0)
			break;
		if (rc < 0) {
			/* The iterator resumes after the damaged chunk */
			if (damaged(r, st, tpp_iter_error(it)))
				break;
			continue;
		}
		if (!st->events)
			st->first_ts = ev->ts;
		int n = rc;
		if (fn_rows && !keep) {
			st->events += (uint64_t)n;
			st->last_ts = ((const struct tpp_event *)(const void *)((const char *)ev + (size_t)(n - 1) * stride))->ts;
			if ((rc = fn_rows(ctx, ev, stride, n)) < 0)
				break;
			an_progress(&p, st->events);
			continue;
		}
		for (int i = 0; i < n; i++) {
			st->last_ts = ev->ts;
			st->events++;
			if ((!keep || keep(keep_ctx, ev)) && (rc = fn ? fn(ctx, ev) : fn_rows(ctx, ev, 0, 1)) < 0)
				break;
			ev = (const struct tpp_event *)(const void *)((const char *)ev + stride);
		}
		if (rc < 0)
			break;
		an_progress(&p, st->events);
	}
	an_progress_end(&p);
	tpp_iter_close(it);
	free(want); /* read by the iterator until it closes */
	return rc < 0 ? rc : 0;
}

int an_run(struct tpp_reader *r, const struct an_filter *f, int show_progress,
	   int (*fn)(void *ctx, const struct tpp_event *ev), void *ctx, struct an_run_stats *st)
{
	return run(r, f, show_progress, fn, NULL, ctx, st);
}

int an_run_rows(struct tpp_reader *r, const struct an_filter *f, int show_progress,
		int (*fn)(void *ctx, const struct tpp_event *first, size_t stride, int n), void *ctx,
		struct an_run_stats *st)
{
	return run(r, f, show_progress, NULL, fn, ctx, st);
}

int an_run_cols(struct tpp_reader *r, const struct an_filter *f, int threads, int show_progress,
		int (*fn)(void *ctx, const struct tpp_run *runs, int n), void *ctx, struct an_run_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (f && f->keep)
		return -ENOTSUP;
	struct tpp_scan_opts o = {.sz = sizeof(o), .threads = threads};
	if (f) {
		o.from_ts = f->from_ts;
		o.to_ts = f->to_ts;
		o.want = f->want;
		o.prep = f->prep;
		o.prep_ctx = f->prep_ctx;
	}
	struct tpp_scan *s;
	int rc = tpp_scan_open(&s, r, &o);
	if (rc == -ENOTSUP)
		return rc;
	if (rc < 0) {
		snprintf(st->last_error, sizeof(st->last_error), "%s", tpp_r_error(r));
		return rc;
	}
	struct an_progress p;
	an_progress_start(&p, r, show_progress);
	struct tpp_run runs[256];
	for (;;) {
		rc = tpp_scan_runs(s, runs, 256);
		if (rc == 0)
			break;
		if (rc < 0) {
			if (damaged(r, st, tpp_scan_error(s)))
				break;
			continue;
		}
		if (!st->events)
			st->first_ts = runs[0].c->ts[runs[0].from];
		st->last_ts = runs[rc - 1].c->ts[runs[rc - 1].to - 1];
		for (int i = 0; i < rc; i++)
			st->events += runs[i].to - runs[i].from;
		if ((rc = fn(ctx, runs, rc)) < 0)
			break;
		an_progress(&p, st->events);
	}
	an_progress_end(&p);
	tpp_scan_close(s);
	return rc < 0 ? rc : 0;
}
