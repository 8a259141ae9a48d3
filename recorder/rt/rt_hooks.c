/* The hooks compiled-in instrumentation calls: __cyg_profile_func_enter/exit
 * (-finstrument-functions) and mcount/__fentry__ (-pg). mcount sees only
 * entries, so it swaps the caller's return address for rt_mcount_return and
 * keeps the original on the shadow stack, as uftrace's libmcount does. */
#include <stdlib.h>
#include <unistd.h>

#include "rt_int.h"


#define SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define HOOK_FRAME() ((uintptr_t)__builtin_frame_address(0))

/* Both hook families share one shape: a fast path for the common case (a
 * plain recording, the new frame above the last one, the returning frame on
 * top) that needs no callee-saved register, and everything else in a cold
 * function built on rt_push/rt_pop_emit. The fast paths must decide exactly
 * as the slow ones would. busy is set before the shadow stack is read. */
#define RT_COLD __attribute__((noinline, cold))

static inline __attribute__((always_inline)) void push_fast(struct rt_thread *t, int d, uint64_t addr, uintptr_t sp,
							      uintptr_t ret, uint32_t flags)
{
	uint64_t ts = __builtin_ia32_rdtsc();
	struct rt_frame *f = &t->stack[d];
	f->addr = addr;
	f->sp = sp;
	f->ret = ret;
	f->ts = ts;
	f->flags = flags | RT_F_WANT | RT_F_EMITTED;
	t->depth = d + 1;
	rt_emit_fast(t, ts, rt_word(addr, TPP_RT_ENTRY));
}
/* A new frame at sp goes on top without unwinding anything, its entry
 * record fits in the ring as it is. mcount: the frame below must be
 * strictly above (an equal sp is a sibling left without return, or a tail
 * call); cyg: equal is a function inlined into the one below, which calls
 * the hooks from the same frame. */
static inline __attribute__((always_inline)) int push_is_fast(const struct rt_thread *t, int d, uintptr_t sp,
							      int cyg)
{
	return t->head < t->limit && d < RT_STACK_MAX &&
	       (!d || t->stack[d - 1].sp > sp || (cyg && t->stack[d - 1].sp == sp));
}

/* The instrumented function's stack pointer when it called the hook. */
#define CYG_SP() (HOOK_FRAME() + 16)

/* Called with busy set; clears it. */
static RT_COLD void cyg_enter_slow(struct rt_thread *t, uintptr_t fn, uintptr_t sp)
{
	if (t->slot || (rt_hdr && rt_sse_call(rt_ready, t))) {
		uint64_t ts = rt_now();
		/* Frames below this one were left by a jump nobody reported. */
		rt_unwind_below(t, sp, ts, t->lazy_why);
		/* -A: the function's CFA, from the frame pointer the hook's
		 * frame saved (rt_args reads through it without trusting it) */
		uintptr_t cfa = rt_nargspec ? *(const uintptr_t *)(sp - 16) + 16 : 0;
		rt_push(t, fn, sp, 0, ts, NULL, cfa);
	}
	SIGNAL_FENCE();
	t->busy = 0;
}

RT_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	struct rt_thread *t = &rt_self;
	if (__builtin_expect(t->busy, 0))
		return;
	t->busy = HOOK_FRAME();
	SIGNAL_FENCE();
	uintptr_t sp = CYG_SP();
	int d = t->depth;
	if (__builtin_expect(!push_is_fast(t, d, sp, 1), 0))
		return cyg_enter_slow(t, (uintptr_t)fn, sp);
	push_fast(t, d, (uintptr_t)fn, sp, 0, 0);
	SIGNAL_FENCE();
	t->busy = 0;
}

