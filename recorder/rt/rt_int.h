/* rt_int — the preloaded runtime's private state. Rules for everything in
 * recorder/rt/: no malloc, no locks, no stdio on the hot path; every hook is
 * async-signal-safe; a hook that finds the runtime unusable does nothing
 * rather than disturb the traced program. */
#ifndef TPP_RT_INT_H
#define TPP_RT_INT_H

#include <stdint.h>
#include "tpp_rt_abi.h"

#define RT_HIDDEN __attribute__((visibility("hidden")))
#define RT_EXPORT __attribute__((visibility("default")))

/* Shadow stack capacity: deeper calls are neither recorded nor hijacked. */
#define RT_STACK_MAX 8192

enum {
	RT_F_WANT = 1,     /* passes filters: to be recorded */
	RT_F_EMITTED = 2,  /* its entry is in the ring */
	RT_F_HIDE = 4,     /* -N */
	RT_F_ONLY = 8,     /* -F: counts in only_depth */
	RT_F_HIJACKED = 16 /* mcount: *sp holds our trampoline, ret the original */
};

struct rt_frame {
	uint64_t addr; /* function (cyg) or call site of mcount inside it */
	uint64_t ts;
	uintptr_t sp;  /* mcount: where the return address lives; cyg: hook frame */
	uintptr_t ret; /* mcount: the original return address */
	uint32_t flags;
};

struct rt_thread {
	struct tpp_rt_slot *slot;
	struct tpp_rt_rec *recs;
	uint64_t mask, tail_cache;
	uint64_t pop_upto; /* ring records faulted in so far */
	struct rt_frame *stack; /* RT_STACK_MAX frames, mmap'd when the slot is claimed */
	int depth, only_depth;
	int busy;  /* a hook is running: a signal handler's hooks stay out */
	int dead;  /* no slot, or the thread is exiting: record nothing */
};

extern struct tpp_rt_hdr *rt_hdr RT_HIDDEN;
extern __thread struct rt_thread rt_self __attribute__((tls_model("initial-exec"))) RT_HIDDEN;

/* Claims a slot for the calling thread; 0 when none can be had. */
int rt_claim(struct rt_thread *t) RT_HIDDEN;
uint64_t rt_now(void) RT_HIDDEN;
#define RT_POP_RECS 65536u /* records (1 MiB) faulted in per step */
void rt_populate(struct rt_thread *t, uint64_t head) RT_HIDDEN;
/* Activates -F/-N address filters when this process runs the filtered executable. */
void rt_filters_init(void) RT_HIDDEN;
/* Common entry/exit logic (rt_stack.c). */
int rt_push(struct rt_thread *t, uint64_t addr, uintptr_t sp, uintptr_t ret, uint64_t ts) RT_HIDDEN;
void rt_pop_emit(struct rt_thread *t, uint64_t ts, int kind) RT_HIDDEN;
/* mcount's return trampoline (rt_mcount.c). */
void rt_mcount_return(void) RT_HIDDEN;
/* Restores every hijacked return address of t (before an unwinder walks the
 * stack) / hijacks again those of frames still live above sp. */
void rt_restore_all(struct rt_thread *t) RT_HIDDEN;
void rt_rehijack(struct rt_thread *t) RT_HIDDEN;

#endif
