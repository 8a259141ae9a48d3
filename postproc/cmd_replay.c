/* tracepp replay: the flow of every thread, like DTrace's flowindent and
 * SystemTap's thread_indent: one line per call, return and kernel event,
 * indented by call depth, with durations and kernel events inline.
 *
 * Entry lines are deferred until something is printed inside the call, so
 * a call with nothing inside prints as one line "f();" with its duration.
 * With --min-duration a call is shown only once its return proves it long
 * enough; its callers' entry lines are then printed late (their own
 * timestamps say when they began). Text is formatted without printf. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "commands.h"
#include "out_fast.h"
#include "an_dwarf.h"

static const char usage_text[] =
	"usage: tracepp replay [OPTIONS] FILE\n"
	"Every thread's calls as an indented tree, in time order, kernel events inline.\n"
	"  --tid=TID[,TID]      only these threads     --comm=NAME   only this task name\n"
	"  --func=F             only what runs under F (F's subtree)\n"
	"  --depth=N            only N levels of calls (under F with --func)\n"
	"  --min-duration=D     only calls lasting at least D (e.g. 10us)\n"
	"  --time-range=FROM,TO only this window (absolute ns, or 1.5s,2s from the start)\n"
	"  --no-kernel          no kernel events\n"
	"  --srcline            file:line of each call, from local binaries or debug files\n"
	"                       whose build-id matches the recorded one\n"
	"  --format=text|json|csv\n";

enum lkind { L_ENTRY, L_EXIT, L_LEAF, L_EVENT, L_ORPHAN, L_SCHED_IN };
static const char *const lkind_name[] = {"entry", "exit", "call", "event", "orphan", "sched_in"};

struct line {
	enum lkind kind;
	uint64_t ts, dur;
	int has_dur;
	int32_t cpu, tid;
	const char *comm;
	uint32_t depth;
	const char *name;
	size_t name_len;
	struct an_thread *th;
	const struct an_frame *f; /* args */
	int has_ret, ret_signed;
	uint64_t ret;
	uint32_t flags;
	const struct tpp_event *ev;
};

struct rp {
	struct acli *c;
	struct ofast *o;
	const struct an_types *ty;
	struct an_syms *syms;
	struct an_pair *pair;
	struct an_pair_hot *hot; /* pair's, for feed's inline common cases */
	const char *func;   /* --func */
	uint32_t func_id;   /* resolved lazily by name */
	uint32_t max_depth; /* 0 = all */
	uint64_t min_dur;
	int no_kernel, fmt;
	uint64_t nlines;
	void (*emit)(struct rp *r, const struct line *l);
	int err;
	/* Uprobe entries' arguments as text ("path=\"/etc\", flags=0"), kept
	 * from the event until the call's line is printed: a frame's node is
	 * its slot + 1. Slots are reused, so steady state allocates nothing. */
	struct utext {
		char *s;
		size_t len, cap;
		uint32_t next_free;
	} *ut;
	size_t nut, caput;
	uint32_t ut_free; /* slot + 1, 0 = none */
	struct an_dwarf *dw; /* --srcline */
	int want_srcline;
	const struct an_thread *w_th; /* wanted(): last thread asked, its answer */
	int w_val;
	/* w_th when it is wanted and lines are plain: on_exit_'s fast way */
	const struct an_thread *plain_th;
	int fast_text;      /* text without --srcline: call lines from ftail */
	int plain;          /* fast_text, and no --func, --depth, --min-duration */
	/* The line prefix "S.mmmuuu" of the last timestamp printed: lines come
	 * tens of ns apart, so most share it and only the ns digits change. */
	uint64_t t0;        /* the first event's time: lines show time since */
	uint64_t ts_us;
	uint64_t ts_base;   /* t0 + ts_us * 1000: where ts_us begins, event time */
	uint32_t ts_pre_len;
	char ts_pre[32];
	/* Per function id: the ends of its call lines (leaf, entry and exit
	 * forms) rendered once, padded so they are copied in 16-byte pieces. */
	struct ftail {
		char *s[3];  /* by enum lkind: L_ENTRY, L_EXIT, L_LEAF */
		uint32_t len[3];
	} *ft;
	size_t nft;
};

/* ---- text */

/* Three decimal digits per lookup, [3] = how many are significant: the
 * timestamp and duration columns are most of the text written, and chains
 * of divisions by 10 showed in profiles. d3s: the same, space-padded.
 * Filled by d3_init(). */
