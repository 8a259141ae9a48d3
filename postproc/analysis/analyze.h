/* analyze — the analyses behind `tracepp replay|callgraph|latency|sched|io|net`,
 * as a library so plots and reports (postproc/cmd_plot.c, cmd_report.c) reuse
 * the same numbers instead of recomputing them.
 *
 * Model: every analysis is a state machine fed events in global time order
 * (tpp_iter with sorted = 1; an_run does the loop) and finished once at the
 * end of the trace; results are then read from plain structs. Each analysis
 * holds state per task / request / function, never per event, except the
 * latency samples (an_lat), which are bounded by AN_LAT_BUDGET in total.
 *
 * Errors: negative errno values (-ENOMEM, -EINVAL) or tpp_format.h codes.
 * Nothing here prints. Ownership: every an_* object owns what it returns
 * pointers to; those stay valid until its *_close(). The tpp_reader and
 * tpp_names passed in must outlive the objects built on them.
 */
#ifndef TPP_ANALYZE_H
#define TPP_ANALYZE_H
#include <stdint.h>
#include <stddef.h>
#include "tpp_decode.h"
#include "hmap.h"

/* ------------------------------------------------------- event classes */
enum an_kind {
	AN_OTHER = 0,
	AN_SWITCH, AN_WAKEUP, AN_WAKEUP_NEW, AN_MIGRATE, AN_FORK, AN_EXEC, AN_EXIT,
	AN_RUNTIME, /* sched_stat_runtime: the kernel's own clock of a running task */
	AN_BLK_INSERT, AN_BLK_ISSUE, AN_BLK_COMPLETE,
	AN_NET_QUEUE, AN_NET_XMIT, AN_NET_RECV,
	AN_SOCK_STATE, AN_SOCK_SEND, AN_SOCK_RECV, /* sock:* tracepoints */
	AN_FENTRY, AN_FEXIT, AN_FUNWIND, AN_FRESUME, /* the preloaded runtime's events */
	AN_UENTRY, AN_URET,              /* uprobes / uretprobes */
	AN_NKINDS
};
/* Field roles: index into tpp_event.v per role, -1 when the type lacks it. */
enum an_role {
	R_PID, R_COMM, R_PREV_PID, R_PREV_COMM, R_PREV_STATE, R_NEXT_PID, R_NEXT_COMM,
	R_CPU,  /* target_cpu / dest_cpu */
	R_DEV, R_SECTOR, R_NSECT, R_BYTES, R_RWBS, R_ERROR,
	R_LEN, R_NAME, R_RC,
	R_ADDR, R_RET, R_DEPTH, R_ARG0, R_WHY,
	R_SP, R_RA, /* uprobes: stack pointer (entry and return), return address (entry) */
	R_SK, R_OLDSTATE, R_NEWSTATE, R_FAMILY, R_SPORT, R_DPORT, R_SADDR, R_DADDR, R_SADDR6,
	R_DADDR6, R_FLAGS,
	R_RUNTIME,
	AN_NROLES
};
#define AN_MAX_ARGS 6
struct an_tinfo {
	uint8_t kind;   /* enum an_kind */
	uint8_t nargs;  /* function arguments, from R_ARG0 on */
	int8_t f[AN_NROLES];
};
/* Classification of every type of a file, by tracefs name. */
struct an_types {
	struct an_tinfo t[TPP_MAX_TYPES];
	int has[AN_NKINDS]; /* how many types of each kind the file declares */
};
void an_types_init(struct an_types *ty, const struct tpp_reader *r);
static inline const struct an_tinfo *an_ti(const struct an_types *ty, const struct tpp_event *ev)
{
	return &ty->t[ev->type < TPP_MAX_TYPES ? ev->type : 0];
}
/* Field value helpers: 0 / "" when the role is missing. */
static inline uint64_t an_u(const struct tpp_event *ev, const struct an_tinfo *ti, int role)
{
	return ti->f[role] >= 0 ? ev->v[(int)ti->f[role]].u : 0;
}
/* Projection: an analysis names the roles it reads and the decoder skips
 * every other field (tpp_iter_opts.want; fields left out read as 0). want
 * has TPP_MAX_TYPES entries and starts zeroed. an_want_roles adds the
 * fields of the given roles in every type; an_want_kind every field of the
 * types of one kind (for analyses that print whole events). */
