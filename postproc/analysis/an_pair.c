/* Entry/return pairing per thread. A return is matched to the innermost open
 * frame of the same function; frames above it were left without a return
 * (longjmp, exception) and are closed as unwound, never paired with the
 * wrong return. A return matching nothing is an orphan. The compiled-in
 * runtime says itself when a frame was left without return (func_unwind,
 * with why) and when one goes on without a call in this thread
 * (func_resume: a forked child's inherited frames, a resumed context). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "an_pair.h"
#include "an_types.h"
#include "an_syms.h"
#include "an_run.h"

struct an_pair {
	struct an_pair_hot hot; /* last, entries, returns, calls */
	const struct an_types *ty;
	struct an_syms *syms;
	const struct tpp_names *names;
	const struct an_pair_ops *ops;
	/* ops' callbacks, NULL when absent: one load each per event */
	void (*on_entry)(void *ctx, struct an_thread *th, const struct tpp_event *ev);
	void (*on_exit)(void *ctx, struct an_thread *th, const struct an_call *c,
			const struct tpp_event *ev);
	void *ctx;
	struct hmap by_tid;
	struct an_thread **th;
	size_t nth, capth;
	struct an_pair_stats st; /* but entries, returns, calls: in hot */
};

int an_pair_open(struct an_pair **p, const struct an_types *ty, struct an_syms *syms,
		 const struct tpp_names *names, const struct an_pair_ops *ops, void *ctx)
{
	*p = calloc(1, sizeof(**p));
	if (!*p)
		return -ENOMEM;
	(*p)->ty = ty;
	(*p)->syms = syms;
	(*p)->names = names;
	(*p)->ops = ops;
	(*p)->on_entry = ops ? ops->entry : NULL;
	(*p)->on_exit = ops ? ops->exit : NULL;
	(*p)->ctx = ctx;
	return 0;
}

void an_pair_close(struct an_pair *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nth; i++) {
		free(p->th[i]->st);
		free(p->th[i]);
	}
	free(p->th);
	hmap_free(&p->by_tid);
	free(p);
}

struct an_pair_hot *an_pair_hot(struct an_pair *p)
{
	return &p->hot;
}

static struct an_thread *lookup(struct an_pair *p, int32_t tid)
{
	if (p->hot.last && p->hot.last->tid == tid)
		return p->hot.last;
	uint32_t *i = hmap_get(&p->by_tid, (uint32_t)tid);
	if (!i)
		return NULL;
	return p->hot.last = p->th[*i];
}

struct an_thread *an_pair_thread(struct an_pair *p, int32_t tid)
{
	struct an_thread *th = lookup(p, tid);
	if (th)
		return th;
	if (p->nth == p->capth) {
		size_t nc = p->capth ? p->capth * 2 : 64;
		struct an_thread **n = realloc(p->th, nc * sizeof(*n));
		if (!n)
			return NULL;
		p->th = n;
		p->capth = nc;
	}
	th = calloc(1, sizeof(*th));
	if (!th || hmap_put(&p->by_tid, (uint32_t)tid, (uint32_t)p->nth)) {
		free(th);
		return NULL;
	}
	th->tid = tid;
	th->pid = p->names ? tpp_names_pid(p->names, tid) : -1;
	if (th->pid < 0)
		th->pid = tid;
	th->comm = p->names ? tpp_names_comm(p->names, tid) : NULL;
	th->cpu = -1;
	p->th[p->nth++] = th;
	return p->hot.last = th;
}