static char d3[1000][4], d3s[1000][4];
/* Durations under 1 us, the most common, as their column and " | ". */
static char dur_ns[1000][16];
static const char spaces[32] = "                                ";

/* The duration column, 11 wide, right-aligned, into p; returns the end. */
static char *put_dur_col(char *p, uint64_t ns, int has)
{
	memcpy(p, spaces, 11);
	if (!has)
		return p + 11;
	static const char unit[][4] = {" ns", " us", " ms", "  s"};
	int u = 0;
	uint64_t whole = ns, frac = 0;
	while (u < 3 && whole >= 1000) {
		frac = whole % 1000;
		whole /= 1000;
		u++;
	}
	/* built right-aligned in b over spaces, so the column is one
	 * fixed-size copy (a variable memcpy was a libc call per line) */
	char b[32], *e = b + sizeof(b), *q = e;
	memcpy(e - 16, spaces, 16);
	q -= 3;
	memcpy(q, unit[u], 3);
	if (u) {
		q -= 3;
		memcpy(q, d3[frac], 3);
		*--q = '.';
	}
	while (whole >= 1000) { /* seconds only */
		q -= 3;
		memcpy(q, d3[whole % 1000], 3);
		whole /= 1000;
	}
	/* the leading digits padded with spaces: the bytes before q are
	 * either spaces or not copied */
	memcpy(q - 3, d3s[whole], 3);
	q -= d3[whole][3];
	size_t n = (size_t)(e - q);
	if (n < 11) {
		memcpy(p, e - 11, 11);
		return p + 11;
	}
	memcpy(p, q, n);
	return p + n;
}

/* The duration column and the " | " after it; returns the end. */
static inline char *put_dur(char *p, uint64_t ns, int has)
{
	if (has && ns < 1000) {
		memcpy(p, dur_ns[ns], 16);
		return p + 14;
	}
	p = put_dur_col(p, ns, has);
	memcpy(p, " | ", 3);
	return p + 3;
}

static void d3_init(void)
{
	for (int i = 0; i < 1000; i++) {
		d3[i][0] = (char)('0' + i / 100);
		d3[i][1] = (char)('0' + i / 10 % 10);
		d3[i][2] = (char)('0' + i % 10);
		d3[i][3] = (char)(i >= 100 ? 3 : i >= 10 ? 2 : 1);
		memcpy(d3s[i], d3[i], 4);
		for (int k = 0; k < 3 - d3[i][3]; k++)
			d3s[i][k] = ' ';
	}
	for (int i = 0; i < 1000; i++) {
		memset(dur_ns[i], ' ', sizeof(dur_ns[i]));
		memcpy(put_dur_col(dur_ns[i], (uint64_t)i, 1), " | ", 3);
	}
}

static void num(struct ofast *o, uint64_t v)
{
	if (v < 100000)
		of_u64(o, v);
	else
		of_hex(o, v);
}

/* "[name]" and " field=" rendered once per type: strlen on every event
 * showed in profiles. */
struct tcache {
	char *head;
	size_t head_len;
	char *pre[TPP_MAX_FIELDS];
	uint8_t pre_len[TPP_MAX_FIELDS];
};
static struct tcache *tcache[TPP_MAX_TYPES];

static struct tcache *tc_get(const struct tpp_type *t)
{
	if (!t || t->id >= TPP_MAX_TYPES)
		return NULL;
	struct tcache *c = tcache[t->id];
	if (c)
		return c;
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	if (asprintf(&c->head, "[%s]", t->name ? t->name : "?") < 0) {
		free(c);
		return NULL;
	}
	c->head_len = strlen(c->head);
	for (int i = 0; i < t->nfields && i < TPP_MAX_FIELDS; i++) {
		if (asprintf(&c->pre[i], " %.200s=", t->fields[i].name ? t->fields[i].name : "?") < 0)
			c->pre[i] = NULL;
		c->pre_len[i] = c->pre[i] ? (uint8_t)strlen(c->pre[i]) : 0;
	}
	tcache[t->id] = c;
	return c;
}

static void tc_free(void)
{
	for (size_t i = 0; i < TPP_MAX_TYPES; i++) {
		if (!tcache[i])
			continue;
		free(tcache[i]->head);
		for (int k = 0; k < TPP_MAX_FIELDS; k++)
			free(tcache[i]->pre[k]);
		free(tcache[i]);
		tcache[i] = NULL;
	}
}

