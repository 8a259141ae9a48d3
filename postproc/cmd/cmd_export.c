/* tracepp export: a recording in the formats other viewers read.
 *
 * --format=chrome writes Chrome trace-event JSON (Perfetto UI,
 * chrome://tracing, speedscope): per thread its calls as complete ("X")
 * events from the one pairing (an_pair.c), so they nest as replay shows
 * them; per CPU what ran there, the scheduler analysis's own on-CPU
 * intervals (an_sched's on_run: the numbers of `tracepp sched` and the
 * Gantt chart) as B/E pairs, with each CPU's run-queue length as a
 * counter (an_sched's on_rq); block requests as async slices per device
 * (an_io's pairing: the requests of `tracepp io`) with each device's queue
 * depth as a counter; packets as instants on their device's track; other
 * kernel events as instants on their thread, or on their CPU when no task
 * ran; task names as metadata; lost-event ranges as marked slices of their
 * stream.
 *
 * Streamed: a call is written when it closes, a CPU slice when the task
 * leaves the CPU, a block request when it completes. What is held is the analyses' per-thread and per-task
 * state (open call stacks), never the events or the tree.
 *
 * Times are microseconds (the format's unit) since the file's first event,
 * written with their nanoseconds as up to three decimals (exact, no trailing
 * zero: every byte of a call is written a million times in a big export);
 * otherData.clock_base_ns is that event's time on the recording's clock. Numbers a double cannot
 * hold exactly (2^53 and above: addresses) are written as "0x..." strings.
 *
 * --format=folded writes callgraph --folded's stacks (cg_print.h), with
 * --root=thread each thread's under "comm-pid;tid" so threads do not merge. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hmap.h"
#include "an_cli.h"
#include "cli.h"
#include "commands.h"
#include "out_fast.h"
#include "replay.h"
#include "cg_print.h"
#include "an_types.h"
#include "an_syms.h"
#include "an_run.h"
#include "an_pair.h"
#include "an_cg.h"
#include "an_sched.h"
#include "an_io.h"
#include "fieldfmt.h"
#include "export_table.h"

static const char usage_text[] =
	"usage: tracepp export --format=chrome|folded [OPTIONS] FILE\n"
	"       tracepp export --table=T [--format=csv|jsonl|rowbinary] [-o FILE] [--time-range=R] FILE...\n"
	"       tracepp export --table=T --schema=clickhouse|duckdb\n"
	"The recording in another tool's format, or recordings as rows for analytics engines.\n"
	"  --format=chrome      Chrome trace-event JSON, for Perfetto UI, chrome://tracing and\n"
	"                       speedscope: calls per thread, what ran per CPU, kernel events,\n"
	"                       task names, lost-event ranges\n"
	"  --format=folded      folded stacks (main;a;b SELF_NS) for flame graphs, as callgraph --folded\n"
	"  --root=thread        folded: each thread's stacks under its process and thread,\n"
	"                       comm-pid;tid;main;..., so threads do not merge (default none)\n"
	"  -o, --output=FILE    write FILE (replaced whole when done) instead of stdout\n"
	"  --tid=TID[,TID]      only these threads     --comm=NAME[,NAME] only these task names\n"
	"  --func=F             only what runs under F (chrome: F's subtree; folded: the\n"
	"                       stacks through F)\n"
	"  --time-range=FROM,TO only this window (absolute ns, or 1.5s,2s from the start)\n"
	"Rows for analytics engines (ClickHouse, DuckDB), every file in the order given\n"
	"(-o, --tid, --comm and --time-range apply, a relative range from each file's start;\n"
	"--where=FILTER: only events the filter passes, in the kernel's filter syntax, feed\n"
	"the rows; --tid/--comm pick sched and tasks rows, not the switches they come from):\n"
	"  --table=T            T: events (every event and its fields), calls (paired calls as\n"
	"                       replay pairs them), sched (on-CPU runs and run-queue waits), io\n"
	"                       (block requests and their phases), net (packets), tasks (the\n"
	"                       numbers of tracepp sched), conns (TCP connections, as net\n"
	"                       --conns); every row has host and trace_id\n"
	"  --format=csv|jsonl|rowbinary  with --table: CSV with a header line, JSON lines, or\n"
	"                       ClickHouse RowBinary (default csv)\n"
	"  --schema=clickhouse|duckdb    with --table: print its CREATE TABLE and read no file\n";

/* Tracks that are no task's: one pseudo-process above any pid the kernel
 * gives (PID_MAX_LIMIT is 2^22), a thread of it per CPU and per lost
 * stream, so they never meet a real tid. */
#define X_PID (4194304 + 1)
#define X_CPU_TID(cpu) (X_PID + 1 + (int64_t)(cpu))
#define X_LOST_TID(stream) (X_PID + 1 + 65536 + (int64_t)((stream) < 1000 ? (stream) : 1000))
/* Block and network devices: two more pseudo-processes above the lost
 * streams, a thread of the network one per device name. */
#define X_BLK_PID (X_LOST_TID(1000) + 1)
#define X_NET_PID (X_BLK_PID + 1)
/* keys of the named set: a tid, a pid, a CPU track */
#define K_TID(t) ((uint64_t)(uint32_t)(t))
#define K_PID(p) ((uint64_t)1 << 32 | (uint32_t)(p))
#define K_TRACK(t) ((uint64_t)2 << 32 | (uint64_t)(t))

enum xfmt { X_CHROME = 1, X_FOLDED };