static RT_COLD void cyg_exit_slow(struct rt_thread *t, uintptr_t fn, uintptr_t sp)
{
	if (!t->slot && rt_hdr)
		rt_sse_call(rt_ready, t); /* a forked child's first event */
	/* The innermost open frame of fn returns; frames above it were left
	 * by a jump nobody reported. The function's stack pointer is where it
	 * was at entry or lower (a VLA), unless the compiler made the call to
	 * this hook a jump after the epilogue (-O2): then it is the caller's.
	 * So a frame of fn deeper than sp is a dead one when a frame of fn
	 * at or above sp is open. */
	int i = t->depth - 1, top = -1;
	while (i >= 0 && !(t->stack[i].addr == fn && t->stack[i].sp >= sp)) {
		if (top < 0 && t->stack[i].addr == fn)
			top = i;
		i--;
	}
	if (i < 0)
		i = top;
	if (i >= 0) {
		uint64_t ts = rt_now();
		while (t->depth > i + 1)
			rt_pop_emit(t, ts, TPP_RT_UNWIND, t->lazy_why);
		rt_pop_emit(t, ts, TPP_RT_EXIT, 0);
	}
	SIGNAL_FENCE();
	t->busy = 0;
}

RT_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	struct rt_thread *t = &rt_self;
	if (__builtin_expect(t->busy || !t->depth, 0))
		return;
	t->busy = HOOK_FRAME();
	SIGNAL_FENCE();
	uintptr_t sp = CYG_SP();
	int d = t->depth;
	struct rt_frame *f = &t->stack[d - 1];
	if (__builtin_expect(t->head >= t->limit || f->addr != (uintptr_t)fn, 0))
		return cyg_exit_slow(t, (uintptr_t)fn, sp);
	t->depth = d - 1;
	if (f->flags & RT_F_EMITTED)
		rt_emit_fast(t, __builtin_ia32_rdtsc(), rt_word(f->addr, TPP_RT_EXIT));
	else if (f->flags & RT_F_LOST)
		rt_count_lost(t, __builtin_ia32_rdtsc(), 0);
	SIGNAL_FENCE();
	t->busy = 0;
}

/* save: the trampoline's registers, r9 r8 rdi rsi rdx rcx rax from 0. */
static RT_COLD void mcount_entry_slow(struct rt_thread *t, uintptr_t *parent_loc, uintptr_t self,
				      const uint64_t *save)
{
	if (t->slot || (rt_hdr && rt_sse_call(rt_ready, t))) {
		uintptr_t pl = (uintptr_t)parent_loc, ret = *parent_loc;
		uint64_t ts = rt_now();
		uint32_t fl = RT_F_HIJACKED;
		/* Frames at or below this return slot were left without return. */
		rt_unwind_below(t, pl, ts, t->lazy_why);
		if (ret == (uintptr_t)rt_mcount_return) {
			/* A tail call: the function whose return slot this is
			 * jumped here; this one returns for it. It stays open,
			 * and closes (marked) when this one returns. */
			if (t->depth && t->stack[t->depth - 1].sp == pl) {
				ret = t->stack[t->depth - 1].ret;
				fl = RT_F_TAIL;
			} else {
				ret = rt_grave_find(t, pl);
			}
		} else {
			rt_unwind_below(t, pl + 1, ts, t->lazy_why);
		}
		const uint64_t gpr[6] = {save[2], save[3], save[4], save[5], save[1], save[0]};
		if (ret && rt_push(t, self, pl, ret, ts, gpr, 0)) {
			t->stack[t->depth - 1].flags |= fl;
			*parent_loc = (uintptr_t)rt_mcount_return;
		}
	}
	SIGNAL_FENCE();
	t->busy = 0;
}

/* parent_loc: where the instrumented function's return address is. */
RT_HIDDEN void rt_mcount_entry(uintptr_t *parent_loc, uintptr_t self, const uint64_t *save)
{
	struct rt_thread *t = &rt_self;
	if (__builtin_expect(t->busy, 0))
		return;
	t->busy = HOOK_FRAME();
	SIGNAL_FENCE();
	uintptr_t pl = (uintptr_t)parent_loc, ret = *parent_loc;
	int d = t->depth;
	if (__builtin_expect(ret == (uintptr_t)rt_mcount_return || !push_is_fast(t, d, pl, 0), 0))
		return mcount_entry_slow(t, parent_loc, self, save);
	push_fast(t, d, self, pl, ret, RT_F_HIJACKED);
	*parent_loc = (uintptr_t)rt_mcount_return;
	SIGNAL_FENCE();
	t->busy = 0;
}

