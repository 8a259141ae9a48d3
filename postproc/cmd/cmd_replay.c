/* tracepp replay: the flow of every thread, like DTrace's flowindent and
 * SystemTap's thread_indent: one line per call, return and kernel event,
 * indented by call depth, with durations and kernel events inline.
 *
 * Entry lines are deferred until something is printed inside the call, so
 * a call with nothing inside prints as one line "f();" with its duration.
 * With --min-duration a call is shown only once its return proves it long
 * enough; its callers' entry lines are then printed late (their own
 * timestamps say when they began). This file decides which lines, and
 * when; replay_text.c formats them (replay.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "cli.h"
#include "commands.h"
#include "out_fast.h"
#include "an_dwarf.h"
#include "replay.h"
#include "vals.h"
#include "an_types.h"
#include "an_syms.h"
#include "an_run.h"
#include "an_grow.h"
#include "an_pair.h"
#include "an_lost.h"
#include "wallclock.h"

static const char usage_text[] =
	"usage: tracepp replay [OPTIONS] FILE\n"
	"Every thread's calls as an indented tree, in time order, kernel events inline.\n"
	"  --tid=TID[,TID]      only these threads     --comm=NAME[,NAME] only these task names\n"
	"  --func=F             only what runs under F (F's subtree)\n"
	"  --depth=N            only N levels of calls (under F with --func)\n"
	"  --min-duration=D     only calls lasting at least D (e.g. 10us)\n"
	"  --time-range=FROM,TO only this window (absolute ns, or 1.5s,2s from the start)\n"
	"  --no-kernel          no kernel events\n"
	"  --srcline            file:line of each call, from local binaries or debug files\n"
	"                       whose build-id matches the recorded one\n"
	"  --format=text|json|csv\n"
	"  --clock=mono|wall    times since the first event (default), or wall-clock UTC\n"
	"                       (ISO-8601 with ns; JSON and CSV add wall_ns)\n";

/* Per thread: user = open frames of --func F, user2 = depth of the
 * outermost one. */
static int in_scope(const struct rp *r, const struct an_thread *th)
{
	return !r->func || th->user;
}

static uint32_t rel_depth(const struct rp *r, const struct an_thread *th, uint32_t d)
{
	return r->func && th->user ? d - th->user2 : d;
}

static int frame_visible(const struct rp *r, const struct an_thread *th, uint32_t i)
{
	if (r->func && (!th->user || i < th->user2))
		return 0;
	return !r->max_depth || rel_depth(r, th, i) < r->max_depth;
}

static void base(struct line *l, struct an_thread *th)
{
	memset(l, 0, sizeof(*l));
	l->cpu = th->cpu;
	l->tid = th->tid;
	l->comm = th->comm;
	l->th = th;
}

static void out(struct rp *r, const struct line *l)
{
	r->emit(r, l);
	r->nlines++;
}

/* Prints the deferred entry lines of frames [0, upto). */
static void flush_frames_slow(struct rp *r, struct an_thread *th, uint32_t upto)
{
	/* Handled frames (user 1: printed, 2: not visible, which stays so
	 * while it is open) form a prefix of the stack: start above it rather
	 * than walk the whole stack at every entry. */
	uint32_t i = upto;
	while (i && !th->st[i - 1].user)
		i--;
	for (; i < upto; i++) {
		struct an_frame *f = &th->st[i];
		if (!frame_visible(r, th, i)) {
			f->user = 2;
			continue;
		}
		uint32_t depth = rel_depth(r, th, i);
		f->user = 1;
		if (r->fast_text && !f->nargs && !f->node &&
		    !rp_text_call(r, th, f, L_ENTRY, f->ts, 0, depth))
			continue;
		struct line l;
		base(&l, th);
		l.kind = L_ENTRY;
		l.ts = f->ts;
		l.depth = depth;
		l.name = an_func_name(r->syms, f->func);
		l.name_len = an_func_name_len(r->syms, f->func);
		l.f = f;
		out(r, &l);
	}
}

static inline void flush_frames(struct rp *r, struct an_thread *th, uint32_t upto)
{
	/* the frame below is handled, so are all under it: at nearly every
	 * entry there is nothing to print */
	if (upto && !th->st[upto - 1].user)
		flush_frames_slow(r, th, upto);
}

