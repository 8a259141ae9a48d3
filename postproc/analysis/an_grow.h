/* an_grow — growing the analyses' arrays. -ENOMEM with the array unchanged;
 * nothing here prints.
 */
#ifndef TPP_AN_GROW_H
#define TPP_AN_GROW_H
#include <stddef.h>

/* Makes room for need elements of elem bytes in the array whose pointer is
 * at arr (a T **) and whose capacity is *cap, doubling from first. 0, or
 * -ENOMEM with the array and *cap unchanged. New elements are not cleared. */
int an_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first);
#endif