static inline __attribute__((always_inline)) void
close_top(struct an_pair *p, struct an_thread *th, uint64_t ts, uint32_t flags,
	  const struct tpp_event *ev, const struct an_tinfo *ti)
{
	struct an_frame *f = &th->st[th->depth - 1];
	struct an_call c;
	c.entry_ts = f->ts;
	c.exit_ts = ts > f->ts ? ts : f->ts;
	c.dur = c.exit_ts - f->ts;
	c.self = c.dur > f->child_ns ? c.dur - f->child_ns : 0;
	c.offcpu = f->offcpu_ns;
	c.depth = th->depth - 1;
	c.flags = flags | (f->fl & AN_FRAME_RESUMED ? AN_CALL_RESUMED : 0);
	c.has_ret = 0;
	c.ret = 0;
	if (ev && ti && ti->f[R_RET] >= 0) {
		c.has_ret = 1;
		c.ret = ev->v[(int)ti->f[R_RET]].u;
	}
	p->hot.calls++;
	if (flags & AN_CALL_NORET)
		p->st.noret++;
	if (flags & AN_CALL_UNWOUND)
		p->st.unwound++;
	if (flags & AN_CALL_EXCEPTION)
		p->st.exception++;
	if (flags & AN_CALL_TAIL)
		p->st.tail++;
	if (p->on_exit)
		p->on_exit(p->ctx, th, &c, ev);
	an_pair_pop_frame(th, c.dur);
}

/* close_top for the frames closed without their return. */
static __attribute__((noinline)) void close_top_noret(struct an_pair *p, struct an_thread *th,
						      uint64_t ts, uint32_t flags)
{
	close_top(p, th, ts, flags, NULL, NULL);
}

static __attribute__((noinline)) int grow_stack(struct an_thread *th)
{
	uint32_t nc = th->cap ? th->cap * 2 : 32;
	struct an_frame *n = realloc(th->st, nc * sizeof(*n));
	if (!n)
		return -ENOMEM;
	/* no function known in the new slots (see push) */
	for (uint32_t i = th->cap; i < nc; i++) {
		n[i].addr = 0;
		n[i].func = UINT32_MAX;
	}
	th->st = n;
	th->cap = nc;
	return 0;
}

/* Whether ra, the return address an entry found on its stack, is the
 * kernel's uretprobe trampoline: outside every file mapping of the process
 * (the [uprobes] page is none). Unknown maps: no, the safe answer (a
 * frame taken for left ends early; one taken for tail-called would swallow
 * every later call of its caller). */
/* Farther than this above the outermost open frame: another stack. */
#define OTHER_STACK (1ULL << 20)

static int is_trampoline(const struct an_pair *p, const struct an_thread *th, uint64_t ra)
{
	return p->names && ra && tpp_names_mapped(p->names, th->pid, ra) == 0;
}

/* An entry at stack pointer sp (uprobes). The stack tells which open
 * frames are gone, as it tells the kernel which return probes to drop: a
 * frame whose entry was below sp was left (longjmp, an exception), closed
 * at the thread's last event before this one, the latest moment it was
 * known to live; one entered at sp itself was left too, unless the new
 * callee's return address is the uretprobe trampoline: then the frame
 * jumped to it (a tail call) and returns with it. */
static __attribute__((noinline)) void sp_enter(struct an_pair *p, struct an_thread *th,
					       const struct tpp_event *ev, const struct an_tinfo *ti,
					       uint64_t sp)
{
	/* Far above every open frame, it runs on another stack (a signal
	 * handler's sigaltstack, a coroutine's): nested, as without the stack
	 * pointer. A jump lands within the stack, a few frames up. */
	uint32_t k = 0;
	while (k < th->depth && !th->st[k].sp)
		k++;
	if (k < th->depth && sp > th->st[k].sp + OTHER_STACK)
		return;
	uint64_t when = th->last_ts;
	while (th->depth && th->st[th->depth - 1].sp && th->st[th->depth - 1].sp < sp)
		close_top_noret(p, th, when, AN_CALL_UNWOUND);
	if (!th->depth || th->st[th->depth - 1].sp != sp)
		return;
	if (is_trampoline(p, th, an_u(ev, ti, R_RA)))
		th->st[th->depth - 1].fl |= AN_FRAME_TAILED;
	else
		close_top_noret(p, th, when, AN_CALL_UNWOUND);
}

/* An entry past an_pair_push_hot's common case: the stack grown, the
 * slot's function looked up; fl: AN_FRAME_* of the new frame. */