static int wanted(struct rp *r, struct an_thread *th)
{
	/* a thread's tid and comm never change: the answer for the run's
	 * thread is kept (twice per call showed in profiles) */
	if (th != r->w_th) {
		r->w_th = th;
		r->w_val = acli_task_wanted(r->c, th->tid, th->comm);
		r->plain_th = r->plain && r->w_val ? th : NULL;
		/* text_call_ready takes the label of plain_th as rendered */
		if (r->plain_th && !th->label_len)
			rp_label(th, th->cpu);
	}
	return r->w_val;
}

/* Appends v to u, growing it; 0 or -ENOMEM. */
static int ut_put(struct utext *u, const char *v, size_t n)
{
	if (u->len + n + 1 > u->cap) {
		size_t nc = u->cap ? u->cap : 64;
		while (nc < u->len + n + 1)
			nc *= 2;
		char *ns = realloc(u->s, nc);
		if (!ns)
			return -ENOMEM;
		u->s = ns;
		u->cap = nc;
	}
	memcpy(u->s + u->len, v, n);
	u->len += n;
	return 0;
}

/* Field i of ev as text: as the file's notes type it (vc, may be NULL),
 * else by the field's own type. */
static size_t val_text(char *buf, size_t len, const struct tpp_event *ev, const uint8_t *vc, int i)
{
	static const uint8_t kinds[] = {[TPP_V_CHAR] = VALS_CHAR, [TPP_V_PTR] = VALS_PTR, [TPP_V_F32] = VALS_F32,
					[TPP_V_F64] = VALS_F64};
	enum tpp_ftype ft = ev->t->fields[i].type;
	const union tpp_val *v = &ev->v[i];
	enum vals_kind k = ft == TPP_F_STR ? VALS_STR : ft == TPP_F_BYTES ? VALS_BYTES
			   : ft == TPP_F_S64 ? VALS_SINT : VALS_UINT;
	if (vc && vc[i] < sizeof(kinds) && kinds[vc[i]] && ft < TPP_F_STR)
		k = (enum vals_kind)kinds[vc[i]];
	return vals_text(buf, len, k, v->u, v->s.p, v->s.len);
}

/* The arguments of a uprobe entry (or an -A one of compiled-in code), named
 * by their fields, typed as the file's notes say (vals.h). */
static int ut_keep(struct rp *r, struct an_frame *f, const struct tpp_event *ev,
		   const struct an_tinfo *ti)
{
	uint32_t k = r->ut_free;
	if (k) {
		r->ut_free = r->ut[k - 1].next_free;
	} else {
		if (an_grow(&r->ut, &r->caput, r->nut + 1, sizeof(*r->ut), 16))
			return -ENOMEM;
		memset(&r->ut[r->nut], 0, sizeof(*r->ut));
		k = (uint32_t)++r->nut;
	}
	struct utext *u = &r->ut[k - 1];
	u->len = 0;
	f->node = k;
	const struct tpp_type *t = ev->t;
	const uint8_t *vc = tpp_names_vcodes(r->c->names, ev->type);
	int n = 0, e = 0;
	for (int i = 0; t && i < ev->nvals && i < t->nfields; i++) {
		const char *fn = t->fields[i].name;
		/* "__probe_ip", "__sp", "__ra": the probe's own, not arguments */
		if (!fn || i == ti->f[R_ADDR] || !strncmp(fn, "__", 2))
			continue;
		char b[VALS_MIN];
		e |= n++ ? ut_put(u, ", ", 2) : 0;
		e |= ut_put(u, fn, strlen(fn));
		e |= ut_put(u, "=", 1);
		e |= ut_put(u, b, val_text(b, sizeof(b), ev, vc, i));
	}
	e |= ut_put(u, "", 0);
	return e ? -ENOMEM : 0;
}

static void ut_release(struct rp *r, struct an_frame *f)
{
	r->ut[f->node - 1].next_free = r->ut_free;
	r->ut_free = f->node;
	f->node = 0;
}

