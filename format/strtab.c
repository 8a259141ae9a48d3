/* strtab — per-chunk string interning: task names and other repeated text
 * cost one small index per event instead of the bytes. */
#include "writer_internal.h"

static uint32_t hash(const char *s, uint32_t n)
{
	/* 8 bytes a step: task names are up to 16 bytes, so two multiplies */
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
		s += 8;
		n -= 8;
	}
	if (n) {
		uint64_t w = 0;
		memcpy(&w, s, n);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return (uint32_t)h;
}

static int rehash(struct strtab *t, uint32_t nslots)
{
	uint64_t *ns = calloc(nslots, sizeof(*ns));
	if (!ns)
		return -1;
	for (uint32_t i = 0; i < t->nslots; i++) {
		uint64_t e = t->slots[i];
		if (!e)
			continue;
		for (uint32_t j = (uint32_t)(e >> 32) & (nslots - 1);; j = (j + 1) & (nslots - 1))
			if (!ns[j]) {
				ns[j] = e;
				break;
			}
	}
	free(t->slots);
	t->slots = ns;
	t->nslots = nslots;
	return 0;
}

int64_t strtab_intern(struct strtab *t, const char *s, uint32_t len)
{
	if (!s)
		len = 0;
	if ((t->n + 1) * 2 > t->nslots && rehash(t, t->nslots ? t->nslots * 2 : 64))
		return -1;
	uint32_t h = hash(s, len);
	uint32_t j = h & (t->nslots - 1);
	for (;; j = (j + 1) & (t->nslots - 1)) {
		uint64_t e = t->slots[j];
		if (!e)
			break;
		if ((uint32_t)(e >> 32) == h) {
			uint32_t i = (uint32_t)e - 1;
			if (t->len[i] == len && (!len || !memcmp(t->pool.data + t->off[i], s, len)))
				return i;
		}
	}
	if (t->n == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 64;
		uint32_t *no = realloc(t->off, nc * sizeof(*no));
		if (!no)
			return -1;
		t->off = no;
		uint32_t *nl = realloc(t->len, nc * sizeof(*nl));
		if (!nl)
			return -1;
		t->len = nl;
		t->cap = nc;
	}
	t->off[t->n] = (uint32_t)t->pool.len;
	t->len[t->n] = len;
	buf_put(&t->pool, s, len);
	if (t->pool.oom)
		return -1;
	t->slots[j] = (uint64_t)h << 32 | (t->n + 1);
	return t->n++;
}

void strtab_reset(struct strtab *t)
{
	t->n = 0;
	t->pool.len = 0;
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
}

void strtab_free(struct strtab *t)
{
	buf_free(&t->pool);
	free(t->off);
	free(t->len);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
