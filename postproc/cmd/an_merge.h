/* an_merge — several files' rows merged into one per key (a function's
 * name, a task's name, a device and op): what a command keeps across
 * files, so that memory grows with the keys, not with the files or rows.
 * Entries are the command's own structs of `size` bytes, zeroed when made,
 * kept in the order their keys first came; a pointer to one is good until
 * the next amerge_get. Keys are bytes (copied). Lifecycle: amerge_init ..
 * amerge_free (the caller first frees what its entries own). Errors: NULL
 * on -ENOMEM. Nothing prints. */
#ifndef TPP_AN_MERGE_H
#define TPP_AN_MERGE_H
#include <stddef.h>
#include <stdint.h>
#include "hmap.h"

struct amerge {
	struct hmap idx;   /* hash of the key (probed on) -> entry */
	char **keys;       /* NUL-terminated copies, lengths in klen */
	size_t *klen;
	unsigned char *e;  /* n entries of size bytes */
	size_t size, n, cap;
};
void amerge_init(struct amerge *m, size_t size);
/* The entry of key (len bytes), made zeroed when new (*made = 1). */
void *amerge_get(struct amerge *m, const char *key, size_t len, int *made);
static inline void *amerge_at(const struct amerge *m, size_t i)
{
	return m->e + i * m->size;
}
/* The entries' indexes ordered by cmp (entries and their keys; ties keep
 * the entries' order), malloc'd (n + 1 slots); NULL on -ENOMEM. */
typedef int (*amerge_cmp)(const void *x, const char *kx, const void *y, const char *ky);
uint32_t *amerge_sorted(const struct amerge *m, amerge_cmp cmp);
void amerge_free(struct amerge *m);

/* Time windows of several files on one clock (wall-clock ns), for a merged
 * rate: the length of their union is the time at least one of them was
 * recording, so two runs at different times are not taken for hosts
 * recording side by side (nor the other way round). Lifecycle: zeroed
 * (= empty) .. aspan_free. */
struct aspan {
	int64_t (*w)[2]; /* [lo, hi] pairs */
	size_t n, cap;
};
/* Adds [lo, hi] (hi < lo is taken as empty): 0, or -ENOMEM. */
int aspan_add(struct aspan *s, int64_t lo, int64_t hi);
/* The length of the windows' union in ns (sorts them in place). */
uint64_t aspan_union(struct aspan *s);
void aspan_free(struct aspan *s);
#endif