/* The general way of on_exit_'s line: arguments, return value, flags. */
static void exit_line(struct rp *r, struct an_thread *th, const struct an_frame *f,
		      const struct an_call *c, const struct tpp_event *ev, enum lkind kind,
		      uint64_t ts, uint32_t depth)
{
	struct line l;
	base(&l, th);
	l.kind = kind;
	l.ts = ts;
	l.dur = c->dur;
	l.has_dur = 1;
	l.depth = depth;
	l.name = an_func_name(r->syms, f->func);
	l.name_len = an_func_name_len(r->syms, f->func);
	l.f = f;
	l.has_ret = c->has_ret;
	l.ret = c->ret;
	char rt[VALS_MIN];
	if (c->has_ret && ev) {
		const struct an_tinfo *ti = an_ti(r->ty, ev);
		int k = ti->f[R_RET];
		l.ret_signed = ev->t && k >= 0 && ev->t->fields[k].type == TPP_F_S64;
		const uint8_t *vc = tpp_names_vcodes(r->c->names, ev->type);
		/* a string, a char, a double: as text (vals.h) */
		if (ev->t && k >= 0 && k < ev->nvals &&
		    ((vc && (vc[k] == TPP_V_CHAR || vc[k] == TPP_V_F32 || vc[k] == TPP_V_F64)) ||
		     ev->t->fields[k].type == TPP_F_STR)) {
			l.ret_text = rt;
			l.ret_text_len = val_text(rt, sizeof(rt), ev, vc, k);
		}
	}
	l.flags = c->flags;
	out(r, &l);
}

/* on_entry for uprobes (arguments, CPU) and --func (scope). */
static __attribute__((noinline)) void entry_scope(struct rp *r, struct an_thread *th,
						  const struct tpp_event *ev)
{
	struct an_frame *f = &th->st[th->depth - 1];
	if (ev->cpu >= 0 || r->named) {
		/* uprobes (only they come from CPU streams), and -A on
		 * compiled-in functions: arguments by name, as uprobes have them */
		const struct an_tinfo *ti = an_ti(r->ty, ev);
		if (ev->cpu >= 0)
			th->cpu = ev->cpu;
		if ((ti->kind == AN_UENTRY || (ti->kind == AN_FENTRY && ev->t && ev->t->nfields > 1)) &&
		    ut_keep(r, f, ev, ti))
			r->err = -ENOMEM;
	}
	if (r->func) {
		if (r->func_id == UINT32_MAX && !strcmp(an_func_name(r->syms, f->func), r->func))
			r->func_id = f->func;
		if (f->func == r->func_id && th->user++ == 0)
			th->user2 = th->depth - 1;
	}
}

/* A call has begun inside one whose entry line is still deferred. */
static __attribute__((noinline)) void entry_flush(struct rp *r, struct an_thread *th,
						  uint32_t upto)
{
	if (wanted(r, th) && frame_visible(r, th, upto))
		flush_frames_slow(r, th, upto);
}

/* an_pair leaves the new frame's user at 0: its line is not printed. */
static inline __attribute__((always_inline)) void entry_work(struct rp *r, struct an_thread *th,
							     const struct tpp_event *ev)
{
	if (__builtin_expect(ev->cpu >= 0 || r->func || r->named, 0))
		entry_scope(r, th, ev);
	/* nearly always the caller's line is out already */
	uint32_t upto = th->depth - 1;
	if (upto && !th->st[upto - 1].user && !r->min_dur)
		entry_flush(r, th, upto);
}

static void on_entry(void *ctx, struct an_thread *th, const struct tpp_event *ev)
{
	struct an_frame *f = &th->st[th->depth - 1];
	/* A frame this thread did not enter (inherited at fork, resumed): no
	 * entry line, only its closing line where it returns. */
	if (__builtin_expect(f->fl & AN_FRAME_RESUMED, 0)) {
		if (ev->cpu >= 0 || ((struct rp *)ctx)->func || ((struct rp *)ctx)->named)
			entry_scope(ctx, th, ev);
		f->user = 1;
		return;
	}
	entry_work(ctx, th, ev);
}

