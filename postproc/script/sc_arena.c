/* sc_arena — bump allocation for what lives as long as a program. */
#include <stdlib.h>
#include <string.h>
#include "sc_int.h"

struct sc_blk {
	struct sc_blk *next;
	size_t used, cap;
	_Alignas(16) unsigned char mem[];
};

void *sc_alloc(struct sc_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	struct sc_blk *b = a->head;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 32768 ? n : 32768;
		if (!(b = malloc(sizeof(*b) + cap)))
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	void *p = b->mem + b->used;
	b->used += n;
	memset(p, 0, n);
	return p;
}

char *sc_strndup(struct sc_arena *a, const char *s, size_t n)
{
	char *p = sc_alloc(a, n + 1);
	if (p && n)
		memcpy(p, s, n);
	return p;
}

void sc_arena_free(struct sc_arena *a)
{
	for (struct sc_blk *b = a->head, *nx; b; b = nx) {
		nx = b->next;
		free(b);
	}
	a->head = NULL;
}