struct ex {
	struct acli *c;
	const struct an_types *ty;
	struct an_syms *syms;
	struct an_pair *pair;
	struct an_sched sch;
	struct an_io io;
	struct hmap netdev;    /* hash of a device name -> its track */
	uint32_t nnetdev;
	uint64_t nreq;         /* async ids of block requests */
	struct ofast *o;
	enum xfmt fmt;
	const char *out_path;
	const char *func;
	uint32_t func_id;
	uint64_t t0, nev;
	struct hmap named; /* K_*: its name metadata is out */
	int func_seen;
	int thread_roots;          /* --root=thread (folded) */
	struct an_pair_stats ps;   /* the pairing's, for the closing note */
	int32_t w_tid;     /* wanted()'s last question and answer */
	int w_val;
	int err;
	/* the hot path (feed's common entries and returns, see exit_hot) */
	struct an_pair_hot *hot;
	uint32_t *fragix;  /* function id -> 1 + its index in frags, 0: none yet */
	size_t nfragix;
	struct xfrag *frags;
	size_t nfrags, capfrags;
	char *arena;       /* the fragments' bytes */
	size_t alen, acap;
	struct ofast *scratch;
	uint64_t us_q;     /* us_hot's last microsecond, its digits and their count */
	char us_txt[24];
	uint32_t us_len;
};

/* A call's constant JSON, per function: ,"cat":"call","name":N} */
struct xfrag {
	size_t off;
	uint32_t len;
};
/* th->user2: what the hot path knows of a thread */
enum { TH_UNKNOWN, TH_OUT, TH_SKIP };
#define FRAG_MAX 4096 /* longer names go out the general way */
#define XFRAG_COPY 64 /* a fragment this short is copied as 64 bytes */
/* what exit_hot writes at most with one room check: prefix, label, two
 * numbers and a short fragment, with margin */
#define XHOT_ROOM 256

/* ---------------------------------------------------------------- values */

/* A number as JSON: exact as a double below 2^53, else a hex string. */
static void num(struct ofast *o, uint64_t v)
{
	if (v < (1ull << 53)) {
		of_u64(o, v);
		return;
	}
	of_ch(o, '"');
	of_hex(o, v);
	of_ch(o, '"');
}

static void snum(struct ofast *o, int64_t v)
{
	if (v > -(1ll << 53) && v < (1ll << 53))
		of_i64(o, v);
	else
		num(o, (uint64_t)v);
}

/* Microseconds since t0 with their nanoseconds: 1234.567, 1234.5, 1234 */
static void us(struct ofast *o, uint64_t ns, uint64_t t0)
{
	if (ns < t0) {
		of_ch(o, '-');
		ns = t0 - ns;
	} else {
		ns -= t0;
	}
	of_milli(o, ns);
}

static void jstr(struct ofast *o, const char *s)
{
	of_json_str(o, s, strlen(s));
}

/* ---------------------------------------------------------------- events */

/* {"ph":PH,"pid":P,"tid":T,"ts":TS  — the caller adds the rest and '}' */
static void ev_open(struct ex *x, const char *ph, int64_t pid, int64_t tid, uint64_t ts)
{
	struct ofast *o = x->o;
	of_str(o, x->nev++ ? ",\n{\"ph\":\"" : "\n{\"ph\":\"");
	of_str(o, ph);
	of_str(o, "\",\"pid\":");
	of_i64(o, pid);
	of_str(o, ",\"tid\":");
	of_i64(o, tid);
	if (ph[0] != 'M') {
		of_str(o, ",\"ts\":");
		us(o, ts, x->t0);
	}
}

static void meta(struct ex *x, const char *what, int64_t pid, int64_t tid, const char *name, size_t len)
{
	ev_open(x, "M", pid, tid, 0);
	of_str(x->o, ",\"name\":\"");
	of_str(x->o, what);
	of_str(x->o, "\",\"args\":{\"name\":");
	of_json_str(x->o, name, len);
	of_str(x->o, "}}");
}

/* The process and thread names of a task's track, once each. */
static int name_task(struct ex *x, int32_t pid, int32_t tid)
{
	if (hmap_get(&x->named, K_TID(tid)))
		return 0;
	const char *comm = tpp_names_comm(x->c->names, tid);
	char buf[24];
	if (!comm) {
		snprintf(buf, sizeof(buf), "%d", (int)tid);
		comm = buf;
	}
	if (!hmap_get(&x->named, K_PID(pid))) {
		const char *pc = tpp_names_comm(x->c->names, pid);
		pc = pc ? pc : comm;
		meta(x, "process_name", pid, pid, pc, strnlen(pc, 32));
		if (hmap_put(&x->named, K_PID(pid), 1))
			return -ENOMEM;
	}
	meta(x, "thread_name", pid, tid, comm, strnlen(comm, 32));
	return hmap_put(&x->named, K_TID(tid), 1);
}