/* on_exit_ in general: filters, arguments, return values, flags. */
static __attribute__((noinline)) void exit_slow(struct rp *r, struct an_thread *th,
						const struct an_call *c,
						const struct tpp_event *ev)
{
	uint32_t i = th->depth - 1;
	struct an_frame *f = &th->st[i];
	if (wanted(r, th) && frame_visible(r, th, i) && (f->user == 1 || c->dur >= r->min_dur)) {
		if (r->min_dur)
			flush_frames(r, th, i);
		enum lkind kind = f->user == 1 ? L_EXIT : L_LEAF;
		uint64_t ts = f->user == 1 ? c->exit_ts : c->entry_ts;
		uint32_t depth = rel_depth(r, th, i);
		/* an exit line shows no arguments */
		if (!(r->fast_text && !c->has_ret && !c->flags &&
		      (kind == L_EXIT || (!f->nargs && !f->node)) &&
		      !rp_text_call(r, th, f, kind, ts, c->dur, depth)))
			exit_line(r, th, f, c, ev, kind, ts, depth);
	}
	if (f->node)
		ut_release(r, f);
	if (r->func && f->func == r->func_id && th->user)
		th->user--;
}

/* on_exit_ for a plain line that needs rendering first. */
static __attribute__((noinline)) void exit_plain(struct rp *r, struct an_thread *th,
						 const struct an_call *c,
						 const struct tpp_event *ev)
{
	const struct an_frame *f = &th->st[th->depth - 1];
	enum lkind kind = f->user == 1 ? L_EXIT : L_LEAF;
	uint64_t ts = kind == L_EXIT ? c->exit_ts : c->entry_ts;
	if (rp_text_call(r, th, f, kind, ts, c->dur, th->depth - 1))
		exit_slow(r, th, c, ev);
}

static void on_exit_(void *ctx, struct an_thread *th, const struct an_call *c,
		     const struct tpp_event *ev)
{
	struct rp *r = ctx;
	const struct an_frame *f = &th->st[th->depth - 1];
	/* The common line: text, every call shown (r->plain), the thread
	 * wanted (known from the last line), nothing but the name. */
	if (th == r->plain_th && !c->has_ret && !c->flags && !f->node &&
	    (f->user == 1 || !f->nargs)) {
		enum lkind kind = f->user == 1 ? L_EXIT : L_LEAF;
		uint64_t ts = kind == L_EXIT ? c->exit_ts : c->entry_ts;
		if (!text_call_ready(r, th, f, kind, ts, c->dur, th->depth - 1))
			return;
		exit_plain(r, th, c, ev);
		return;
	}
	exit_slow(r, th, c, ev);
}

static void on_orphan(void *ctx, struct an_thread *th, uint32_t func, const struct tpp_event *ev)
{
	struct rp *r = ctx;
	if (!wanted(r, th) || !in_scope(r, th) || r->min_dur)
		return;
	flush_frames(r, th, th->depth);
	struct line l;
	base(&l, th);
	l.kind = L_ORPHAN;
	l.ts = ev->ts;
	l.depth = rel_depth(r, th, th->depth);
	l.name = an_func_name(r->syms, func);
	l.name_len = an_func_name_len(r->syms, func);
	out(r, &l);
}

static const struct an_pair_ops rp_ops = {on_entry, on_exit_, on_orphan};

static void kernel_line(struct rp *r, const struct tpp_event *ev, struct an_thread *th,
			enum lkind kind, uint64_t dur)
{
	if (!wanted(r, th) || !in_scope(r, th))
		return;
	uint32_t d = th->depth;
	if (r->max_depth && rel_depth(r, th, d) > r->max_depth)
		return;
	if (r->min_dur) {
		if (d && !th->st[d - 1].user)
			return; /* inside a call not (yet) shown */
	} else {
		flush_frames(r, th, d);
	}
	struct line l;
	base(&l, th);
	if (ev->cpu >= 0)
		l.cpu = ev->cpu;
	l.kind = kind;
	l.ts = ev->ts;
	l.depth = rel_depth(r, th, d);
	l.ev = kind == L_EVENT ? ev : NULL;
	l.dur = dur;
	l.has_dur = kind == L_SCHED_IN;
	out(r, &l);
}