void an_want_roles(const struct an_types *ty, uint32_t *want, const int *roles, size_t n);
void an_want_kind(const struct an_types *ty, uint32_t *want, int kind);
/* The fields an_pair_feed reads; those an_sched_feed reads (comms: the
 * task-name fields too, unless no_comm is set). */
void an_want_pairing(const struct an_types *ty, uint32_t *want);
void an_want_sched(const struct an_types *ty, uint32_t *want, int comms);
/* Copies a string field (not NUL-terminated in the event) into buf. */
const char *an_s(const struct tpp_event *ev, const struct an_tinfo *ti, int role, char *buf,
		 size_t len);

/* ---------------------------------------------------------- symbols */
/* Function identities: (pid, addr) resolved to a name and interned, so that
 * equal names share one id (one line in a call graph). */
struct an_syms;
int an_syms_open(struct an_syms **s, const struct tpp_names *n);
void an_syms_close(struct an_syms *s);
/* The id of the function at addr in pid; UINT32_MAX on -ENOMEM. Names of
 * unknown addresses are "0xADDR". */
uint32_t an_func_id(struct an_syms *s, int32_t pid, uint64_t addr);
/* A C++ symbol (_Z...) as its qualified name without template arguments
 * or parameters, uftrace's default ("app::work"), in buf; other names as
 * they are. Returns buf or name. */
const char *an_demangle(const char *name, char *buf, size_t len);
/* The id of a name, as an_func_id gives for an address of that function. */
uint32_t an_func_id_named(struct an_syms *s, const char *name);
/* The function of a call event at addr in pid: a probe event's own
 * function (tpp_names_probe: right even where pid's maps are missing),
 * else an_func_id. */
uint32_t an_func_id_ev(struct an_syms *s, int32_t pid, const struct tpp_event *ev, uint64_t addr);
const char *an_func_name(const struct an_syms *s, uint32_t id);
size_t an_func_name_len(const struct an_syms *s, uint32_t id);
size_t an_nfuncs(const struct an_syms *s);

/* ---------------------------------------------- latency distributions */
/* Exact while the process holds fewer than AN_LAT_BUDGET samples in all
 * distributions together; past that a distribution keeps a log-linear
 * histogram (128 sub-buckets per power of two), and its percentiles are the
 * bucket's upper bound: at most AN_LAT_REL_ERR above the true value. */
#define AN_LAT_BUDGET (8u << 20)
#define AN_LAT_REL_ERR (1.0 / 128)
struct an_lat {
	uint64_t count, min, max;
	/* exact integer sum: an x87 add per sample showed in profiles */
	unsigned __int128 sum;
	uint64_t log2[65]; /* [0]: value 0; [k]: 2^(k-1) <= v < 2^k */
	/* Samples while exact: below 2^32 ns (4.3 s) in 4 bytes, which halves
	 * the memory (faulting it in was a tenth of latency --sched), and the
	 * rare longer ones apart. */
	uint32_t *v;
	size_t n, cap;
	size_t vreg;       /* v's huge-page region, 0 when malloc'd */
	uint64_t *big;
	size_t nbig, bigcap;
	uint64_t *srt;     /* all samples sorted, for small distributions */
	uint64_t *fine;    /* log-linear buckets once inexact */
	int sorted;        /* srt holds every sample */
	/* an_lat_pct's counts of v[0..sel_n) per log-linear bucket: a rank
	 * is found in its bucket instead of by sorting every sample */
	uint32_t *sel;
	size_t sel_n;
	/* buckets gathered and sorted, with the samples below each: the
	 * percentiles a command prints come from one pass over the samples */
	struct an_lat_pick {
		uint32_t b, n;
		uint64_t below, *v;
	} *pick;
	unsigned npick;
};
void an_lat_init(struct an_lat *l);
void an_lat_free(struct an_lat *l);
/* The summary every sample updates, exact or not. */
static inline void an_lat_tally(struct an_lat *l, uint64_t v)
{
	l->count++;
	l->sum += v;
	if (v < l->min)
		l->min = v;
	if (v > l->max)
		l->max = v;
	l->log2[v ? 64 - __builtin_clzll(v) : 0]++;
	l->sorted = 0;
}
/* Past the fast case of an_lat_add: growing, the budget, inexact. */
void an_lat_add_slow(struct an_lat *l, uint64_t v);
/* Adds a sample; inline while the exact array has room (a call per sample
 * showed in the sched latency profile). */
