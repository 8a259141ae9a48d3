/* tracepp export --table=T [--format=csv|jsonl|rowbinary] FILE...: rows
 * for analytics engines (ClickHouse, DuckDB), and --schema=clickhouse|duckdb,
 * the matching CREATE TABLE. The columns are xtable.c's, one list the
 * writers and the DDL share.
 *
 * Each row comes from the analysis the commands print from, never a second
 * reading of the events: calls from the one pairing (an_pair, fed every
 * event as replay and latency feed it), sched runs and waits from an_sched's
 * on_run and on_wait (the intervals `tracepp sched` sums), io requests from
 * an_io's on_req (those `tracepp io` counts), tasks from an_sched's tasks
 * after its finish (the rows of `tracepp sched`). Rows stream: a call is
 * written when it closes, a run when it ends, a request when it completes;
 * what is held is the analyses' own per-task and per-request state.
 *
 * The output is a function of the files alone, in the order given: no
 * clock, no path, no address of this process goes into a row. Every row
 * names its recording by host (the file's hostname) and trace_id (see
 * trace_id()); wall_ns and wall_err_ns are the file's time base's
 * (wall_cols()). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "an_cli.h"
#include "export_table.h"
#include "xtable.h"
#include "out_fast.h"
#include "fieldfmt.h"
#include "an_types.h"
#include "an_syms.h"
#include "an_run.h"
#include "an_pair.h"
#include "an_sched.h"
#include "an_io.h"
#include "an_net.h"

struct xt {
	struct xt_w w;
	const struct xt_table *t;
	/* the file being written */
	const char *path;
	struct tpp_reader *r;
	struct tpp_names *names;
	struct an_types *ty;
	struct an_syms *syms;
	struct an_pair *pair;
	struct an_sched sch;
	struct an_io io;
	struct an_net net; /* conns */
	uint64_t *io_seen; /* per an_io device: its count at the last row */
	size_t nio_seen;
	int io_rowed;      /* on_req wrote the completion being fed */
	const char *host;
	size_t hostlen;
	char trace_id[17];
	const struct tpp_clock *clock; /* the file's time base, the reader's */
	const char *range;     /* --time-range, read per file (relative times: from its start) */
	struct ofast *scratch; /* a JSON cell (fields, args) before it goes out */
	uint64_t cut;          /* string fields left out of a too long fields cell */
	int err;
	/* --tid, --comm, --where: the analysis commands' own (an_cli), their
	 * file set per file; tasks != 0 when --tid or --comm was given */
	struct acli c;
	int tasks;
};

/* --tid/--comm: a row (or a function event) of tid wanted. */
static int wanted(struct xt *x, int32_t tid, const char *comm)
{
	return !x->tasks || acli_task_wanted(&x->c, tid, comm);
}

/* The one place a recording's monotonic time becomes wall-clock time: the
 * file's time base (format/clock.c: the recorder's samples of the offset,
 * interpolated; an older file's header offset as a constant), written as
 * the columns wall_ns and wall_err_ns (how far off it may be: the samples'
 * error plus the drift past the last one, -1 when the file does not say). */
static void wall_cols(struct xt *x, uint64_t mono)
{
	int64_t err = -1;
	xt_u64(&x->w, (uint64_t)tpp_clock_wall(x->clock, mono, &err));
	xt_i64(&x->w, err < 0 ? -1 : err);
}

/* A recording's id, the same on every run and every host that reads it:
 * FNV-1a 64 over what its header says of it (host, kernel, machine,
 * producer, CPUs, the recorder's command line, the wall-clock offset it
 * measured at start, to the ns) and its first event's time, as 16 hex
 * digits. Two recordings differ in the offset and the first event even
 * when made by the same command on the same host. */
