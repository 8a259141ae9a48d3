/* tpp_rt_abi — the shared-memory layout between the preloaded runtime
 * (libtpprt.so, inside every traced process) and tracerec, which creates the
 * file, names it in $TPP_RT_SHM and drains it.
 *
 * Invariants:
 *  - tracerec fills the header before the command starts; afterwards the
 *    runtime only touches next_slot/next_proc/no_slot_lost and its own slots.
 *  - A slot belongs to one thread of one process (claimed by fetch-add, never
 *    reused): single producer (that thread), single consumer (tracerec). The
 *    producer publishes records with a release store of head; the consumer
 *    frees space with a release store of tail. Nothing blocks either side.
 *  - Records are 16 bytes: a timestamp (TSC ticks or CLOCK_MONOTONIC ns, see
 *    clock) and the function address with the record kind in the top 2 bits
 *    and a reason ("why") in the 5 bits below them (user addresses on x86_64
 *    use at most 57 bits).
 */
#ifndef TPP_RT_ABI_H
#define TPP_RT_ABI_H

#include <stdint.h>

#define TPP_RT_MAGIC 0x3174725f707074ULL /* "tpp_rt1" */
#define TPP_RT_VERSION 1
#define TPP_RT_ENV_SHM "TPP_RT_SHM"

enum tpp_rt_kind { TPP_RT_ENTRY = 0, TPP_RT_EXIT = 1, TPP_RT_UNWIND = 2 };
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

enum tpp_rt_slot_state { TPP_RT_SLOT_FREE = 0, TPP_RT_SLOT_LIVE = 1, TPP_RT_SLOT_DONE = 2 };

/* One thread's ring. Records follow the header at TPP_RT_SLOT_HDR bytes. */
struct tpp_rt_slot {
	uint32_t state; /* enum tpp_rt_slot_state, release-stored by the producer */
	int32_t pid, tid;
	char comm[16];
	uint64_t start_ts, exit_ts;
	uint64_t head __attribute__((aligned(64))); /* producer: records written */
	uint64_t lost;                              /* producer: records dropped (ring full) */
	uint64_t tail __attribute__((aligned(64))); /* consumer: records read */
};
#define TPP_RT_SLOT_HDR 256

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

struct tpp_rt_hdr {
	uint64_t magic;
	uint32_t version, hdr_size;
	uint32_t nslots, slot_recs; /* slot_recs: a power of two */
	uint64_t slot_bytes;        /* TPP_RT_SLOT_HDR + slot_recs * 16 */
	uint64_t slots_off;
	uint32_t nprocs, clock;
	uint64_t procs_off;
	uint64_t total_bytes;
	/* record-time filters */
	int32_t max_depth;   /* 0: unlimited */
	uint32_t nfilter;    /* entries at filter_off */
	uint64_t min_ticks;  /* drop calls shorter than this (clock units); 0: none */
	uint64_t filter_off;
	uint64_t exe_dev, exe_ino; /* filters apply only in this executable */
	uint32_t has_only;   /* some -F filter exists */
	uint32_t pad0;
	/* runtime-owned counters */
	uint32_t next_slot __attribute__((aligned(64)));
	uint32_t next_proc;
	uint64_t no_slot_lost; /* events of threads that found no free slot */
};

static inline struct tpp_rt_slot *tpp_rt_slot_at(struct tpp_rt_hdr *h, uint32_t i)
{
	return (struct tpp_rt_slot *)((char *)h + h->slots_off + (uint64_t)i * h->slot_bytes);
}
static inline struct tpp_rt_rec *tpp_rt_recs(struct tpp_rt_slot *s)
{
	return (struct tpp_rt_rec *)((char *)s + TPP_RT_SLOT_HDR);
}
static inline struct tpp_rt_proc *tpp_rt_proc_at(struct tpp_rt_hdr *h, uint32_t i)
{
	return (struct tpp_rt_proc *)((char *)h + h->procs_off + (uint64_t)i * sizeof(struct tpp_rt_proc));
}

#endif