/* Every event but entries and returns. */
static __attribute__((noinline)) int feed_kernel(struct rp *r, const struct tpp_event *ev,
						 const struct an_tinfo *ti)
{
	int err = 0;
	if (ti->kind == AN_SWITCH && !r->no_kernel) {
		/* Show the switch in the flow of the task that left, and the
		 * return to the CPU in the flow of the task that came back
		 * (with its off-CPU time), before the pairing updates them. */
		int32_t next = (int32_t)an_u(ev, ti, R_NEXT_PID);
		struct an_thread *th = an_pair_thread(r->pair, ev->tid);
		if (!th)
			return -ENOMEM;
		kernel_line(r, ev, th, L_EVENT, 0);
		struct an_thread *nt = next ? an_pair_thread(r->pair, next) : NULL;
		if (nt && nt->off_since && nt->depth)
			kernel_line(r, ev, nt, L_SCHED_IN, ev->ts - nt->off_since);
		an_pair_feed(r->pair, ev, &err);
		return err;
	}
	an_pair_feed(r->pair, ev, &err);
	if (err)
		return err;
	if (r->no_kernel)
		return 0;
	struct an_thread *th = an_pair_thread(r->pair, ev->tid);
	if (!th)
		return -ENOMEM;
	if (th->cpu < 0 || ev->cpu >= 0)
		th->cpu = ev->cpu;
	kernel_line(r, ev, th, L_EVENT, 0);
	return 0;
}

/* The general way of an event: kernel events, and entries and returns
 * past feed's common cases. */
static __attribute__((noinline)) int feed_slow(struct rp *r, const struct tpp_event *ev,
					       const struct an_tinfo *ti)
{
	if (__builtin_expect(ti->kind < AN_FENTRY || ti->kind > AN_URET, 0))
		return feed_kernel(r, ev, ti);
	int err = an_pair_feed_ti(r->pair, ev, ti);
	return err ? err : r->err;
}

/* exit_hot's line when text_call_ready can't copy it as it is: a new
 * microsecond prefix or label, a duration of 1 us or more, its function's
 * first line, a full buffer. */
static __attribute__((noinline)) int exit_hot_render(struct rp *r, struct an_thread *th,
						     const struct tpp_event *ev,
						     const struct an_tinfo *ti)
{
	uint64_t dur;
	const struct an_frame *f = an_pair_ret_hot(th, ev, ti, &dur);
	enum lkind kind = f->user == 1 ? L_EXIT : L_LEAF;
	uint64_t ts = kind == L_EXIT ? f->ts + dur : f->ts;
	if (rp_text_call(r, th, f, kind, ts, dur, th->depth - 1))
		return feed_slow(r, ev, ti);
	an_pair_pop_hot(r->hot, th, ev, dur);
	return 0;
}

/* A return of th (r->plain_th) taken without an_pair's callback, when
 * on_exit_ would print its common line. Tail-called: inlined in feed, it
 * made every event save the registers it needs. */
static __attribute__((noinline)) int
exit_hot(struct rp *r, struct an_thread *th, const struct tpp_event *ev,
	 const struct an_tinfo *ti)
{
	uint64_t dur;
	const struct an_frame *f = an_pair_ret_hot(th, ev, ti, &dur);
	if (!f || f->node || (f->user != 1 && f->nargs))
		return feed_slow(r, ev, ti);
	enum lkind kind = f->user == 1 ? L_EXIT : L_LEAF;
	uint64_t ts = kind == L_EXIT ? f->ts + dur : f->ts;
	if (text_call_ready(r, th, f, kind, ts, dur, th->depth - 1))
		return exit_hot_render(r, th, ev, ti);
	an_pair_pop_hot(r->hot, th, ev, dur);
	return 0;
}

/* entry_work past the common case, for an entry entry_hot pushed. */
static __attribute__((noinline)) int entry_rest(struct rp *r, struct an_thread *th,
						const struct tpp_event *ev)
{
	entry_work(r, th, ev);
	return r->err;
}

/* An entry of th (an_pair's last thread) taken without an_pair's callback.
 * Tail-called, like exit_hot. */
