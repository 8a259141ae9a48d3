/* an_pair — entry/return pairing, the one place calls are paired, for the
 * compiled-in runtime's events (func_entry/func_exit/func_unwind/
 * func_resume) and uprobes alike: per thread an open call stack; ops get
 * every entry and every closed call (returned, unwound, left at exit or end
 * of trace) with its flags. Lifecycle: an_pair_open .. an_pair_finish (closes
 * what is still open) .. an_pair_close; the an_types, an_syms and tpp_names
 * passed in must outlive it.
 * Errors: negative errno values (-ENOMEM, -EINVAL) or tpp_format.h codes;
 * nothing here prints.
 */
#ifndef TPP_AN_PAIR_H
#define TPP_AN_PAIR_H
#include <stdint.h>
#include <stddef.h>
#include "tpp_decode.h"
#include "an_types.h"
#include "an_syms.h"

enum an_call_flags {
	AN_CALL_NORET = 1,   /* no return seen: trace ended or thread exited */
	AN_CALL_UNWOUND = 2, /* a caller returned first (longjmp, exception) */
	AN_CALL_ORPHAN = 4,  /* a return without its entry (entry before the trace) */
	AN_CALL_EXCEPTION = 8, /* with UNWOUND: left by a C++ exception */
	AN_CALL_TAIL = 16,     /* it jumped to a function (tail call) that returned for it */
	AN_CALL_SUSPENDED = 32, /* with UNWOUND: its stack was switched away (swapcontext) */
	AN_CALL_RESUMED = 64,  /* opened without a call in this thread: inherited at fork,
				* or resumed by a context switch (func_resume) */
};
#define AN_FRAME_RESUMED 1 /* an_frame.fl */
#define AN_FRAME_TAILED 2  /* it jumped to a callee entered at its stack pointer */
struct an_frame {
	uint64_t addr, ts;
	uint64_t child_ns;  /* time in completed children */
	uint64_t offcpu_ns; /* time switched out while this frame was open */
	uint32_t func;      /* an_func_id */
	uint32_t node;      /* free for the consumer (call-tree node, ...) */
	uint32_t user;      /* free for the consumer (replay: line printed) */
	uint8_t nargs;
	uint8_t fl;         /* AN_FRAME_*: set before ops->entry */
	uint64_t sp;        /* stack pointer at entry (uprobes), 0 unknown */
	uint64_t args[AN_MAX_ARGS];
};
struct an_thread {
	int32_t tid, pid;
	int32_t cpu;         /* where it last ran, -1 unknown */
	uint32_t depth, cap; /* st[0..depth) is the open call stack */
	struct an_frame *st;
	uint64_t off_since;  /* switched out at, 0 when on CPU or unknown */
	uint64_t last_ts;
	const char *comm;    /* task name from the file's metadata, or NULL */
	uint32_t user, user2; /* free for the consumer */
	uint32_t label_len;  /* free for the consumer (replay: "CPU comm-tid") */
	int32_t label_cpu;   /* free for the consumer (replay: the CPU in label) */
	char label[40];
};
struct an_call {
	uint64_t entry_ts, exit_ts, dur, self, offcpu;
	uint32_t depth; /* 0 = outermost open frame of the thread */
	uint32_t flags; /* enum an_call_flags */
	int has_ret;
	uint64_t ret;
};
struct an_pair_ops {
	/* After a push: the new frame is th->st[th->depth - 1], its node and
	 * user 0. */
	void (*entry)(void *ctx, struct an_thread *th, const struct tpp_event *ev);
	/* Before the pop: the frame is th->st[th->depth - 1]. ev is the return
	 * (NULL when the frame is closed by unwinding, exit or end of trace). */
	void (*exit)(void *ctx, struct an_thread *th, const struct an_call *c,
		     const struct tpp_event *ev);
	/* A return that matches no open frame. */
	void (*orphan)(void *ctx, struct an_thread *th, uint32_t func, const struct tpp_event *ev);
};
struct an_pair_stats {
	uint64_t entries, returns, calls, orphans, noret;
	uint64_t unwound;   /* closed without their return (AN_CALL_UNWOUND), of which: */
	uint64_t exception; /* by a C++ exception */
	uint64_t tail;      /* calls that ended in a tail call (AN_CALL_TAIL) */
};
struct an_pair;
/* What the inline common cases below read and update of an an_pair: a
 * consumer that takes them in its own feed skips a call per callback and
 * the struct an_call. */
struct an_pair_hot {
	/* Events come in runs of one thread: the last one found saves the
	 * hash lookup on most events. */
	struct an_thread *last;
	uint64_t entries, returns, calls; /* of an_pair_stats */
};
/* p's hot part, valid until an_pair_close. */
struct an_pair_hot *an_pair_hot(struct an_pair *p);
/* The thread of a function event when it is the last one's, else NULL. */
static inline struct an_thread *an_pair_hot_thread(const struct an_pair_hot *h,
						   const struct tpp_event *ev)
{
	struct an_thread *th = h->last;
	return th && th->tid == ev->tid ? th : NULL;
}
/* Pushes th's next frame for an entry (room on the stack and the slot's
 * function set), sp its stack pointer (0 unknown). */