static __attribute__((noinline)) int push_slow_fl(struct an_pair *p, struct an_thread *th,
						  const struct tpp_event *ev,
						  const struct an_tinfo *ti, uint8_t fl)
{
	uint64_t sp = ti->f[R_SP] >= 0 ? an_u(ev, ti, R_SP) : 0;
	if (sp && th->depth)
		sp_enter(p, th, ev, ti, sp);
	if (th->depth == th->cap && grow_stack(th))
		return -ENOMEM;
	struct an_frame *f = &th->st[th->depth];
	uint64_t addr = an_u(ev, ti, R_ADDR);
	if (f->addr != addr || f->func == UINT32_MAX) {
		f->addr = addr;
		f->func = an_func_id_ev(p->syms, th->pid, ev, addr);
		if (f->func == UINT32_MAX)
			return -ENOMEM;
	}
	/* pushed whatever the stack says: sp_enter has closed what it left */
	an_pair_push_frame(&p->hot, th, ev, ti, sp);
	th->st[th->depth - 1].fl = fl;
	if (fl & AN_FRAME_RESUMED)
		p->hot.entries--; /* not a call */
	if (p->on_entry)
		p->on_entry(p->ctx, th, ev);
	return 0;
}

static __attribute__((noinline)) int push_slow(struct an_pair *p, struct an_thread *th,
					       const struct tpp_event *ev,
					       const struct an_tinfo *ti)
{
	return push_slow_fl(p, th, ev, ti, 0);
}

/* The runtime's why (enum tpp_rt_why) as call flags. */
static uint32_t why_flags(uint64_t why)
{
	switch (why) {
	case 2:
		return AN_CALL_UNWOUND | AN_CALL_EXCEPTION;
	case 3:
		return AN_CALL_TAIL;
	case 5:
		return AN_CALL_UNWOUND | AN_CALL_SUSPENDED;
	default:
		return AN_CALL_UNWOUND;
	}
}

/* func_unwind without a depth: the innermost open frame of addr (and any
 * frame above it, which the runtime closes first) ends here. */
static __attribute__((noinline)) void unwind_addr(struct an_pair *p, struct an_thread *th,
						  const struct tpp_event *ev,
						  const struct an_tinfo *ti)
{
	uint64_t addr = an_u(ev, ti, R_ADDR);
	long k = (long)th->depth - 1;
	while (k >= 0 && th->st[k].addr != addr)
		k--;
	if (k < 0)
		return; /* entered before the recording, or by a parent */
	th->last_ts = ev->ts;
	while ((long)th->depth - 1 > k)
		close_top_noret(p, th, ev->ts, AN_CALL_UNWOUND);
	close_top_noret(p, th, ev->ts, why_flags(ti->f[R_WHY] >= 0 ? an_u(ev, ti, R_WHY) : 0));
}

/* A return at stack pointer sp (uprobes: the entry's + 8, the return
 * address popped), when. The frame entered at sp - 8 is the one returning;
 * frames entered below it were left without their return (closed at when:
 * the thread's last event before). 1 when done, 0 when the stack does not
 * say (frames without a stack pointer): the caller pairs by address. */
static int sp_return(struct an_pair *p, struct an_thread *th, const struct tpp_event *ev,
		     const struct an_tinfo *ti, uint64_t addr, uint64_t sp, uint64_t when)
{
	uint64_t at = sp - 8;
	long k = (long)th->depth - 1;
	while (k >= 0 && th->st[k].sp && th->st[k].sp < at)
		k--;
	if (k < 0 || !th->st[k].sp)
		return 0;
	if (th->st[k].sp != at || (addr && th->st[k].addr != addr)) {
		/* entered before the recording, or its entry was lost */
		p->st.orphans++;
		if (p->ops && p->ops->orphan)
			p->ops->orphan(p->ctx, th, an_func_id_ev(p->syms, th->pid, ev, addr), ev);
		return 1;
	}
	while ((long)th->depth - 1 > k)
		close_top_noret(p, th, when, AN_CALL_UNWOUND);
	close_top(p, th, ev->ts, th->st[k].fl & AN_FRAME_TAILED ? AN_CALL_TAIL : 0, ev, ti);
	return 1;
}

