/* hugemem — large buffers in huge pages, where the kernel gives them.
 *
 * Fresh memory costs a page fault per 4 KiB on first touch; on the VMs
 * measured here that was about 2 µs a page, which made faulting in the
 * buffers of a scan and its latency samples a fifth of latency --sched. A
 * 2 MiB-aligned region advised MADV_HUGEPAGE takes one fault per 2 MiB.
 * Regions are reserved without commitment (MAP_NORESERVE) and zero-filled:
 * pages never touched cost nothing.
 *
 * Contract: the caller owns a region from hm_alloc until it hands it, with
 * the same byte count, to hm_free. Errors: NULL (no memory, or bytes 0 or
 * too large for the alignment slack); nothing prints. Thread-safe (mmap).
 * Private to the project (libtpputil.a), not the API.
 */
#ifndef TPP_HUGEMEM_H
#define TPP_HUGEMEM_H
#include <stddef.h>

#define HM_HUGE ((size_t)2 << 20)
/* A zeroed region of at least bytes (rounded up to HM_HUGE), or NULL. */
void *hm_alloc(size_t bytes);
/* Gives back a region from hm_alloc(bytes); NULL is ignored. */
void hm_free(void *p, size_t bytes);
#endif