static inline void an_lat_add(struct an_lat *l, uint64_t v)
{
	if (__builtin_expect(!(v >> 32) && l->n < l->cap && l->count == l->n + l->nbig && !l->fine, 1)) {
		an_lat_tally(l, v);
		l->v[l->n++] = (uint32_t)v;
		return;
	}
	an_lat_add_slow(l, v);
}
int an_lat_exact(const struct an_lat *l);
/* Nearest-rank percentile p (0 < p <= 100). Exact: counts the samples per
 * log-linear bucket once, then sorts only the rank's bucket. */
uint64_t an_lat_pct(struct an_lat *l, double p);
/* Readies the percentiles commands print (p50, p90, p99, p99.9) of n
 * distributions at once, sharing the work with a second thread when there
 * is enough of it; an_lat_pct then only looks them up. Optional. */
void an_lat_prepare(struct an_lat *const *ls, size_t n);
static inline uint64_t an_lat_avg(const struct an_lat *l)
{
	return l->count ? (uint64_t)((long double)l->sum / l->count) : 0;
}
/* JSON array [[lo, hi, count], ...] of the non-empty log2 buckets, malloc'd. */
char *an_lat_hist_json(const struct an_lat *l);

/* ------------------------------------------------ entry/return pairing */
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

/* ------------------------------------------------------------ callgraph */
struct an_run_stats {
	uint64_t events, damaged;
	uint64_t first_ts, last_ts;
	char last_error[200];
};

struct an_func_stat {
	uint64_t calls, total_ns, self_ns, max_ns, min_ns, noret, orphans;
};
/* A call-tree node: the path from a thread's outermost frame. */
struct an_cg_node {
	uint32_t parent, func; /* node 0 is the root (func unused) */
	uint32_t nested;       /* func is also on the path above: a recursive call */
	uint64_t calls, total_ns, self_ns;
};
struct an_cg {
	struct an_syms *syms;       /* not owned */
	struct an_func_stat *fs;    /* indexed by function id */
	size_t nfs;
	struct an_cg_node *nodes;
	size_t nnodes, capnodes;
	struct hmap child;          /* (parent, func) -> node */
	struct an_pair_stats ps;
	struct an_run_stats run;
};
/* What part of a file an analysis looks at. */
struct an_filter {
	uint64_t from_ts, to_ts; /* 0/0 = all */
	const int32_t *tids;     /* NULL = all */
	size_t ntids;
	const char *comm;        /* NULL = all */
	const uint32_t *want;    /* fields to decode per type, NULL = all */
	/* an_run_cols: tpp_scan_opts.prep */
	void (*prep)(void *ctx, struct tpp_slice *sl, void *state);
	void *prep_ctx;
	/* Optional (--where): an event keep() refuses never reaches the
	 * analysis; keep_want is what it reads, added to want. Only an_run
	 * asks it: an_run_cols returns -ENOTSUP, so callers read rows. */
	int (*keep)(void *ctx, const struct tpp_event *ev);
	void *keep_ctx;
	const uint32_t *keep_want;
};
/* Builds the whole call graph of the file (runs the loop over r, in time
 * order), for the threads and time range of f (NULL: everything). cg is
 * initialised here; release it with an_cg_free even on error. */
int an_cg_build(struct an_cg *cg, struct tpp_reader *r, const struct tpp_names *names,
		struct an_syms *syms, const struct an_filter *f);