/* A return that is not of the innermost frame: unwinding or an orphan. */
static __attribute__((noinline)) void ret_slow(struct an_pair *p, struct an_thread *th,
					       const struct tpp_event *ev,
					       const struct an_tinfo *ti, uint64_t addr)
{
	long k = (long)th->depth - 1;
	while (k >= 0 && th->st[k].addr != addr)
		k--;
	if (k < 0) {
		p->st.orphans++;
		if (p->ops && p->ops->orphan)
			p->ops->orphan(p->ctx, th, an_func_id_ev(p->syms, th->pid, ev, addr), ev);
		return;
	}
	while ((long)th->depth - 1 > k)
		close_top_noret(p, th, ev->ts, AN_CALL_UNWOUND);
	close_top(p, th, ev->ts, 0, ev, ti);
}

/* The events other than entries and returns. */
static __attribute__((noinline)) int feed_other(struct an_pair *p, const struct tpp_event *ev,
						 const struct an_tinfo *ti)
{
	struct an_thread *th;
	switch (ti->kind) {
	case AN_FUNWIND:
		/* The runtime saw the stack cut back (longjmp, exception): frames
		 * deeper than the depth it reports never return. */
		if ((th = lookup(p, ev->tid)) && ti->f[R_DEPTH] >= 0) {
			uint64_t d = an_u(ev, ti, R_DEPTH);
			while (th->depth > d)
				close_top_noret(p, th, ev->ts, AN_CALL_UNWOUND);
		} else if (th) {
			unwind_addr(p, th, ev, ti);
		}
		return 0;
	case AN_FRESUME:
		if (!(th = an_pair_thread(p, ev->tid)))
			return -ENOMEM;
		th->last_ts = ev->ts;
		return push_slow_fl(p, th, ev, ti, AN_FRAME_RESUMED);
	case AN_SWITCH: {
		int32_t prev = (int32_t)an_u(ev, ti, R_PREV_PID);
		int32_t next = (int32_t)an_u(ev, ti, R_NEXT_PID);
		if (prev && (th = lookup(p, prev))) {
			th->off_since = ev->ts;
			th->last_ts = ev->ts;
		}
		if (next && (th = lookup(p, next))) {
			if (th->off_since && th->depth)
				th->st[th->depth - 1].offcpu_ns += ev->ts - th->off_since;
			th->off_since = 0;
			th->cpu = ev->cpu;
			th->last_ts = ev->ts;
		}
		return 0;
	}
	case AN_EXIT:
		if ((th = lookup(p, (int32_t)an_u(ev, ti, R_PID)))) {
			while (th->depth)
				close_top_noret(p, th, ev->ts, AN_CALL_NORET);
			th->last_ts = ev->ts;
		}
		return 0;
	default:
		return 0;
	}
}

#define ENTRY_KINDS (1u << AN_FENTRY | 1u << AN_UENTRY)
#define RETURN_KINDS (1u << AN_FEXIT | 1u << AN_URET)
_Static_assert(AN_NKINDS <= 32, "kinds as bits of an unsigned");

/* Entries and returns each in a function of its own, tail-called from
 * feed: with both inlined there, every event paid for saving the registers
 * either needs. */
static __attribute__((noinline)) int feed_entry(struct an_pair *p, struct an_thread *th,
						const struct tpp_event *ev,
						const struct an_tinfo *ti)
{
	if (__builtin_expect(an_pair_push_hot(&p->hot, th, ev, ti), 0))
		return push_slow(p, th, ev, ti);
	if (p->on_entry)
		p->on_entry(p->ctx, th, ev);
	return 0;
}

static __attribute__((noinline)) int feed_return(struct an_pair *p, struct an_thread *th,
						 const struct tpp_event *ev,
						 const struct an_tinfo *ti)
{
	uint64_t when = th->last_ts;
	th->last_ts = ev->ts;
	p->hot.returns++;
	/* without an address (or its field) a return is the innermost
	 * frame's; with one, nearly always too */
	uint64_t addr = an_u(ev, ti, R_ADDR);
	if (ti->f[R_SP] >= 0 && an_u(ev, ti, R_SP) && sp_return(p, th, ev, ti, addr, an_u(ev, ti, R_SP), when))
		return 0;
	if (th->depth && (!addr || th->st[th->depth - 1].addr == addr))
		close_top(p, th, ev->ts, 0, ev, ti);
	else
		ret_slow(p, th, ev, ti, addr);
	return 0;
}

