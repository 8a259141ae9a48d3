/* Jumps between frames, seen as they happen: longjmp and its kin, and the
 * ucontext switches between stacks. A jump leaves every frame entered
 * since its setjmp (or getcontext): those are closed at the jump, marked,
 * instead of lingering until something returns past them. The depth at
 * setjmp is noted (keyed by the buffer), which also covers functions
 * inlined into one machine frame (-finstrument-functions -O2) and jumps
 * across stacks (out of a handler on sigaltstack); a buffer without a
 * note falls back to its stack pointer: every frame deeper than it is
 * gone. swapcontext suspends every
 * frame of the context it leaves (parked, their return addresses given
 * back, so a context that never resumes cannot strand a hijacked one) and,
 * once the context is switched back to, resumes them. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "rt_int.h"

static void *real_setjmp[4]; /* _setjmp, setjmp, __sigsetjmp, getcontext */
static void (*real_longjmp)(struct __jmp_buf_tag *, int);
static void (*real__longjmp)(struct __jmp_buf_tag *, int);
static void (*real_siglongjmp)(struct __jmp_buf_tag *, int);
static void (*real_longjmp_chk)(struct __jmp_buf_tag *, int);
static int (*real_setcontext)(const ucontext_t *);
static int (*real_swapcontext)(ucontext_t *, const ucontext_t *);

/* glibc keeps the stack pointer of a jmp_buf mangled: xor'ed with the
 * thread's pointer guard (tcbhead_t at %fs:0x30), rotated left by 17. The
 * layout is checked against a real setjmp at start; without a match,
 * longjmp's frames are left to the next call to find. */
#define JB_RSP 6
#define JB_PC 7
static int jb_ok;

static uintptr_t demangle(uintptr_t v)
{
	uintptr_t guard;
	__asm__("movq %%fs:0x30, %0" : "=r"(guard));
	return ((v >> 17) | (v << 47)) ^ guard;
}

static __attribute__((noinline)) int check_jmp_buf(void)
{
	jmp_buf b;
	uintptr_t rsp;
	__asm__ volatile("movq %%rsp, %0" : "=r"(rsp));
	if (_setjmp(b))
		return 0;
	uintptr_t sp = demangle((uintptr_t)b[0].__jmpbuf[JB_RSP]);
	uintptr_t pc = demangle((uintptr_t)b[0].__jmpbuf[JB_PC]);
	return sp + 512 > rsp && sp < rsp + 512 && pc - (uintptr_t)check_jmp_buf < 4096;
}

__attribute__((constructor(102))) static void jump_init(void)
{
	static const char *const names[4] = {"_setjmp", "setjmp", "__sigsetjmp", "getcontext"};
	for (int i = 0; i < 4; i++)
		real_setjmp[i] = dlsym(RTLD_NEXT, names[i]);
	real_longjmp = (__typeof__(real_longjmp))dlsym(RTLD_NEXT, "longjmp");
	real__longjmp = (__typeof__(real__longjmp))dlsym(RTLD_NEXT, "_longjmp");
	real_siglongjmp = (__typeof__(real_siglongjmp))dlsym(RTLD_NEXT, "siglongjmp");
	real_longjmp_chk = (__typeof__(real_longjmp_chk))dlsym(RTLD_NEXT, "__longjmp_chk");
	real_setcontext = (__typeof__(real_setcontext))dlsym(RTLD_NEXT, "setcontext");
	real_swapcontext = (__typeof__(real_swapcontext))dlsym(RTLD_NEXT, "swapcontext");
	jb_ok = check_jmp_buf();
}

/* Depths at setjmp/getcontext, newest last, per thread: the frame on top
 * then (its entry time and address) tells whether the note still holds. */
#define JMP_NOTES 16
struct jmp_note {
	uintptr_t buf, top_addr;
	uint64_t top_ts;
	int depth;
};
static __thread struct jmp_note notes[JMP_NOTES] __attribute__((tls_model("initial-exec")));
static __thread uint32_t nnotes __attribute__((tls_model("initial-exec")));

/* Called by the setjmp stubs below; returns the real function to jump to. */
RT_HIDDEN void *rt_jmp_note(uintptr_t buf, uintptr_t unused, long which)
{
	(void)unused;
	struct rt_thread *t = &rt_self;
	void *real = real_setjmp[which & 3];
	if (!real) {
		jump_init();
		real = real_setjmp[which & 3];
		if (!real)
			abort();
	}
	if (!t->stack || t->busy)
		return real;
	struct jmp_note *n = NULL;
	for (uint32_t i = 0; i < JMP_NOTES && !n; i++)
		if (notes[i].buf == buf)
			n = &notes[i];
	if (!n)
		n = &notes[nnotes++ % JMP_NOTES];
	n->buf = buf;
	n->depth = t->depth;
	n->top_addr = t->depth ? t->stack[t->depth - 1].addr : 0;
	n->top_ts = t->depth ? t->stack[t->depth - 1].ts : 0;
	return real;
}