/* The name of a track of the pseudo-process (CPUs, lost streams), once. */
static int name_track(struct ex *x, int64_t tid, const char *fmt, long n)
{
	if (hmap_get(&x->named, K_TRACK(tid)))
		return 0;
	if (!hmap_get(&x->named, K_PID(X_PID))) {
		meta(x, "process_name", X_PID, X_PID, "CPUs", 4);
		if (hmap_put(&x->named, K_PID(X_PID), 1))
			return -ENOMEM;
	}
	char name[48];
	int len = snprintf(name, sizeof(name), fmt, n);
	meta(x, "thread_name", X_PID, tid, name, (size_t)len);
	/* CPUs in their order, lost streams below them */
	ev_open(x, "M", X_PID, tid, 0);
	of_str(x->o, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
	of_i64(x->o, tid - X_PID);
	of_str(x->o, "}}");
	return hmap_put(&x->named, K_TRACK(tid), 1);
}

static int32_t pid_of(const struct ex *x, int32_t tid, int32_t known)
{
	if (known > 0)
		return known;
	int32_t p = tpp_names_pid(x->c->names, tid);
	return p > 0 ? p : tid;
}

static int wanted(struct ex *x, int32_t tid)
{
	if (tid != x->w_tid) {
		x->w_tid = tid;
		x->w_val = acli_task_wanted(x->c, tid, NULL);
	}
	return x->w_val;
}

/* The fields of a kernel event as args, strings through the one escaper. */
/* The event's fields as args; with task set (an event drawn on a device's
 * track), the task it happened in too, which the track no longer says. */
static void fields(struct ex *x, const struct tpp_event *ev, int task)
{
	struct ofast *o = x->o;
	const struct tpp_type *t = ev->t;
	int n = 0;
	of_str(o, ",\"args\":{");
	if (task && ev->tid > 0) {
		const char *comm = tpp_names_comm(x->c->names, ev->tid);
		of_str(o, "\"task_tid\":");
		of_i64(o, ev->tid);
		if (comm) {
			of_str(o, ",\"task_comm\":");
			of_json_str(o, comm, strnlen(comm, 16));
		}
		n++;
	}
	for (int i = 0; t && i < ev->nvals && i < t->nfields; i++) {
		const char *fn = t->fields[i].name;
		if (!fn)
			continue;
		if (n++)
			of_ch(o, ',');
		jstr(o, fn);
		of_ch(o, ':');
		const union tpp_val *v = &ev->v[i];
		switch (t->fields[i].type) {
		case TPP_F_U64:
			num(o, v->u);
			break;
		case TPP_F_S64:
			snum(o, v->i);
			break;
		case TPP_F_STR:
			if (v->s.p) {
				of_json_str(o, v->s.p, strnlen(v->s.p, v->s.len));
				break;
			}
			/* fall through */
		default:
			of_str(o, "null");
		}
	}
	of_ch(o, '}');
}

/* ----------------------------------------------------------- calls (an_pair) */

static void on_entry(void *ctx, struct an_thread *th, const struct tpp_event *ev)
{
	(void)ev;
	struct ex *x = ctx;
	/* th->user: the open frames of --func F; only their subtree goes out */
	if (x->func && th->st[th->depth - 1].func == x->func_id) {
		th->user++;
		x->func_seen = 1;
	}
}

/* What a call of f's function writes whatever the call: its category and name. */
static void call_const(const struct ex *x, struct ofast *o, const struct an_frame *f)
{
	of_str(o, ",\"cat\":\"call\",\"name\":");
	of_json_str(o, an_func_name(x->syms, f->func), an_func_name_len(x->syms, f->func));
}

static void on_exit_(void *ctx, struct an_thread *th, const struct an_call *c,
		     const struct tpp_event *ev)
{
	struct ex *x = ctx;
	const struct an_frame *f = &th->st[th->depth - 1];
	int in = !x->func || th->user;
	if (x->func && f->func == x->func_id && th->user)
		th->user--;
	if (!in || !wanted(x, th->tid))
		return;
	int32_t pid = pid_of(x, th->tid, th->pid);
	if (name_task(x, pid, th->tid)) {
		x->err = -ENOMEM;
		return;
	}
	struct ofast *o = x->o;
	ev_open(x, "X", pid, th->tid, c->entry_ts);
	of_str(o, ",\"dur\":");
	us(o, c->dur, 0);
	call_const(x, o, f);
	/* args only where there are some: speedscope names a frame by its
	 * name and args together, so an address in each would print beside
	 * every name (the address is the symbol table's, not the call's) */
	int nargs = c->flags & AN_CALL_RESUMED ? 0 : f->nargs;
	if (!nargs && !c->has_ret && !(c->flags & RP_CALL_MARKS)) {
		of_ch(o, '}');
		return;
	}
	of_str(o, ",\"args\":{");
	if (nargs) {
		of_str(o, "\"args\":[");
		for (int i = 0; i < nargs; i++) {
			if (i)
				of_ch(o, ',');
			num(o, f->args[i]);
		}
		of_ch(o, ']');
	}
	if (c->has_ret) {
		const struct an_tinfo *ti = ev ? an_ti(x->ty, ev) : NULL;
		of_str(o, nargs ? ",\"ret\":" : "\"ret\":");
		if (ti && ev->t && ti->f[R_RET] >= 0 && ev->t->fields[(int)ti->f[R_RET]].type == TPP_F_S64)
			snum(o, (int64_t)c->ret);
		else
			num(o, c->ret);
	}
	/* the marks replay puts on a call ([no return], [unwound], ...) */
	rp_json_marks(o, c->flags, !nargs && !c->has_ret);
	of_str(o, "}}");
}

static void on_orphan(void *ctx, struct an_thread *th, uint32_t func, const struct tpp_event *ev)
{
	struct ex *x = ctx;
	if ((x->func && !th->user) || !wanted(x, th->tid))
		return;
	int32_t pid = pid_of(x, th->tid, th->pid);
	if (name_task(x, pid, th->tid)) {
		x->err = -ENOMEM;
		return;
	}
	ev_open(x, "i", pid, th->tid, ev->ts);
	of_str(x->o, ",\"s\":\"t\",\"cat\":\"call\",\"name\":");
	of_json_str(x->o, an_func_name(x->syms, func), an_func_name_len(x->syms, func));
	of_str(x->o, ",\"args\":{\"orphan\":true}}");
}

static const struct an_pair_ops ex_ops = {on_entry, on_exit_, on_orphan};

/* --------------------------------------------------------- CPUs (an_sched) */

static int on_run(void *ctx, int32_t cpu, int32_t tid, uint64_t from, uint64_t to)
{
	struct ex *x = ctx;
	if (cpu < 0 || cpu > 65535 || !wanted(x, tid))
		return 0;
	if (name_track(x, X_CPU_TID(cpu), "CPU %ld", cpu))
		return -ENOMEM;
	const char *comm = NULL;
	uint32_t *i = hmap_get(&x->sch.by_tid, (uint32_t)tid);
	if (i && x->sch.t[*i].comm[0])
		comm = x->sch.t[*i].comm;
	if (!comm)
		comm = tpp_names_comm(x->c->names, tid);
	/* comm/tid, the whole name through the one escaper */
	char name[40];
	size_t len = comm ? strnlen(comm, 16) : 0;
	memcpy(name, comm ? comm : "", len);
	len += (size_t)snprintf(name + len, sizeof(name) - len, "/%d", (int)tid);
	int64_t pid = pid_of(x, tid, 0);
	/* A B and an E, not one X: a viewer that turns X into its two ends
	 * adds dur to ts in floating point (speedscope does), and a slice then
	 * ends a hair after the next on its CPU begins: the next nests in it,
	 * and the CPU's slices stack up. The E's ts is the very text the next
	 * B carries, so the two compare equal. The E repeats the B's name and
	 * args: speedscope closes the frame whose name and args it names. */
	for (int end = 0; end < 2; end++) {
		struct ofast *o = x->o;
		ev_open(x, end ? "E" : "B", X_PID, X_CPU_TID(cpu), end ? to : from);
		of_str(o, ",\"cat\":\"sched\",\"name\":");
		of_json_str(o, name, len);
		of_str(o, ",\"args\":{\"tid\":");
		of_i64(o, tid);
		of_str(o, ",\"pid\":");
		of_i64(o, pid);
		of_str(o, "}}");
	}
	return 0;
}

/* Device tracks and run-queue counters hold no task's events, they count
 * every task: a --tid, --comm or --func export leaves them out, as it
 * leaves out the CPUs' own instants. */
static int all_tasks_wanted(const struct ex *x)
{
	return !x->c->f.tids && !x->c->f.comm && !x->func;
}

/* A CPU's run-queue length as it changes: a counter on the CPUs' process,
 * one per CPU (a viewer draws each counter name as its own track). */
static int on_rq(void *ctx, int32_t cpu, uint64_t ts, uint32_t nr)
{
	struct ex *x = ctx;
	if (!all_tasks_wanted(x))
		return 0;
	if (name_track(x, X_CPU_TID(cpu), "CPU %ld", cpu))
		return -ENOMEM;
	char name[32];
	int len = snprintf(name, sizeof(name), "run queue CPU %d", (int)cpu);
	struct ofast *o = x->o;
	ev_open(x, "C", X_PID, X_CPU_TID(cpu), ts);
	of_str(o, ",\"cat\":\"sched\",\"name\":");
	of_json_str(o, name, (size_t)len);
	of_str(o, ",\"args\":{\"tasks\":");
	of_u64(o, nr);
	of_str(o, "}}");
	return 0;
}

/* ------------------------------------------------ block and net devices */


static int name_pid(struct ex *x, int64_t pid, const char *name)
{
	if (hmap_get(&x->named, K_PID(pid)))
		return 0;
	meta(x, "process_name", pid, pid, name, strlen(name));
	return hmap_put(&x->named, K_PID(pid), 1);
}

/* A completed block request: an async slice from its issue to its
 * completion, named for its device, so a viewer gives each device a
 * track; the wait in the queue before issue is an arg. */
static int on_req(void *ctx, const struct an_iodev *d, const struct an_ioreq_done *r)
{
	struct ex *x = ctx;
	if (!r->issue_ts || !all_tasks_wanted(x))
		return 0;
	if (name_pid(x, X_BLK_PID, "block devices"))
		return -ENOMEM;
	char name[24];
	size_t len = ff_text(name, sizeof(name), FF_DEV, d->dev);
	uint64_t id = ++x->nreq;
	for (int end = 0; end < 2; end++) {
		struct ofast *o = x->o;
		ev_open(x, end ? "e" : "b", X_BLK_PID, X_BLK_PID, end ? r->complete_ts : r->issue_ts);
		of_str(o, ",\"cat\":\"block\",\"id\":");
		of_u64(o, id);
		of_str(o, ",\"name\":");
		of_json_str(o, name, len);
		if (!end) {
			of_str(o, ",\"args\":{\"op\":\"");
			of_str(o, an_io_op_name[d->op]);
			of_str(o, "\",\"sector\":");
			num(o, r->sector);
			of_str(o, ",\"bytes\":");
			num(o, r->bytes);
			if (r->insert_ts && r->insert_ts <= r->issue_ts) {
				of_str(o, ",\"queued_ns\":");
				num(o, r->issue_ts - r->insert_ts);
			}
			if (r->error) {
				of_str(o, ",\"error\":");
				snum(o, r->error);
			}
			of_ch(o, '}');
		}
		of_ch(o, '}');
	}
	return 0;
}

/* A device's requests in flight (issued, not completed), every op, as a
 * counter: the queue depth `tracepp io` averages. */
static int on_qd(void *ctx, const struct an_iodev *d, uint64_t ts)
{
	struct ex *x = ctx;
	if (!all_tasks_wanted(x))
		return 0;
	if (name_pid(x, X_BLK_PID, "block devices"))
		return -ENOMEM;
	uint64_t n = 0;
	for (size_t i = 0; i < x->io.n; i++)
		if (x->io.d[i].dev == d->dev)
			n += x->io.d[i].inflight;
	char name[40] = "queue depth ";
	size_t len = 12 + ff_text(name + 12, sizeof(name) - 12, FF_DEV, d->dev);
	struct ofast *o = x->o;
	ev_open(x, "C", X_BLK_PID, X_BLK_PID, ts);
	of_str(o, ",\"cat\":\"block\",\"name\":");
	of_json_str(o, name, len);
	of_str(o, ",\"args\":{\"requests\":");
	of_u64(o, n);
	of_str(o, "}}");
	return 0;
}

/* The track of the network device a packet event names (one thread of
 * the "network devices" process per name), or 0 when it names none. */
static int64_t net_track(struct ex *x, const struct tpp_event *ev, const struct an_tinfo *ti)
{
	char name[32];
	an_s(ev, ti, R_NAME, name, sizeof(name));
	size_t len = strnlen(name, sizeof(name));
	if (!len)
		return 0;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a: names are at most 15 bytes */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)name[i]) * 0x100000001b3ULL;
	h &= ~(1ULL << 63);
	uint32_t *i = hmap_get(&x->netdev, h);
	if (i)
		return X_NET_PID + 1 + *i;
	uint32_t idx = x->nnetdev++;
	if (name_pid(x, X_NET_PID, "network devices") || hmap_put(&x->netdev, h, idx))
		return -ENOMEM;
	meta(x, "thread_name", X_NET_PID, X_NET_PID + 1 + idx, name, len);
	return X_NET_PID + 1 + idx;
}