static void trace_id(struct xt *x)
{
	const struct tpp_file_info *fi = tpp_r_info(x->r);
	uint64_t h = 0xcbf29ce484222325ULL;
#define MIX(p, n)                                                                                  \
	do {                                                                                       \
		const unsigned char *b_ = (const unsigned char *)(p);                              \
		for (size_t i_ = 0; i_ < (n); i_++)                                                \
			h = (h ^ b_[i_]) * 0x100000001b3ULL;                                       \
		h = (h ^ 0xff) * 0x100000001b3ULL; /* a separator: "ab","c" is not "a","bc" */     \
	} while (0)
#define MIXS(s) MIX((s) ? (s) : "", (s) ? strlen(s) : 0)
	MIXS(fi->hostname);
	MIXS(fi->kernel);
	MIXS(fi->arch);
	MIXS(fi->producer);
	MIXS(fi->producer_version);
	for (int i = 0; i < fi->argc; i++)
		MIXS(fi->argv[i]);
	uint64_t nums[3] = {(uint64_t)fi->ncpus, (uint64_t)fi->wall_offset_ns, an_first_ts(x->r)};
	for (int i = 0; i < 3; i++) {
		unsigned char le[8];
		for (int k = 0; k < 8; k++)
			le[k] = (unsigned char)(nums[i] >> (8 * k));
		MIX(le, 8);
	}
#undef MIX
#undef MIXS
	snprintf(x->trace_id, sizeof(x->trace_id), "%016llx", (unsigned long long)h);
}

static void origin(struct xt *x)
{
	xt_row(&x->w);
	xt_str(&x->w, x->host, x->hostlen);
	xt_str(&x->w, x->trace_id, 16);
}

static void str0(struct xt *x, const char *s, size_t max)
{
	xt_str(&x->w, s ? s : "", s ? strnlen(s, max) : 0);
}

static int32_t pid_of(const struct xt *x, int32_t tid, int32_t known)
{
	if (known > 0)
		return known;
	if (tid == 0)
		return 0; /* the idle task */
	int32_t p = tid > 0 ? tpp_names_pid(x->names, tid) : -1;
	return p > 0 ? p : -1; /* a process the file does not know: never its tid (issues 13, 21) */
}

/* ---------------------------------------------------------------- events */

/* The event's fields as one JSON object: numbers as they are, strings
 * through the one escaper, bytes as hex text. */
static void fields_json(struct xt *x, const struct tpp_event *ev)
{
	struct ofast *o = x->scratch;
	const struct tpp_type *t = ev->t;
	o->len = 0;
	of_ch(o, '{');
	int n = 0;
	for (int i = 0; t && i < ev->nvals && i < t->nfields; i++) {
		const char *fn = t->fields[i].name;
		if (!fn)
			continue;
		const union tpp_val *v = &ev->v[i];
		size_t fl = strlen(fn);
		size_t sl = t->fields[i].type >= TPP_F_STR && v->s.p ? v->s.len : 0;
		/* the cell lives in scratch's buffer, never flushed (its fd is -1:
		 * a flush would fail and start the cell over): a field that would
		 * not fit is left out and counted. At worst 6 bytes of JSON per
		 * byte, and the escaper asks for 256 bytes of room beyond that */
		size_t need = 6 * fl + 6 * 2 * sl + 64 + 256;
		if (o->len + need + 2 > sizeof(o->buf)) {
			x->cut++;
			continue;
		}
		if (n++)
			of_ch(o, ',');
		of_json_str(o, fn, fl);
		of_ch(o, ':');
		switch (t->fields[i].type) {
		case TPP_F_U64:
			of_u64(o, v->u);
			break;
		case TPP_F_S64:
			of_i64(o, v->i);
			break;
		case TPP_F_STR:
			if (v->s.p) {
				of_json_str(o, v->s.p, strnlen(v->s.p, v->s.len));
				break;
			}
			of_str(o, "null");
			break;
		default:
			if (!v->s.p) {
				of_str(o, "null");
				break;
			}
			of_ch(o, '"');
			for (size_t k = 0; k < v->s.len; k++) {
				static const char hx[] = "0123456789abcdef";
				uint8_t c = (uint8_t)v->s.p[k];
				of_ch(o, hx[c >> 4]);
				of_ch(o, hx[c & 15]);
			}
			of_ch(o, '"');
		}
	}
	of_ch(o, '}');
	if (o->err) { /* cannot happen with the room kept above; never a cut cell */
		o->err = 0;
		o->len = 0;
		of_str(o, "{}");
		x->cut++;
	}
}