static void text_fields(struct ofast *o, const struct tpp_event *ev)
{
	const struct tpp_type *t = ev->t;
	struct tcache *c = tc_get(t);
	if (c)
		of_mem(o, c->head, c->head_len);
	for (int i = 0; t && i < ev->nvals && i < t->nfields; i++) {
		if (c && c->pre[i]) {
			of_mem(o, c->pre[i], c->pre_len[i]);
		} else {
			of_ch(o, ' ');
			of_str(o, t->fields[i].name);
			of_ch(o, '=');
		}
		switch (t->fields[i].type) {
		case TPP_F_U64:
			num(o, ev->v[i].u);
			break;
		case TPP_F_S64:
			of_i64(o, ev->v[i].i);
			break;
		case TPP_F_STR: {
			size_t n = ev->v[i].s.p ? strnlen(ev->v[i].s.p, ev->v[i].s.len) : 0;
			of_text(o, ev->v[i].s.p ? ev->v[i].s.p : "", n);
			break;
		}
		default:
			of_str(o, "<");
			of_u64(o, ev->v[i].s.len);
			of_str(o, " bytes>");
		}
	}
}


/* "S.mmmuuu" of us microseconds (seconds unpadded) into r->ts_pre. */
static void ts_prefix(struct rp *r, uint64_t us)
{
	char *p = r->ts_pre;
	uint64_t sec = us / 1000000u;
	uint32_t frac = (uint32_t)(us % 1000000u);
	if (sec < 1000) {
		int k = d3[sec][3];
		memcpy(p, d3[sec] + 3 - k, (size_t)k);
		p += k;
	} else {
		char t[24];
		int n = 0;
		do {
			t[n++] = (char)('0' + sec % 10);
			sec /= 10;
		} while (sec);
		while (n)
			*p++ = t[--n];
	}
	*p = '.';
	memcpy(p + 1, d3[frac / 1000u], 3);
	memcpy(p + 4, d3[frac % 1000u], 3);
	r->ts_pre_len = (uint32_t)(p + 7 - r->ts_pre);
	r->ts_us = us;
	r->ts_base = r->t0 + us * 1000u;
}

/* The CPU column of label (3 characters and a space). */
static void label_cpu(struct an_thread *th, int32_t cpu)
{
	char *p = th->label;
	if (cpu >= 0 && cpu < 1000) {
		p[0] = cpu < 100 ? ' ' : (char)('0' + cpu / 100);
		p[1] = cpu < 10 ? ' ' : (char)('0' + cpu / 10 % 10);
		p[2] = (char)('0' + cpu % 10);
	} else {
		memcpy(p, "  -", 3);
	}
	p[3] = ' ';
	th->label_cpu = cpu;
}

/* The "CPU comm-tid" columns, padded: the task part is rendered once per
 * thread, the CPU part when the thread moves. */
static void label(struct an_thread *th, int32_t cpu)
{
	if (!th->label_len) {
		const size_t room = sizeof(th->label) - 4;
		int n = snprintf(th->label + 4, room, "%.16s-%d", th->comm ? th->comm : "", th->tid);
		if (n < 0 || n >= (int)room)
			n = (int)room - 1;
		while (n < 22)
			th->label[4 + n++] = ' ';
		th->label_len = (uint32_t)n + 4;
	}
	label_cpu(th, cpu);
}

/* Room text_prefix needs: timestamp 32, label 40, duration 32, indent 512
 * and the 32 one indent piece may write past it. */
#define PREFIX_ROOM (32 + 40 + 32 + 512 + 32)

/* The columns of a text line and its indent at p (with PREFIX_ROOM bytes
 * of room), with r->ts_pre and th's label up to date for the line's time
 * (ns3 its nanoseconds past r->ts_base) and CPU; returns the end. */