static long lost_return(void *unused)
{
	(void)unused;
	/* No way to know where to return: stopping loudly beats jumping anywhere. */
	static const char msg[] = "libtpprt: lost a hijacked return address; aborting\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		abort();
	abort();
}

/* A return through the trampoline that is not the top frame's plain
 * return. busy holds this hook's frame; restores the caller's busy. */
static RT_COLD uintptr_t mcount_exit_slow(struct rt_thread *t, uintptr_t pl, uintptr_t busy)
{
	if (busy)
		t->nested++;
	else if (!t->slot && rt_hdr)
		rt_sse_call(rt_ready, t); /* a forked child's first event */
	uint64_t ts = rt_now();
	/* The topmost frame owning this slot returns; frames above it were
	 * left by a jump nobody reported. */
	int i = t->depth - 1;
	while (i >= 0 && t->stack[i].sp != pl)
		i--;
	uintptr_t ret;
	if (i < 0) {
		ret = rt_grave_find(t, pl);
		if (!ret) {
			rt_sse_call(lost_return, 0);
			__builtin_unreachable();
		}
	} else {
		while (t->depth > i + 1)
			rt_pop_emit(t, ts, TPP_RT_UNWIND, t->lazy_why);
		struct rt_frame *f = &t->stack[i];
		uint32_t fl = f->flags;
		ret = f->ret;
		t->ret_rax = (const uint64_t *)pl; /* -A: the trampoline saved rax there */
		rt_pop_emit(t, ts, TPP_RT_EXIT, 0);
		t->ret_rax = NULL;
		/* A tail call returns for the chain of functions that jumped to it. */
		while ((fl & RT_F_TAIL) && t->depth) {
			fl = t->stack[t->depth - 1].flags;
			rt_pop_emit(t, ts, TPP_RT_UNWIND, TPP_RT_WHY_TAIL);
		}
	}
	if (busy)
		t->nested--;
	SIGNAL_FENCE();
	t->busy = busy;
	return ret;
}

RT_HIDDEN uintptr_t rt_mcount_exit(uintptr_t *parent_loc)
{
	struct rt_thread *t = &rt_self;
	uintptr_t pl = (uintptr_t)parent_loc;
	/* Runs even inside a hook a signal interrupted: the return must go on. */
	uintptr_t busy = t->busy;
	t->busy = HOOK_FRAME();
	SIGNAL_FENCE();
	int d = t->depth;
	struct rt_frame *f = &t->stack[d - 1];
	if (__builtin_expect(busy || t->head >= t->limit || !d || f->sp != pl || (f->flags & RT_F_TAIL), 0))
		return mcount_exit_slow(t, pl, busy);
	uintptr_t ret = f->ret;
	t->depth = d - 1;
	if (f->flags & RT_F_EMITTED)
		rt_emit_fast(t, __builtin_ia32_rdtsc(), rt_word(f->addr, TPP_RT_EXIT));
	else if (f->flags & RT_F_LOST)
		rt_count_lost(t, __builtin_ia32_rdtsc(), 0);
	SIGNAL_FENCE();
	t->busy = 0;
	return ret;
}

void rt_restore_all(struct rt_thread *t)
{
	for (int i = 0; i < t->depth; i++) {
		struct rt_frame *f = &t->stack[i];
		if (f->flags & RT_F_HIJACKED) {
			*(uintptr_t *)f->sp = f->ret;
			f->flags &= ~(uint32_t)RT_F_HIJACKED;
		}
	}
}

void rt_rehijack(struct rt_thread *t)
{
	for (int i = 0; i < t->depth; i++) {
		struct rt_frame *f = &t->stack[i];
		if (f->ret && !(f->flags & (RT_F_HIJACKED | RT_F_TAIL)) && *(uintptr_t *)f->sp == f->ret) {
			*(uintptr_t *)f->sp = (uintptr_t)rt_mcount_return;
			f->flags |= RT_F_HIJACKED;
		}
	}
}

