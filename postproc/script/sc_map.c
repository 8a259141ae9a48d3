/* sc_map — the hash table behind every map of a program and the engine's
 * own caches. Entries live in one dense array in insertion order, so
 * printing walks an array and an entry is one cache line for small keys;
 * deleted entries are swapped out of the array and leave a tombstone in
 * the slots, which the next rebuild drops. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sc_int.h"

int sc_map_init(struct sc_map *m, uint32_t nkw, uint32_t vw, const uint64_t *init)
{
	memset(m, 0, sizeof(*m));
	m->nkw = nkw;
	m->vw = vw;
	m->ew = nkw + vw;
	m->init = init;
	m->mask = 15;
	if (!(m->slot = calloc(m->mask + 1, sizeof(*m->slot))))
		return -ENOMEM;
	return 0;
}

void sc_map_free(struct sc_map *m)
{
	free(m->ents);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

static inline int same(const uint64_t *a, const uint64_t *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

uint64_t *sc_map_get(const struct sc_map *m, const uint64_t *key)
{
	uint64_t h = sc_hash_words(key, m->nkw);
	for (uint32_t i = (uint32_t)h & m->mask;; i = (i + 1) & m->mask) {
		uint32_t s = m->slot[i];
		if (!s)
			return NULL;
		if (s != SC_TOMB) {
			uint64_t *e = sc_map_ent(m, s - 1);
			if (same(e, key, m->nkw))
				return e + m->nkw;
		}
	}
}

static int rebuild(struct sc_map *m, uint32_t cap)
{
	uint32_t *ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (uint32_t k = 0; k < m->n; k++) {
		uint64_t h = sc_hash_words(sc_map_ent(m, k), m->nkw);
		uint32_t i = (uint32_t)h & (cap - 1);
		while (ns[i])
			i = (i + 1) & (cap - 1);
		ns[i] = k + 1;
	}
	free(m->slot);
	m->slot = ns;
	m->mask = cap - 1;
	m->tombs = 0;
	return 0;
}

uint64_t *sc_map_put(struct sc_map *m, const uint64_t *key)
{
	uint64_t h = sc_hash_words(key, m->nkw);
	uint32_t tomb = UINT32_MAX, i;
	for (i = (uint32_t)h & m->mask;; i = (i + 1) & m->mask) {
		uint32_t s = m->slot[i];
		if (!s)
			break;
		if (s == SC_TOMB) {
			if (tomb == UINT32_MAX)
				tomb = i;
		} else {
			uint64_t *e = sc_map_ent(m, s - 1);
			if (same(e, key, m->nkw))
				return e + m->nkw;
		}
	}
	/* absent: room for one more, the slots at most 3/4 used */
	if ((m->n + m->tombs + 1) * 4 > (m->mask + 1) * 3) {
		uint32_t cap = m->mask + 1;
		if ((m->n + 1) * 2 > cap)
			cap *= 2;
		if (cap > (1u << 30) || rebuild(m, cap))
			return NULL;
		return sc_map_put(m, key);
	}
	if (m->n == m->ecap) {
		uint32_t nc = m->ecap ? m->ecap * 2 : 8;
		uint64_t *ne = realloc(m->ents, (size_t)nc * m->ew * sizeof(*ne));
		if (!ne)
			return NULL;
		m->ents = ne;
		m->ecap = nc;
	}
	if (tomb != UINT32_MAX) {
		i = tomb;
		m->tombs--;
	}
	uint64_t *e = sc_map_ent(m, m->n);
	memcpy(e, key, m->nkw * sizeof(*e));
	if (m->init)
		memcpy(e + m->nkw, m->init, m->vw * sizeof(*e));
	else
		memset(e + m->nkw, 0, m->vw * sizeof(*e));
	m->slot[i] = ++m->n;
	return e + m->nkw;
}

/* The slot holding entry k. */
static uint32_t slot_of(const struct sc_map *m, uint32_t k)
{
	uint64_t h = sc_hash_words(sc_map_ent(m, k), m->nkw);
	uint32_t i = (uint32_t)h & m->mask;
	while (m->slot[i] != k + 1)
		i = (i + 1) & m->mask;
	return i;
}

int sc_map_del(struct sc_map *m, const uint64_t *key)
{
	uint64_t *v = sc_map_get(m, key);
	if (!v)
		return 0;
	uint32_t k = (uint32_t)((v - m->nkw - m->ents) / m->ew);
	m->slot[slot_of(m, k)] = SC_TOMB;
	m->tombs++;
	uint32_t last = m->n - 1;
	if (k != last) {
		/* the last entry fills the hole */
		m->slot[slot_of(m, last)] = k + 1;
		memcpy(sc_map_ent(m, k), sc_map_ent(m, last), m->ew * sizeof(uint64_t));
	}
	m->n--;
	return 1;
}

void sc_map_clear(struct sc_map *m)
{
	memset(m->slot, 0, (m->mask + 1) * sizeof(*m->slot));
	m->n = 0;
	m->tombs = 0;
}
