/* an_lat — a latency distribution: count, sum, min, max, log2 histogram
 * and percentiles, the one implementation every command and plot takes
 * its percentiles from. Memory is bounded for the whole process
 * (AN_LAT_BUDGET samples in all distributions together). Lifecycle:
 * an_lat_init .. an_lat_free, the struct is the caller's. Allocation
 * failures degrade to the inexact histogram, never an error. Nothing here
 * prints.
 */
#ifndef TPP_AN_LAT_H
#define TPP_AN_LAT_H
#include <stdint.h>
#include <stddef.h>

/* Exact while the process holds fewer than AN_LAT_BUDGET samples in all
 * distributions together; past that a distribution keeps a log-linear
 * histogram (128 sub-buckets per power of two), and its percentiles are the
 * bucket's upper bound: at most AN_LAT_REL_ERR above the true value. */
#define AN_LAT_BUDGET (8u << 20)
#define AN_LAT_REL_ERR (1.0 / 128)
struct an_lat {
	uint64_t count, min, max;
	/* exact integer sum: an x87 add per sample showed in profiles */
	unsigned __int128 sum;
	uint64_t log2[65]; /* [0]: value 0; [k]: 2^(k-1) <= v < 2^k */
	/* Samples while exact: below 2^32 ns (4.3 s) in 4 bytes, which halves
	 * the memory (faulting it in was a tenth of latency --sched), and the
	 * rare longer ones apart. */
	uint32_t *v;
	size_t n, cap;
	size_t vreg;       /* v's huge-page region, 0 when malloc'd */
	uint64_t *big;
	size_t nbig, bigcap;
	uint64_t *srt;     /* all samples sorted, for small distributions */
	uint64_t *fine;    /* log-linear buckets once inexact */
	int sorted;        /* srt holds every sample */
	/* an_lat_pct's counts of v[0..sel_n) per log-linear bucket: a rank
	 * is found in its bucket instead of by sorting every sample */
	uint32_t *sel;
	size_t sel_n;
	/* buckets gathered and sorted, with the samples below each: the
	 * percentiles a command prints come from one pass over the samples */
	struct an_lat_pick {
		uint32_t b, n;
		uint64_t below, *v;
	} *pick;
	unsigned npick;
};
void an_lat_init(struct an_lat *l);
void an_lat_free(struct an_lat *l);
/* The summary every sample updates, exact or not. */
static inline void an_lat_tally(struct an_lat *l, uint64_t v)
{
	l->count++;
	l->sum += v;
	if (v < l->min)
		l->min = v;
	if (v > l->max)
		l->max = v;
	l->log2[v ? 64 - __builtin_clzll(v) : 0]++;
	l->sorted = 0;
}
/* Past the fast case of an_lat_add: growing, the budget, inexact. */
void an_lat_add_slow(struct an_lat *l, uint64_t v);
/* Adds a sample; inline while the exact array has room (a call per sample
 * showed in the sched latency profile). */
static inline void an_lat_add(struct an_lat *l, uint64_t v)
{
	if (__builtin_expect(!(v >> 32) && l->n < l->cap && l->count == l->n + l->nbig && !l->fine, 1)) {
		an_lat_tally(l, v);
		l->v[l->n++] = (uint32_t)v;
		return;
	}
	an_lat_add_slow(l, v);
}
int an_lat_exact(const struct an_lat *l);
/* Nearest-rank percentile p (0 < p <= 100). Exact: counts the samples per
 * log-linear bucket once, then sorts only the rank's bucket. */
uint64_t an_lat_pct(struct an_lat *l, double p);
/* Readies the percentiles commands print (p50, p90, p99, p99.9) of n
 * distributions at once, sharing the work with a second thread when there
 * is enough of it; an_lat_pct then only looks them up. Optional. */
void an_lat_prepare(struct an_lat *const *ls, size_t n);
static inline uint64_t an_lat_avg(const struct an_lat *l)
{
	return l->count ? (uint64_t)((long double)l->sum / l->count) : 0;
}
/* Adds src's samples to dst and leaves src empty (freed, as after
 * an_lat_init): several files' distributions of one function or device
 * become one, whose percentiles are those of the union. Exact when both
 * were exact and the union fits the budget (one 2 MiB step to spare: the
 * samples move in steps, src's memory given back as dst takes it, so the
 * budget holds at every instant); else the log-linear histogram of both
 * (or, out of memory, the log2 one), as an_lat_add degrades. */
void an_lat_merge(struct an_lat *dst, struct an_lat *src);
/* Sample slots (of the budget) the process's distributions hold now, and
 * the most they ever held at once: never above AN_LAT_BUDGET, merges
 * included (a slot counts until its memory is given back). */
size_t an_lat_held(void);
size_t an_lat_held_peak(void);
/* JSON array [[lo, hi, count], ...] of the non-empty log2 buckets, malloc'd. */
char *an_lat_hist_json(const struct an_lat *l);
#endif
