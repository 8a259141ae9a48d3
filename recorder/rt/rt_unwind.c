/* Stack unwinders (C++ exceptions, pthread_exit, backtrace) read return
 * addresses; with mcount's hijacked ones they would find our trampoline and
 * give up (std::terminate). So the originals go back before any unwinder
 * entry point runs, frames an exception skipped become unwind records at
 * the catch, and the survivors are hijacked again. The unwinder's own entry
 * points (_Unwind_*, in libgcc_s) are wrapped as well as libstdc++'s, so a
 * throw from inside a library that calls them directly is covered too. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "rt_int.h"

struct _Unwind_Exception;
typedef int (*unwind_trace_fn)(void *, void *);
typedef int (*unwind_stop_fn)(int, int, uint64_t, struct _Unwind_Exception *, void *, void *);

static void (*real_throw)(void *, void *, void (*)(void *));
static void (*real_rethrow)(void);
static void *(*real_begin_catch)(void *);
static int (*real_raise)(struct _Unwind_Exception *);
static void (*real_resume)(struct _Unwind_Exception *);
static int (*real_resume_or_rethrow)(struct _Unwind_Exception *);
static int (*real_forced)(struct _Unwind_Exception *, unwind_stop_fn, void *);
static int (*real_uw_backtrace)(unwind_trace_fn, void *);
static int (*real_backtrace)(void **, int);
static void (*real_pthread_exit)(void *);

/* Looked up at start where possible: backtrace() is called from crash
 * handlers, where dlsym is not safe. libgcc_s may be loaded later
 * (dlopen of a C++ library): then at first use. */
#define NEXT(var, name) ((var) ? (var) : ((var) = (__typeof__(var))dlsym(RTLD_NEXT, name)))

__attribute__((constructor(102))) static void unwind_init(void)
{
	NEXT(real_throw, "__cxa_throw");
	NEXT(real_rethrow, "__cxa_rethrow");
	NEXT(real_begin_catch, "__cxa_begin_catch");
	NEXT(real_raise, "_Unwind_RaiseException");
	NEXT(real_resume, "_Unwind_Resume");
	NEXT(real_resume_or_rethrow, "_Unwind_Resume_or_Rethrow");
	NEXT(real_forced, "_Unwind_ForcedUnwind");
	NEXT(real_uw_backtrace, "_Unwind_Backtrace");
	NEXT(real_backtrace, "backtrace");
	NEXT(real_pthread_exit, "pthread_exit");
}

/* Before an unwinder walks this thread's stack; why: what frames found
 * left behind until the catch are closed as (a destructor run by a
 * cleanup is entered above the frames the exception already left). */
static void restore_why(unsigned why)
{
	struct rt_thread *t = &rt_self;
	if (t->stack && !t->busy) {
		rt_restore_all(t);
		t->lazy_why = why;
	}
}

static void restore(void)
{
	restore_why(TPP_RT_WHY_EXCEPTION);
}

/* After a walk that did not leave any frame (a backtrace, a failed throw). */
static void rehijack(void)
{
	struct rt_thread *t = &rt_self;
	if (t->stack && !t->busy)
		rt_rehijack(t);
}

RT_EXPORT __attribute__((noreturn)) void __cxa_throw(void *obj, void *tinfo, void (*dest)(void *))
{
	restore();
	if (!NEXT(real_throw, "__cxa_throw"))
		abort();
	real_throw(obj, tinfo, dest);
	__builtin_unreachable();
}

RT_EXPORT __attribute__((noreturn)) void __cxa_rethrow(void)
{
	restore();
	if (!NEXT(real_rethrow, "__cxa_rethrow"))
		abort();
	real_rethrow();
	__builtin_unreachable();
}

RT_EXPORT int _Unwind_RaiseException(struct _Unwind_Exception *e)
{
	restore();
	if (!NEXT(real_raise, "_Unwind_RaiseException"))
		return 3; /* _URC_FATAL_PHASE1_ERROR */
	int r = real_raise(e); /* returns only when nothing catches */
	rehijack();
	rt_self.lazy_why = TPP_RT_WHY_NONE;
	return r;
}

/* Called at the end of a cleanup (a destructor run during unwinding):
 * functions called by the cleanup may have hijacked again. */
RT_EXPORT __attribute__((noreturn)) void _Unwind_Resume(struct _Unwind_Exception *e)
{
	restore();
	if (!NEXT(real_resume, "_Unwind_Resume"))
		abort();
	real_resume(e);
	__builtin_unreachable();
}

RT_EXPORT int _Unwind_Resume_or_Rethrow(struct _Unwind_Exception *e)
{
	restore();
	if (!NEXT(real_resume_or_rethrow, "_Unwind_Resume_or_Rethrow"))
		return 3;
	int r = real_resume_or_rethrow(e);
	rehijack();
	return r;
}

RT_EXPORT int _Unwind_ForcedUnwind(struct _Unwind_Exception *e, unwind_stop_fn stop, void *arg)
{
	restore_why(TPP_RT_WHY_END);
	if (!NEXT(real_forced, "_Unwind_ForcedUnwind"))
		return 3;
	int r = real_forced(e, stop, arg);
	rehijack();
	rt_self.lazy_why = TPP_RT_WHY_NONE;
	return r;
}

RT_EXPORT int _Unwind_Backtrace(unwind_trace_fn fn, void *arg)
{
	uint32_t why = rt_self.lazy_why;
	restore_why(why);
	if (!NEXT(real_uw_backtrace, "_Unwind_Backtrace"))
		return 3;
	int r = real_uw_backtrace(fn, arg);
	rehijack();
	return r;
}

RT_EXPORT int backtrace(void **buf, int size)
{
	uint32_t why = rt_self.lazy_why;
	restore_why(why);
	if (!NEXT(real_backtrace, "backtrace"))
		return 0;
	int r = real_backtrace(buf, size);
	rehijack();
	return r;
}

RT_EXPORT void *__cxa_begin_catch(void *exc)
{
	struct rt_thread *t = &rt_self;
	if (t->stack && !t->busy) {
		t->busy = (uintptr_t)__builtin_frame_address(0);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		/* The catching function called us, at the stack pointer the
		 * unwinder gave back to it: every frame deeper is gone. */
		uintptr_t catcher_sp = (uintptr_t)__builtin_frame_address(0) + 16;
		rt_unwind_below(t, catcher_sp, rt_now(), TPP_RT_WHY_EXCEPTION);
		rt_rehijack(t);
		t->lazy_why = TPP_RT_WHY_NONE;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		t->busy = 0;
	}
	if (!NEXT(real_begin_catch, "__cxa_begin_catch"))
		abort();
	return real_begin_catch(exc);
}

RT_EXPORT __attribute__((noreturn)) void pthread_exit(void *ret)
{
	struct rt_thread *t = &rt_self;
	if (t->stack) {
		t->busy = (uintptr_t)__builtin_frame_address(0);
		rt_restore_all(t);
		uint64_t ts = rt_now();
		while (t->depth)
			rt_pop_emit(t, ts, TPP_RT_UNWIND, TPP_RT_WHY_END);
		t->busy = 0;
		rt_thread_stop(t);
	}
	if (!NEXT(real_pthread_exit, "pthread_exit"))
		abort();
	real_pthread_exit(ret);
	__builtin_unreachable();
}
