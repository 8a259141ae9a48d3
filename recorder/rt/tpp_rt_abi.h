/* tpp_rt_abi — the shared memory between the preloaded runtime (libtpprt.so,
 * inside every traced process) and tracerec, which creates it as an
 * anonymous memfd, hands it to the command by descriptor ($TPP_RT_FD =
 * "FD:INODE", inherited across fork and exec) and drains it.
 *
 * The memory is one bounded pool: its size (total_bytes) is the whole budget
 * whatever the number of threads. It holds the header, the -F/-N filter
 * table, the -A table, one maps copy per process, thread descriptors and
 * chunks of records of two sizes: small ones (one page) that a thread takes
 * first, and big ones (chunk_bytes) for the chunks after: a thread that
 * made a few calls holds one page, a busy one takes a chunk every ~500
 * calls. Either kind is taken when the other has run out.
 *
 * Invariants:
 *  - tracerec fills the header before the command starts; afterwards the
 *    runtime writes only the runtime-owned counters, the descriptors and
 *    chunks it took, and its process's maps copy.
 *  - Descriptors and chunks are taken by the runtime from lock-free stacks
 *    (tagged heads, popped by any thread) or, while never used ones remain,
 *    by a fetch-add on a "fresh" counter; only tracerec pushes them back,
 *    once it has read everything in them. So memory is reused when threads
 *    end, and pages of the pool are touched only as far as it is used.
 *  - A descriptor and its chunks have one producer (the thread) and one
 *    consumer (tracerec). A chunk's records are published by a release store
 *    of `used`; a full chunk names its successor by a release store of
 *    `next` after its last `used`. Nothing blocks either side.
 *  - When no chunk is free, the writer sleeps on free_seq (a futex tracerec
 *    bumps and wakes as it gives chunks back) for at most wait_ns; then, or
 *    at once when wait_ns is 0, tracerec is closing or a wait already ran
 *    out with no chunk given back since (a stopped or dead recorder), the
 *    records are dropped and counted: in the next chunk's header (count and
 *    time span, so the loss sits where it happened in the thread's stream)
 *    or, if none comes, in the descriptor. The wait needs nothing from the
 *    traced program, so it cannot deadlock it, in a signal handler either.
 *  - Records are 16 bytes: a timestamp (TSC ticks or CLOCK_MONOTONIC ns, see
 *    clock) and the function address with the record kind in the top 2 bits
 *    and a reason ("why") in the 5 bits below them (user addresses on x86_64
 *    use at most 57 bits).
 *  - The runtime trusts nothing it did not write itself beyond the header it
 *    validated; tracerec bounds-checks every index it reads back.
 */
#ifndef TPP_RT_ABI_H
#define TPP_RT_ABI_H

#include <stdint.h>

#define TPP_RT_MAGIC 0x3274725f707074ULL /* "tpp_rt2" */
#define TPP_RT_VERSION 5
#define TPP_RT_ENV_FD "TPP_RT_FD"
#define TPP_RT_NONE 0xffffffffu

enum tpp_rt_kind { TPP_RT_ENTRY = 0, TPP_RT_EXIT = 1, TPP_RT_UNWIND = 2, TPP_RT_DATA = 3 };
#define TPP_RT_KIND_SHIFT 62
#define TPP_RT_WHY_SHIFT 57
#define TPP_RT_WHY_MASK 31u
#define TPP_RT_ADDR_MASK ((1ULL << TPP_RT_WHY_SHIFT) - 1)
/* Why a frame was closed without its return (UNWIND) or opened without a
 * call (ENTRY with a non-zero why). */
enum tpp_rt_why {
	TPP_RT_WHY_NONE = 0,      /* UNWIND: the stack was found cut back (an unhooked jump) */
	TPP_RT_WHY_JUMP = 1,      /* UNWIND: longjmp, siglongjmp, setcontext, at the jump */
	TPP_RT_WHY_EXCEPTION = 2, /* UNWIND: a C++ exception, at the catch */
	TPP_RT_WHY_TAIL = 3,      /* UNWIND: jumped to a function that returned for it */
	TPP_RT_WHY_END = 4,       /* UNWIND: the thread ended inside it (pthread_exit) */
	TPP_RT_WHY_SUSPEND = 5,   /* UNWIND: swapcontext left its stack; it may resume */
	TPP_RT_WHY_INHERIT = 16,  /* ENTRY: a forked child's copy of a frame open at the fork */
	TPP_RT_WHY_RESUME = 17,   /* ENTRY: a suspended frame resumed by a context switch */
};

enum tpp_rt_clock { TPP_RT_CLOCK_MONO = 0, TPP_RT_CLOCK_TSC = 1 };

struct tpp_rt_rec {
	uint64_t ts;
	uint64_t word; /* addr | kind << TPP_RT_KIND_SHIFT */
};

enum tpp_rt_thread_state { TPP_RT_THREAD_FREE = 0, TPP_RT_THREAD_LIVE = 1, TPP_RT_THREAD_DONE = 2 };

