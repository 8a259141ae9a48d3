/* writer_bulk — tpp_w_events1 (the function recorder's batch path) writes
 * the very bytes n tpp_w_event calls write: the same events through both,
 * in batches of every size, across chunk limits by count and by bytes,
 * give identical files; and types it cannot take are refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tpp_format.h"
#include "tpp_test.h"

#define N 200000

static uint16_t ty[N];
static uint64_t ts[N], va[N];

static int write_file(const char *path, int bulk, uint32_t chunk_events, uint32_t chunk_bytes)
{
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o), .chunk_events = chunk_events, .chunk_bytes = chunk_bytes,
			       .wall_offset_ns = 1, .producer = "writer_bulk"};
	unlink(path);
	if (tpp_w_open(&w, path, &o))
		return -1;
	static const struct tpp_field_def a[] = {{"addr", TPP_F_U64}}, p[] = {{"pid", TPP_F_S64}},
					  two[] = {{"a", TPP_F_U64}, {"b", TPP_F_U64}};
	struct tpp_type_def t1 = {1, "func_entry", "tracepp", 1, a}, t2 = {2, "func_exit", "tracepp", 1, a},
			    t3 = {3, "func_thread_exit", "tracepp", 1, p}, t4 = {4, "two", "x", 2, two};
	tpp_w_add_type(w, &t1);
	tpp_w_add_type(w, &t2);
	tpp_w_add_type(w, &t3);
	tpp_w_add_type(w, &t4);
	tpp_w_stream(w, 1000, TPP_S_THREAD, -1, 7, 8);
	tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1);
	int e = 0;
	if (!bulk) {
		for (size_t i = 0; i < N && !e; i++) {
			union tpp_val v = {.u = va[i]};
			e = tpp_w_event(w, 1000, ty[i], ts[i], 8, &v);
		}
	} else {
		uint64_t x = 12345;
		for (size_t i = 0; i < N && !e;) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			size_t m = 1 + (size_t)(x >> 33) % 700;
			if (m > N - i)
				m = N - i;
			e = tpp_w_events1(w, 1000, m, ty + i, ts + i, va + i);
			i += m;
		}
	}
	return tpp_w_close(w) || e ? -1 : 0;
}

static int same(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca, cb, eq = fa && fb;
	while (eq && (ca = fgetc(fa)) == (cb = fgetc(fb)) && ca != EOF)
		;
	eq = eq && ca == cb;
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return eq;
}

int main(void)
{
	uint64_t x = 1, t = 1000000;
	for (size_t i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		ty[i] = (uint16_t)(1 + (x >> 62) % 3);
		/* mostly forward, sometimes back (a chunk then loses its sorted flag) */
		t += (x >> 40) % 3000;
		ts[i] = (x >> 20) % 97 ? t : t - 5000;
		va[i] = ty[i] == 3 ? (uint64_t)-(int64_t)(x % 9) : 0x560000000000ull + (x >> 48);
	}
	char a[] = "/tmp/tpp-bulk-a-XXXXXX", b[] = "/tmp/tpp-bulk-b-XXXXXX";
	close(mkstemp(a));
	close(mkstemp(b));
	const uint32_t limits[][2] = {{0, 0}, {1000, 0}, {65536, 4096}, {7, 0}};
	for (size_t k = 0; k < sizeof(limits) / sizeof(limits[0]); k++) {
		CHECK(write_file(a, 0, limits[k][0], limits[k][1]) == 0, "per event, limits %u/%u", limits[k][0],
		      limits[k][1]);
		CHECK(write_file(b, 1, limits[k][0], limits[k][1]) == 0, "in batches, limits %u/%u", limits[k][0],
		      limits[k][1]);
		CHECK(same(a, b), "identical files, chunk limits %u events / %u bytes", limits[k][0], limits[k][1]);
	}
	/* refused: a CPU stream, a type of two fields, an undefined type */
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o)};
	CHECK(tpp_w_open(&w, a, &o) == 0, "open");
	static const struct tpp_field_def two[] = {{"a", TPP_F_U64}, {"b", TPP_F_U64}}, one[] = {{"a", TPP_F_U64}};
	struct tpp_type_def t1 = {1, "one", "x", 1, one}, t2 = {2, "two", "x", 2, two};
	tpp_w_add_type(w, &t1);
	tpp_w_add_type(w, &t2);
	tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1);
	tpp_w_stream(w, 1000, TPP_S_THREAD, -1, 1, 1);
	uint16_t t_one = 1, t_two = 2, t_none = 9;
	uint64_t z = 0;
	CHECK(tpp_w_events1(w, 0, 1, &t_one, &z, &z) == -EINVAL, "CPU stream refused");
	CHECK(tpp_w_events1(w, 1000, 1, &t_two, &z, &z) == -EINVAL, "two-field type refused");
	CHECK(tpp_w_events1(w, 1000, 1, &t_none, &z, &z) == -EINVAL, "undefined type refused");
	CHECK(tpp_w_events1(w, 5, 1, &t_one, &z, &z) == -ENOENT, "unknown stream refused");
	CHECK(tpp_w_events1(w, 1000, 1, &t_one, &z, &z) == 0, "a good one taken");
	tpp_w_close(w);
	unlink(a);
	unlink(b);
	TEST_DONE();
}
