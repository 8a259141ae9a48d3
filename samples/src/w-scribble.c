/* A traced program that writes over the function runtime's shared pool, as
 * a buggy or hostile one could: tracerec (root) must neither crash nor
 * write out of bounds, and must say so. w-scribble MODE CALLS:
 *   hdr    CALLS leaf() calls, then every layout field of the header (where
 *          descriptors, chunks and process copies are, how many, how big)
 *          set to garbage, then CALLS more: all 2 x CALLS are recorded,
 *          since neither side reads the layout from the header after start;
 *   slots  CALLS leaf() calls, then every descriptor, chunk header and
 *          process copy set to garbage (indexes, counts, states, pids),
 *          and the program exits.
 * The pool is found as the runtime finds it ($TPP_RT_FD); without it the
 * program only makes its calls. Prints what it wrote over. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../recorder/rt/tpp_rt_abi.h"

static volatile long sink;

void leaf(long i)
{
	sink += i;
}

static void calls(long n)
{
	for (long i = 0; i < n; i++)
		leaf(i);
}

static struct tpp_rt_hdr *pool(size_t *len)
{
	const char *e = getenv(TPP_RT_ENV_FD);
	struct stat st;
	if (!e || fstat(atoi(e), &st) < 0)
		return NULL;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, atoi(e), 0);
	*len = (size_t)st.st_size;
	return m == MAP_FAILED ? NULL : m;
}

static void scribble_header(struct tpp_rt_hdr *h)
{
	h->threads_off = 1ull << 44;
	h->chunks_off = (1ull << 44) + 4096;
	h->procs_off = 1ull << 45;
	h->chunk_bytes = 1ull << 40;
	h->nchunks = 0xfffffff0u;
	h->chunk_recs = 0xfffffff0u;
	h->small_off = 1ull << 46;
	h->nsmall = 0xfffffff0u;
	h->small_recs = 0xfffffff0u;
	h->free_small.fresh = UINT64_MAX;
	h->nthreads = 0xfffffff0u;
	h->nprocs = 0xfffffff0u;
	h->free_threads.fresh = UINT64_MAX;
	h->next_proc = 0xfffffff0u;
	h->no_slot_lost = UINT64_MAX - 5;
	printf("header: layout fields written over\n");
}

static void scribble_slots(struct tpp_rt_hdr *h, size_t len)
{
	/* the layout is still the real one here: the header was left alone */
	uint64_t nt = h->nthreads, nc = h->nchunks, np = h->nprocs, ns = h->nsmall;
	if (h->threads_off + nt * sizeof(struct tpp_rt_thread) > len ||
	    h->chunks_off + nc * h->chunk_bytes > len || h->procs_off + np * sizeof(struct tpp_rt_proc) > len ||
	    h->small_off + ns * TPP_RT_SMALL_BYTES > len)
		return;
	for (uint64_t i = 0; i < nt; i++) {
		struct tpp_rt_thread *d = (struct tpp_rt_thread *)((char *)h + h->threads_off) + i;
		d->first = 0x7ffffff0u + (uint32_t)i;
		d->pid = -7;
		d->lost = UINT64_MAX - i;
		if (d->state != TPP_RT_THREAD_FREE)
			d->state = 77;
	}
	for (uint64_t i = 0; i < ns + nc; i++) {
		struct tpp_rt_chunk *c = (struct tpp_rt_chunk *)((char *)h + (i < ns ? h->small_off + i * TPP_RT_SMALL_BYTES
										       : h->chunks_off + (i - ns) * h->chunk_bytes));
		c->used = UINT64_MAX - i;
		c->next = 0x7ffffff0u;
		c->owner = 0xfffffff0u;
		c->lost = UINT64_MAX / 3;
	}
	for (uint64_t i = 0; i < np; i++) {
		struct tpp_rt_proc *p = (struct tpp_rt_proc *)((char *)h + h->procs_off + i * sizeof(*p));
		p->maps_len = 0xfffffff0u;
		p->gen += 2;
	}
	printf("slots: %llu descriptors, %llu chunks, %llu process copies written over\n", (unsigned long long)nt,
	       (unsigned long long)(ns + nc), (unsigned long long)np);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "hdr";
	long n = argc > 2 ? atol(argv[2]) : 1000;
	size_t len = 0;
	calls(n);
	struct tpp_rt_hdr *h = pool(&len);
	if (!h) {
		printf("no pool\n");
		calls(n);
		return 0;
	}
	if (!strcmp(mode, "slots")) {
		/* tracerec most likely reads some records first: then it is
		 * in the middle of a chunk chain when it finds the garbage */
		usleep(200000);
		scribble_slots(h, len);
		return 0;
	}
	scribble_header(h);
	calls(n);
	return 0;
}