/* One thread while it lives (reused by a later thread once tracerec has
 * drained it). The runtime sets everything but free_next; state is
 * release-stored last. */
struct tpp_rt_thread {
	uint32_t state; /* enum tpp_rt_thread_state */
	int32_t pid, tid;
	uint32_t first; /* the thread's first chunk, TPP_RT_NONE until it has one */
	char comm[16];
	uint64_t start_ts, exit_ts;
	uint64_t lost;               /* records dropped for want of a chunk, in all */
	uint64_t lost_from, lost_to; /* span of those no chunk header reports yet */
	uint32_t free_next;          /* free stack link: index + 1, 0 = end */
	uint32_t pad[3];
};

/* A chunk: this header, then chunk_recs records. */
struct tpp_rt_chunk {
	uint64_t used;  /* records written, release-stored after each */
	uint32_t next;  /* the owner's next chunk, release-stored once this one is full */
	uint32_t owner; /* descriptor index */
	uint64_t lost, lost_from, lost_to; /* records dropped just before this chunk's first */
	uint32_t free_next;
	uint32_t cut;    /* a record found no room just before this chunk's first: -A
			  * values (DATA) at the end of the chunk before belong to a
			  * record that was dropped */
	uint32_t pad[4]; /* pad[0]: the runtime's "pages populated" mark */
};
#define TPP_RT_CHUNK_HDR 64
#define TPP_RT_SMALL_BYTES 4096 /* a small chunk: header + 252 records */

/* One process: its executable mappings as /proc/PID/maps text, copied by the
 * runtime at start and again at exit, so tracerec has them after the process
 * is gone. gen is odd while the text is being rewritten (seqlock). */
#define TPP_RT_MAPS_MAX (48 * 1024)
struct tpp_rt_proc {
	uint32_t state; /* 1 once pid is valid */
	int32_t pid, ppid;
	uint32_t gen;
	uint32_t maps_len;
	char maps[TPP_RT_MAPS_MAX];
};

/* Address filter: link-time [lo, hi) ranges of the main executable's
 * functions; kind 1 = -F (trace inside), 2 = -N (hide). */
struct tpp_rt_filter {
	uint64_t lo, hi;
	uint32_t kind, pad;
};
#define TPP_RT_FILTER_MAX 4096

/* -A on functions of the main executable ([lo, hi) link-time, like the
 * filters, sorted): what the runtime copies at entry and at return. The
 * copies are DATA records written just before the function's ENTRY or EXIT
 * record: ts holds the value (or 8 bytes of a string), the word below the
 * kind bits says which (TPP_RT_D_*). A reader drops DATA that no ENTRY or
 * EXIT follows before a loss. */
#define TPP_RT_ARGSPEC_MAX 64
#define TPP_RT_ARGS 8
#define TPP_RT_STR_MAX 64 /* bytes of a string argument copied, NUL excluded */
enum tpp_rt_src {
	TPP_RT_SRC_NONE = 0,
	TPP_RT_SRC_GPR = 1,   /* reg 0-5: rdi rsi rdx rcx r8 r9 at entry; 0: rax at return */
	TPP_RT_SRC_XMM = 2,   /* reg 0-7: low 64 bits of xmm0-7 (xmm0 at return) */
	TPP_RT_SRC_FRAME = 3, /* size bytes at the function's CFA + off, read at entry
			       * (-finstrument-functions -O0: the frame pointer's slots) */
};
struct tpp_rt_arg {
	uint8_t src, reg, size, str; /* str: a char *: the bytes it points to */
	int32_t off;
};
struct tpp_rt_argspec {
	uint64_t lo, hi;
	uint32_t nargs, pad;
	struct tpp_rt_arg arg[TPP_RT_ARGS];
	struct tpp_rt_arg ret; /* src NONE: nothing (void, or not readable) */
};
/* DATA word, below the kind bits. */
#define TPP_RT_D_SLOT(w) ((unsigned)(w) & 0xff)         /* argument 0-7, or TPP_RT_D_RET */
#define TPP_RT_D_RET 8
#define TPP_RT_D_CHUNK(w) ((unsigned)((w) >> 8) & 0xff) /* string: 8-byte piece number */
#define TPP_RT_D_LEN(w) ((unsigned)((w) >> 16) & 0xf)   /* string: bytes in this piece */
#define TPP_RT_D_LAST (1u << 20)                         /* string: its last piece */
#define TPP_RT_D_BAD (1u << 21)                          /* string: unreadable, ts holds the pointer */
#define TPP_RT_D_SPEC(w) ((unsigned)((w) >> 24) & 0xff) /* argspec index */

/* A lock-free stack head: (tag << 32) | (index + 1); 0 in the low half = empty. */
struct tpp_rt_stack {
	uint64_t head;
	uint64_t fresh; /* entries [0, fresh) have been handed out at least once */
};