/* ----------------------------------------------------------------- feed */

static int kernel_event(struct ex *x, const struct tpp_event *ev, const struct an_tinfo *ti)
{
	int64_t pid, tid;
	if (ti->kind >= AN_NET_QUEUE && ti->kind <= AN_NET_RECV && all_tasks_wanted(x) &&
	    (tid = net_track(x, ev, ti)) != 0) {
		/* a packet: on its device's track */
		if (tid < 0)
			return (int)tid;
		pid = X_NET_PID;
	} else if (ev->tid > 0) {
		if (!wanted(x, ev->tid))
			return 0;
		if (x->func) {
			struct an_thread *th = an_pair_thread(x->pair, ev->tid);
			if (!th)
				return -ENOMEM;
			if (!th->user)
				return 0;
		}
		pid = pid_of(x, ev->tid, 0);
		tid = ev->tid;
		if (name_task(x, (int32_t)pid, ev->tid))
			return -ENOMEM;
	} else if (ev->cpu >= 0 && ev->cpu <= 65535 && !x->c->f.tids && !x->c->f.comm && !x->func) {
		/* no task: the CPU's */
		pid = X_PID;
		tid = X_CPU_TID(ev->cpu);
		if (name_track(x, tid, "CPU %ld", ev->cpu))
			return -ENOMEM;
	} else {
		return 0;
	}
	ev_open(x, "i", pid, tid, ev->ts);
	of_str(x->o, ",\"s\":\"t\",\"cat\":\"kernel\",\"name\":");
	jstr(x->o, ev->t && ev->t->name ? ev->t->name : "?");
	if (ev->cpu >= 0) {
		of_str(x->o, ",\"cpu\":");
		of_i64(x->o, ev->cpu);
	}
	fields(x, ev, pid == X_NET_PID);
	of_ch(x->o, '}');
	return 0;
}

