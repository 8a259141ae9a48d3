/* clock — the file's time base: samples of CLOCK_REALTIME - CLOCK_MONOTONIC
 * taken by the writer (at open, about every second at chunk writes, at
 * close), and the wall-clock time of a monotonic timestamp interpolated
 * between them (specs/format.md, "Time base").
 *
 * Why bracket: a realtime read between two monotonic reads is known only to
 * lie somewhere in that bracket (a preemption can widen it to milliseconds),
 * so the offset is taken against the bracket's middle and its error is half
 * the bracket; of a few tries the tightest wins. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "tpp_format.h"

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

int tpp_clock_measure(struct tpp_clock_sample *s)
{
	int got = 0;
	for (int i = 0; i < 5; i++) {
		struct timespec m0, r, m1;
		if (clock_gettime(CLOCK_MONOTONIC, &m0) || clock_gettime(CLOCK_REALTIME, &r) ||
		    clock_gettime(CLOCK_MONOTONIC, &m1))
			return -errno;
		int64_t a = ns_of(&m0), b = ns_of(&m1);
		int64_t err = (b - a + 1) / 2;
		if (!got || err < s->err_ns) {
			s->mono_ns = (uint64_t)(a + (b - a) / 2);
			s->offset_ns = ns_of(&r) - (int64_t)s->mono_ns;
			s->err_ns = err;
			got = 1;
		}
	}
	return 0;
}

/* Offsets, errors and times are worked in 128 bits (hours of drift over
 * hours of recording neither overflow nor lose nanoseconds; a file's values
 * are untrusted) and saturated back into 64. */
typedef __int128 i128;
static int64_t sat64(i128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* x * y / d (d > 0), saturated where x * y overflows 128 bits: values
 * from the file reach 2^64 each, and a product of two 2^129. Far beyond
 * 2^64 either way, the caller's sat64 says the same. */
static i128 mul_div(i128 x, i128 y, i128 d)
{
	i128 p;
	if (__builtin_mul_overflow(x, y, &p))
		return (x < 0) != (y < 0) ? -((i128)1 << 100) : (i128)1 << 100;
	return p / d;
}

/* The offset's change from sample a to b carried over dt ns. */
static i128 slope_over(const struct tpp_clock_sample *a, const struct tpp_clock_sample *b, i128 dt)
{
	return mul_div((i128)b->offset_ns - (i128)a->offset_ns, dt, (i128)b->mono_ns - (i128)a->mono_ns);
}

int64_t tpp_clock_wall(const struct tpp_clock *c, uint64_t mono, int64_t *err_ns)
{
	i128 err = -1;
	i128 off = 0;
	if (!c || !c->n) {
		/* no time base at all: the monotonic time, of unknown error */
	} else if (c->n == 1 || !c->s[0].mono_ns) {
		/* one sample (an older file: the start offset only): a constant
		 * offset; its drift since the sample is not known */
		off = c->s[0].offset_ns;
		if (c->n == 1 && c->s[0].mono_ns && mono == c->s[0].mono_ns)
			err = c->s[0].err_ns;
	} else {
		/* the segment holding mono, or the first/last one outside them */
		size_t lo = 0, hi = c->n - 1;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (c->s[mid].mono_ns <= mono)
				lo = mid;
			else
				hi = mid;
		}
		const struct tpp_clock_sample *a = &c->s[lo], *b = &c->s[hi];
		i128 dt = (i128)mono - (i128)a->mono_ns;
		off = a->offset_ns + slope_over(a, b, dt);
		if (a->err_ns >= 0 && b->err_ns >= 0) {
			if (mono <= a->mono_ns || mono >= b->mono_ns) {
				/* outside the samples (events before the first, or after
				 * the last of a recovered file): the nearest sample's
				 * error plus the drift the segment's slope would add */
				const struct tpp_clock_sample *near = mono <= a->mono_ns ? a : b;
				i128 d = slope_over(a, b, (i128)mono - (i128)near->mono_ns);
				err = near->err_ns + (d < 0 ? -d : d);
			} else {
				/* between: the errors blend like the offsets */
				err = a->err_ns + mul_div((i128)b->err_ns - a->err_ns, dt,
							  (i128)b->mono_ns - (i128)a->mono_ns);
			}
		}
	}
	if (err_ns)
		*err_ns = err < 0 ? -1 : sat64(err);
	return sat64((i128)mono + off);
}

static int cmp_sample(const void *x, const void *y)
{
	const struct tpp_clock_sample *a = x, *b = y;
	return a->mono_ns < b->mono_ns ? -1 : a->mono_ns > b->mono_ns;
}

int tpp_clock_add(struct tpp_clock *c, const struct tpp_clock_sample *s)
{
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 8;
		struct tpp_clock_sample *n = realloc(c->s, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->s = n;
		c->cap = nc;
	}
	c->s[c->n++] = *s;
	return 0;
}

void tpp_clock_done(struct tpp_clock *c)
{
	if (c->n < 2)
		return;
	qsort(c->s, c->n, sizeof(*c->s), cmp_sample);
	/* one sample per monotonic time (either one): a second adds no
	 * segment, and a zero-length one would divide by zero */
	size_t k = 1;
	for (size_t i = 1; i < c->n; i++)
		if (c->s[i].mono_ns != c->s[k - 1].mono_ns)
			c->s[k++] = c->s[i];
	c->n = k;
}

void tpp_clock_free(struct tpp_clock *c)
{
	free(c->s);
	c->s = NULL;
	c->n = c->cap = 0;
}