/* Trampolines. mcount runs after the prologue (push %rbp; mov %rsp,%rbp), so
 * the return address is at 8(%rbp); __fentry__ runs before it, so the return
 * address is just above its own. The argument registers are live: the
 * general ones are saved here (the set glibc's _mcount saves), the SSE ones
 * survive because the hooks never touch them (general-regs-only, libc only
 * through rt_sse_call). rt_mcount_return likewise saves rax/rdx and leaves
 * xmm0/xmm1 alone. Nothing here or in the hooks needs an aligned stack:
 * rt_sse_call aligns before it enters libc. */
__asm__(".text\n"
	".globl mcount\n"
	".type mcount, @function\n"
	"mcount:\n"
	".globl _mcount\n"
	".type _mcount, @function\n"
	"_mcount:\n"
	"	pushq %rax\n"
	"	pushq %rcx\n"
	"	pushq %rdx\n"
	"	pushq %rsi\n"
	"	pushq %rdi\n"
	"	pushq %r8\n"
	"	pushq %r9\n"
	"	leaq 8(%rbp), %rdi\n"
	"	movq 56(%rsp), %rsi\n"
	"	movq %rsp, %rdx\n"
	"	call rt_mcount_entry\n"
	"	popq %r9\n"
	"	popq %r8\n"
	"	popq %rdi\n"
	"	popq %rsi\n"
	"	popq %rdx\n"
	"	popq %rcx\n"
	"	popq %rax\n"
	"	ret\n"
	".size mcount, .-mcount\n"
	".size _mcount, .-_mcount\n"
	"\n"
	".globl __fentry__\n"
	".type __fentry__, @function\n"
	"__fentry__:\n"
	"	pushq %rax\n"
	"	pushq %rcx\n"
	"	pushq %rdx\n"
	"	pushq %rsi\n"
	"	pushq %rdi\n"
	"	pushq %r8\n"
	"	pushq %r9\n"
	"	leaq 64(%rsp), %rdi\n"
	"	movq 56(%rsp), %rsi\n"
	"	movq %rsp, %rdx\n"
	"	call rt_mcount_entry\n"
	"	popq %r9\n"
	"	popq %r8\n"
	"	popq %rdi\n"
	"	popq %rsi\n"
	"	popq %rdx\n"
	"	popq %rcx\n"
	"	popq %rax\n"
	"	ret\n"
	".size __fentry__, .-__fentry__\n"
	"\n"
	".hidden rt_mcount_return\n"
	".globl rt_mcount_return\n"
	".type rt_mcount_return, @function\n"
	"rt_mcount_return:\n"
	"	pushq %rax\n"
	"	pushq %rdx\n"
	"	leaq 8(%rsp), %rdi\n"
	"	call rt_mcount_exit\n"
	"	movq %rax, %r11\n"
	"	popq %rdx\n"
	"	popq %rax\n"
	"	jmp *%r11\n"
	".size rt_mcount_return, .-rt_mcount_return\n"
	"\n"
	".hidden rt_sse_call\n"
	".globl rt_sse_call\n"
	".type rt_sse_call, @function\n"
	"rt_sse_call:\n"
	"	pushq %rbp\n"
	"	movq %rsp, %rbp\n"
	"	andq $-16, %rsp\n"
	"	subq $128, %rsp\n"
	"	movaps %xmm0, 0(%rsp)\n"
	"	movaps %xmm1, 16(%rsp)\n"
	"	movaps %xmm2, 32(%rsp)\n"
	"	movaps %xmm3, 48(%rsp)\n"
	"	movaps %xmm4, 64(%rsp)\n"
	"	movaps %xmm5, 80(%rsp)\n"
	"	movaps %xmm6, 96(%rsp)\n"
	"	movaps %xmm7, 112(%rsp)\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	call *%rax\n"
	"	movaps 0(%rsp), %xmm0\n"
	"	movaps 16(%rsp), %xmm1\n"
	"	movaps 32(%rsp), %xmm2\n"
	"	movaps 48(%rsp), %xmm3\n"
	"	movaps 64(%rsp), %xmm4\n"
	"	movaps 80(%rsp), %xmm5\n"
	"	movaps 96(%rsp), %xmm6\n"
	"	movaps 112(%rsp), %xmm7\n"
	"	movq %rbp, %rsp\n"
	"	popq %rbp\n"
	"	ret\n"
	".size rt_sse_call, .-rt_sse_call\n");