struct tpp_rt_hdr {
	uint64_t magic;
	uint32_t version, hdr_size;
	uint64_t total_bytes; /* the memfd's size: the budget */
	uint32_t clock, pad1;
	uint64_t chunks_off, chunk_bytes; /* chunk_bytes: TPP_RT_CHUNK_HDR + chunk_recs * 16 */
	uint32_t nchunks, chunk_recs;
	uint64_t threads_off;
	uint32_t nthreads, nprocs;
	uint64_t procs_off;
	/* record-time filters */
	int32_t max_depth;   /* 0: unlimited */
	uint32_t nfilter;    /* entries at filter_off */
	uint64_t min_ticks;  /* drop calls shorter than this (clock units); 0: none */
	uint64_t filter_off;
	uint64_t exe_dev, exe_ino; /* filters apply only in this executable */
	uint32_t has_only;   /* some -F filter exists */
	uint32_t nargspec;   /* -A: entries at args_off (same executable as the filters) */
	uint64_t args_off;
	/* Chunk indexes: [0, nsmall) small chunks (TPP_RT_SMALL_BYTES each,
	 * small_recs records) at small_off, then [nsmall, nsmall + nchunks) big
	 * ones at chunks_off. nsmall 0: one size. */
	uint64_t small_off;
	uint32_t nsmall, small_recs;
	/* runtime-owned, each on its own cache line */
	struct tpp_rt_stack free_chunks __attribute__((aligned(64))); /* big: index - nsmall */
	struct tpp_rt_stack free_small __attribute__((aligned(64)));
	struct tpp_rt_stack free_threads __attribute__((aligned(64)));
	uint32_t next_proc __attribute__((aligned(64)));
	uint32_t pad2;
	uint64_t no_slot_lost;    /* records of threads that found no free descriptor */
	uint64_t no_slot_from, no_slot_to;
	/* Waiting for room (see the invariants). tracerec sets wait_ns before
	 * the command starts and closing when it stops reading. */
	uint64_t wait_ns;
	uint32_t free_seq __attribute__((aligned(64))); /* futex: bumped after chunks are given back */
	uint32_t waiters;   /* writers asleep on free_seq */
	uint32_t stall_seq; /* free_seq + 1 when a wait ran out on it; 0: none */
	uint32_t closing;
	uint64_t waits, waited_ns; /* waits for room, and their time in all */
	uint64_t wait_capped; /* threads that waited RT_WAIT_TOTAL wait_ns in all: they wait no more */
	uint64_t data_lost;   /* -A values (DATA records) dropped for want of room: not events */
	/* -A: processes that found process_vm_readv refused (a seccomp
	 * filter) and record no arguments; the first one's pid */
	uint32_t args_refused;
	int32_t args_refused_pid;
};

/* Each side finds descriptors, chunks and process copies by the layout it
 * copied (and validated) when the pool was made or mapped, never by the
 * header's fields later: any process of the command can write them. */
static inline struct tpp_rt_rec *tpp_rt_chunk_recs(struct tpp_rt_chunk *c)
{
	return (struct tpp_rt_rec *)((char *)c + TPP_RT_CHUNK_HDR);
}
/* The free stacks. next_of(i) is where entry i keeps its link (index + 1).
 * Pop: any thread; push: tracerec only. The tag defeats ABA: a popper that
 * read a stale link fails its compare-and-swap. */
static inline uint32_t tpp_rt_pop(struct tpp_rt_stack *s, uint32_t n, uint32_t *(*next_of)(void *, uint32_t),
				  void *base)
{
	uint64_t old = __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
	while ((uint32_t)old) {
		uint32_t i = (uint32_t)old - 1;
		if (i >= n)
			return TPP_RT_NONE;
		uint32_t nx = __atomic_load_n(next_of(base, i), __ATOMIC_RELAXED);
		uint64_t nw = ((old >> 32) + 1) << 32 | nx;
		if (__atomic_compare_exchange_n(&s->head, &old, nw, 1, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
			return i;
	}
	if (__atomic_load_n(&s->fresh, __ATOMIC_RELAXED) >= n)
		return TPP_RT_NONE;
	uint64_t f = __atomic_fetch_add(&s->fresh, 1, __ATOMIC_RELAXED);
	return f < n ? (uint32_t)f : TPP_RT_NONE;
}
/* -EAGAIN when the head kept changing under it: poppers take an entry in a
 * few instructions, so only a program writing over the head can make a
 * million attempts fail (the entry is then left out of the stack). */
static inline int tpp_rt_push(struct tpp_rt_stack *s, uint32_t i, uint32_t *(*next_of)(void *, uint32_t),
			      void *base)
{
	uint64_t old = __atomic_load_n(&s->head, __ATOMIC_RELAXED);
	for (uint32_t tries = 0; tries < (1u << 20); tries++) {
		__atomic_store_n(next_of(base, i), (uint32_t)old, __ATOMIC_RELAXED);
		uint64_t nw = ((old >> 32) + 1) << 32 | (uint64_t)(i + 1);
		if (__atomic_compare_exchange_n(&s->head, &old, nw, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return 0;
	}
	return -11; /* -EAGAIN */
}
#endif