/* ------------------------------------------------------------- hot path
 *
 * Most events of a recording are entries and returns of the thread that
 * had the event before, in the common case (replay's an_pair_push_hot and
 * an_pair_ret_hot). They are taken here without an_pair's callbacks, and a
 * call goes out as bytes prepared once: the thread's pid/tid (th->label,
 * once it is named and known wanted) and its function's name (a fragment
 * per function, escaped once). Anything else takes the general way (feed_slow),
 * which writes the same bytes. */

/* The general way of an event: an_pair's callbacks, the sched analysis, kernel events. */
static __attribute__((noinline)) int feed_slow(struct ex *x, const struct tpp_event *ev,
					       const struct an_tinfo *ti)
{
	int rc;
	if (ti->kind >= AN_FENTRY && ti->kind <= AN_URET) {
		rc = an_pair_feed_ti(x->pair, ev, ti);
		return rc ? rc : x->err;
	}
	/* the sched analysis first: a switch closes the slice of the task
	 * leaving before the instant of the switch is written */
	if ((rc = an_sched_feed(&x->sch, x->ty, ev)) || (rc = an_pair_feed_ti(x->pair, ev, ti)) ||
	    (rc = an_io_feed(&x->io, x->ty, ev)))
		return rc;
	if ((rc = kernel_event(x, ev, ti)))
		return rc;
	return x->err;
}

/* th's state for the hot path: wanted and named (label: its "pid,tid,ts"
 * prefix), or not wanted. 0 or -ENOMEM. */
static __attribute__((noinline)) int thread_ready(struct ex *x, struct an_thread *th)
{
	if (!wanted(x, th->tid)) {
		th->user2 = TH_SKIP;
		return 0;
	}
	int32_t pid = pid_of(x, th->tid, th->pid);
	if (name_task(x, pid, th->tid))
		return -ENOMEM;
	int n = snprintf(th->label, sizeof(th->label), "%d,\"tid\":%d,\"ts\":", (int)pid, (int)th->tid);
	if (n < 0 || (size_t)n >= sizeof(th->label))
		return 0; /* stays unknown: the general way */
	th->label_len = (uint32_t)n;
	th->user2 = TH_OUT;
	return 0;
}

