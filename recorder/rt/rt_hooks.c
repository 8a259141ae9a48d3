/* The hooks compiled-in instrumentation calls: __cyg_profile_func_enter/exit
 * (-finstrument-functions) and mcount/__fentry__ (-pg). mcount sees only
 * entries, so it swaps the caller's return address for rt_mcount_return and
 * keeps the original on the shadow stack, as uftrace's libmcount does. */
#include <stdlib.h>
#include <unistd.h>

#include "rt_int.h"

#pragma GCC target("general-regs-only") /* see rt_stack.c */

#define SIGNAL_FENCE() __atomic_signal_fence(__ATOMIC_SEQ_CST)

RT_EXPORT void __cyg_profile_func_enter(void *fn, void *site)
{
	(void)site;
	struct rt_thread *t = &rt_self;
	if (__builtin_expect(!rt_hdr || t->busy, 0))
		return;
	t->busy = 1;
	SIGNAL_FENCE();
	if (t->slot || rt_claim(t))
		rt_push(t, (uintptr_t)fn, (uintptr_t)__builtin_frame_address(0), 0, rt_now());
	SIGNAL_FENCE();
	t->busy = 0;
}

RT_EXPORT void __cyg_profile_func_exit(void *fn, void *site)
{
	(void)site;
	struct rt_thread *t = &rt_self;
	if (__builtin_expect(!t->slot || t->busy, 0))
		return;
	t->busy = 1;
	SIGNAL_FENCE();
	/* The hook's frame sits at the same depth at entry and exit of one call;
	 * frames of the same function deeper than that were left by longjmp. */
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	int i = t->depth - 1;
	while (i >= 0 && !(t->stack[i].addr == (uintptr_t)fn && t->stack[i].sp >= sp))
		i--;
	if (i >= 0) {
		uint64_t ts = rt_now();
		while (t->depth > i + 1)
			rt_pop_emit(t, ts, TPP_RT_UNWIND);
		rt_pop_emit(t, ts, TPP_RT_EXIT);
	}
	SIGNAL_FENCE();
	t->busy = 0;
}

/* parent_loc: where the instrumented function's return address is. */
RT_HIDDEN void rt_mcount_entry(uintptr_t *parent_loc, uintptr_t self)
{
	struct rt_thread *t = &rt_self;
	if (__builtin_expect(!rt_hdr || t->busy, 0))
		return;
	t->busy = 1;
	SIGNAL_FENCE();
	if (t->slot || rt_claim(t)) {
		uintptr_t pl = (uintptr_t)parent_loc, ret = *parent_loc;
		uint64_t ts = rt_now();
		if (ret == (uintptr_t)rt_mcount_return) {
			/* A tail call: the caller jumped here and its return slot is
			 * ours now; the caller has finished. */
			while (t->depth && t->stack[t->depth - 1].sp < pl)
				rt_pop_emit(t, ts, TPP_RT_UNWIND);
			if (t->depth && t->stack[t->depth - 1].sp == pl) {
				ret = t->stack[t->depth - 1].ret;
				rt_pop_emit(t, ts, TPP_RT_EXIT);
			} else {
				ret = 0;
			}
		}
		if (ret && rt_push(t, self, pl, ret, ts)) {
			t->stack[t->depth - 1].flags |= RT_F_HIJACKED;
			*parent_loc = (uintptr_t)rt_mcount_return;
		}
	}
	SIGNAL_FENCE();
	t->busy = 0;
}

RT_HIDDEN uintptr_t rt_mcount_exit(uintptr_t *parent_loc)
{
	struct rt_thread *t = &rt_self;
	uintptr_t pl = (uintptr_t)parent_loc;
	t->busy++;
	SIGNAL_FENCE();
	uint64_t ts = rt_now();
	while (t->depth && t->stack[t->depth - 1].sp < pl)
		rt_pop_emit(t, ts, TPP_RT_UNWIND);
	if (!t->depth || t->stack[t->depth - 1].sp != pl) {
		/* No way to know where to return: stopping loudly beats jumping anywhere. */
		static const char msg[] = "libtpprt: lost a hijacked return address; aborting\n";
		if (write(2, msg, sizeof(msg) - 1) < 0)
			abort();
		abort();
	}
	uintptr_t ret = t->stack[t->depth - 1].ret;
	rt_pop_emit(t, ts, TPP_RT_EXIT);
	SIGNAL_FENCE();
	t->busy--;
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
		if (f->ret && !(f->flags & RT_F_HIJACKED) && *(uintptr_t *)f->sp == f->ret) {
			*(uintptr_t *)f->sp = (uintptr_t)rt_mcount_return;
			f->flags |= RT_F_HIJACKED;
		}
	}
}

/* Trampolines. mcount runs after the prologue (push %rbp; mov %rsp,%rbp), so
 * the return address is at 8(%rbp); __fentry__ runs before it, so the return
 * address is just above its own. Argument registers, SSE ones included, are
 * live and must survive, and rt_mcount_return must preserve the return value
 * registers. Compilers do not promise an aligned stack at these calls (-O0
 * code calls mcount after reserving its frame), so each trampoline aligns it
 * itself, keeping the entry %rsp in %rbx (callee-saved, pushed first). */