/* The same with thread_roots set: each thread's calls under two nodes of
 * its own, "comm-pid" then "tid" (names in syms, no calls), so that threads
 * do not merge (folded stacks comm-pid;tid;main;...). */
int an_cg_build_roots(struct an_cg *cg, struct tpp_reader *r, const struct tpp_names *names,
		      struct an_syms *syms, const struct an_filter *f, int thread_roots);
void an_cg_free(struct an_cg *cg);

/* -------------------------------------------------------------- sched */
/* Per task, the numbers /proc/PID/task/TID/schedstat keeps. Where the file
 * has sched_stat_runtime (tracerec -e sched records it), on-CPU time and
 * run-queue waits are read on the kernel's own clock, as schedstat counts
 * them; without it, from the switch and wakeup timestamps (an_sched.c says
 * why the two differ). */
enum an_partial {
	AN_PARTIAL_START = 1, /* already running or runnable when the events begin */
	AN_PARTIAL_END = 2,   /* still running or runnable when they end */
	AN_PARTIAL_GAPS = 4,  /* switch-outs missing from the file: its runs end where inferred */
};
struct an_task {
	int32_t tid, pid;
	char comm[16];
	/* after an_sched_finish: oncpu_ns is the kernel's (the sum of its
	 * runtime reports) for a task that has them, else switch to switch */
	uint64_t oncpu_ns, runq_wait_ns, offcpu_ns;
	uint64_t switches, voluntary, involuntary, migrations, wakeups;
	uint64_t wakeup_lat_n, wakeup_lat_sum, wakeup_lat_max;
	uint64_t inferred_in; /* switch-ins missing from the file, inferred */
	uint64_t rt_ns;       /* the sum of its sched_stat_runtime reports */
	uint8_t keep_known, keep; /* an_sched.keep's answer, asked once */
	uint8_t partial;      /* enum an_partial bits: the numbers are bounds */
	uint8_t rt_seen;      /* the kernel reported its runtime at least once */
	/* state */
	uint8_t running, woken, fresh;
	int32_t cpu;
	uint64_t on_since, off_since;
	uint64_t runnable_since; /* the wait's start, 0: not waiting */
	uint64_t ready_ts;       /* when it became runnable, on the trace's clock */
	/* the running slice on the kernel's clock (in trace time): its start,
	 * 0 until its first runtime report, and its runtime so far */
	uint64_t k_start, k_run;
};
/* The average wakeup -> running delay, the number every command prints. */
static inline uint64_t an_task_wakeup_avg(const struct an_task *t)
{
	return t->wakeup_lat_n ? t->wakeup_lat_sum / t->wakeup_lat_n : 0;
}
/* One CPU's scheduler state (an_sched.c's cpu_step). */
struct an_cpu {
	int32_t curr;     /* tid running, -1 unknown */
	int32_t ev_tid;   /* the task of the CPU's latest event */
	uint64_t last_switch, ev_ts;
	uint64_t other_ts; /* latest event of a task other than ev_tid */
	int seen;
	/* when the CPU's latest event is a runtime report: its time, the task
	 * it reports and the task that fired it (rt_ts 0: it is not) */
	uint64_t rt_ts;
	int32_t rt_pid, rt_tid;
};
struct an_sched {
	struct an_task *t;
	size_t n, cap;
	struct hmap by_tid;
	/* per CPU: the current task and the last switch, the task of the
	 * latest event and the latest event of another: bounds for when a task
	 * whose switch-in is missing came on the CPU */
	struct an_cpu *cpu;
	size_t ncpu;
	/* switch-outs of tasks whose switch-in is missing from the file (the
	 * kernel does not always store a switch from idle, and a recording
	 * filtered by pid loses some): their on-CPU interval is taken to start
	 * at max(last switch on that CPU, the CPU's latest event of another
	 * task, runnable since). */
	uint64_t inferred;
	uint64_t runtime_reports; /* sched_stat_runtime events fed */
	int has_runtime;          /* the file declares sched_stat_runtime */
	uint64_t t0;              /* the first event fed */
	int no_comm;    /* set after init when task names are not wanted */
#define AN_SCHED_RECENT 64
	struct an_task *recent[AN_SCHED_RECENT]; /* by tid, a cache; cleared when t moves */
	/* all tasks but the idle ones (tid 0), and of those only the ones keep
	 * says yes to, when it is set (latency --tid / --comm) */
	struct an_lat wakeup, runq, offcpu;
	int (*keep)(void *ctx, int32_t tid);
	void *keep_ctx;
	/* Optional, set after init (plots): every on-CPU interval [from, to)
	 * of a task as it closes (switch to switch, in trace time: where the
	 * file lacks a switch, the inferred one), and every run-queue wait as
	 * it ends (the same values the distributions take). A non-zero return
	 * stops the feed and is returned from it. */
	int (*on_run)(void *ctx, int32_t cpu, int32_t tid, uint64_t from, uint64_t to);
	int (*on_wait)(void *ctx, const struct an_task *t, uint64_t ts, uint64_t wait_ns);
	void *cb_ctx;
	int32_t *run_tid;  /* per CPU: the task switched in last, -1 none */
	size_t nrun;
	struct an_sched_cmap *cmap; /* an_sched_want_cols */
};
int an_sched_init(struct an_sched *s);
int an_sched_feed(struct an_sched *s, const struct an_types *ty, const struct tpp_event *ev);
/* The same state machine fed by a column scan (an_run_cols), for callers
 * that set no_comm: an_sched_want_cols adds the fields it reads to want and
 * sets f's want and prep for r's scan (-ENOTSUP while task names are
 * wanted, or when r's streams do not map one to a CPU); an_sched_feed_cols
 * then takes the runs. */
