/* The one event loop every analysis runs: sorted k-way merge through the
 * decoders, damaged chunks counted and skipped, progress on a terminal. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "analyze.h"

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

int an_run(struct tpp_reader *r, const struct an_filter *f, int show_progress,
	   int (*fn)(void *ctx, const struct tpp_event *ev), void *ctx, struct an_run_stats *st)
{
	memset(st, 0, sizeof(*st));
	struct tpp_iter_opts o = {.sz = sizeof(o), .sorted = 1};
	if (f) {
		o.from_ts = f->from_ts;
		o.to_ts = f->to_ts;
		o.want = f->want;
	}
	uint64_t total = 0;
	for (size_t i = 0; i < tpp_r_nchunks(r); i++)
		if (tpp_r_chunk(r, i)->kind == TPP_C_EVENTS)
			total += tpp_r_chunk(r, i)->count;
	int progress = show_progress && isatty(2) && total > (4u << 20);
	struct tpp_iter *it;
	int rc = tpp_iter_open(&it, r, &o);
	if (rc < 0) {
		snprintf(st->last_error, sizeof(st->last_error), "%s", tpp_r_error(r));
		return rc;
	}
	const struct tpp_event *ev;
	int last_pct = -1;
	uint64_t next_report = 1u << 20;
	for (;;) {
		/* a run of one stream at a time: one call for many events */
		size_t stride;
		rc = tpp_iter_run(it, &ev, &stride);
		if (rc == 0)
			break;
		if (rc < 0) {
			st->damaged++;
			snprintf(st->last_error, sizeof(st->last_error), "%s", tpp_iter_error(it));
			/* The iterator resumes after the damaged chunk; a run of errors
			 * with no progress means it cannot. */
			if (st->damaged > tpp_r_nchunks(r) + 16)
				break;
			continue;
		}
		if (!st->events)
			st->first_ts = ev->ts;
		int n = rc;
		for (int i = 0; i < n; i++) {
			st->last_ts = ev->ts;
			st->events++;
			if ((rc = fn(ctx, ev)) < 0)
				break;
			ev = (const struct tpp_event *)(const void *)((const char *)ev + stride);
		}
		if (rc < 0)
			break;
		if (progress && st->events >= next_report) {
			next_report = st->events + (1u << 20);
			int pct = (int)(st->events * 100 / total);
			if (pct != last_pct)
				fprintf(stderr, "\r%3d%% %llu events", pct, (unsigned long long)st->events);
			last_pct = pct;
		}
	}
	if (progress)
		fputs("\r\033[K", stderr);
	tpp_iter_close(it);
	return rc < 0 ? rc : 0;
}
