/* Stack unwinders (C++ exceptions, pthread_exit) read return addresses; with
 * mcount's hijacked ones they would find our trampoline and give up. So the
 * originals go back before a throw, frames the unwinder skipped become
 * unwind records at the catch, and the survivors are hijacked again. */
#include <dlfcn.h>
#include <pthread.h>

#include "rt_int.h"

typedef void (*throw_fn)(void *, void *, void (*)(void *));
typedef void (*rethrow_fn)(void);
typedef void *(*catch_fn)(void *);
typedef void (*exit_fn)(void *);

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void before_unwind(void)
{
	struct rt_thread *t = &rt_self;
	if (t->stack)
		rt_restore_all(t);
}

RT_EXPORT __attribute__((noreturn)) void __cxa_throw(void *obj, void *tinfo, void (*dest)(void *))
{
	static throw_fn real;
	if (!real)
		real = (throw_fn)next_sym("__cxa_throw");
	before_unwind();
	real(obj, tinfo, dest);
	__builtin_unreachable();
}

RT_EXPORT __attribute__((noreturn)) void __cxa_rethrow(void)
{
	static rethrow_fn real;
	if (!real)
		real = (rethrow_fn)next_sym("__cxa_rethrow");
	before_unwind();
	real();
	__builtin_unreachable();
}

RT_EXPORT void *__cxa_begin_catch(void *exc)
{
	static catch_fn real;
	if (!real)
		real = (catch_fn)next_sym("__cxa_begin_catch");
	struct rt_thread *t = &rt_self;
	if (t->stack && !t->busy) {
		t->busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		/* The catching function called us: every frame below ours is gone. */
		uintptr_t here = (uintptr_t)__builtin_frame_address(0);
		uint64_t ts = rt_now();
		while (t->depth && t->stack[t->depth - 1].sp < here)
			rt_pop_emit(t, ts, TPP_RT_UNWIND);
		rt_rehijack(t);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->busy = 0;
	}
	return real(exc);
}

RT_EXPORT __attribute__((noreturn)) void pthread_exit(void *ret)
{
	static exit_fn real;
	if (!real)
		real = (exit_fn)next_sym("pthread_exit");
	struct rt_thread *t = &rt_self;
	if (t->stack) {
		t->busy = 1;
		rt_restore_all(t);
		uint64_t ts = rt_now();
		while (t->depth)
			rt_pop_emit(t, ts, TPP_RT_UNWIND);
		t->busy = 0;
		rt_thread_stop(t);
	}
	real(ret);
	__builtin_unreachable();
}
