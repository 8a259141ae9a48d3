/* sc_str — interned strings. Scans intern from the decoding thread while
 * the program runs on another, so the table is locked; each copy stays
 * where it was made until the table is freed, so a handle is read without
 * the lock. A scan interns once per chunk and string, the program only
 * what it builds itself: the lock is taken rarely. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "sc_int.h"

#define BLOCK (256u << 10)

struct sblk {
	struct sblk *next;
	size_t used, cap;
	_Alignas(8) char mem[];
};
struct sc_strtab {
	pthread_mutex_t m;
	const struct sc_str **slot;
	size_t cap, n;
	struct sblk *blk;
};

int sc_strtab_new(struct sc_strtab **tp)
{
	struct sc_strtab *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cap = 1024;
	if (!(t->slot = calloc(t->cap, sizeof(*t->slot)))) {
		free(t);
		return -ENOMEM;
	}
	pthread_mutex_init(&t->m, NULL);
	*tp = t;
	return 0;
}

void sc_strtab_free(struct sc_strtab *t)
{
	if (!t)
		return;
	for (struct sblk *b = t->blk, *nx; b; b = nx) {
		nx = b->next;
		free(b);
	}
	free(t->slot);
	pthread_mutex_destroy(&t->m);
	free(t);
}

static uint32_t hash_bytes(const char *s, size_t n)
{
	/* FNV-1a: strings here are short (names, paths) */
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

static int grow(struct sc_strtab *t)
{
	size_t cap = t->cap * 2;
	const struct sc_str **ns = calloc(cap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		const struct sc_str *s = t->slot[i];
		if (!s)
			continue;
		size_t k = s->hash & (cap - 1);
		while (ns[k])
			k = (k + 1) & (cap - 1);
		ns[k] = s;
	}
	free(t->slot);
	t->slot = ns;
	t->cap = cap;
	return 0;
}

static struct sc_str *make(struct sc_strtab *t, const char *s, size_t n, uint32_t h)
{
	size_t need = (sizeof(struct sc_str) + n + 1 + 7) & ~(size_t)7;
	struct sblk *b = t->blk;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > BLOCK ? need : BLOCK;
		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->next = t->blk;
		b->used = 0;
		b->cap = cap;
		t->blk = b;
	}
	struct sc_str *x = (struct sc_str *)(void *)(b->mem + b->used);
	b->used += need;
	x->len = (uint32_t)n;
	x->hash = h;
	if (n)
		memcpy(x->s, s, n);
	x->s[n] = 0;
	return x;
}

const struct sc_str *sc_intern(struct sc_strtab *t, const char *s, size_t n)
{
	if (n > UINT32_MAX / 2)
		n = UINT32_MAX / 2;
	uint32_t h = hash_bytes(s, n);
	const struct sc_str *r = NULL;
	pthread_mutex_lock(&t->m);
	size_t k = h & (t->cap - 1);
	for (; t->slot[k]; k = (k + 1) & (t->cap - 1)) {
		const struct sc_str *x = t->slot[k];
		if (x->hash == h && x->len == n && !memcmp(x->s, s, n)) {
			r = x;
			goto out;
		}
	}
	if ((t->n + 1) * 4 > t->cap * 3) {
		if (grow(t))
			goto out;
		for (k = h & (t->cap - 1); t->slot[k]; k = (k + 1) & (t->cap - 1))
			;
	}
	if ((r = make(t, s, n, h))) {
		t->slot[k] = r;
		t->n++;
	}
out:
	pthread_mutex_unlock(&t->m);
	return r;
}

const struct sc_str *sc_intern_c(struct sc_strtab *t, const char *s, size_t n)
{
	const char *z = s ? memchr(s, 0, n) : NULL;
	return sc_intern(t, s ? s : "", z ? (size_t)(z - s) : s ? n : 0);
}
