/* Several files' rows, one per key: a string-keyed index over an array. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "an_merge.h"

void amerge_init(struct amerge *m, size_t size)
{
	memset(m, 0, sizeof(*m));
	hmap_init(&m->idx);
	m->size = size;
}

static uint64_t fnv(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
	return h;
}

void *amerge_get(struct amerge *m, const char *key, size_t len, int *made)
{
	*made = 0;
	/* two keys of one hash: the next hash value, until a free one */
	for (uint64_t h = fnv(key, len);; h++) {
		if (h == HMAP_EMPTY)
			continue;
		uint32_t *i = hmap_get(&m->idx, h);
		if (!i) {
			if (m->n == m->cap) {
				size_t nc = m->cap ? m->cap * 2 : 64;
				unsigned char *e = realloc(m->e, nc * m->size);
				if (!e)
					return NULL;
				m->e = e;
				char **k = realloc(m->keys, nc * sizeof(*k));
				if (!k)
					return NULL;
				m->keys = k;
				size_t *l = realloc(m->klen, nc * sizeof(*l));
				if (!l)
					return NULL;
				m->klen = l;
				m->cap = nc;
			}
			if (m->n >= UINT32_MAX || !(m->keys[m->n] = malloc(len + 1)))
				return NULL;
			if (hmap_put(&m->idx, h, (uint32_t)m->n)) {
				free(m->keys[m->n]);
				return NULL;
			}
			memcpy(m->keys[m->n], key, len);
			m->keys[m->n][len] = 0;
			m->klen[m->n] = len;
			memset(amerge_at(m, m->n), 0, m->size);
			*made = 1;
			return amerge_at(m, m->n++);
		}
		if (m->klen[*i] == len && !memcmp(m->keys[*i], key, len))
			return amerge_at(m, *i);
	}
}

struct sort_ctx {
	const struct amerge *m;
	amerge_cmp cmp;
};

static int by_cmp(const void *a, const void *b, void *ctx)
{
	const struct sort_ctx *s = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	int r = s->cmp(amerge_at(s->m, i), s->m->keys[i], amerge_at(s->m, j), s->m->keys[j]);
	return r ? r : i < j ? -1 : i > j;
}

uint32_t *amerge_sorted(const struct amerge *m, amerge_cmp cmp)
{
	uint32_t *ids = malloc((m->n + 1) * sizeof(*ids));
	if (!ids)
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		ids[i] = (uint32_t)i;
	struct sort_ctx s = {m, cmp};
	qsort_r(ids, m->n, sizeof(*ids), by_cmp, &s);
	return ids;
}

void amerge_free(struct amerge *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->klen);
	free(m->e);
	hmap_free(&m->idx);
	memset(m, 0, sizeof(*m));
}

int aspan_add(struct aspan *s, int64_t lo, int64_t hi)
{
	if (hi < lo)
		return 0;
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 8;
		void *nw = realloc(s->w, nc * sizeof(*s->w));
		if (!nw)
			return -ENOMEM;
		s->w = nw;
		s->cap = nc;
	}
	s->w[s->n][0] = lo;
	s->w[s->n][1] = hi;
	s->n++;
	return 0;
}

static int by_lo(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t aspan_union(struct aspan *s)
{
	if (!s->n)
		return 0;
	qsort(s->w, s->n, sizeof(*s->w), by_lo);
	uint64_t len = 0;
	int64_t lo = s->w[0][0], hi = s->w[0][1];
	for (size_t i = 1; i < s->n; i++) {
		if (s->w[i][0] > hi) { /* a gap: the run so far is done */
			len += (uint64_t)(hi - lo);
			lo = s->w[i][0];
		}
		if (s->w[i][1] > hi)
			hi = s->w[i][1];
	}
	return len + (uint64_t)(hi - lo);
}

void aspan_free(struct aspan *s)
{
	free(s->w);
	memset(s, 0, sizeof(*s));
}