int an_sched_want_cols(struct an_sched *s, const struct an_types *ty, const struct tpp_reader *r, uint32_t *want,
		       struct an_filter *f);
int an_sched_feed_cols(struct an_sched *s, const struct tpp_run *runs, int n);
/* Ends the analysis at end_ts: charges tasks still on a CPU up to it, ends
 * waits that are still open (a lower bound, marked AN_PARTIAL_END, kept out
 * of the distributions) and settles oncpu_ns. 0, or what on_run returned. */
int an_sched_finish(struct an_sched *s, uint64_t end_ts);
void an_sched_free(struct an_sched *s);

/* ----------------------------------------------------------------- io */
enum an_io_op { AN_IO_READ, AN_IO_WRITE, AN_IO_DISCARD, AN_IO_FLUSH, AN_IO_OTHER, AN_IO_NOPS };
extern const char *const an_io_op_name[AN_IO_NOPS];
struct an_iodev {
	uint32_t dev; /* kernel dev_t: major << 20 | minor */
	int op;
	uint64_t count, bytes, errors;
	struct an_lat d2c;  /* issue -> complete: the device's latency */
	struct an_lat q2c;  /* insert -> complete, when inserts were recorded */
	uint64_t first_ts, last_ts;
	uint32_t inflight, max_qd;
	long double qd_area; /* integral of inflight over time, ns */
	uint64_t qd_ts;
};
struct an_io {
	struct an_iodev *d;
	size_t n, cap;
	struct hmap req;  /* (dev, sector) -> request slot */
	struct an_ioreq *rq;
	size_t nrq, caprq;
	uint32_t free_rq;
	uint64_t unmatched; /* completions without issue */
	uint64_t first_ts, last_ts;
	/* Optional, set after init (plots): every device latency (issue ->
	 * complete) as its completion at ts is fed, the value d2c takes. A
	 * non-zero return is returned from an_io_feed. */
	int (*on_d2c)(void *ctx, uint64_t ts, uint64_t ns);
	void *cb_ctx;
};
int an_io_init(struct an_io *io);
int an_io_feed(struct an_io *io, const struct an_types *ty, const struct tpp_event *ev);
void an_io_free(struct an_io *io);

