/* hmap — open-addressing map from a 64-bit key to a 32-bit value (usually an
 * index into a caller's array), for the analyses' per-tid, per-address and
 * per-request tables.
 *
 * Invariants: capacity is a power of two and at most 3/4 full; key
 * HMAP_EMPTY (all ones) cannot be stored. Deletion uses backward shift, so
 * lookups never see tombstones. The map owns its slots; hmap_free releases
 * them. Errors: hmap_put returns -ENOMEM; nothing prints.
 */
#ifndef TPP_HMAP_H
#define TPP_HMAP_H
#include <stdint.h>
#include <stddef.h>

#define HMAP_EMPTY UINT64_MAX

struct hmap_slot {
	uint64_t key;
	uint32_t val;
};
struct hmap {
	struct hmap_slot *s;
	size_t cap, n;
};

void hmap_init(struct hmap *m);
void hmap_free(struct hmap *m);
/* Pointer to the value of key, or NULL. Valid until the next put/del. */
uint32_t *hmap_get(const struct hmap *m, uint64_t key);
/* Inserts or overwrites. 0 or -ENOMEM. */
int hmap_put(struct hmap *m, uint64_t key, uint32_t val);
/* 1 when key was present (and is now gone), 0 otherwise. */
int hmap_del(struct hmap *m, uint64_t key);

static inline uint64_t hmap_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}
#endif