/* f's function's fragment, made on first use; NULL: the general way. */
static __attribute__((noinline)) const struct xfrag *frag_new(struct ex *x, const struct an_frame *f)
{
	if (an_func_name_len(x->syms, f->func) > FRAG_MAX)
		return NULL;
	if (f->func >= x->nfragix) {
		size_t n = x->nfragix ? x->nfragix : 256;
		while (n <= f->func)
			n *= 2;
		uint32_t *ni = realloc(x->fragix, n * sizeof(*ni));
		if (!ni)
			return NULL;
		memset(ni + x->nfragix, 0, (n - x->nfragix) * sizeof(*ni));
		x->fragix = ni;
		x->nfragix = n;
	}
	if (x->nfrags == x->capfrags) {
		size_t n = x->capfrags ? x->capfrags * 2 : 256;
		struct xfrag *nf = realloc(x->frags, n * sizeof(*nf));
		if (!nf)
			return NULL;
		x->frags = nf;
		x->capfrags = n;
	}
	if (!x->scratch && !(x->scratch = malloc(sizeof(*x->scratch))))
		return NULL;
	of_init(x->scratch, -1);
	call_const(x, x->scratch, f);
	of_ch(x->scratch, '}');
	size_t len = x->scratch->len;
	/* XFRAG_COPY bytes readable from any fragment's start (exit_hot) */
	if (x->alen + len + XFRAG_COPY > x->acap) {
		size_t n = x->acap ? x->acap * 2 : 1 << 16;
		while (n < x->alen + len + XFRAG_COPY)
			n *= 2;
		char *na = realloc(x->arena, n);
		if (!na)
			return NULL;
		x->arena = na;
		x->acap = n;
	}
	memcpy(x->arena + x->alen, x->scratch->buf, len);
	struct xfrag *g = &x->frags[x->nfrags++];
	*g = (struct xfrag){x->alen, (uint32_t)len};
	x->alen += len;
	x->fragix[f->func] = (uint32_t)x->nfrags;
	return g;
}

/* us(ns, t0) for ns >= t0 on the hot path: calls close many to a
 * microsecond, so the last microsecond's digits are kept. */
static inline char *us_hot(struct ex *x, char *d, uint64_t ns)
{
	uint64_t v = ns - x->t0, q = v / 1000;
	unsigned r = (unsigned)(v % 1000);
	if (__builtin_expect(q != x->us_q, 0)) {
		char *p = x->us_txt + sizeof(x->us_txt);
		uint64_t k = q;
		do
			*--p = (char)('0' + k % 10);
		while (k /= 10);
		x->us_len = (uint32_t)(x->us_txt + sizeof(x->us_txt) - p);
		memmove(x->us_txt, p, x->us_len);
		x->us_q = q;
	}
	memcpy(d, x->us_txt, sizeof(x->us_txt)); /* a fixed size: no libc call */
	memcpy(d + x->us_len, of_frac3[r], 4);
	return d + x->us_len + of_frac3_len(r);
}

static inline const struct xfrag *frag(struct ex *x, const struct an_frame *f)
{
	uint32_t i = f->func < x->nfragix ? x->fragix[f->func] : 0;
	if (__builtin_expect(i != 0, 1))
		return &x->frags[i - 1];
	return frag_new(x, f);
}

/* A return of th, an_pair's last thread: the call written from its
 * prepared bytes as on_exit_ writes a call without arguments, return value
 * or marks, then the frame popped as an_pair would. */
static inline __attribute__((always_inline)) int exit_hot(struct ex *x, struct an_thread *th,
							  const struct tpp_event *ev, const struct an_tinfo *ti)
{
	uint64_t dur;
	const struct an_frame *f = an_pair_ret_hot(th, ev, ti, &dur);
	if (!f || f->nargs || f->fl & AN_FRAME_RESUMED)
		return feed_slow(x, ev, ti);
	if (th->user2 == TH_UNKNOWN) {
		int rc = thread_ready(x, th);
		if (rc || th->user2 == TH_UNKNOWN)
			return rc ? rc : feed_slow(x, ev, ti);
	}
	if (th->user2 == TH_OUT) {
		const struct xfrag *g = frag(x, f);
		if (!g)
			return feed_slow(x, ev, ti);
		/* one room check for the whole event: every piece below is a
		 * copy of a fixed size (the label's and a short fragment's whole
		 * arrays, their own lengths then counted), no libc call */
		struct ofast *o = x->o;
		if (__builtin_expect(o->len + XHOT_ROOM > sizeof(o->buf), 0))
			of_flush(o);
		char *d = o->buf + o->len;
		memcpy(d, ",\n{\"ph\":\"X\",\"pid\":", 18);
		memcpy(d + 18, th->label, sizeof(th->label));
		d += 18 + th->label_len;
		if (__builtin_expect(f->ts >= x->t0, 1)) {
			d = us_hot(x, d, f->ts);
		} else {
			o->len = (size_t)(d - o->buf);
			us(o, f->ts, x->t0);
			d = o->buf + o->len;
		}
		memcpy(d, ",\"dur\":", 7);
		d += 7;
		if (__builtin_expect(dur < 10000, 1)) {
			unsigned q = (unsigned)dur / 1000, r = (unsigned)dur - q * 1000;
			d[0] = (char)('0' + q);
			memcpy(d + 1, of_frac3[r], 4);
			d += 1 + of_frac3_len(r);
		} else {
			o->len = (size_t)(d - o->buf);
			of_milli(o, dur);
			d = o->buf + o->len;
		}
		if (__builtin_expect(g->len <= XFRAG_COPY, 1)) {
			memcpy(d, x->arena + g->off, XFRAG_COPY);
			o->len = (size_t)(d + g->len - o->buf);
		} else {
			o->len = (size_t)(d - o->buf);
			of_mem(o, x->arena + g->off, g->len);
		}
		x->nev++;
	}
	an_pair_pop_hot(x->hot, th, ev, dur);
	return 0;
}

