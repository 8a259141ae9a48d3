/* rt_int — the preloaded runtime's private state. Rules for everything in
 * recorder/rt/: no malloc, no locks, no stdio on the hot path; every hook is
 * async-signal-safe; a hook that finds the runtime unusable does nothing
 * rather than disturb the traced program. */
#ifndef TPP_RT_INT_H
#define TPP_RT_INT_H

#include <stddef.h>
#include <stdint.h>
#include "tpp_rt_abi.h"

/* From here on the runtime's own code never touches SSE
 * registers, so the -pg trampolines need not save the traced code's. */
#pragma GCC target("general-regs-only")

#define RT_HIDDEN __attribute__((visibility("hidden")))
#define RT_EXPORT __attribute__((visibility("default")))

/* Shadow stack capacity: deeper calls are neither recorded nor hijacked. */
#define RT_STACK_MAX 8192

enum {
	RT_F_WANT = 1,     /* passes filters: to be recorded */
	RT_F_EMITTED = 2,  /* its entry is in the ring */
	RT_F_HIDE = 4,     /* -N */
	RT_F_ONLY = 8,     /* -F: counts in only_depth */
	RT_F_HIJACKED = 16, /* mcount: *sp holds our trampoline, ret the original */
	RT_F_TAIL = 32,     /* mcount: entered by a jump from the frame below, whose
			     * return slot (sp) it shares: it returns for both */
	RT_F_LOST = 64      /* its entry was dropped (no room): its end is not
			     * written but counted lost too, as the entry was */
};

/* sp orders frames: a frame deeper in the same stack has a lower sp. mcount:
 * where the return address lives (the caller's stack pointer - 8); cyg: the
 * function's stack pointer when it called the hook. A jump to a stack
 * pointer R leaves exactly the frames whose sp is below R. */
struct rt_frame {
	uint64_t addr; /* function (cyg) or call site of mcount inside it */
	uint64_t ts;
	uintptr_t sp;
	uintptr_t ret; /* mcount: the original return address */
	uint32_t flags;
};

/* Return slots of frames dropped without their return, in case the drop
 * was wrong (a stack switch nobody told us about): a return through one
 * still finds its way home. */
#define RT_GRAVE 64
struct rt_grave {
	uintptr_t sp, ret;
};

/* Hot fields first: every hook touches only the first cache line. */
struct rt_thread {
	/* A hook is running: a signal handler's hooks stay out. Holds the
	 * hook's frame address, so a jump out of a signal handler that
	 * interrupted a hook can tell that the hook will never finish. */
	uintptr_t busy;
	int depth;
	uint64_t head;  /* records written in the current chunk (published to *used after each) */
	uint64_t limit; /* below it a record needs no check: the chunk has room,
			 * the thread is live and rt_plain holds; else 0 */
	struct tpp_rt_rec *recs; /* the current chunk's records */
	uint64_t *used;          /* the current chunk's published count */
	struct rt_frame *stack;  /* RT_STACK_MAX frames, mmap'd when the descriptor is claimed */
	struct tpp_rt_thread *slot; /* this thread's descriptor; NULL: none (yet) */
	struct tpp_rt_chunk *chunk; /* NULL: none yet, or none was free */
	uint32_t slot_idx;
	uint32_t cap; /* records the current chunk holds */
	int only_depth;
	int dead; /* no descriptor, or the thread is exiting: record nothing */
	int nested;  /* a return hook inside a hook a signal interrupted: bookkeeping only */
	int inherit; /* a forked child whose inherited frames are not announced yet */
	uint64_t fork_ts;
	struct rt_grave *grave; /* RT_GRAVE slots after the shadow stack */
	uint32_t ngrave;
	uint32_t lazy_why; /* why of frames found left behind: EXCEPTION while one unwinds */
	uint64_t pend_lost, pend_from; /* dropped records the next chunk's header will report */
	uint32_t pend_cut;             /* a record found no room: the next chunk's cut */
	uint64_t waited;               /* ns waited for room in all (capped: RT_WAIT_TOTAL) */
	const uint64_t *ret_rax; /* -pg: the saved rax while a return is handled, else NULL */
} __attribute__((aligned(64)));

