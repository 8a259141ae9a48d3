/* an_grow — see an_grow.h. The array pointer is passed as void * and moved
 * with memcpy, so one function serves arrays of any element type without
 * type-punning through void **. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "an_grow.h"

int an_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : first;
	while (nc < need)
		nc *= 2;
	void *p;
	memcpy(&p, arr, sizeof(p));
	if (!(p = realloc(p, nc * elem)))
		return -ENOMEM;
	memcpy(arr, &p, sizeof(p));
	*cap = nc;
	return 0;
}