static __attribute__((noinline)) int entry_hot(struct rp *r, struct an_thread *th,
					       const struct tpp_event *ev,
					       const struct an_tinfo *ti)
{
	if (an_pair_push_hot(r->hot, th, ev, ti))
		return feed_slow(r, ev, ti);
	uint32_t upto = th->depth - 1;
	if (__builtin_expect(ev->cpu >= 0 || r->func || r->named ||
			     (upto && !th->st[upto - 1].user && !r->min_dur), 0))
		return entry_rest(r, th, ev);
	return 0;
}

/* A lost-event marker: x's count, at its first time, its span as the
 * duration; the lines of th (the task whose event comes next on x's
 * stream, NULL at the end) deferred until now go out first, so that the
 * marker stands where the events went missing. */
static void lost_line(struct rp *r, struct an_thread *th, const struct tpp_lost *x)
{
	if (th && wanted(r, th) && in_scope(r, th) && !r->min_dur)
		flush_frames(r, th, th->depth);
	const struct tpp_stream_info *si = tpp_r_stream_by_id(r->c->r, x->stream);
	struct line l;
	base(&l, &r->lost_th);
	l.cpu = si && si->kind == TPP_S_CPU ? si->cpu : -1;
	l.tid = si && si->kind == TPP_S_THREAD ? si->tid : -1;
	l.comm = NULL;
	l.kind = L_LOST;
	l.ts = x->from_ts;
	l.dur = x->to_ts > x->from_ts ? x->to_ts - x->from_ts : 0;
	l.has_dur = x->to_ts > x->from_ts;
	l.lost = x->count;
	out(r, &l);
}

/* The markers due before ev, on its stream. */
static __attribute__((noinline)) int lost_before(struct rp *r, const struct tpp_event *ev)
{
	const struct tpp_lost *x = an_lost_before(&r->lq, ev->stream, ev->ts);
	if (!x)
		return 0;
	struct an_thread *th = ev->tid >= 0 ? an_pair_thread(r->pair, ev->tid) : NULL;
	for (; x; x = an_lost_before(&r->lq, ev->stream, ev->ts))
		lost_line(r, th, x);
	return 0;
}

/* The common entries and returns inline, with only tail calls so that they
 * save no registers: through an_pair's callbacks they cost a call each and
 * a struct an_call. */
static int feed(void *ctx, const struct tpp_event *ev)
{
	struct rp *r = ctx;
	if (__builtin_expect(r->lq.n != 0, 0))
		lost_before(r, ev);
	const struct an_tinfo *ti = an_ti(r->ty, ev);
	struct an_thread *th = an_pair_hot_thread(r->hot, ev);
	if (__builtin_expect(th != NULL, 1)) {
		if (ti->kind == AN_FEXIT && th == r->plain_th)
			return exit_hot(r, th, ev, ti);
		if (ti->kind == AN_FENTRY)
			return entry_hot(r, th, ev, ti);
	}
	return feed_slow(r, ev, ti);
}

static int own_opt(struct acli *c, void *ctx, int opt, const char *arg)
{
	struct rp *r = ctx;
	switch (opt) {
	case 'F':
		r->func = arg;
		break;
	case 'D': {
		char *end;
		long d = strtol(arg, &end, 10);
		if (*end || end == arg || d < 1 || d > 1000000)
			return acli_usage_error(c, "--depth: '%s' is not a depth >= 1", arg);
		r->max_depth = (uint32_t)d;
		break;
	}
	case 'm':
		if (parse_duration(arg, "ns", &r->min_dur))
			return acli_usage_error(c, "--min-duration: bad duration '%s' (e.g. 10us)", arg);
		break;
	case 'S':
		r->want_srcline = 1;
		break;
	case 'k': {
		int w = wallclock_parse("replay", arg);
		if (w < 0)
			return 2;
		r->want_wall = w;
		break;
	}
	default: /* --no-kernel */
		r->no_kernel = 1;
	}
	return 0;
}

