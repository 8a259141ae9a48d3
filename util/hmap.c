#include <errno.h>
#include <stdlib.h>
#include "hmap.h"

void hmap_init(struct hmap *m)
{
	m->s = NULL;
	m->cap = m->n = 0;
}

void hmap_free(struct hmap *m)
{
	free(m->s);
	hmap_init(m);
}

uint32_t *hmap_get(const struct hmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t i = hmap_hash(key) & mask;; i = (i + 1) & mask) {
		if (m->s[i].key == key)
			return &m->s[i].val;
		if (m->s[i].key == HMAP_EMPTY)
			return NULL;
	}
}

static void put_raw(struct hmap_slot *s, size_t cap, uint64_t key, uint32_t val)
{
	size_t mask = cap - 1, i = hmap_hash(key) & mask;
	while (s[i].key != HMAP_EMPTY && s[i].key != key)
		i = (i + 1) & mask;
	s[i].key = key;
	s[i].val = val;
}

int hmap_put(struct hmap *m, uint64_t key, uint32_t val)
{
	uint32_t *v = hmap_get(m, key);
	if (v) {
		*v = val;
		return 0;
	}
	if ((m->n + 1) * 4 > m->cap * 3) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct hmap_slot *ns = malloc(ncap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < ncap; i++)
			ns[i].key = HMAP_EMPTY;
		for (size_t i = 0; i < m->cap; i++)
			if (m->s[i].key != HMAP_EMPTY)
				put_raw(ns, ncap, m->s[i].key, m->s[i].val);
		free(m->s);
		m->s = ns;
		m->cap = ncap;
	}
	put_raw(m->s, m->cap, key, val);
	m->n++;
	return 0;
}

int hmap_del(struct hmap *m, uint64_t key)
{
	if (!m->cap)
		return 0;
	size_t mask = m->cap - 1, i = hmap_hash(key) & mask;
	while (m->s[i].key != key) {
		if (m->s[i].key == HMAP_EMPTY)
			return 0;
		i = (i + 1) & mask;
	}
	/* Backward-shift deletion: move later members of the probe run into
	 * the hole when their home slot is not between the hole and them. */
	size_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (m->s[j].key == HMAP_EMPTY)
			break;
		size_t home = hmap_hash(m->s[j].key) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->s[i] = m->s[j];
			i = j;
		}
	}
	m->s[i].key = HMAP_EMPTY;
	m->n--;
	return 1;
}