extern struct tpp_rt_hdr *rt_hdr RT_HIDDEN;
/* The pool's layout, copied from the header and validated when it was
 * mapped: a process of the command that writes over the header later
 * moves no write of this one. */
struct rt_layout {
	uint64_t chunks_off, chunk_bytes, threads_off, procs_off, small_off;
	uint32_t nchunks, chunk_recs, nthreads, nprocs, nsmall, small_recs;
};
extern struct rt_layout rt_lay RT_HIDDEN;
extern int rt_clock_tsc RT_HIDDEN;
/* No -F/-N in this executable, no -D, no --min-duration, TSC clock: every
 * call is recorded as it happens, which the hooks' fast paths rely on. */
extern int rt_plain RT_HIDDEN;
extern __thread struct rt_thread rt_self __attribute__((tls_model("initial-exec"))) RT_HIDDEN;

/* Calls fn(arg) with xmm0-7 saved around it. The -pg trampolines save only
 * general registers and the hooks are compiled general-regs-only, so any
 * path from a hook into libc (which may use SSE) goes through here. Like
 * glibc's own _mcount, the upper halves of ymm/zmm are not preserved. */
long rt_sse_call(long (*fn)(void *), void *arg) RT_HIDDEN;

/* Claims a descriptor for the calling thread (and counts the record it was
 * wanted for as lost when none is free); 0 when none can be had. Via
 * rt_sse_call from hooks. */
long rt_claim(void *t) RT_HIDDEN;
long rt_now_mono(void *unused) RT_HIDDEN;
static inline __attribute__((always_inline)) uint64_t rt_now(void)
{
	if (__builtin_expect(rt_clock_tsc, 1))
		return __builtin_ia32_rdtsc();
	return (uint64_t)rt_sse_call(rt_now_mono, 0);
}
/* Moves t to a free chunk (its first, or the next when the current one is
 * full); 0 when the pool has none. Via rt_sse_call from hooks. */
long rt_next_chunk(void *t) RT_HIDDEN;
/* Recomputes t->limit from the chunk's room and the thread's state. */
void rt_set_limit(struct rt_thread *t) RT_HIDDEN;
/* Marks the thread finished: no record is written after its exit time. */
void rt_thread_stop(struct rt_thread *t) RT_HIDDEN;
/* Adds mappings made since the last copy (a dlopen) to this process's maps
 * in the shared memory. Not for hooks: it reads /proc. */
void rt_maps_refresh(void) RT_HIDDEN;
/* The entry of a table sorted by lo whose entries (stride bytes apart) begin
 * with uint64_t lo, hi and whose [lo, hi) holds a; -1 if none. */
long rt_range_find(const void *tab, size_t stride, uint32_t n, uint64_t a) RT_HIDDEN;
/* Activates -F/-N address filters and -A when this process runs their executable. */
void rt_filters_init(void) RT_HIDDEN;

/* Writes one record; 0 when it was dropped (pool empty, counted, or thread done). */
int rt_emit_slow(struct rt_thread *t, uint64_t ts, uint64_t word) RT_HIDDEN;
/* Counts one record at ts as dropped: for want of room (cut: the next
 * chunk says values before it lost their record), or whose entry was. */
