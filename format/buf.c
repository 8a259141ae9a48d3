/* Slow path of the buffer: growth. */
#include "buf.h"

int buf_grow_slow(struct buf *b, size_t need)
{
	if (b->oom)
		return -1;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + need) {
		if (cap > SIZE_MAX / 2) {
			b->oom = 1;
			return -1;
		}
		cap *= 2;
	}
	uint8_t *d = realloc(b->data, cap);
	if (!d) {
		b->oom = 1;
		return -1;
	}
	b->data = d;
	b->cap = cap;
	return 0;
}
