/* Latency distributions: exact nearest-rank percentiles while the samples
 * fit the budget, and within the stated bound (at most 1/128 above the true
 * value, never below it) once a distribution has gone past it. The truth is
 * arithmetic: a shuffled 1..N has the value k at rank k. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* A line of /proc/self/status in KiB, -1 if missing. */
static long vm_kib(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return v;
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
	/* merged: three files' distributions of one function are the union's:
	 * the same percentiles as one distribution of every sample */
	{
		struct an_lat part[3], m;
		uint64_t n = 100003;
		an_lat_init(&m);
		for (int k = 0; k < 3; k++)
			an_lat_init(&part[k]);
		uint64_t step = 7919;
		for (uint64_t i = 0, x = 0; i < n; i++, x = (x + step) % n) /* 1..n scrambled, dealt out */
			an_lat_add(&part[x % 3], (x + 1) << (x % 5 == 4 ? 33 : 0));
		struct an_lat one;
		an_lat_init(&one);
		for (uint64_t x = 0; x < n; x++)
			an_lat_add(&one, (x + 1) << (x % 5 == 4 ? 33 : 0));
		uint64_t c3 = part[0].count + part[1].count + part[2].count;
		for (int k = 0; k < 3; k++)
			an_lat_merge(&m, &part[k]);
		CHECK(m.count == c3 && c3 == n && an_lat_exact(&m) && part[1].count == 0 && !part[1].v,
		      "merged: every sample, exact, the parts emptied");
		CHECK(m.min == one.min && m.max == one.max && m.sum == one.sum && !memcmp(m.log2, one.log2, sizeof(m.log2)),
		      "merged summary = one distribution's");
		for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
			CHECK(an_lat_pct(&m, ps[i]) == an_lat_pct(&one, ps[i]), "merged p%g = %llu, one %llu", ps[i],
			      (unsigned long long)an_lat_pct(&m, ps[i]), (unsigned long long)an_lat_pct(&one, ps[i]));
		uint64_t top = one.max;
		an_lat_free(&one);
		/* an exact one and one past the budget: inexact, within the bound */
		struct an_lat big;
		an_lat_init(&big);
		uint64_t nb = AN_LAT_BUDGET + 1000;
		for (uint64_t x = n + 1; x <= n + nb; x++)
			an_lat_add(&big, x);
		CHECK(!an_lat_exact(&big), "past the budget: inexact");
		/* m holds the values 1..n with every fifth shifted: the union's truth by counting */
		an_lat_merge(&m, &big);
		CHECK(!an_lat_exact(&m) && m.count == n + nb && m.max == top, "merged with an inexact one: inexact, all counted");
		uint64_t shifted = 0;
		for (uint64_t x = 0; x < n; x++)
			shifted += x % 5 == 4;
		uint64_t small = m.count - shifted; /* 1..n unshifted, then n+1..n+nb: value = rank */
		for (size_t i = 0; i < 4; i++) { /* p1..p99.9: ranks below the shifted ones */
			uint64_t r = truth(m.count, ps[i]), g = an_lat_pct(&m, ps[i]);
			if (r > small)
				continue;
			/* the unshifted values 1..n without every fifth, then n+1.. */
			uint64_t lo = n - shifted; /* the r-th value of 1..n that is not 5k, then n+1.. */
			uint64_t t = r <= lo ? r + (r - 1) / 4 : n + (r - lo);
			CHECK(g >= t && (double)g <= (double)t * (1 + AN_LAT_REL_ERR), "merged inexact p%g = %llu, true %llu",
			      ps[i], (unsigned long long)g, (unsigned long long)t);
		}
		an_lat_free(&m);
		/* the budget is whole again: a distribution of most of it is exact */
		struct an_lat after;
		an_lat_init(&after);
		for (uint64_t x = 0; x < AN_LAT_BUDGET - 64; x++)
			an_lat_add(&after, x);
		CHECK(an_lat_exact(&after), "merges give back what they held");
		an_lat_free(&after);
	}
	/* A merge holds no more than the budget, even for an instant (review s7
	 * B2: src's slots were given back before its memory, so a union of 7 Mi
	 * samples briefly held 13 Mi). Truth: the counter, and the kernel's
	 * peak resident size (VmHWM, reset through clear_refs) across the merge. */
	{
		CHECK(an_lat_held() == 0, "nothing held before: %zu", an_lat_held());
		struct an_lat a, b;
		an_lat_init(&a);
		an_lat_init(&b);
		uint64_t na = 1u << 20, nb = 6u << 20;
		fill(&a, na, 1);
		for (uint64_t x = 0; x < nb; x++) /* na+1 .. na+nb: the union is 1..na+nb, value = rank */
			an_lat_add(&b, na + 1 + (x * 7919) % nb);
		CHECK(an_lat_exact(&a) && an_lat_exact(&b) && an_lat_held() <= AN_LAT_BUDGET, "both exact, %zu held",
		      an_lat_held());
		long before = vm_kib("VmRSS:"), hwm = -1;
		FILE *f = fopen("/proc/self/clear_refs", "w");
		int reset = f && fputs("5", f) >= 0;
		if (f && fclose(f))
			reset = 0;
		an_lat_merge(&a, &b);
		if (reset)
			hwm = vm_kib("VmHWM:");
		CHECK(an_lat_exact(&a) && a.count == na + nb && b.count == 0 && !b.v, "the union fits: exact, b emptied");
		for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
			CHECK(an_lat_pct(&a, ps[i]) == truth(na + nb, ps[i]), "union p%g = %llu, want %llu", ps[i],
			      (unsigned long long)an_lat_pct(&a, ps[i]), (unsigned long long)truth(na + nb, ps[i]));
		CHECK(an_lat_held_peak() <= AN_LAT_BUDGET, "held at most the budget: peak %zu of %u", an_lat_held_peak(),
		      AN_LAT_BUDGET);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) /* their shadow memory is resident too */
		/* moved 2 MiB a step, src's pages given back as dst takes them: the
		 * peak is the two arrays plus a step or two, not plus b's 24 MiB */
		if (hwm >= 0 && before > 0)
			printf("# merge of %llu + %llu samples: peak resident +%ld KiB, held peak %zu slots\n",
			       (unsigned long long)na, (unsigned long long)nb, hwm - before, an_lat_held_peak());
		if (hwm >= 0 && before > 0)
			CHECK(hwm - before <= 8 * 1024, "peak resident during the merge: +%ld KiB (at most 8 MiB)",
			      hwm - before);
		else
			printf("# no VmHWM reset (clear_refs): resident peak not checked\n");
#else
		(void)hwm;
		(void)before;
#endif
		an_lat_free(&a);
		CHECK(an_lat_held() == 0, "every slot given back: %zu held", an_lat_held());
	}
	TEST_DONE();
}