void rt_count_lost(struct rt_thread *t, uint64_t ts, int cut) RT_HIDDEN;
/* User addresses on x86_64 stay below 2^57, clear of the kind and why bits. */
static inline __attribute__((always_inline)) uint64_t rt_word(uint64_t addr, unsigned kind)
{
	return addr | ((uint64_t)kind << TPP_RT_KIND_SHIFT);
}
static inline uint64_t rt_word_why(uint64_t addr, unsigned kind, unsigned why)
{
	return rt_word(addr, kind) | ((uint64_t)why << TPP_RT_WHY_SHIFT);
}
/* Only when t->head < t->limit. */
static inline __attribute__((always_inline)) void rt_emit_fast(struct rt_thread *t, uint64_t ts, uint64_t word)
{
	uint64_t h = t->head;
	struct tpp_rt_rec *r = &t->recs[h];
	r->ts = ts;
	r->word = word;
	t->head = h + 1;
	/* The record is complete before the consumer can see it (a plain store on x86). */
	__atomic_store_n(t->used, h + 1, __ATOMIC_RELEASE);
}
static inline int rt_emit(struct rt_thread *t, uint64_t ts, uint64_t addr, unsigned kind)
{
	if (__builtin_expect(t->head >= t->limit, 0))
		return rt_emit_slow(t, ts, rt_word(addr, kind));
	rt_emit_fast(t, ts, rt_word(addr, kind));
	return 1;
}

/* A system call without libc (nor its errno): for the -pg hooks, which run
 * on an unaligned stack, and for the syscall() wrapper itself. */
static inline __attribute__((always_inline)) long rt_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* -A (rt_args.c): functions whose arguments are copied. rt_args_find: the
 * argspec of a function address, -1 if none. rt_args_entry: gpr = rdi rsi
 * rdx rcx r8 r9 (NULL under -finstrument-functions), cfa = the function's
 * CFA from its frame pointer (0 under -pg). Both write DATA records. */
extern uint32_t rt_nargspec RT_HIDDEN;
void rt_args_init(uint64_t bias) RT_HIDDEN; /* bias: the main executable's load bias */
int rt_args_find(uint64_t addr) RT_HIDDEN;
void rt_args_entry(struct rt_thread *t, int spec, const uint64_t *gpr, uintptr_t cfa) RT_HIDDEN;
void rt_args_exit(struct rt_thread *t, int spec, uint64_t rax) RT_HIDDEN;
/* Around a seccomp filter the program installs (rt_seccomp.c): phase 0
 * before (memory reads stop), 1 after a call that failed or whose filter
 * lets reads through (they resume), 2 after one that does not (-A is off in
 * this process from then on, counted in args_refused). */
void rt_args_sandbox(int phase) RT_HIDDEN;
#define RT_F_SPEC_SHIFT 24 /* frame flags: argspec + 1 in the top byte */

/* Common entry/exit logic (rt_stack.c). gpr and cfa: see rt_args_entry. */
int rt_push(struct rt_thread *t, uint64_t addr, uintptr_t sp, uintptr_t ret, uint64_t ts, const uint64_t *gpr,
	    uintptr_t cfa) RT_HIDDEN;
/* Pops the top frame: an EXIT record, or UNWIND with why (enum tpp_rt_why). */
void rt_pop_emit(struct rt_thread *t, uint64_t ts, int kind, unsigned why) RT_HIDDEN;
/* Pops, as unwound for why, every frame below stack pointer sp: what a jump
 * to sp leaves. */
void rt_unwind_below(struct rt_thread *t, uintptr_t sp, uint64_t ts, unsigned why) RT_HIDDEN;
/* The original return address of a hijacked slot whose frame is no longer
 * on the shadow stack; 0 if unknown. */
uintptr_t rt_grave_find(struct rt_thread *t, uintptr_t sp) RT_HIDDEN;
/* A thread that has no ring yet claims one (0 if it cannot); a forked
 * child then announces the frames it inherited. Via rt_sse_call from hooks. */
long rt_ready(void *t) RT_HIDDEN;
/* Writes the child's inherited frames (ENTRY, why INHERIT), outermost first. */
void rt_announce_inherited(struct rt_thread *t) RT_HIDDEN;
/* mcount's return trampoline (rt_hooks.c). */
void rt_mcount_return(void) RT_HIDDEN;
/* Restores every hijacked return address of t (before an unwinder walks the
 * stack) / hijacks again those of frames still live above sp. */
void rt_restore_all(struct rt_thread *t) RT_HIDDEN;
void rt_rehijack(struct rt_thread *t) RT_HIDDEN;

#endif