/* ---------------------------------------------------------------- net */
struct an_netdev {
	char name[32];
	uint64_t tx_packets, tx_bytes, tx_errors, rx_packets, rx_bytes;
	struct an_lat qlat; /* net_dev_queue -> net_dev_xmit, when both recorded */
};
/* A TCP connection seen through sock:inet_sock_set_state (addresses, ports,
 * life time) and sock:sock_send_length / sock_recv_length (bytes the
 * process sent and received through it), keyed by the socket's address
 * while it lives. */
struct an_conn {
	char saddr[46], daddr[46]; /* "" until a state change names them */
	uint16_t sport, dport;
	uint64_t start_ts; /* first event of the socket (0: before the trace) */
	uint64_t estab_ts, close_ts; /* 0: not seen */
	uint64_t tx_bytes, rx_bytes, sends, recvs, errors;
	uint8_t state;     /* last TCP state (TCP_ESTABLISHED = 1, ...) */
};
struct an_net {
	struct an_netdev *d;
	size_t n, cap;
	struct hmap queued; /* skbaddr -> queue ts slot */
	uint64_t *qts;
	uint32_t *qdev;
	size_t nq, capq;
	uint32_t free_q;
	struct an_conn *c; /* every connection, in order of first sight */
	size_t nc, capc;
	struct hmap by_sk; /* live socket address -> index in c */
};
/* Feeds the sock:* events to n's connection table (an_net_feed calls it). */
int an_conn_feed(struct an_net *n, const struct an_types *ty, const struct tpp_event *ev);
/* "tcp state name" of an_conn.state, e.g. "ESTABLISHED", "CLOSE". */
const char *an_tcp_state(unsigned state);
int an_net_init(struct an_net *n);
int an_net_feed(struct an_net *n, const struct an_types *ty, const struct tpp_event *ev);
void an_net_free(struct an_net *n);

/* ---------------------------------------------------- lost-event markers */
/* The file's lost records with a time, per stream in time order, for a
 * printer to show inline: before an event of stream s at ts, each record
 * of s from before ts (an_lost_before, until NULL), at the end the rest.
 * Pointers into the reader's metadata; open fills l (-ENOMEM). */
struct an_lost_stream {
	uint32_t stream;
	size_t pos, end; /* its records are v[pos..end) */
};
struct an_lost {
	const struct tpp_lost **v;
	size_t n;
	struct an_lost_stream *s;
	size_t ns, last;
};
int an_lost_open(struct an_lost *l, const struct tpp_reader *r, uint64_t from_ts, uint64_t to_ts);
const struct tpp_lost *an_lost_before(struct an_lost *l, uint32_t stream, uint64_t ts);
const struct tpp_lost *an_lost_rest(struct an_lost *l);
void an_lost_close(struct an_lost *l);

/* ------------------------------------------------------------- arrays */
/* Makes room for need elements of elem bytes in the array whose pointer is
 * at arr (a T **) and whose capacity is *cap, doubling from first. 0, or
 * -ENOMEM with the array and *cap unchanged. New elements are not cleared. */
int an_grow(void *arr, size_t *cap, size_t need, size_t elem, size_t first);

/* ---------------------------------------------------------- the loop */
/* Calls fn for every event of r in time order within f's time range (f may
 * be NULL), with a progress line on stderr when it is a terminal and
 * show_progress is set. A damaged chunk is counted and skipped. fn returns
 * 0 or a negative error, which stops the loop and is returned. */
int an_run(struct tpp_reader *r, const struct an_filter *f, int show_progress,
	   int (*fn)(void *ctx, const struct tpp_event *ev), void *ctx, struct an_run_stats *st);
/* an_run for analyses that read columns (tpp_scan): fn gets the runs of
 * each tpp_scan_runs call; threads as tpp_scan_opts.threads. -ENOTSUP,
 * before any event, when the file or f->want does not suit a scan. */
int an_run_cols(struct tpp_reader *r, const struct an_filter *f, int threads, int show_progress,
		int (*fn)(void *ctx, const struct tpp_run *runs, int n), void *ctx, struct an_run_stats *st);
/* First event timestamp in the file (from the chunk index), 0 if none. */
uint64_t an_first_ts(const struct tpp_reader *r);
uint64_t an_last_ts(const struct tpp_reader *r);
#endif