static int ev_row(void *ctx, const struct tpp_event *ev)
{
	struct xt *x = ctx;
	if (!wanted(x, ev->tid, NULL))
		return 0;
	origin(x);
	wall_cols(x, ev->ts);
	xt_u64(&x->w, ev->ts);
	xt_i32(&x->w, ev->cpu);
	xt_i32(&x->w, ev->tid);
	xt_i32(&x->w, pid_of(x, ev->tid, 0));
	str0(x, ev->tid > 0 ? tpp_names_comm(x->names, ev->tid) : NULL, 32);
	str0(x, ev->t && ev->t->name ? ev->t->name : "?", 256);
	fields_json(x, ev);
	xt_json(&x->w, x->scratch->buf, x->scratch->len);
	xt_end(&x->w);
	return 0;
}

/* ----------------------------------------------------------------- calls */

/* How a call ended, in replay's words (its JSON marks): the first that
 * applies. */
static const char *ended(uint32_t fl)
{
	if (fl & AN_CALL_EXCEPTION)
		return "exception";
	if (fl & AN_CALL_SUSPENDED)
		return "suspended";
	if (fl & AN_CALL_UNWOUND)
		return "unwound";
	if (fl & AN_CALL_NORET)
		return "noret";
	if (fl & AN_CALL_TAIL)
		return "tail";
	return "return";
}

static void call_head(struct xt *x, struct an_thread *th, uint32_t func)
{
	origin(x);
	xt_i32(&x->w, th->tid);
	xt_i32(&x->w, pid_of(x, th->tid, th->pid));
	str0(x, th->comm ? th->comm : tpp_names_comm(x->names, th->tid), 32);
	xt_str(&x->w, an_func_name(x->syms, func), an_func_name_len(x->syms, func));
}

static void on_exit_(void *ctx, struct an_thread *th, const struct an_call *c, const struct tpp_event *ev)
{
	struct xt *x = ctx;
	const struct an_frame *f = &th->st[th->depth - 1];
	call_head(x, th, f->func);
	xt_u32(&x->w, c->depth);
	xt_u64(&x->w, c->entry_ts);
	wall_cols(x, c->entry_ts);
	xt_u64(&x->w, c->dur);
	xt_u64(&x->w, c->self);
	xt_u64(&x->w, c->offcpu);
	/* arguments as replay shows them: none for a frame it resumed */
	struct ofast *o = x->scratch;
	o->len = 0;
	of_ch(o, '[');
	int nargs = c->flags & AN_CALL_RESUMED ? 0 : f->nargs;
	for (int i = 0; i < nargs; i++) {
		if (i)
			of_ch(o, ',');
		of_u64(o, f->args[i]);
	}
	of_ch(o, ']');
	xt_json(&x->w, o->buf, o->len);
	xt_u8(&x->w, (uint8_t)(c->has_ret != 0));
	/* the return value as the return event's field says: signed where it
	 * is s64, else its bits (ClickHouse and DuckDB reinterpret alike) */
	xt_i64(&x->w, c->has_ret ? (int64_t)c->ret : 0);
	xt_str(&x->w, ended(c->flags), strlen(ended(c->flags)));
	xt_u8(&x->w, (uint8_t)((c->flags & AN_CALL_RESUMED) != 0));
	xt_end(&x->w);
	(void)ev;
}

/* A return without its entry (the call began before the recording): a
 * row at the return, of no known duration. */
static void on_orphan(void *ctx, struct an_thread *th, uint32_t func, const struct tpp_event *ev)
{
	struct xt *x = ctx;
	call_head(x, th, func);
	xt_u32(&x->w, th->depth);
	xt_u64(&x->w, ev->ts);
	wall_cols(x, ev->ts);
	xt_u64(&x->w, 0);
	xt_u64(&x->w, 0);
	xt_u64(&x->w, 0);
	xt_str(&x->w, "[]", 2);
	xt_u8(&x->w, 0);
	xt_i64(&x->w, 0);
	xt_str(&x->w, "orphan", 6);
	xt_u8(&x->w, 0);
	xt_end(&x->w);
}