static inline __attribute__((always_inline)) char *
text_cols(const struct rp *r, char *p, const struct an_thread *th, uint64_t ns3,
	  uint64_t dur, int has_dur, uint32_t depth)
{
	/* "S.NNNNNNNNN ": the prefix to the microsecond, then three digits */
	memcpy(p, r->ts_pre, sizeof(r->ts_pre));
	p += r->ts_pre_len;
	memcpy(p, d3[ns3], 4);
	p[3] = ' ';
	p += 4;
	memcpy(p, th->label, sizeof(th->label));
	p += th->label_len;
	p = put_dur(p, dur, has_dur);
	uint32_t ind = 2 * (depth < 256 ? depth : 256);
	/* the first piece unconditionally: most lines are less deep */
	memcpy(p, spaces, 32);
	for (uint32_t k = 32; k < ind; k += 32)
		memcpy(p + k, spaces, 32);
	return p + ind;
}

/* text_cols for any line: renders what is out of date first. */
static char *text_prefix(struct rp *r, char *p, struct an_thread *th, int32_t cpu, uint64_t ts,
			 uint64_t dur, int has_dur, uint32_t depth)
{
	uint64_t ns = ts - r->t0, us = ns / 1000u;
	if (us != r->ts_us)
		ts_prefix(r, us);
	if (!th->label_len || cpu != th->label_cpu)
		label(th, cpu);
	return text_cols(r, p, th, ns - us * 1000u, dur, has_dur, depth);
}

/* The ends of id's call lines, rendered on first use; NULL on -ENOMEM. */
static __attribute__((noinline)) const struct ftail *ftail_make(struct rp *r, uint32_t id)
{
	if (id >= an_nfuncs(r->syms))
		return NULL;
	if (id >= r->nft) {
		size_t cap = r->nft;
		if (an_grow(&r->ft, &cap, (size_t)id + 1, sizeof(*r->ft), 64))
			return NULL;
		memset(r->ft + r->nft, 0, (cap - r->nft) * sizeof(*r->ft));
		r->nft = cap;
	}
	struct ftail *t = &r->ft[id];
	const char *name = an_func_name(r->syms, id);
	size_t n = an_func_name_len(r->syms, id);
	static const char *const pre[3] = {"", "} /* ", ""};
	static const char *const post[3] = {"() {\n", " */\n", "();\n"};
	for (int k = 0; k < 3; k++) {
		size_t a = strlen(pre[k]), b = strlen(post[k]), len = a + n + b;
		char *s = calloc(1, (len + 15) / 16 * 16);
		if (!s) {
			for (int j = 0; j < k; j++)
				free(t->s[j]);
			memset(t, 0, sizeof(*t));
			return NULL;
		}
		memcpy(s, pre[k], a);
		memcpy(s + a, name, n);
		memcpy(s + a + n, post[k], b);
		t->s[k] = s;
		t->len[k] = (uint32_t)len;
	}
	return t;
}

static inline const struct ftail *ftail(struct rp *r, uint32_t id)
{
	if (id < r->nft && r->ft[id].s[0])
		return &r->ft[id];
	return ftail_make(r, id);
}

/* A call line with nothing but the function's name (no arguments, return
 * value or flags): most lines of a replay, written from fixed-size pieces.
 * 0, or -1 when it must take the general way. */
static int text_call(struct rp *r, struct an_thread *th, const struct an_frame *f,
		     enum lkind kind, uint64_t ts, uint64_t dur, uint32_t depth)
{
	const struct ftail *t = ftail(r, f->func);
	if (!t)
		return -1;
	struct ofast *o = r->o;
	uint32_t n = t->len[kind];
	of_room(o, PREFIX_ROOM + n + 16);
	char *p = text_prefix(r, o->buf + o->len, th, th->cpu, ts, dur, kind != L_ENTRY, depth);
	const char *s = t->s[kind];
	for (uint32_t k = 0; k < n; k += 16)
		memcpy(p + k, s + k, 16);
	o->len = (size_t)(p + n - o->buf);
	r->nlines++;
	return 0;
}

/* text_call for the line of a return of r->plain_th (its label rendered)
 * when nothing has to be rendered or flushed first and the duration is
 * under 1 us: it calls nothing, so its caller saves no registers. 0, or -1
 * when text_call must do it. */
