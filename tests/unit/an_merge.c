/* an_merge's windows (aspan): the union of several files' recording
 * windows, the denominator of merged rates. The truth is arithmetic on
 * intervals given in every order. */
#include <stdint.h>
#include <string.h>

#include "tpp_test.h"
#include "../../postproc/cmd/an_merge.h"

static uint64_t u(const int64_t (*w)[2], size_t n, int rev)
{
	struct aspan s = {0};
	for (size_t i = 0; i < n; i++) {
		size_t k = rev ? n - 1 - i : i;
		if (aspan_add(&s, w[k][0], w[k][1]))
			return UINT64_MAX;
	}
	uint64_t len = aspan_union(&s);
	aspan_free(&s);
	return len;
}

int main(void)
{
	static const struct {
		int64_t w[6][2];
		size_t n;
		uint64_t want;
		const char *what;
	} cases[] = {
		{{{0}}, 0, 0, "no window"},
		{{{10, 20}}, 1, 10, "one"},
		{{{10, 20}, {10, 20}, {10, 20}}, 3, 10, "the same window thrice (hosts side by side): once"},
		{{{0, 10}, {100, 110}}, 2, 20, "apart (runs at different times): the sum"},
		{{{0, 10}, {5, 15}}, 2, 15, "overlapping"},
		{{{0, 100}, {20, 30}, {40, 50}}, 3, 100, "nested"},
		{{{0, 10}, {10, 20}}, 2, 20, "touching"},
		{{{-50, -40}, {0, 10}, {5, 7}, {30, 40}, {35, 60}, {9, 12}}, 6, 10 + 12 + 30, "mixed, negative"},
		{{{5, 4}, {0, 1}}, 2, 1, "an empty window (end before start) adds nothing"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int rev = 0; rev < 2; rev++) {
			uint64_t got = u(cases[i].w, cases[i].n, rev);
			CHECK(got == cases[i].want, "%s%s: %llu, want %llu", cases[i].what, rev ? " (reversed)" : "",
			      (unsigned long long)got, (unsigned long long)cases[i].want);
		}
	TEST_DONE();
}