static const struct an_pair_ops pair_ops = {NULL, on_exit_, on_orphan};

static int call_feed(void *ctx, const struct tpp_event *ev)
{
	struct xt *x = ctx;
	const struct an_tinfo *ti = an_ti(x->ty, ev);
	/* --tid/--comm: those tasks' calls, as latency pairs them (switches and
	 * exits of every task still reach the pairing) */
	if (ti->kind >= AN_FENTRY && ti->kind <= AN_URET && !wanted(x, ev->tid, NULL))
		return 0;
	return an_pair_feed_ti(x->pair, ev, ti);
}

/* ----------------------------------------------------------------- sched */

static void sched_row(struct xt *x, const char *kind, int32_t cpu, int32_t tid, uint64_t from, uint64_t dur)
{
	const char *comm = NULL;
	uint32_t *i = hmap_get(&x->sch.by_tid, (uint32_t)tid);
	if (i && x->sch.t[*i].comm[0])
		comm = x->sch.t[*i].comm;
	if (!comm)
		comm = tpp_names_comm(x->names, tid);
	/* --tid/--comm pick rows, not events: a switch is two tasks' */
	if (!wanted(x, tid, comm))
		return;
	origin(x);
	xt_str(&x->w, kind, strlen(kind));
	xt_i32(&x->w, cpu);
	xt_i32(&x->w, tid);
	xt_i32(&x->w, pid_of(x, tid, 0));
	str0(x, comm, 16);
	xt_u64(&x->w, from);
	wall_cols(x, from);
	xt_u64(&x->w, dur);
	xt_end(&x->w);
}

static int on_run(void *ctx, int32_t cpu, int32_t tid, uint64_t from, uint64_t to)
{
	sched_row(ctx, "run", cpu, tid, from, to - from);
	return 0;
}

static int on_wait(void *ctx, const struct an_task *t, uint64_t ts, uint64_t wait_ns)
{
	sched_row(ctx, "wait", t->cpu, t->tid, ts - wait_ns, wait_ns);
	return 0;
}

static int sched_feed(void *ctx, const struct tpp_event *ev)
{
	struct xt *x = ctx;
	return an_sched_feed(&x->sch, x->ty, ev);
}

/* tasks: an_sched's, in the order it first saw them, as tracepp sched
 * prints them (the idle task left out, as there) */
static void task_rows(struct xt *x)
{
	for (size_t i = 0; i < x->sch.n; i++) {
		const struct an_task *k = &x->sch.t[i];
		if (!k->tid || !wanted(x, k->tid, k->comm[0] ? k->comm : tpp_names_comm(x->names, k->tid)))
			continue;
		origin(x);
		xt_i32(&x->w, pid_of(x, k->tid, k->pid));
		xt_i32(&x->w, k->tid);
		str0(x, k->comm[0] ? k->comm : tpp_names_comm(x->names, k->tid), 16);
		xt_u64(&x->w, k->oncpu_ns);
		xt_u64(&x->w, k->runq_wait_ns);
		xt_u64(&x->w, k->offcpu_ns);
		xt_u64(&x->w, k->switches);
		xt_u64(&x->w, k->voluntary);
		xt_u64(&x->w, k->involuntary);
		xt_u64(&x->w, k->migrations);
		xt_u64(&x->w, k->wakeups);
		xt_u64(&x->w, an_task_wakeup_avg(k));
		xt_u64(&x->w, k->wakeup_lat_max);
		xt_u8(&x->w, k->partial);
		xt_end(&x->w);
	}
}

/* -------------------------------------------------------------------- io */