int cmd_replay(int argc, char **argv)
{
	static const struct option lo[] = {{"func", required_argument, 0, 'F'},
					   {"depth", required_argument, 0, 'D'},
					   {"min-duration", required_argument, 0, 'm'},
					   {"no-kernel", no_argument, 0, 'K'},
					   {"srcline", no_argument, 0, 'S'},
					   {"clock", required_argument, 0, 'k'},
					   {0, 0, 0, 0}};
	struct rp r;
	memset(&r, 0, sizeof(r));
	r.func_id = UINT32_MAX;
	const struct acli_spec spec = {.cmd = "replay", .usage = usage_text, .opts = lo,
				       .shortopts = "F:D:", .opt = own_opt, .ctx = &r};
	struct acli c;
	int rc = acli_start(&c, &spec, argc, argv);
	if (rc != ACLI_GO)
		return rc;
	r.c = &c;
	r.ty = c.ty;
	struct ofast *o = malloc(sizeof(*o));
	if (!o) {
		rc = acli_fail(&c, -ENOMEM, NULL);
		goto out;
	}
	of_init(o, 1);
	rp_text_init();
	r.o = o;
	r.fmt = c.fmt;
	r.emit = c.fmt == TBL_JSON ? rp_json_line : c.fmt == TBL_CSV ? rp_csv_line : rp_text_line;
	r.fast_text = c.fmt == TBL_TEXT && !r.want_srcline;
	r.t0 = c.t0;
	if (r.want_wall) {
		r.wall = tpp_r_clock(c.r);
		r.ts_us = UINT64_MAX; /* no prefix yet */
		wallclock_note("replay", c.path, c.r);
	} else {
		rp_ts_prefix(&r, 0);
	}
	r.plain = r.fast_text && !r.func && !r.max_depth && !r.min_dur;
	const struct tpp_file_info *fi = tpp_r_info(c.r);
	for (uint32_t i = 0; i < fi->ntypes; i++)
		if (fi->types[i].id < TPP_MAX_TYPES && c.ty->t[fi->types[i].id].kind == AN_FENTRY &&
		    fi->types[i].nfields > 1 && c.ty->t[fi->types[i].id].f[R_DEPTH] < 0)
			r.named = 1;
	if (r.want_srcline && (rc = an_dwarf_open(&r.dw, c.r, NULL))) {
		rc = acli_fail(&c, rc, NULL);
		goto out;
	}
	if ((rc = an_syms_open(&r.syms, c.names)) ||
	    (rc = an_pair_open(&r.pair, r.ty, r.syms, c.names, &rp_ops, &r))) {
		rc = acli_fail(&c, rc, NULL);
		goto out;
	}
	r.hot = an_pair_hot(r.pair);
	if ((rc = an_lost_open(&r.lq, c.r, c.f.from_ts, c.f.to_ts))) {
		rc = acli_fail(&c, rc, NULL);
		goto out;
	}
	/* lost lines have no task: "---" in its column */
	r.lost_th.tid = -1;
	r.lost_th.label_cpu = -2;
	memcpy(r.lost_th.label + 4, "---                   ", 22);
	r.lost_th.label_len = 26;
	if (c.fmt == TBL_TEXT)
		of_str(o, "#      TIMESTAMP CPU TASK-TID                 DURATION | FUNCTION\n");
	struct an_run_stats st;
	if ((rc = acli_run(&c, feed, &r, &st))) {
		of_flush(o);
		goto out;
	}
	an_pair_finish(r.pair);
	for (const struct tpp_lost *x; (x = an_lost_rest(&r.lq));)
		lost_line(&r, NULL, x);
	if (c.fmt == TBL_JSON)
		of_str(o, r.nlines ? "\n]\n" : "[]\n");
	if (of_flush(o) < 0) {
		fprintf(stderr, "tracepp replay: writing output: %s\n", strerror(-o->err));
		rc = 1;
	}
	if (r.func && r.func_id == UINT32_MAX) {
		char fl[320] = "";
		cli_filter_add(fl, sizeof(fl), "func", r.func);
		cli_no_match("replay", c.path, fl);
	}
	struct an_pair_stats ps;
	an_pair_stats(r.pair, &ps);
	acli_report_pairs(&c, &ps);
	acli_report_run(&c, &st);
out:
	rp_text_free(&r);
	an_lost_close(&r.lq);
	for (size_t i = 0; i < r.nut; i++)
		free(r.ut[i].s);
	free(r.ut);
	an_dwarf_close(r.dw);
	an_pair_close(r.pair);
	an_syms_close(r.syms);
	free(o);
	acli_close(&c);
	return rc;
}
