/* Minimal unit-test harness: CHECK records a failure and goes on; each test
 * program ends with TEST_DONE(), which prints the tally in the form
 * tests/run.sh adds up. */
#ifndef TPP_TEST_H
#define TPP_TEST_H
#include <stdio.h>
#include <stdlib.h>
static int t_pass, t_fail;
#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			t_pass++;                                               \
		} else {                                                        \
			t_fail++;                                               \
			fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
		}                                                               \
	} while (0)
#define TEST_DONE()                                                             \
	do {                                                                    \
		const char *rf = getenv("TPP_RESULTS");                         \
		FILE *f = rf ? fopen(rf, "a") : NULL;                           \
		printf("# %s: %d passed, %d failed\n", __FILE__, t_pass, t_fail); \
		if (f) { fprintf(f, "%d %d 0\n", t_pass, t_fail); fclose(f); }  \
		return t_fail ? 1 : 0;                                          \
	} while (0)
/* Deterministic xorshift64: the same "random" inputs on every run. */
#include <stdint.h>
static uint64_t t_seed = 88172645463325252ull;
static inline uint64_t rnd(void)
{
	t_seed ^= t_seed << 13;
	t_seed ^= t_seed >> 7;
	t_seed ^= t_seed << 17;
	return t_seed;
}
#endif
