/* scan_check — a column scan (tpp_scan) read in step with a sorted
 * tpp_iter over the same projection: both must give the same events in the
 * same order, the scan's col[k] holding each event's k-th wanted field, and
 * the same damage. Shared by the roundtrip and robustness tests and the
 * fuzz target. */
#ifndef TPP_SCAN_CHECK_H
#define TPP_SCAN_CHECK_H
#include <errno.h>
#include <stdio.h>
#include "tpp_decode.h"

/* The numeric fields of mask (all when NULL), at most TPP_SCAN_COLS a type:
 * what a scan accepts. */
static inline void scan_want(const struct tpp_reader *r, const uint32_t *mask, uint32_t *want)
{
	for (unsigned id = 0; id < TPP_MAX_TYPES; id++) {
		const struct tpp_type *t = tpp_r_type(r, (uint16_t)id);
		unsigned k = 0;
		want[id] = 0;
		for (unsigned f = 0; t && f < t->nfields && f < 32 && k < TPP_SCAN_COLS; f++)
			if ((!mask || mask[id] >> f & 1) && t->fields[f].type <= TPP_F_S64) {
				want[id] |= 1u << f;
				k++;
			}
	}
}

struct scan_cmp {
	long events, diffs, damaged_iter, damaged_scan;
	struct tpp_iter_stats si, ss;
};

/* Whether scan event i of c equals row ev, wanted fields and all. */
static inline int scan_same(const struct tpp_cols *c, uint32_t i, const struct tpp_event *ev, const uint32_t *want)
{
	if (c->ts[i] != ev->ts || c->tid[i] != ev->tid || c->type[i] != ev->type || c->cpu != ev->cpu ||
	    c->stream != ev->stream)
		return 0;
	unsigned k = 0;
	for (unsigned f = 0; f < ev->nvals && f < 32; f++)
		if (want[ev->type] >> f & 1)
			if (c->col[k++][i] != ev->v[f].u)
				return 0;
	for (; k < TPP_SCAN_COLS; k++)
		if (c->col[k][i])
			return 0;
	return 1;
}

/* 0 with *out filled, -ENOTSUP when the scan refuses the file, or the
 * error either side met opening. */
static inline int scan_vs_iter(struct tpp_reader *r, const uint32_t *want, uint64_t from, uint64_t to, int threads,
			       struct scan_cmp *out)
{
	struct tpp_scan *s;
	struct tpp_scan_opts so = {.sz = sizeof(so), .from_ts = from, .to_ts = to, .want = want, .threads = threads};
	memset(out, 0, sizeof(*out));
	int e = tpp_scan_open(&s, r, &so);
	if (e)
		return e;
	struct tpp_iter *it;
	struct tpp_iter_opts io = {.sz = sizeof(io), .sorted = 1, .from_ts = from, .to_ts = to, .want = want};
	if ((e = tpp_iter_open(&it, r, &io))) {
		tpp_scan_close(s);
		return e;
	}
	struct tpp_run runs[64];
	for (;;) {
		int n = tpp_scan_runs(s, runs, 64);
		if (n == 0)
			break;
		if (n < 0) {
			out->damaged_scan++;
			continue;
		}
		for (int k = 0; k < n; k++)
			for (uint32_t i = runs[k].from; i < runs[k].to; i++) {
				const struct tpp_event *ev;
				int rc;
				while ((rc = tpp_iter_next(it, &ev)) < 0)
					out->damaged_iter++;
				out->events++;
				if (rc != 1 || !scan_same(runs[k].c, i, ev, want)) {
					if (out->diffs++ < 3)
						fprintf(stderr, "scan and iter differ at event %ld\n", out->events);
				}
			}
	}
	const struct tpp_event *ev;
	int rc;
	while ((rc = tpp_iter_next(it, &ev)) != 0)
		if (rc < 0)
			out->damaged_iter++;
		else
			out->diffs++; /* the iterator had more */
	tpp_iter_stats(it, &out->si);
	tpp_scan_stats(s, &out->ss);
	tpp_iter_close(it);
	tpp_scan_close(s);
	return 0;
}

/* Whole-file variant for untrusted files: numeric fields of every type,
 * both thread modes. The number of events, or -1 when the file did not
 * open; *bad counts disagreements with tpp_iter (never expected). */
static inline long scan_all(const char *path, long *bad)
{
	static uint32_t want[TPP_MAX_TYPES];
	struct tpp_reader *r;
	char msg[256];
	*bad = 0;
	if (tpp_r_open(&r, path, msg, sizeof(msg)))
		return -1;
	scan_want(r, NULL, want);
	long events = 0;
	for (int threads = 0; threads < 2; threads++) {
		struct scan_cmp c;
		if (scan_vs_iter(r, want, 0, 0, threads, &c))
			continue;
		*bad += c.diffs + (c.damaged_scan != c.damaged_iter) + (c.ss.events != c.si.events) +
			(c.ss.out_of_order != c.si.out_of_order);
		events = c.events;
	}
	tpp_r_close(r);
	return events;
}
#endif