static void io_row(struct xt *x, const struct an_iodev *d, const struct an_ioreq_done *r)
{
	char dev[24];
	size_t dl = ff_text(dev, sizeof(dev), FF_DEV, d->dev);
	uint64_t first = r->insert_ts ? r->insert_ts : r->issue_ts ? r->issue_ts : r->complete_ts;
	origin(x);
	xt_str(&x->w, dev, dl);
	xt_str(&x->w, an_io_op_name[d->op], strlen(an_io_op_name[d->op]));
	xt_u64(&x->w, r->sector);
	xt_u64(&x->w, r->bytes);
	xt_u64(&x->w, first);
	wall_cols(x, first);
	xt_u64(&x->w, r->insert_ts);
	xt_u64(&x->w, r->issue_ts);
	xt_u64(&x->w, r->complete_ts);
	xt_u64(&x->w, r->insert_ts && r->issue_ts >= r->insert_ts ? r->issue_ts - r->insert_ts : 0);
	xt_u64(&x->w, r->issue_ts && r->complete_ts >= r->issue_ts ? r->complete_ts - r->issue_ts : 0);
	xt_i64(&x->w, r->error);
	xt_end(&x->w);
}

static int on_req(void *ctx, const struct an_iodev *d, const struct an_ioreq_done *r)
{
	struct xt *x = ctx;
	x->io_rowed = 1;
	io_row(x, d, r);
	return 0;
}

/* Every completion an_io counts is a row: one whose issue is not in the
 * file (it began before the recording) has no on_req, and is written here
 * from the device whose count it raised, its phases 0. */