__asm__(".text\n"
	".globl mcount\n"
	".type mcount, @function\n"
	"mcount:\n"
	".globl _mcount\n"
	".type _mcount, @function\n"
	"_mcount:\n"
	"	pushq %rbx\n"
	"	movq %rsp, %rbx\n"
	"	andq $-16, %rsp\n"
	"	subq $192, %rsp\n"
	"	movq %rdi, 0(%rsp)\n"
	"	movq %rsi, 8(%rsp)\n"
	"	movq %rdx, 16(%rsp)\n"
	"	movq %rcx, 24(%rsp)\n"
	"	movq %r8, 32(%rsp)\n"
	"	movq %r9, 40(%rsp)\n"
	"	movq %rax, 48(%rsp)\n"
	"	movaps %xmm0, 64(%rsp)\n"
	"	movaps %xmm1, 80(%rsp)\n"
	"	movaps %xmm2, 96(%rsp)\n"
	"	movaps %xmm3, 112(%rsp)\n"
	"	movaps %xmm4, 128(%rsp)\n"
	"	movaps %xmm5, 144(%rsp)\n"
	"	movaps %xmm6, 160(%rsp)\n"
	"	movaps %xmm7, 176(%rsp)\n"
	"	leaq 8(%rbp), %rdi\n"
	"	movq 8(%rbx), %rsi\n"
	"	call rt_mcount_entry\n"
	"	movq 0(%rsp), %rdi\n"
	"	movq 8(%rsp), %rsi\n"
	"	movq 16(%rsp), %rdx\n"
	"	movq 24(%rsp), %rcx\n"
	"	movq 32(%rsp), %r8\n"
	"	movq 40(%rsp), %r9\n"
	"	movq 48(%rsp), %rax\n"
	"	movaps 64(%rsp), %xmm0\n"
	"	movaps 80(%rsp), %xmm1\n"
	"	movaps 96(%rsp), %xmm2\n"
	"	movaps 112(%rsp), %xmm3\n"
	"	movaps 128(%rsp), %xmm4\n"
	"	movaps 144(%rsp), %xmm5\n"
	"	movaps 160(%rsp), %xmm6\n"
	"	movaps 176(%rsp), %xmm7\n"
	"	movq %rbx, %rsp\n"
	"	popq %rbx\n"
	"	ret\n"
	".size mcount, .-mcount\n"
	".size _mcount, .-_mcount\n"
	"\n"
	".globl __fentry__\n"
	".type __fentry__, @function\n"
	"__fentry__:\n"
	"	pushq %rbx\n"
	"	movq %rsp, %rbx\n"
	"	andq $-16, %rsp\n"
	"	subq $192, %rsp\n"
	"	movq %rdi, 0(%rsp)\n"
	"	movq %rsi, 8(%rsp)\n"
	"	movq %rdx, 16(%rsp)\n"
	"	movq %rcx, 24(%rsp)\n"
	"	movq %r8, 32(%rsp)\n"
	"	movq %r9, 40(%rsp)\n"
	"	movq %rax, 48(%rsp)\n"
	"	movaps %xmm0, 64(%rsp)\n"
	"	movaps %xmm1, 80(%rsp)\n"
	"	movaps %xmm2, 96(%rsp)\n"
	"	movaps %xmm3, 112(%rsp)\n"
	"	movaps %xmm4, 128(%rsp)\n"
	"	movaps %xmm5, 144(%rsp)\n"
	"	movaps %xmm6, 160(%rsp)\n"
	"	movaps %xmm7, 176(%rsp)\n"
	"	leaq 16(%rbx), %rdi\n"
	"	movq 8(%rbx), %rsi\n"
	"	call rt_mcount_entry\n"
	"	movq 0(%rsp), %rdi\n"
	"	movq 8(%rsp), %rsi\n"
	"	movq 16(%rsp), %rdx\n"
	"	movq 24(%rsp), %rcx\n"
	"	movq 32(%rsp), %r8\n"
	"	movq 40(%rsp), %r9\n"
	"	movq 48(%rsp), %rax\n"
	"	movaps 64(%rsp), %xmm0\n"
	"	movaps 80(%rsp), %xmm1\n"
	"	movaps 96(%rsp), %xmm2\n"
	"	movaps 112(%rsp), %xmm3\n"
	"	movaps 128(%rsp), %xmm4\n"
	"	movaps 144(%rsp), %xmm5\n"
	"	movaps 160(%rsp), %xmm6\n"
	"	movaps 176(%rsp), %xmm7\n"
	"	movq %rbx, %rsp\n"
	"	popq %rbx\n"
	"	ret\n"
	".size __fentry__, .-__fentry__\n"
	"\n"
	".hidden rt_mcount_return\n"
	".globl rt_mcount_return\n"
	".type rt_mcount_return, @function\n"
	"rt_mcount_return:\n"
	"	pushq %rbx\n"
	"	movq %rsp, %rbx\n"
	"	andq $-16, %rsp\n"
	"	subq $48, %rsp\n"
	"	movq %rax, 0(%rsp)\n"
	"	movq %rdx, 8(%rsp)\n"
	"	movaps %xmm0, 16(%rsp)\n"
	"	movaps %xmm1, 32(%rsp)\n"
	"	movq %rbx, %rdi\n"
	"	call rt_mcount_exit\n"
	"	movq %rax, %r11\n"
	"	movq 0(%rsp), %rax\n"
	"	movq 8(%rsp), %rdx\n"
	"	movaps 16(%rsp), %xmm0\n"
	"	movaps 32(%rsp), %xmm1\n"
	"	movq %rbx, %rsp\n"
	"	popq %rbx\n"
	"	jmp *%r11\n"
	".size rt_mcount_return, .-rt_mcount_return\n");
