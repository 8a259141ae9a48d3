/* an_run — the loop every analysis is fed by: the events of a file in global
 * time order (or column runs), within a filter (time range, tasks, fields
 * to decode, --where). The reader must outlive the loop.
 * Errors: negative errno values (-ENOMEM, -EINVAL) or tpp_format.h codes;
 * nothing here prints. A damaged chunk is counted and skipped, not an error.
 */
#ifndef TPP_AN_RUN_H
#define TPP_AN_RUN_H
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include "tpp_decode.h"

struct an_run_stats {
	uint64_t events, damaged;
	uint64_t first_ts, last_ts;
	char last_error[200];
};

/* What part of a file an analysis looks at. */
struct an_filter {
	uint64_t from_ts, to_ts; /* 0/0 = all */
	const int32_t *tids;     /* NULL = all */
	size_t ntids;
	const char *comm;        /* task names, comma-separated ("a,b"); NULL = all */
	const uint32_t *want;    /* fields to decode per type, NULL = all */
	/* an_run_cols: tpp_scan_opts.prep */
	void (*prep)(void *ctx, struct tpp_slice *sl, void *state);
	void *prep_ctx;
	/* Optional (--where): an event keep() refuses never reaches the
	 * analysis; keep_want is what it reads, added to want. Only an_run
	 * asks it: an_run_cols returns -ENOTSUP, so callers read rows. */
	int (*keep)(void *ctx, const struct tpp_event *ev);
	void *keep_ctx;
	const uint32_t *keep_want;
};

/* 1 if comm is one of the comma-separated names of list (--comm=a,b). */
static inline int an_comm_match(const char *list, const char *comm)
{
	size_t n = strlen(comm);
	for (const char *p = list;;) {
		size_t k = strcspn(p, ",");
		if (k == n && !memcmp(p, comm, n))
			return 1;
		if (!p[k])
			return 0;
		p += k + 1;
	}
}

/* Calls fn for every event of r in time order within f's time range (f may
 * be NULL), with a progress line on stderr when it is a terminal and
 * show_progress is set. A damaged chunk is counted and skipped. fn returns
 * 0 or a negative error, which stops the loop and is returned. */
int an_run(struct tpp_reader *r, const struct an_filter *f, int show_progress,
	   int (*fn)(void *ctx, const struct tpp_event *ev), void *ctx, struct an_run_stats *st);
/* an_run for a caller that loops over the events itself (one call per run
 * rather than per event): fn gets each run, n >= 1 events of one stream in
 * time order from first on, each stride bytes after the one before, valid
 * until fn returns (runs of one event when f->keep is set). */
int an_run_rows(struct tpp_reader *r, const struct an_filter *f, int show_progress,
		int (*fn)(void *ctx, const struct tpp_event *first, size_t stride, int n), void *ctx,
		struct an_run_stats *st);
/* an_run for analyses that read columns (tpp_scan): fn gets the runs of
 * each tpp_scan_runs call; threads as tpp_scan_opts.threads. -ENOTSUP,
 * before any event, when the file or f->want does not suit a scan. */
int an_run_cols(struct tpp_reader *r, const struct an_filter *f, int threads, int show_progress,
		int (*fn)(void *ctx, const struct tpp_run *runs, int n), void *ctx, struct an_run_stats *st);
/* A progress line on stderr ("\r 42% 1234567 events"), for loops of their
 * own (dump, info) as an_run keeps it: shown only when stderr is a terminal,
 * show is set and the file holds more than 4 Mi events; an_progress after
 * each event (or run of them), an_progress_end before anything else goes to
 * stderr (it clears the line). */
struct an_progress {
	int on, last_pct;
	uint64_t total, next;
};
void an_progress_start(struct an_progress *p, const struct tpp_reader *r, int show);
/* No progress line from here on (a pager owns the terminal). */
void an_progress_off(void);
void an_progress_show(struct an_progress *p, uint64_t events);
static inline void an_progress(struct an_progress *p, uint64_t events)
{
	if (p->on && events >= p->next)
		an_progress_show(p, events);
}
void an_progress_end(const struct an_progress *p);
/* First event timestamp in the file (from the chunk index), 0 if none. */
uint64_t an_first_ts(const struct tpp_reader *r);
uint64_t an_last_ts(const struct tpp_reader *r);
#endif
