/* tpp-bench — the format's own speed on one core:
 *   tpp-bench encode FILE N   writes N function entry/exit events (from
 *                             arrays prepared beforehand) and reports events/s
 *   tpp-bench decode FILE [sorted]
 *                             reads, verifies, decompresses and decodes every
 *                             event to typed form; reports events/s */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tpp_decode.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int encode(const char *path, long n)
{
	/* a call-heavy program: a loop over a small call tree, ~50 ns per event */
	uint64_t *ts = malloc((size_t)n * sizeof(*ts)), *addr = malloc((size_t)n * sizeof(*addr));
	uint16_t *ty = malloc((size_t)n * sizeof(*ty));
	uint64_t t = 1000000000, seed = 42, stack[64];
	int depth = 0;
	for (long i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		t += 30 + (seed >> 59);
		ts[i] = t;
		int enter = depth == 0 || (depth < 8 && (i % 7) < 4);
		if (enter) {
			stack[depth++] = 0x555555554000ull + 0x1100 + (uint64_t)((i / 3) % 20) * 0x40;
			addr[i] = stack[depth - 1];
			ty[i] = 1;
		} else {
			addr[i] = stack[--depth];
			ty[i] = 2;
		}
	}
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o)};
	if (tpp_w_open(&w, path, &o))
		return 1;
	static const struct tpp_field_def f[] = {{"addr", TPP_F_U64}};
	struct tpp_type_def t1 = {1, "func_entry", "tracepp", 1, f}, t2 = {2, "func_exit", "tracepp", 1, f};
	tpp_w_add_type(w, &t1);
	tpp_w_add_type(w, &t2);
	tpp_w_stream(w, 1000, TPP_S_THREAD, -1, 1, 1);
	double t0 = now();
	for (long i = 0; i < n; i++)
		tpp_w_event(w, 1000, ty[i], ts[i], 1, (union tpp_val *)&addr[i]);
	int e = tpp_w_close(w);
	double dt = now() - t0;
	printf("encode_events_per_s: %.0f\n", (double)n / dt);
	free(ts);
	free(addr);
	free(ty);
	return e != 0;
}

static int decode(const char *path, int sorted)
{
	double t0 = now();
	struct tpp_reader *r;
	char msg[256];
	if (tpp_r_open(&r, path, msg, sizeof(msg))) {
		fprintf(stderr, "tpp-bench: %s\n", msg);
		return 1;
	}
	struct tpp_iter *it;
	struct tpp_iter_opts o = {.sz = sizeof(o), .sorted = sorted};
	tpp_iter_open(&it, r, &o);
	const struct tpp_event *ev;
	uint64_t n = 0, sum = 0;
	while (tpp_iter_next(it, &ev) > 0) {
		n++;
		sum += ev->ts + (ev->nvals ? ev->v[0].u : 0);
	}
	double dt = now() - t0;
	tpp_iter_close(it);
	tpp_r_close(r);
	printf("decode%s_events_per_s: %.0f (%llu events, checksum %llx)\n", sorted ? "_sorted" : "", (double)n / dt,
	       (unsigned long long)n, (unsigned long long)sum);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "encode"))
		return encode(argv[2], atol(argv[3]));
	if (argc >= 3 && !strcmp(argv[1], "decode"))
		return decode(argv[2], argc > 3 && !strcmp(argv[3], "sorted"));
	fprintf(stderr, "usage: tpp-bench encode FILE N | decode FILE [sorted]\n");
	return 2;
}