/* The common entries and returns inline (only tail calls: no register
 * saving on the common path); the rest the general way. */
static int feed(void *ctx, const struct tpp_event *ev)
{
	struct ex *x = ctx;
	const struct an_tinfo *ti = an_ti(x->ty, ev);
	struct an_thread *th = x->hot ? an_pair_hot_thread(x->hot, ev) : NULL;
	if (__builtin_expect(th != NULL, 1)) {
		if (ti->kind == AN_FEXIT)
			return exit_hot(x, th, ev, ti);
		if (ti->kind == AN_FENTRY && !an_pair_push_hot(x->hot, th, ev, ti))
			return 0;
	}
	return feed_slow(x, ev, ti);
}

/* A run of one stream's events (an_run_rows): the loop here, so that feed
 * is inlined into it and an event costs no call unless it leaves the hot
 * path. */
static int feed_rows(void *ctx, const struct tpp_event *ev, size_t stride, int n)
{
	for (int i = 0; i < n; i++, ev = (const struct tpp_event *)(const void *)((const char *)ev + stride)) {
		int rc = feed(ctx, ev);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* The file's lost-event records in the window, each a slice on its
 * stream's track. */
static int lost_ranges(struct ex *x)
{
	const struct tpp_meta *m = tpp_r_meta(x->c->r);
	const struct an_filter *f = &x->c->f;
	for (size_t i = 0; m && i < m->nlost; i++) {
		const struct tpp_lost *l = &m->lost[i];
		if (f->to_ts && (l->from_ts > f->to_ts || l->to_ts < f->from_ts))
			continue;
		int64_t tid = X_LOST_TID(l->stream);
		if (l->stream < 1000 ? name_track(x, tid, "lost events, CPU %ld", (long)l->stream)
				     : name_track(x, tid, "lost events, threads%.0ld", 0))
			return -ENOMEM;
		char name[48];
		int len = snprintf(name, sizeof(name), "lost %" PRIu64 " events", l->count);
		ev_open(x, "X", X_PID, tid, l->from_ts);
		of_str(x->o, ",\"dur\":");
		us(x->o, l->to_ts > l->from_ts ? l->to_ts - l->from_ts : 0, 0);
		of_str(x->o, ",\"cat\":\"lost\",\"cname\":\"terrible\",\"name\":");
		of_json_str(x->o, name, (size_t)len);
		of_str(x->o, ",\"args\":{\"stream\":");
		of_u64(x->o, l->stream);
		of_str(x->o, ",\"count\":");
		num(x->o, l->count);
		of_str(x->o, "}}");
	}
	return 0;
}

static int chrome(struct ex *x, struct an_run_stats *st)
{
	struct acli *c = x->c;
	struct ofast *o = x->o;
	int rc;
	of_str(o, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"tracepp export\",\"file\":");
	jstr(o, c->path);
	of_str(o, ",\"clock_base_ns\":");
	of_u64(o, x->t0);
	of_str(o, ",\"ts_unit\":\"us since clock_base_ns\"},\"traceEvents\":[");
	if ((rc = lost_ranges(x)))
		return acli_fail(c, rc, NULL);
	if ((rc = an_run_rows(c->r, &c->f, 1, feed_rows, x, st)) < 0)
		return acli_fail(c, rc, st);
	an_pair_finish(x->pair);
	uint64_t end = c->f.to_ts && c->f.to_ts < st->last_ts ? c->f.to_ts : st->last_ts;
	if ((rc = an_sched_finish(&x->sch, end)) || (rc = x->err))
		return acli_fail(c, rc, NULL);
	of_str(o, "\n]}\n");
	an_pair_stats(x->pair, &x->ps);
	return 0;
}

/* --format=folded: the call graph's folded stacks (callgraph --folded),
 * rooted per thread with --root=thread, to fd. */
static int folded(struct ex *x, struct an_run_stats *st, int fd)
{
	struct acli *c = x->c;
	struct an_cg cg;
	int rc = an_cg_build_roots(&cg, c->r, c->names, x->syms, &c->f, x->thread_roots);
	*st = cg.run;
	x->ps = cg.ps;
	if (rc < 0) {
		an_cg_free(&cg);
		return acli_fail(c, rc, st);
	}
	/* the call graph applies --tid/--comm itself, to function events */
	c->task_asks = 1;
	c->task_hits = cg.ps.entries + cg.ps.returns;
	x->func_seen = x->func && x->func_id < cg.nfs && cg.fs[x->func_id].calls;
	int dfd = dup(fd);
	FILE *f = dfd >= 0 ? fdopen(dfd, "w") : NULL;
	if (!f) {
		rc = -errno;
		if (dfd >= 0)
			close(dfd);
	} else {
		rc = cg_folded(f, &cg, x->func ? x->func_id : UINT32_MAX);
		if (fclose(f) && !rc)
			rc = -errno;
	}
	an_cg_free(&cg);
	if (rc) {
		fprintf(stderr, "tracepp export: writing %s: %s\n", x->out_path ? x->out_path : "output",
			strerror(rc == -EIO ? ENOSPC : -rc));
		return 1;
	}
	return 0;
}

static int own_opt(struct acli *c, void *ctx, int opt, const char *arg)
{
	struct ex *x = ctx;
	switch (opt) {
	case ACLI_OPT_FORMAT:
		if (!strcmp(arg, "chrome"))
			x->fmt = X_CHROME;
		else if (!strcmp(arg, "folded"))
			x->fmt = X_FOLDED;
		else
			return acli_usage_error(c, "--format: '%s' is not chrome or folded", arg);
		break;
	case 'R':
		if ((x->thread_roots = cg_parse_root(arg)) < 0)
			return acli_usage_error(c, "--root: '%s' is not thread or none", arg);
		break;
	case 'o':
		x->out_path = arg;
		break;
	default: /* --func */
		x->func = arg;
	}
	return 0;
}

static int is_opt(const char *a, const char *name)
{
	size_t n = strlen(name);
	return !strncmp(a, name, n) && (a[n] == '=' || !a[n]);
}

/* --table or --schema, before any "--" and without --help (whose text is
 * this command's, both modes in one) */
static int table_mode(int argc, char **argv)
{
	int t = 0;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 0;
		t |= is_opt(argv[i], "--table") || is_opt(argv[i], "--schema");
	}
	return t;
}

int cmd_export(int argc, char **argv)
{
	static const struct option lo[] = {{"func", required_argument, 0, 'F'},
					   {"output", required_argument, 0, 'o'},
					   {"root", required_argument, 0, 'R'},

					   {0, 0, 0, 0}};
	/* rows for engines: a command of their own, sharing the name */
	if (table_mode(argc, argv))
		return export_table(argc, argv);
	struct ex x;
	memset(&x, 0, sizeof(x));
	x.func_id = UINT32_MAX;
	x.w_tid = -2;
	x.us_q = UINT64_MAX;
	hmap_init(&x.named);
	const struct acli_spec spec = {.cmd = "export", .usage = usage_text, .opts = lo,
				       .shortopts = "o:F:", .opt = own_opt, .ctx = &x, .own_format = 1};
	struct acli c;
	int rc = acli_start(&c, &spec, argc, argv);
	if (rc != ACLI_GO) {
		hmap_free(&x.named);
		return rc;
	}
	char *tmp = NULL;
	int fd = 1;
	x.c = &c;
	x.ty = c.ty;
	x.t0 = c.t0;
	an_sched_init(&x.sch);
	x.sch.on_run = on_run;
	x.sch.on_rq = on_rq;
	x.sch.cb_ctx = &x;
	an_io_init(&x.io);
	x.io.on_req = on_req;
	x.io.on_qd = on_qd;
	x.io.cb_ctx = &x;
	hmap_init(&x.netdev);
	if (!x.fmt) {
		rc = acli_usage_error(&c, "--format=chrome or --format=folded is needed (the format to write)");
		goto out;
	}
	if (!(x.o = malloc(sizeof(*x.o)))) {
		rc = acli_fail(&c, -ENOMEM, NULL);
		goto out;
	}
	if (x.out_path && (fd = export_open_out(x.out_path, &tmp)) < 0) {
		fprintf(stderr, "tracepp export: %s: %s\n", x.out_path, strerror(-fd));
		rc = 1;
		goto out;
	}
	of_init(x.o, fd);
	if ((rc = an_syms_open(&x.syms, c.names)) ||
	    (x.fmt == X_CHROME && (rc = an_pair_open(&x.pair, x.ty, x.syms, c.names, &ex_ops, &x)))) {
		rc = acli_fail(&c, rc, NULL);
		goto out;
	}
	if (x.func && (x.func_id = an_func_id_named(x.syms, x.func)) == UINT32_MAX) {
		rc = acli_fail(&c, -ENOMEM, NULL);
		goto out;
	}
	/* --func follows its frames in on_entry: no hot path then; nor with
	 * TPP_EXPORT_HOT=0, so that a test can hold the two ways' bytes equal */
	const char *hot = getenv("TPP_EXPORT_HOT");
	if (x.pair && !x.func && !(hot && !strcmp(hot, "0")))
		x.hot = an_pair_hot(x.pair);
	struct an_run_stats st;
	if ((rc = x.fmt == X_CHROME ? chrome(&x, &st) : folded(&x, &st, fd)))
		goto out;
	if ((rc = export_close_out(x.o, &fd, &tmp, x.out_path)))
		goto out;
	if (x.func && !x.func_seen) {
		char fl[320] = "";
		cli_filter_add(fl, sizeof(fl), "func", x.func);
		cli_no_match("export", c.path, fl);
	}
	if (x.fmt == X_CHROME)
		acli_need(&c, c.ty->has[AN_SWITCH] || x.ps.entries || x.ps.returns, "function or sched_switch");
	else
		acli_need(&c, x.ps.entries || x.ps.returns || c.f.tids || c.f.comm, "function entry/exit");
	acli_report_pairs(&c, &x.ps);
	acli_report_run(&c, &st);
out:
	export_drop_out(fd, tmp);
	an_sched_free(&x.sch);
	an_io_free(&x.io);
	hmap_free(&x.netdev);
	an_pair_close(x.pair);
	an_syms_close(x.syms);
	hmap_free(&x.named);
	free(x.o);
	free(x.scratch);
	free(x.arena);
	free(x.frags);
	free(x.fragix);
	acli_close(&c);
	return rc;
}
