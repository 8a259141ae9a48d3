/* Huge-page regions: mmap with room to align, trim the ends, advise. */
#include <stdint.h>
#include <sys/mman.h>

#include "hugemem.h"

static size_t round_up(size_t n) { return (n + HM_HUGE - 1) & ~(HM_HUGE - 1); }

void *hm_alloc(size_t bytes)
{
	if (!bytes || bytes > SIZE_MAX - 2 * HM_HUGE)
		return NULL;
	size_t len = round_up(bytes), span = len + HM_HUGE;
	uint8_t *m = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	uint8_t *p = (uint8_t *)(((uintptr_t)m + HM_HUGE - 1) & ~(uintptr_t)(HM_HUGE - 1));
	if (p > m)
		munmap(m, (size_t)(p - m));
	if (p + len < m + span)
		munmap(p + len, (size_t)(m + span - (p + len)));
	/* advice only: without transparent huge pages this is plain memory */
	madvise(p, len, MADV_HUGEPAGE);
	return p;
}

void hm_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, round_up(bytes));
}