static inline __attribute__((always_inline)) int
text_call_ready(struct rp *r, const struct an_thread *th, const struct an_frame *f,
		enum lkind kind, uint64_t ts, uint64_t dur, uint32_t depth)
{
	uint32_t id = f->func;
	uint64_t ns3 = ts - r->ts_base; /* modulo 2^64, like ts - t0 */
	if (id >= r->nft || !r->ft[id].s[0] || ns3 >= 1000 || dur >= 1000 ||
	    th->cpu != th->label_cpu)
		return -1;
	const struct ftail *t = &r->ft[id];
	struct ofast *o = r->o;
	uint32_t n = t->len[kind];
	if (o->len + PREFIX_ROOM + n + 16 > sizeof(o->buf))
		return -1;
	char *p = text_cols(r, o->buf + o->len, th, ns3, dur, 1, depth);
	const char *s = t->s[kind];
	/* the first piece unconditionally: n is 3 or more */
	memcpy(p, s, 16);
	for (uint32_t k = 16; k < n; k += 16)
		memcpy(p + k, s + k, 16);
	o->len = (size_t)(p + n - o->buf);
	r->nlines++;
	return 0;
}

static void text_line(struct rp *r, const struct line *l)
{
	struct ofast *o = r->o;
	of_room(o, PREFIX_ROOM);
	char *p = text_prefix(r, o->buf + o->len, l->th, l->cpu, l->ts, l->dur, l->has_dur, l->depth);
	o->len = (size_t)(p - o->buf);
	switch (l->kind) {
	case L_ENTRY:
	case L_LEAF:
		of_mem(o, l->name, l->name_len);
		of_ch(o, '(');
		if (l->f && l->f->node) {
			const struct utext *u = &r->ut[l->f->node - 1];
			of_mem(o, u->s, u->len);
		}
		for (int i = 0; l->f && !l->f->node && i < l->f->nargs; i++) {
			if (i)
				of_str(o, ", ");
			num(o, l->f->args[i]);
		}
		if (l->kind == L_LEAF && l->has_ret) {
			/* strace's "open(...) = 3" */
			of_str(o, ") = ");
			if (l->ret_signed)
				of_i64(o, (int64_t)l->ret);
			else
				num(o, l->ret);
			of_ch(o, ';');
		} else {
			of_str(o, l->kind == L_ENTRY ? ") {" : ");");
		}
		if (r->dw && l->f) {
			const char *sl = an_dwarf_srcline(r->dw, l->th->pid, l->f->addr);
			if (sl) {
				of_str(o, " /* ");
				of_str(o, sl);
				of_str(o, " */");
			}
		}
		break;
	case L_EXIT:
		of_mem(o, "} /* ", 5);
		of_mem(o, l->name, l->name_len);
		of_mem(o, " */", 3);
		break;
	case L_ORPHAN:
		of_str(o, "} /* ");
		of_str(o, l->name);
		of_str(o, " */ [return without entry]");
		break;
	case L_SCHED_IN:
		of_str(o, "[sched_in] (duration: time off-CPU)");
		break;
	case L_EVENT:
		text_fields(o, l->ev);
		break;
	}
	if (l->kind == L_EXIT && l->has_ret) {
		of_str(o, " = ");
		if (l->ret_signed)
			of_i64(o, (int64_t)l->ret);
		else
			num(o, l->ret);
	}
	if (l->flags & AN_CALL_NORET)
		of_str(o, " [no return]");
	if (l->flags & AN_CALL_UNWOUND)
		of_str(o, " [unwound]");
	of_ch(o, '\n');
}

/* ---- JSON (an array of line objects) and CSV */