static int io_feed(void *ctx, const struct tpp_event *ev)
{
	struct xt *x = ctx;
	const struct an_tinfo *ti = an_ti(x->ty, ev);
	x->io_rowed = 0;
	int rc = an_io_feed(&x->io, x->ty, ev);
	if (rc || ti->kind != AN_BLK_COMPLETE)
		return rc;
	if (x->io.n > x->nio_seen) {
		uint64_t *n = realloc(x->io_seen, x->io.n * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + x->nio_seen, 0, (x->io.n - x->nio_seen) * sizeof(*n));
		x->io_seen = n;
		x->nio_seen = x->io.n;
	}
	for (size_t i = 0; i < x->io.n; i++) {
		const struct an_iodev *d = &x->io.d[i];
		if (d->count == x->io_seen[i])
			continue;
		x->io_seen[i] = d->count;
		if (!x->io_rowed) {
			int64_t error = ti->f[R_ERROR] >= 0 ? (int64_t)an_u(ev, ti, R_ERROR) : 0;
			struct an_ioreq_done r = {an_u(ev, ti, R_SECTOR), an_u(ev, ti, R_NSECT) * 512, 0, 0, ev->ts,
						  error};
			io_row(x, d, &r);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------- net */

/* Packets as an_net classifies their events: queued for a device, handed
 * to it (xmit), received. */
static int net_feed(void *ctx, const struct tpp_event *ev)
{
	struct xt *x = ctx;
	const struct an_tinfo *ti = an_ti(x->ty, ev);
	if (ti->kind < AN_NET_QUEUE || ti->kind > AN_NET_RECV || !wanted(x, ev->tid, NULL))
		return 0;
	static const char *const dir[] = {"queue", "xmit", "recv"};
	char dev[32];
	an_s(ev, ti, R_NAME, dev, sizeof(dev));
	origin(x);
	xt_u64(&x->w, ev->ts);
	wall_cols(x, ev->ts);
	xt_i32(&x->w, ev->cpu);
	xt_i32(&x->w, ev->tid);
	xt_i32(&x->w, pid_of(x, ev->tid, 0));
	str0(x, ev->tid > 0 ? tpp_names_comm(x->names, ev->tid) : NULL, 32);
	str0(x, dev, sizeof(dev));
	xt_str(&x->w, dir[ti->kind - AN_NET_QUEUE], strlen(dir[ti->kind - AN_NET_QUEUE]));
	xt_u64(&x->w, an_u(ev, ti, R_LEN));
	xt_i64(&x->w, ti->f[R_RC] >= 0 ? (int64_t)an_u(ev, ti, R_RC) : 0);
	xt_end(&x->w);
	return 0;
}

/* ----------------------------------------------------------------- conns */

/* TCP connections, an_net's table after the file (the rows of tracepp net
 * --conns): ts_ns its first event, 0 (and no wall time) when it began
 * before the recording; dur_ns to TCP_CLOSE, -1 when not both were seen. */
static void conn_rows(struct xt *x, const struct an_net *n)
{
	for (size_t i = 0; i < n->nc; i++) {
		const struct an_conn *k = &n->c[i];
		const char *st = an_tcp_state(k->state);
		origin(x);
		str0(x, k->saddr, sizeof(k->saddr));
		xt_u32(&x->w, k->sport);
		str0(x, k->daddr, sizeof(k->daddr));
		xt_u32(&x->w, k->dport);
		str0(x, st, 32);
		xt_u64(&x->w, k->start_ts);
		if (k->start_ts) {
			wall_cols(x, k->start_ts);
		} else {
			xt_u64(&x->w, 0);
			xt_i64(&x->w, -1);
		}
		xt_i64(&x->w, k->start_ts && k->close_ts ? (int64_t)(k->close_ts - k->start_ts) : -1);
		xt_u64(&x->w, k->tx_bytes);
		xt_u64(&x->w, k->rx_bytes);
		xt_u64(&x->w, k->sends);
		xt_u64(&x->w, k->recvs);
		xt_u64(&x->w, k->errors);
		xt_end(&x->w);
	}
}

static int conn_feed(void *ctx, const struct tpp_event *ev)
{
	struct xt *x = ctx;
	return an_net_feed(&x->net, x->ty, ev);
}

/* ------------------------------------------------------------- one file */

static int one_file(struct xt *x, const char *path)
{
	int rc;
	struct an_run_stats st;
	memset(&st, 0, sizeof(st));
	x->path = path;
	if (!(x->r = cli_open("export", path)))
		return 1;
	if ((rc = tpp_names_open(&x->names, x->r)) < 0)
		goto fail;
	if (!(x->ty = malloc(sizeof(*x->ty)))) {
		rc = -ENOMEM;
		goto fail;
	}
	an_types_init(x->ty, x->r);
	const struct tpp_file_info *fi = tpp_r_info(x->r);
	x->host = fi->hostname ? fi->hostname : "";
	x->hostlen = strlen(x->host);
	x->clock = tpp_r_clock(x->r);
	trace_id(x);
	struct an_filter f = {0};
	if (x->range && cli_time_range("export", x->range, x->r, &f.from_ts, &f.to_ts) < 0) {
		rc = 2;
		goto out;
	}
	/* --where: the events every row comes from, as the commands read them */
	x->c.r = x->r;
	x->c.names = x->names;
	x->c.path = path;
	x->c.range = x->range;
	x->c.task_asks = x->c.task_hits = x->c.where_hits = 0;
	if ((rc = acli_where_open(&x->c)))
		goto out;
	f.keep = x->c.f.keep;
	f.keep_ctx = x->c.f.keep_ctx;
	f.keep_want = x->c.f.keep_want;
	an_sched_init(&x->sch);
	an_io_init(&x->io);
	an_net_init(&x->net);
	const char *t = x->t->name;
	if (!strcmp(t, "events")) {
		rc = an_run(x->r, &f, 1, ev_row, x, &st);
	} else if (!strcmp(t, "calls")) {
		if ((rc = an_syms_open(&x->syms, x->names)) ||
		    (rc = an_pair_open(&x->pair, x->ty, x->syms, x->names, &pair_ops, x)))
			goto fail;
		if (!(rc = an_run(x->r, &f, 1, call_feed, x, &st)))
			an_pair_finish(x->pair);
	} else if (!strcmp(t, "sched") || !strcmp(t, "tasks")) {
		if (t[0] == 's') {
			x->sch.on_run = on_run;
			x->sch.on_wait = on_wait;
			x->sch.cb_ctx = x;
		}
		uint32_t *want = calloc(TPP_MAX_TYPES, sizeof(*want));
		f.want = want;
		if (!want) {
			rc = -ENOMEM;
			goto fail;
		}
		an_want_sched(x->ty, want, 1);
		rc = an_run(x->r, &f, 1, sched_feed, x, &st);
		free(want);
		/* as tracepp sched: what still runs is charged up to the window's end */
		uint64_t end = f.to_ts && f.to_ts < st.last_ts ? f.to_ts : st.last_ts;
		if (!rc && !(rc = an_sched_finish(&x->sch, end)) && t[0] == 't')
			task_rows(x);
	} else if (!strcmp(t, "io")) {
		x->io.on_req = on_req;
		x->io.cb_ctx = x;
		rc = an_run(x->r, &f, 1, io_feed, x, &st);
	} else if (!strcmp(t, "conns")) {
		if (!(rc = an_run(x->r, &f, 1, conn_feed, x, &st)))
			conn_rows(x, &x->net);
	} else {
		rc = an_run(x->r, &f, 1, net_feed, x, &st);
	}
	if (rc)
		goto fail;
	cli_warn_damaged("export", st.damaged, st.last_error);
	acli_report_none(&x->c, &st); /* the one rule: any filter that passed nothing */
	rc = 0;
	goto out;
fail:
	if (x->r)
		fprintf(stderr, "tracepp export: %s: %s\n", path,
			st.last_error[0] ? st.last_error : tpp_strerror(rc));
	rc = 1;
out:
	acli_where_close(&x->c);
	x->c.r = NULL;
	x->c.names = NULL;
	if (x->ty) { /* the analyses were set up */
		an_sched_free(&x->sch);
		an_io_free(&x->io);
		an_net_free(&x->net);
	}
	free(x->io_seen);
	x->io_seen = NULL;
	x->nio_seen = 0;
	an_pair_close(x->pair);
	x->pair = NULL;
	an_syms_close(x->syms);
	x->syms = NULL;
	free(x->ty);
	x->ty = NULL;
	tpp_names_close(x->names);
	x->names = NULL;
	if (x->r)
		tpp_r_close(x->r);
	x->r = NULL;
	return rc;
}

/* ---------------------------------------------------------------- command */

int export_open_out(const char *path, char **tmp)
{
	size_t n = strlen(path);
	if (!(*tmp = malloc(n + 8)))
		return -ENOMEM;
	memcpy(*tmp, path, n);
	memcpy(*tmp + n, ".XXXXXX", 8);
	int fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = -errno;
		free(*tmp);
		*tmp = NULL;
		return e;
	}
	return fd;
}

int export_close_out(struct ofast *o, int *fd, char **tmp, const char *path)
{
	int werr = of_flush(o) < 0 ? -o->err : *tmp && fsync(*fd) < 0 && errno != EINVAL ? errno : 0;
	if (werr) {
		fprintf(stderr, "tracepp export: writing %s: %s\n", path ? path : "output", strerror(werr));
		return 1;
	}
	if (!*tmp)
		return 0;
	int bad = close(*fd) < 0 || rename(*tmp, path) < 0;
	int e = errno;
	*fd = -1;
	if (bad) {
		fprintf(stderr, "tracepp export: %s: %s\n", path, strerror(e));
		return 1;
	}
	free(*tmp);
	*tmp = NULL;
	return 0;
}

void export_drop_out(int fd, char *tmp)
{
	if (!tmp)
		return;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
}

static int usage(const char *fmt, const char *arg)
{
	fputs("tracepp export: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see tracepp export --help)\n", stderr);
	return 2;
}

static void table_names(char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = 0;
	for (size_t i = 0; i < xt_ntables && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", xt_tables[i].name);
}

/* The rows of every file, to out_path (private temp + rename) or stdout.
 * The exit status. */
static int write_rows(struct xt *x, char **files, int nfiles, const char *out_path, enum xt_fmt fmt)
{
	char *tmp = NULL;
	int fd = 1, rc = 0;
	struct ofast *o = malloc(sizeof(*o));
	x->scratch = malloc(sizeof(*x->scratch));
	if (!o || !x->scratch) {
		fputs("tracepp export: out of memory\n", stderr);
		rc = 1;
		goto out;
	}
	of_init(x->scratch, -1);
	if (out_path && (fd = export_open_out(out_path, &tmp)) < 0) {
		fprintf(stderr, "tracepp export: %s: %s\n", out_path, strerror(-fd));
		rc = 1;
		goto out;
	}
	of_init(o, fd);
	xt_begin(&x->w, o, x->t, fmt);
	for (int i = 0; i < nfiles && !rc; i++)
		rc = one_file(x, files[i]);
	if (x->w.bad && !rc) {
		fprintf(stderr, "tracepp export: internal error: %llu row(s) did not match table %s's columns\n",
			(unsigned long long)x->w.bad, x->t->name);
		rc = 1;
	}
	if (rc)
		goto out;
	if ((rc = export_close_out(o, &fd, &tmp, out_path)))
		goto out;
	if (x->cut)
		fprintf(stderr, "tracepp export: warning: %llu string field(s) too long for a fields cell left out\n",
			(unsigned long long)x->cut);
out:
	export_drop_out(fd, tmp);
	free(o);
	free(x->scratch);
	return rc;
}

int export_table(int argc, char **argv)
{
	static const struct option lo[] = {{"table", required_argument, 0, 'T'},
					   {"format", required_argument, 0, 'f'},
					   {"schema", required_argument, 0, 'S'},
					   {"output", required_argument, 0, 'o'},
					   {"time-range", required_argument, 0, 'r'},
					   {"tid", required_argument, 0, 't'},
					   {"comm", required_argument, 0, 'c'},
					   {"where", required_argument, 0, ACLI_OPT_WHERE},
					   {0, 0, 0, 0}};
	struct xt x;
	memset(&x, 0, sizeof(x));
	acli_init(&x.c, "export");
	const char *table = NULL, *out_path = NULL;
	enum xt_fmt fmt = XT_CSV;
	int schema = -1, opt;
	char names[80];
	table_names(names, sizeof(names));
	optind = 1;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
		int common = opt == 't' || opt == 'c' || opt == ACLI_OPT_WHERE ? acli_opt(&x.c, opt, optarg) : 0;
		if (common < 0)
			return 2;
		if (common) {
			x.tasks |= opt != ACLI_OPT_WHERE;
			continue;
		}
		switch (opt) {
		case 'T':
			table = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "csv"))
				fmt = XT_CSV;
			else if (!strcmp(optarg, "jsonl"))
				fmt = XT_JSONL;
			else if (!strcmp(optarg, "rowbinary"))
				fmt = XT_ROWBINARY;
			else
				return usage("--format: '%s' is not csv, jsonl or rowbinary (with --table)", optarg);
			break;
		case 'S':
			if (!strcmp(optarg, "clickhouse"))
				schema = XT_CLICKHOUSE;
			else if (!strcmp(optarg, "duckdb"))
				schema = XT_DUCKDB;
			else
				return usage("--schema: '%s' is not clickhouse or duckdb", optarg);
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'r':
			x.range = optarg;
			break;
		default:
			return usage("%s", "only --table, --format, --schema, --time-range, --tid, --comm, --where and -o go with --table");
		}
	}
	if (!table) {
		fprintf(stderr, "tracepp export: --table=T is needed, T one of %s\n", names);
		return 2;
	}
	if (!(x.t = xt_table(table))) {
		fprintf(stderr, "tracepp export: --table: '%s' is not one of %s\n", table, names);
		return 2;
	}
	if (x.tasks && (!strcmp(x.t->name, "io") || !strcmp(x.t->name, "conns")))
		return usage("--tid/--comm: the %s table has no task's rows (as tracepp io and net)", x.t->name);
	if (schema >= 0) {
		if (optind < argc)
			return usage("--schema prints a statement and reads no file: '%s'", argv[optind]);
		xt_schema(stdout, x.t, (enum xt_engine)schema, NULL);
		return fflush(stdout) ? 1 : 0;
	}
	if (optind >= argc)
		return usage("%s", "no trace file given (usage: tracepp export --table=T [--format=F] FILE...)");
	if (fmt == XT_ROWBINARY && !out_path && isatty(1)) {
		fputs("tracepp export: RowBinary is binary: redirect it, pipe it, or give -o FILE\n", stderr);
		return 2;
	}
	return write_rows(&x, argv + optind, argc - optind, out_path, fmt);
}