/* A function event of another thread than the last one's. */
static __attribute__((noinline)) int feed_new_thread(struct an_pair *p, const struct tpp_event *ev,
						     const struct an_tinfo *ti)
{
	struct an_thread *th = an_pair_thread(p, ev->tid);
	if (!th)
		return -ENOMEM;
	/* an open frame keeps the thread's last event: frames a jump left
	 * end there (sp_enter, sp_return) */
	if (!th->depth)
		th->last_ts = ev->ts;
	if (ENTRY_KINDS >> ti->kind & 1)
		return feed_entry(p, th, ev, ti);
	return feed_return(p, th, ev, ti);
}

int an_pair_feed_ti(struct an_pair *p, const struct tpp_event *ev, const struct an_tinfo *ti)
{
	/* only tail calls here, so that the common events cost no register
	 * saving */
	unsigned kind = ti->kind;
	if (!((ENTRY_KINDS | RETURN_KINDS) >> kind & 1))
		return feed_other(p, ev, ti);
	struct an_thread *th = an_pair_hot_thread(&p->hot, ev);
	if (__builtin_expect(!th, 0))
		return feed_new_thread(p, ev, ti);
	if (ENTRY_KINDS >> kind & 1)
		return feed_entry(p, th, ev, ti);
	return feed_return(p, th, ev, ti);
}

struct an_thread *an_pair_feed(struct an_pair *p, const struct tpp_event *ev, int *err)
{
	const struct an_tinfo *ti = an_ti(p->ty, ev);
	if ((*err = an_pair_feed_ti(p, ev, ti)) ||
	    !((ENTRY_KINDS | RETURN_KINDS | 1u << AN_FUNWIND | 1u << AN_FRESUME) >> ti->kind & 1))
		return NULL;
	return an_pair_hot_thread(&p->hot, ev);
}

void an_pair_finish(struct an_pair *p)
{
	for (size_t i = 0; i < p->nth; i++)
		while (p->th[i]->depth)
			close_top_noret(p, p->th[i], p->th[i]->last_ts, AN_CALL_NORET);
}

void an_pair_stats(const struct an_pair *p, struct an_pair_stats *st)
{
	*st = p->st;
	st->entries = p->hot.entries;
	st->returns = p->hot.returns;
	st->calls = p->hot.calls;
}

static int count_feed(void *ctx, const struct tpp_event *ev)
{
	int err = 0;
	an_pair_feed(ctx, ev, &err);
	return err;
}

int an_pair_count(struct tpp_reader *r, struct an_pair_stats *st)
{
	memset(st, 0, sizeof(*st));
	struct an_types *ty = malloc(sizeof(*ty));
	uint32_t *want = calloc(TPP_MAX_TYPES, sizeof(*want));
	struct tpp_names *nm = NULL;
	struct an_syms *sy = NULL;
	struct an_pair *p = NULL;
	int rc = -ENOMEM;
	if (!ty || !want)
		goto out;
	an_types_init(ty, r);
	rc = 0;
	if (!ty->has[AN_FENTRY] && !ty->has[AN_UENTRY])
		goto out;
	/* only the fields pairing reads are decoded */
	an_want_pairing(ty, want);
	struct an_filter f = {.want = want};
	struct an_run_stats rs;
	if ((rc = tpp_names_open(&nm, r)) || (rc = an_syms_open(&sy, nm)) ||
	    (rc = an_pair_open(&p, ty, sy, nm, NULL, NULL)) || (rc = an_run(r, &f, 0, count_feed, p, &rs)))
		goto out;
	an_pair_finish(p);
	an_pair_stats(p, st);
	rc = 1;
out:
	an_pair_close(p);
	an_syms_close(sy);
	tpp_names_close(nm);
	free(want);
	free(ty);
	return rc;
}