static void json_line(struct rp *r, const struct line *l)
{
	struct ofast *o = r->o;
	of_str(o, r->nlines ? ",\n{\"ts_ns\":" : "[\n{\"ts_ns\":");
	of_u64(o, l->ts);
	of_str(o, ",\"cpu\":");
	of_i64(o, l->cpu);
	of_str(o, ",\"tid\":");
	of_i64(o, l->tid);
	of_str(o, ",\"comm\":");
	if (l->comm)
		of_json_str(o, l->comm, strnlen(l->comm, 16));
	else
		of_str(o, "null");
	of_str(o, ",\"kind\":\"");
	of_str(o, lkind_name[l->kind]);
	of_str(o, "\",\"depth\":");
	of_u64(o, l->depth);
	if (l->has_dur) {
		of_str(o, ",\"dur_ns\":");
		of_u64(o, l->dur);
	}
	if (l->name) {
		of_str(o, ",\"func\":");
		of_json_str(o, l->name, strlen(l->name));
	}
	if (l->f && l->f->nargs && (l->kind == L_ENTRY || l->kind == L_LEAF)) {
		of_str(o, ",\"args\":[");
		for (int i = 0; i < l->f->nargs; i++) {
			if (i)
				of_ch(o, ',');
			of_u64(o, l->f->args[i]);
		}
		of_ch(o, ']');
	}
	if (l->f && l->f->node && (l->kind == L_ENTRY || l->kind == L_LEAF)) {
		of_str(o, ",\"args_text\":");
		of_json_str(o, r->ut[l->f->node - 1].s, r->ut[l->f->node - 1].len);
	}
	if (r->dw && l->f && (l->kind == L_ENTRY || l->kind == L_LEAF)) {
		const char *sl = an_dwarf_srcline(r->dw, l->th->pid, l->f->addr);
		if (sl) {
			of_str(o, ",\"srcline\":");
			of_json_str(o, sl, strlen(sl));
		}
	}
	if (l->has_ret) {
		of_str(o, ",\"ret\":");
		if (l->ret_signed)
			of_i64(o, (int64_t)l->ret);
		else
			of_u64(o, l->ret);
	}
	if (l->flags & AN_CALL_NORET)
		of_str(o, ",\"noret\":true");
	if (l->flags & AN_CALL_UNWOUND)
		of_str(o, ",\"unwound\":true");
	if (l->ev) {
		const struct tpp_type *t = l->ev->t;
		of_str(o, ",\"event\":");
		of_json_str(o, t && t->name ? t->name : "?", t && t->name ? strlen(t->name) : 1);
		of_str(o, ",\"fields\":{");
		for (int i = 0; t && i < l->ev->nvals && i < t->nfields; i++) {
			if (i)
				of_ch(o, ',');
			of_json_str(o, t->fields[i].name, strlen(t->fields[i].name));
			of_ch(o, ':');
			const union tpp_val *v = &l->ev->v[i];
			if (t->fields[i].type == TPP_F_U64)
				of_u64(o, v->u);
			else if (t->fields[i].type == TPP_F_S64)
				of_i64(o, v->i);
			else if (t->fields[i].type == TPP_F_STR && v->s.p)
				of_json_str(o, v->s.p, strnlen(v->s.p, v->s.len));
			else
				of_str(o, "null");
		}
		of_ch(o, '}');
	}
	of_ch(o, '}');
}

static void csv_line(struct rp *r, const struct line *l)
{
	struct ofast *o = r->o;
	if (!r->nlines)
		of_str(o, "ts_ns,cpu,tid,comm,kind,depth,dur_ns,name\n");
	of_u64(o, l->ts);
	of_ch(o, ',');
	of_i64(o, l->cpu);
	of_ch(o, ',');
	of_i64(o, l->tid);
	of_ch(o, ',');
	/* comm and names may hold commas: quote them */
	of_ch(o, '"');
	if (l->comm)
		of_text(o, l->comm, strnlen(l->comm, 16));
	of_str(o, "\",");
	of_str(o, lkind_name[l->kind]);
	of_ch(o, ',');
	of_u64(o, l->depth);
	of_ch(o, ',');
	if (l->has_dur)
		of_u64(o, l->dur);
	of_str(o, ",\"");
	if (l->name)
		of_str(o, l->name);
	else if (l->ev && l->ev->t && l->ev->t->name)
		of_str(o, l->ev->t->name);
	of_str(o, "\"\n");
}

/* ---- the flow */

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
		    !text_call(r, th, f, L_ENTRY, f->ts, 0, depth))
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
			label(th, th->cpu);
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