/* The depth noted for buf if its frames are all still open, else -1. */
static int noted_depth(const struct rt_thread *t, uintptr_t buf)
{
	for (uint32_t i = 0; i < JMP_NOTES; i++) {
		const struct jmp_note *n = &notes[i];
		if (n->buf != buf || !n->buf)
			continue;
		if (n->depth > t->depth)
			return -1;
		if (n->depth && (t->stack[n->depth - 1].addr != n->top_addr || t->stack[n->depth - 1].ts != n->top_ts))
			return -1;
		return n->depth;
	}
	return -1;
}

/* The stubs leave the stack as they found it before jumping on: setjmp
 * saves its caller's stack pointer and return address. */
#define SETJMP_STUB(name, which)                 \
	".globl " name "\n"                      \
	".type " name ", @function\n" name ":\n"  \
	"	pushq %rdi\n"                     \
	"	pushq %rsi\n"                     \
	"	subq $8, %rsp\n"                  \
	"	movl $" which ", %edx\n"          \
	"	call rt_jmp_note\n"               \
	"	addq $8, %rsp\n"                  \
	"	popq %rsi\n"                      \
	"	popq %rdi\n"                      \
	"	jmp *%rax\n"                      \
	".size " name ", .-" name "\n"
__asm__(".text\n" SETJMP_STUB("_setjmp", "0") SETJMP_STUB("setjmp", "1") SETJMP_STUB("__sigsetjmp", "2")
		SETJMP_STUB("getcontext", "3"));

/* Enters the runtime from a wrapper; 0 when the thread has nothing to do. */
static int enter(struct rt_thread *t, uintptr_t target)
{
	if (!t->stack)
		return 0;
	/* A signal handler that interrupted a hook jumps out past that hook's
	 * frame: the hook never finishes, its busy mark must not outlive it. */
	if (t->busy && target && t->busy < target)
		t->busy = 0;
	if (t->busy)
		return 0;
	t->busy = (uintptr_t)__builtin_frame_address(0);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 1;
}

static void leave(struct rt_thread *t)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->busy = 0;
}

/* Closes the frames a jump to buf (stack pointer sp, 0 if unknown) leaves. */
static void unwind_to(struct rt_thread *t, uintptr_t buf, uintptr_t sp)
{
	int d = noted_depth(t, buf);
	uint64_t ts = rt_now();
	if (d >= 0) {
		while (t->depth > d)
			rt_pop_emit(t, ts, TPP_RT_UNWIND, TPP_RT_WHY_JUMP);
	} else if (sp) {
		rt_unwind_below(t, sp, ts, TPP_RT_WHY_JUMP);
	}
}

/* A longjmp to buf, about to happen. */
static void jumping(struct __jmp_buf_tag *buf, uintptr_t sp)
{
	struct rt_thread *t = &rt_self;
	if (!enter(t, sp))
		return;
	unwind_to(t, (uintptr_t)buf, sp);
	leave(t);
}

static uintptr_t jb_sp(struct __jmp_buf_tag *env)
{
	return jb_ok ? demangle((uintptr_t)env->__jmpbuf[JB_RSP]) : 0;
}

#define JUMP_WRAPPER(name, real)                                                     \
	RT_EXPORT __attribute__((noreturn)) void name(struct __jmp_buf_tag env[1], int val) \
	{                                                                            \
		jumping(env, jb_sp(env));                                            \
		if (!real)                                                           \
			abort();                                                     \
		real(env, val);                                                      \
		__builtin_unreachable();                                             \
	}
JUMP_WRAPPER(longjmp, real_longjmp)
JUMP_WRAPPER(_longjmp, real__longjmp)
JUMP_WRAPPER(siglongjmp, real_siglongjmp)
JUMP_WRAPPER(__longjmp_chk, real_longjmp_chk)

/* Parked frames of suspended contexts, per thread, keyed by the
 * ucontext_t they were saved in. Oldest first; when full, the oldest are
 * forgotten (their return addresses are back already: no harm). */
#define PARK_KEYS 64
#define PARK_FRAMES 4096
struct parking {
	uint32_t nkeys, nframes;
	struct {
		uintptr_t key;
		uint32_t off, n;
	} key[PARK_KEYS];
	struct rt_frame f[PARK_FRAMES];
};
static __thread struct parking *parked __attribute__((tls_model("initial-exec")));