static inline void an_pair_push_frame(struct an_pair_hot *h, struct an_thread *th,
				      const struct tpp_event *ev, const struct an_tinfo *ti, uint64_t sp)
{
	struct an_frame *f = &th->st[th->depth];
	th->last_ts = ev->ts;
	th->depth++;
	/* every field set here: a memset of the frame showed in profiles */
	f->ts = ev->ts;
	f->child_ns = f->offcpu_ns = 0;
	f->node = f->user = 0;
	f->nargs = ti->nargs;
	f->fl = 0;
	f->sp = sp;
	for (int i = 0; i < ti->nargs; i++)
		f->args[i] = ev->v[ti->f[R_ARG0] + i].u;
	h->entries++;
}
/* An entry (ti->kind AN_FENTRY or AN_UENTRY) of th = an_pair_hot_thread(),
 * in the common case: room on the stack, and the slot's last frame of the
 * same function. Pushes the frame as an_pair_feed does, but calls no
 * ops->entry (the caller does that work itself): 0. -1 with nothing done
 * in any other case, which an_pair_feed takes. */
static inline int an_pair_push_hot(struct an_pair_hot *h, struct an_thread *th,
				   const struct tpp_event *ev, const struct an_tinfo *ti)
{
	if (__builtin_expect(th->depth == th->cap, 0))
		return -1;
	struct an_frame *f = &th->st[th->depth];
	/* A slot keeps the function of the last frame it held: a loop calls
	 * the same function at the same depth over and over, and (pid, addr)
	 * always maps to the same id, so the lookup is skipped. */
	if (__builtin_expect(f->addr != an_u(ev, ti, R_ADDR) || f->func == UINT32_MAX, 0))
		return -1;
	/* With the stack pointer (uprobes): a frame at or below the new
	 * entry's has been left (or was jumped from): an_pair_feed decides. */
	uint64_t sp = ti->f[R_SP] >= 0 ? ev->v[(int)ti->f[R_SP]].u : 0;
	if (__builtin_expect(sp && th->depth && f[-1].sp && f[-1].sp <= sp &&
			     !(f[-1].sp == sp && f[-1].fl & AN_FRAME_TAILED), 0))
		return -1;
	an_pair_push_frame(h, th, ev, ti, sp);
	return 0;
}
/* A return (AN_FEXIT or AN_URET) of th = an_pair_hot_thread() in the
 * common case: of th's innermost frame, without a return value. Returns
 * that frame, still on the stack, with *dur its call's duration; the caller
 * does what ops->exit would (c->flags 0, c->has_ret 0) and then
 * an_pair_pop_hot. NULL with nothing done in any other case, which
 * an_pair_feed takes. */
static inline struct an_frame *an_pair_ret_hot(struct an_thread *th, const struct tpp_event *ev,
					       const struct an_tinfo *ti, uint64_t *dur)
{
	uint64_t addr = an_u(ev, ti, R_ADDR);
	if (__builtin_expect(!th->depth || ti->f[R_RET] >= 0 || ti->f[R_SP] >= 0, 0))
		return NULL;
	struct an_frame *f = &th->st[th->depth - 1];
	/* without an address (or its field) a return is the innermost
	 * frame's; with one, nearly always too */
	if (__builtin_expect(addr && f->addr != addr, 0))
		return NULL;
	*dur = ev->ts > f->ts ? ev->ts - f->ts : 0;
	return f;
}
/* Pops th's innermost frame, a call of dur ns: its time is its caller's
 * children's, its off-CPU time its caller's too. */
static inline void an_pair_pop_frame(struct an_thread *th, uint64_t dur)
{
	if (--th->depth) {
		struct an_frame *f = &th->st[th->depth];
		f[-1].child_ns += dur;
		f[-1].offcpu_ns += f->offcpu_ns;
	}
}
/* Pops th's innermost frame after an_pair_ret_hot for the return ev. */
static inline void an_pair_pop_hot(struct an_pair_hot *h, struct an_thread *th,
				   const struct tpp_event *ev, uint64_t dur)
{
	th->last_ts = ev->ts;
	h->returns++;
	h->calls++;
	an_pair_pop_frame(th, dur);
}
int an_pair_open(struct an_pair **p, const struct an_types *ty, struct an_syms *syms,
		 const struct tpp_names *names, const struct an_pair_ops *ops, void *ctx);
/* Feeds one event (any kind; function and sched events matter). Returns
 * the thread the event belongs to for function events, else NULL; *err is
 * set to -ENOMEM on allocation failure. */
struct an_thread *an_pair_feed(struct an_pair *p, const struct tpp_event *ev, int *err);
/* an_pair_feed for a caller that has the event's an_ti already: 0 or
 * -ENOMEM. */
int an_pair_feed_ti(struct an_pair *p, const struct tpp_event *ev, const struct an_tinfo *ti);
/* The thread state of tid (created on demand), NULL on -ENOMEM. */
struct an_thread *an_pair_thread(struct an_pair *p, int32_t tid);
/* Closes every open frame as AN_CALL_NORET at its thread's last event. */
void an_pair_finish(struct an_pair *p);
void an_pair_stats(const struct an_pair *p, struct an_pair_stats *st);
void an_pair_close(struct an_pair *p);
/* Pairs every call of r (a pass over its function events, in time order)
 * for the counts alone: 1 with *st filled, 0 when r has no function events
 * (*st zeroed), or a negative errno. */
int an_pair_count(struct tpp_reader *r, struct an_pair_stats *st);
#endif