/* The arguments of a uprobe entry, named by their fields, strings quoted
 * the way strace shows them (cut at 64 bytes). */
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
	int n = 0, e = 0;
	for (int i = 0; t && i < ev->nvals && i < t->nfields; i++) {
		const char *fn = t->fields[i].name;
		if (!fn || i == ti->f[R_ADDR] || !strncmp(fn, "__probe", 7))
			continue;
		char b[48];
		int bl;
		e |= n++ ? ut_put(u, ", ", 2) : 0;
		e |= ut_put(u, fn, strlen(fn));
		e |= ut_put(u, "=", 1);
		const union tpp_val *v = &ev->v[i];
		switch (t->fields[i].type) {
		case TPP_F_STR: {
			size_t len = v->s.p ? strnlen(v->s.p, v->s.len) : 0;
			e |= ut_put(u, "\"", 1);
			for (size_t j = 0; j < len && j < 64; j++) {
				char c = v->s.p[j];
				if (c == '"' || c == '\\')
					e |= ut_put(u, "\\", 1);
				if ((unsigned char)c < 32 || c == 127)
					c = '?';
				e |= ut_put(u, &c, 1);
			}
			e |= ut_put(u, len > 64 ? "\"..." : "\"", len > 64 ? 4 : 1);
			break;
		}
		case TPP_F_S64:
			bl = snprintf(b, sizeof(b), "%" PRId64, v->i);
			e |= ut_put(u, b, (size_t)bl);
			break;
		case TPP_F_U64:
			bl = snprintf(b, sizeof(b), v->u < 100000 ? "%" PRIu64 : "0x%" PRIx64, v->u);
			e |= ut_put(u, b, (size_t)bl);
			break;
		default:
			e |= ut_put(u, "<bytes>", 7);
		}
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
	if (c->has_ret && ev) {
		const struct an_tinfo *ti = an_ti(r->ty, ev);
		l.ret_signed = ev->t && ti->f[R_RET] >= 0 &&
			       ev->t->fields[(int)ti->f[R_RET]].type == TPP_F_S64;
	}
	l.flags = c->flags;
	out(r, &l);
}

/* on_entry for uprobes (arguments, CPU) and --func (scope). */
static __attribute__((noinline)) void entry_scope(struct rp *r, struct an_thread *th,
						  const struct tpp_event *ev)
{
	struct an_frame *f = &th->st[th->depth - 1];
	if (ev->cpu >= 0) {
		/* only uprobes come from CPU streams */
		const struct an_tinfo *ti = an_ti(r->ty, ev);
		th->cpu = ev->cpu;
		if (ti->kind == AN_UENTRY && ut_keep(r, f, ev, ti))
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
	if (__builtin_expect(ev->cpu >= 0 || r->func, 0))
		entry_scope(r, th, ev);
	/* nearly always the caller's line is out already */
	uint32_t upto = th->depth - 1;
	if (upto && !th->st[upto - 1].user && !r->min_dur)
		entry_flush(r, th, upto);
}

static void on_entry(void *ctx, struct an_thread *th, const struct tpp_event *ev)
{
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
		      !text_call(r, th, f, kind, ts, c->dur, depth)))
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
	if (text_call(r, th, f, kind, ts, c->dur, th->depth - 1))
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
	if (text_call(r, th, f, kind, ts, dur, th->depth - 1))
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
	if (__builtin_expect(ev->cpu >= 0 || r->func ||
			     (upto && !th->st[upto - 1].user && !r->min_dur), 0))
		return entry_rest(r, th, ev);
	return 0;
}

/* The common entries and returns inline, with only tail calls so that they
 * save no registers: through an_pair's callbacks they cost a call each and
 * a struct an_call. */
static int feed(void *ctx, const struct tpp_event *ev)
{
	struct rp *r = ctx;
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
	d3_init();
	r.o = o;
	r.fmt = c.fmt;
	r.emit = c.fmt == TBL_JSON ? json_line : c.fmt == TBL_CSV ? csv_line : text_line;
	r.fast_text = c.fmt == TBL_TEXT && !r.want_srcline;
	r.t0 = c.t0;
	ts_prefix(&r, 0);
	r.plain = r.fast_text && !r.func && !r.max_depth && !r.min_dur;
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
	if (c.fmt == TBL_TEXT)
		of_str(o, "#      TIMESTAMP CPU TASK-TID                 DURATION | FUNCTION\n");
	struct an_run_stats st;
	if ((rc = acli_run(&c, feed, &r, &st))) {
		of_flush(o);
		goto out;
	}
	an_pair_finish(r.pair);
	if (c.fmt == TBL_JSON)
		of_str(o, r.nlines ? "\n]\n" : "[]\n");
	if (of_flush(o) < 0) {
		fprintf(stderr, "tracepp replay: writing output: %s\n", strerror(-o->err));
		rc = 1;
	}
	if (r.func && r.func_id == UINT32_MAX)
		fprintf(stderr, "tracepp replay: warning: no call of '%s' in %s\n", r.func, c.path);
	struct an_pair_stats ps;
	an_pair_stats(r.pair, &ps);
	acli_report_pairs(&c, &ps);
	acli_report_run(&c, &st);
out:
	tc_free();
	for (size_t i = 0; i < r.nft; i++)
		for (int k = 0; k < 3; k++)
			free(r.ft[i].s[k]);
	free(r.ft);
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
