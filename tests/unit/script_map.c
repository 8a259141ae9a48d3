/* script_map — the hash table behind tracepp script's maps, held against a
 * plain array under random puts, deletes (tombstones, entries moved to fill
 * holes) and clears, with keys of one, two and no words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc_int.h"
#include "tpp_test.h"

#define SPACE 3000

static void run(uint32_t nkw)
{
	struct sc_map m;
	static uint64_t want[SPACE];
	static int have[SPACE];
	memset(want, 0, sizeof(want));
	memset(have, 0, sizeof(have));
	static const uint64_t init[2] = {7, 9};
	CHECK(sc_map_init(&m, nkw, 2, init) == 0, "init");
	long bad = 0, ops = 200000;
	uint32_t space = nkw ? SPACE : 1;
	for (long i = 0; i < ops; i++) {
		uint32_t k = (uint32_t)(rnd() % space);
		uint64_t key[2] = {k, k * 0x9e3779b97f4a7c15ull};
		int op = (int)(rnd() % 100);
		if (op < 60) {
			uint64_t *v = sc_map_put(&m, key);
			if (!v) {
				bad++;
				break;
			}
			if (!have[k])
				bad += v[0] != 7 || v[1] != 9; /* a new entry starts from init */
			have[k] = 1;
			v[0] += k;
			want[k] = v[0];
		} else if (op < 95) {
			bad += sc_map_del(&m, key) != have[k];
			have[k] = 0;
		} else if (op == 99 && rnd() % 50 == 0) {
			sc_map_clear(&m);
			memset(have, 0, sizeof(have));
		} else {
			uint64_t *v = sc_map_get(&m, key);
			bad += (v != NULL) != have[k] || (v && v[0] != want[k]);
		}
	}
	uint32_t n = 0;
	for (uint32_t k = 0; k < space; k++) {
		uint64_t key[2] = {k, k * 0x9e3779b97f4a7c15ull};
		uint64_t *v = sc_map_get(&m, key);
		bad += (v != NULL) != have[k] || (v && v[0] != want[k]);
		n += (uint32_t)have[k];
	}
	/* the dense array holds exactly the live entries */
	CHECK(m.n == n, "%u keys: %u entries, %u live", nkw, m.n, n);
	for (uint32_t i = 0; i < m.n && nkw; i++) {
		uint64_t k = sc_map_ent(&m, i)[0];
		bad += k >= space || !have[k];
	}
	CHECK(bad == 0, "%u-word keys: %ld disagreements in %ld operations", nkw, bad, ops);
	sc_map_free(&m);
}

int main(void)
{
	run(0);
	run(1);
	run(2);
	TEST_DONE();
}
