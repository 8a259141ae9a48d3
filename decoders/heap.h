/* heap — the binary min-heap of stream indices that both merges keep
 * (iter.c over rows, scan.c over column slices), ordered by the caller's
 * before(ctx, a, b). Inline, so that each merge gets a copy with its own
 * key compare inlined, as a heap written for it would. Private to
 * decoders/. */
#ifndef TPP_HEAP_H
#define TPP_HEAP_H
#include <stdint.h>

typedef int (*heap_before)(const void *ctx, uint32_t a, uint32_t b);

/* Moves h[i] down until neither child comes before it. */
static inline __attribute__((always_inline)) void heap_sift_down(uint32_t *h, uint32_t n, uint32_t i,
								 heap_before before, const void *ctx)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		if (l < n && before(ctx, h[l], h[m]))
			m = l;
		if (l + 1 < n && before(ctx, h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		uint32_t x = h[m];
		h[m] = h[i];
		h[i] = x;
		i = m;
	}
}

/* Adds k (room for it is the caller's) and moves it up into place. */
static inline __attribute__((always_inline)) void heap_push(uint32_t *h, uint32_t *n, uint32_t k, heap_before before,
							    const void *ctx)
{
	uint32_t i = (*n)++;
	h[i] = k;
	while (i) {
		uint32_t p = (i - 1) / 2;
		if (!before(ctx, h[i], h[p]))
			break;
		uint32_t x = h[p];
		h[p] = h[i];
		h[i] = x;
		i = p;
	}
}
#endif