static void forget(struct parking *p, uint32_t k)
{
	uint32_t off = p->key[k].off, n = p->key[k].n;
	memmove(&p->f[off], &p->f[off + n], (p->nframes - off - n) * sizeof(p->f[0]));
	p->nframes -= n;
	for (uint32_t i = k + 1; i < p->nkeys; i++) {
		p->key[i - 1] = p->key[i];
		p->key[i - 1].off -= n;
	}
	p->nkeys--;
}

static int find_key(const struct parking *p, uintptr_t key)
{
	for (uint32_t k = 0; p && k < p->nkeys; k++)
		if (p->key[k].key == key)
			return (int)k;
	return -1;
}

/* Suspends every frame of the thread under key. */
static void park(struct rt_thread *t, uintptr_t key)
{
	if (!parked) {
		void *m = mmap(NULL, sizeof(struct parking), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (m != MAP_FAILED)
			parked = m;
	}
	struct parking *p = parked;
	int k = find_key(p, key);
	if (k >= 0)
		forget(p, (uint32_t)k);
	uint32_t n = (uint32_t)t->depth;
	uint64_t ts = rt_now();
	rt_restore_all(t);
	for (int i = t->depth - 1; i >= 0; i--)
		if (t->stack[i].flags & RT_F_EMITTED)
			rt_emit(t, ts, t->stack[i].addr | (uint64_t)TPP_RT_WHY_SUSPEND << TPP_RT_WHY_SHIFT,
				TPP_RT_UNWIND);
	if (p && n && n <= PARK_FRAMES) {
		while (p->nkeys && (p->nkeys == PARK_KEYS || p->nframes + n > PARK_FRAMES))
			forget(p, 0);
		p->key[p->nkeys].key = key;
		p->key[p->nkeys].off = p->nframes;
		p->key[p->nkeys].n = n;
		memcpy(&p->f[p->nframes], t->stack, n * sizeof(p->f[0]));
		p->nframes += n;
		p->nkeys++;
	}
	t->depth = 0;
	t->only_depth = 0;
}

/* Back in the context saved under key: frames of the context that switched
 * here are left (it ended, or parked them itself), the parked ones resume. */
static void unpark(struct rt_thread *t, uintptr_t key)
{
	uint64_t ts = rt_now();
	while (t->depth)
		rt_pop_emit(t, ts, TPP_RT_UNWIND, TPP_RT_WHY_JUMP);
	struct parking *p = parked;
	int k = find_key(p, key);
	if (k < 0)
		return;
	uint32_t off = p->key[k].off, n = p->key[k].n;
	memcpy(t->stack, &p->f[off], n * sizeof(p->f[0]));
	forget(p, (uint32_t)k);
	t->depth = (int)n;
	for (uint32_t i = 0; i < n; i++) {
		struct rt_frame *f = &t->stack[i];
		if (f->flags & RT_F_ONLY)
			t->only_depth++;
		if ((f->flags & RT_F_EMITTED) &&
		    !rt_emit(t, ts, f->addr | (uint64_t)TPP_RT_WHY_RESUME << TPP_RT_WHY_SHIFT, TPP_RT_ENTRY))
			f->flags &= ~(uint32_t)RT_F_EMITTED;
	}
	rt_rehijack(t);
}

RT_EXPORT int swapcontext(ucontext_t *oucp, const ucontext_t *ucp)
{
	struct rt_thread *t = &rt_self;
	int on = enter(t, 0);
	if (on) {
		park(t, (uintptr_t)oucp);
		leave(t);
	}
	if (!real_swapcontext)
		abort();
	int r = real_swapcontext(oucp, ucp);
	/* Resumed: whoever switched back to oucp (swapcontext, setcontext, a
	 * finished coroutine's uc_link) did so on this thread. */
	if (on && enter(t, 0)) {
		unpark(t, (uintptr_t)oucp);
		leave(t);
	}
	return r;
}

RT_EXPORT int setcontext(const ucontext_t *ucp)
{
	struct rt_thread *t = &rt_self;
	uintptr_t sp = (uintptr_t)ucp->uc_mcontext.gregs[REG_RSP];
	if (enter(t, sp)) {
		if (find_key(parked, (uintptr_t)ucp) >= 0) {
			/* Back to a context swapcontext saved: it resumes its own
			 * frames; this context ends here. */
			uint64_t ts = rt_now();
			while (t->depth)
				rt_pop_emit(t, ts, TPP_RT_UNWIND, TPP_RT_WHY_JUMP);
		} else {
			/* A context getcontext saved: like longjmp. */
			unwind_to(t, (uintptr_t)ucp, sp);
		}
		leave(t);
	}
	if (!real_setcontext)
		abort();
	return real_setcontext(ucp);
}
