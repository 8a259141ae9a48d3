/* Latency distributions: exact nearest-rank percentiles while the samples
 * fit the budget, and within the stated bound (at most 1/128 above the true
 * value, never below it) once a distribution has gone past it. The truth is
 * arithmetic: a shuffled 1..N has the value k at rank k. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "tpp_test.h"
#include "../../postproc/analysis/an_lat.h"

static uint64_t truth(uint64_t n, double p)
{
	uint64_t r = (uint64_t)ceil(p / 100.0 * (double)n);
	return r < 1 ? 1 : r;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static void fill(struct an_lat *l, uint64_t n, uint64_t mul)
{
	/* 1..n in a scrambled order: steps of a stride coprime to n */
	uint64_t step = 2654435761u % n;
	while (step < 2 || gcd(step, n) != 1)
		step++;
	for (uint64_t i = 0, x = 0; i < n; i++, x = (x + step) % n)
		an_lat_add(l, (x + 1) * mul);
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	static const double ps[] = {1, 50, 90, 99, 99.9, 100};
	/* small: exact */
	struct an_lat a;
	an_lat_init(&a);
	fill(&a, 100003, 1);
	CHECK(an_lat_exact(&a) && a.count == 100003 && a.min == 1 && a.max == 100003, "small one is exact");
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		CHECK(an_lat_pct(&a, ps[i]) == truth(100003, ps[i]), "p%g = %llu, want %llu", ps[i],
		      (unsigned long long)an_lat_pct(&a, ps[i]), (unsigned long long)truth(100003, ps[i]));
	CHECK(an_lat_avg(&a) == 50002, "avg %llu", (unsigned long long)an_lat_avg(&a));
	/* past the budget (shared with a, still held): inexact, bounded */
	struct an_lat b;
	an_lat_init(&b);
	uint64_t n = AN_LAT_BUDGET + 4097;
	fill(&b, n, 1000);
	CHECK(!an_lat_exact(&b) && b.count == n, "a distribution past the budget goes inexact");
	CHECK(an_lat_exact(&a), "the other one stays exact");
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		uint64_t t = truth(n, ps[i]) * 1000, g = an_lat_pct(&b, ps[i]);
		CHECK(g >= t && (double)g <= (double)t * (1 + AN_LAT_REL_ERR), "p%g = %llu, true %llu", ps[i],
		      (unsigned long long)g, (unsigned long long)t);
	}
	CHECK(b.min == 1000 && b.max == n * 1000, "min and max stay exact");
	an_lat_free(&b);
	/* the budget freed: a new distribution is exact again */
	struct an_lat c;
	an_lat_init(&c);
	fill(&c, 1u << 20, 3);
	CHECK(an_lat_exact(&c) && an_lat_pct(&c, 50) == 3 * truth(1u << 20, 50), "exact after a free");
	an_lat_free(&a);
	an_lat_free(&c);
	/* samples of 2^32 ns and more are kept apart: mixed in, small and
	 * large distributions still give every percentile exactly */
	for (uint64_t m = 1000; m <= 300000; m *= 300) {
		struct an_lat d;
		an_lat_init(&d);
		uint64_t *all = malloc(m * sizeof(*all)), x = 12345;
		for (uint64_t i = 0; i < m; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			all[i] = i % 5 == 0 ? (1ull << 32) + x % (1ull << 36) : x % 5000000;
			an_lat_add(&d, all[i]);
		}
		qsort(all, m, sizeof(*all), cmp); /* the truth */
		CHECK(an_lat_exact(&d) && d.max == all[m - 1] && d.min == all[0], "%llu mixed samples: exact",
		      (unsigned long long)m);
		for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
			uint64_t t = all[truth(m, ps[i]) - 1], g = an_lat_pct(&d, ps[i]);
			CHECK(g == t, "%llu mixed: p%g = %llu, want %llu", (unsigned long long)m, ps[i],
			      (unsigned long long)g, (unsigned long long)t);
		}
		free(all);
		an_lat_free(&d);
	}
	/* ready ahead on two threads: the same percentiles as asked one by one */
	{
		struct an_lat d[3];
		struct an_lat *ls[3] = {&d[0], &d[1], &d[2]};
		for (int k = 0; k < 3; k++) {
			an_lat_init(&d[k]);
			fill(&d[k], 60000 + 7919 * (uint64_t)k, (uint64_t)k + 1);
		}
		an_lat_prepare(ls, 3);
		for (int k = 0; k < 3; k++)
			for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
				uint64_t n = 60000 + 7919 * (uint64_t)k, t = truth(n, ps[i]) * ((uint64_t)k + 1);
				CHECK(an_lat_pct(&d[k], ps[i]) == t, "prepared %d: p%g = %llu, want %llu", k, ps[i],
				      (unsigned long long)an_lat_pct(&d[k], ps[i]), (unsigned long long)t);
			}
		for (int k = 0; k < 3; k++)
			an_lat_free(&d[k]);
	}
	TEST_DONE();
}
