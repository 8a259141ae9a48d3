/* tracepp replay's lines: text columns (timestamp, CPU, task, duration,
 * indent), JSON objects and CSV rows, formatted without printf. What makes
 * a line and when is cmd_replay.c's; the contract is in replay.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "color.h"
#include "esc.h"
#include "fieldfmt.h"
#include "replay.h"
#include "an_dwarf.h"
#include "an_syms.h"
#include "an_grow.h"
#include "an_pair.h"

static const char *const lkind_name[] = {"entry", "exit", "call", "event", "orphan", "sched_in", "lost"};

char rp_d3[1000][4], rp_dur_ns[1000][16];
/* rp_d3, space-padded */
static char d3s[1000][4];

static char *dur_col(char *p, uint64_t ns, int has);

/* In colour (color.h), a duration of 1 ms or more as uftrace colours it. */
char *rp_put_dur_col(char *p, uint64_t ns, int has)
{
	const char *c = has ? oc_dur(ns) : NULL;
	if (!c)
		return dur_col(p, ns, has);
	memcpy(p, c, 5);
	p = dur_col(p + 5, ns, has);
	memcpy(p, OC_RESET, 4);
	return p + 4;
}

static char *dur_col(char *p, uint64_t ns, int has)
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
		memcpy(q, rp_d3[frac], 3);
		*--q = '.';
	}
	while (whole >= 1000) { /* seconds only */
		q -= 3;
		memcpy(q, rp_d3[whole % 1000], 3);
		whole /= 1000;
	}
	/* the leading digits padded with spaces: the bytes before q are
	 * either spaces or not copied */
	memcpy(q - 3, d3s[whole], 3);
	q -= rp_d3[whole][3];
	size_t n = (size_t)(e - q);
	if (n < 11) {
		memcpy(p, e - 11, 11);
		return p + 11;
	}
	memcpy(p, q, n);
	return p + n;
}

void rp_text_init(void)
{
	for (int i = 0; i < 1000; i++) {
		rp_d3[i][0] = (char)('0' + i / 100);
		rp_d3[i][1] = (char)('0' + i / 10 % 10);
		rp_d3[i][2] = (char)('0' + i % 10);
		rp_d3[i][3] = (char)(i >= 100 ? 3 : i >= 10 ? 2 : 1);
		memcpy(d3s[i], rp_d3[i], 4);
		for (int k = 0; k < 3 - rp_d3[i][3]; k++)
			d3s[i][k] = ' ';
	}
	for (int i = 0; i < 1000; i++) {
		memset(rp_dur_ns[i], ' ', sizeof(rp_dur_ns[i]));
		memcpy(rp_put_dur_col(rp_dur_ns[i], (uint64_t)i, 1), " | ", 3);
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
	uint8_t ff[TPP_MAX_FIELDS]; /* enum ff_kind: how people read the value */
	const struct tpp_pfield *pf[TPP_MAX_FIELDS]; /* else the kernel's flag/symbol table */
	struct ff_call sc;          /* a sys_enter's fields (fieldfmt.h) */
};
static struct tcache *tcache[TPP_MAX_TYPES];

static struct tcache *tc_get(const struct tpp_type *t, const char *arch, const struct tpp_names *nm)
{
	if (!t || t->id >= TPP_MAX_TYPES)
		return NULL;
	struct tcache *c = tcache[t->id];
	if (c)
		return c;
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	/* names from the file, in their text form (esc.h) */
	char *name = t->name ? esc_text_dup(t->name, strlen(t->name)) : NULL;
	if (asprintf(&c->head, "[%s]", name ? name : "?") < 0) {
		free(name);
		free(c);
		return NULL;
	}
	free(name);
	c->head_len = strlen(c->head);
	ff_call_fields(&c->sc, arch, t);
	for (int i = 0; i < t->nfields && i < TPP_MAX_FIELDS; i++) {
		const char *fn = t->fields[i].name ? t->fields[i].name : "?";
		char *e = esc_text_dup(fn, strnlen(fn, 50));
		if (!e || asprintf(&c->pre[i], " %s=", e) < 0)
			c->pre[i] = NULL;
		free(e);
		c->pre_len[i] = c->pre[i] ? (uint8_t)strlen(c->pre[i]) : 0;
		int num = t->fields[i].type == TPP_F_U64 || t->fields[i].type == TPP_F_S64;
		c->ff[i] = num ? (uint8_t)ff_kind(arch, t->name, t->fields[i].name) : FF_NONE;
		c->pf[i] = num && !c->ff[i] ? tpp_names_pfield(nm, t->id, (unsigned)i) : NULL;
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

/* An event's fields as dump prints them: values read as people read them
 * (fieldfmt.h), numbers that have a name with both. */
static void text_fields(struct ofast *o, const struct tpp_event *ev, const char *arch, const struct tpp_names *nm)
{
	const struct tpp_type *t = ev->t;
	struct tcache *c = tc_get(t, arch, nm);
	if (c)
		of_mem(o, c->head, c->head_len);
	/* a system call as dump prints it: "id=0 read(fd=3, ...)" */
	char call[320];
	size_t cn = c ? ff_call_text(&c->sc, ev, call, sizeof(call)) : 0;
	for (int i = 0; t && i < ev->nvals && i < t->nfields; i++) {
		if (cn && i == c->sc.args) {
			of_ch(o, ' ');
			of_mem(o, call, cn);
			continue;
		}
		if (c && c->pre[i]) {
			of_mem(o, c->pre[i], c->pre_len[i]);
		} else {
			of_ch(o, ' ');
			of_text(o, t->fields[i].name, strlen(t->fields[i].name));
			of_ch(o, '=');
		}
		char rd[512];
		size_t rn = c && c->ff[i] && !(cn && i == c->sc.id) ? ff_text(rd, sizeof(rd), c->ff[i], ev->v[i].u) : 0;
		if (c && c->pf[i])
			rn = ff_pf_text(rd, sizeof(rd), c->pf[i], ev->v[i].u);
		if (rn && !ff_beside(c->ff[i])) {
			of_mem(o, rd, rn);
			continue;
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
		if (rn) {
			of_ch(o, '(');
			of_mem(o, rd, rn);
			of_ch(o, ')');
		}
	}
}

/* The wall-clock prefix "YYYY-MM-DDTHH:MM:SS.uuuuuu" of us since the epoch
 * (text_cols adds the ns digits), its ts_base left to the caller. */
static void ts_prefix_wall(struct rp *r, uint64_t us)
{
	char iso[40];
	wall_iso(iso, sizeof(iso), (int64_t)(us * 1000u));
	/* "....SS.nnnnnnnnnZ": keep through the microseconds */
	size_t n = strlen(iso);
	n = n > 4 ? n - 4 : 0;
	if (n > sizeof(r->ts_pre) - 1)
		n = sizeof(r->ts_pre) - 1;
	memcpy(r->ts_pre, iso, n);
	r->ts_pre_len = (uint32_t)n;
	r->ts_us = us;
}

void rp_ts_prefix(struct rp *r, uint64_t us)
{
	if (r->wall) {
		ts_prefix_wall(r, us);
		r->ts_base = 0;
		return;
	}
	char *p = r->ts_pre;
	uint64_t sec = us / 1000000u;
	uint32_t frac = (uint32_t)(us % 1000000u);
	if (sec < 1000) {
		int k = rp_d3[sec][3];
		memcpy(p, rp_d3[sec] + 3 - k, (size_t)k);
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
	memcpy(p + 1, rp_d3[frac / 1000u], 3);
	memcpy(p + 4, rp_d3[frac % 1000u], 3);
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
void rp_label(struct an_thread *th, int32_t cpu)
{
	if (!th->label_len) {
		/* "comm-tid", the name in its text form (esc.h), cut to what fits */
		char tid[16];
		size_t tl = (size_t)snprintf(tid, sizeof(tid), "-%d", th->tid), used;
		const char *comm = th->comm ? th->comm : "";
		size_t n = esc_text(th->label + 4, sizeof(th->label) - 4 - tl, comm, strnlen(comm, 16), &used);
		memcpy(th->label + 4 + n, tid, tl);
		n += tl;
		while (n < 22)
			th->label[4 + n++] = ' ';
		th->label_len = (uint32_t)n + 4;
	}
	label_cpu(th, cpu);
}

/* text_cols for any line: renders what is out of date first. */
static char *text_prefix(struct rp *r, char *p, struct an_thread *th, int32_t cpu, uint64_t ts,
			 uint64_t dur, int has_dur, uint32_t depth)
{
	uint64_t ns = ts - r->t0, us = ns / 1000u;
	if (r->wall) {
		/* ns since the epoch; ts_base the event time where its us begins,
		 * so the fast path's ts - ts_base is the ns digit (the offset's
		 * drift within a microsecond is far below a ns) */
		int64_t w = tpp_clock_wall(r->wall, ts, NULL);
		ns = (uint64_t)(w < 0 ? 0 : w);
		us = ns / 1000u;
		if (us != r->ts_us)
			ts_prefix_wall(r, us);
		r->ts_base = ts - (ns - us * 1000u);
	} else if (us != r->ts_us)
		rp_ts_prefix(r, us);
	if (!th->label_len || cpu != th->label_cpu)
		rp_label(th, cpu);
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
	/* the name in its text form (esc.h): it comes from the file */
	char *name = esc_text_dup(an_func_name(r->syms, id), an_func_name_len(r->syms, id));
	if (!name)
		return NULL;
	size_t n = strlen(name);
	static const char *const pre[3] = {"", "} /* ", ""};
	static const char *const post[3] = {"() {\n", " */\n", "();\n"};
	for (int k = 0; k < 3; k++) {
		size_t a = strlen(pre[k]), b = strlen(post[k]), len = a + n + b;
		char *s = calloc(1, (len + 15) / 16 * 16);
		if (!s) {
			for (int j = 0; j < k; j++)
				free(t->s[j]);
			memset(t, 0, sizeof(*t));
			free(name);
			return NULL;
		}
		memcpy(s, pre[k], a);
		memcpy(s + a, name, n);
		memcpy(s + a + n, post[k], b);
		t->s[k] = s;
		t->len[k] = (uint32_t)len;
	}
	free(name);
	return t;
}

static inline const struct ftail *ftail(struct rp *r, uint32_t id)
{
	if (id < r->nft && r->ft[id].s[0])
		return &r->ft[id];
	return ftail_make(r, id);
}

int rp_text_call(struct rp *r, struct an_thread *th, const struct an_frame *f,
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

/* A line's return value, signed when its field is. */
static void text_ret(struct ofast *o, const struct line *l)
{
	if (l->ret_text)
		of_text(o, l->ret_text, l->ret_text_len);
	else if (l->ret_signed)
		of_i64(o, (int64_t)l->ret);
	else
		num(o, l->ret);
}

void rp_text_line(struct rp *r, const struct line *l)
{
	struct ofast *o = r->o;
	of_room(o, PREFIX_ROOM);
	char *p = text_prefix(r, o->buf + o->len, l->th, l->cpu, l->ts, l->dur, l->has_dur, l->depth);
	o->len = (size_t)(p - o->buf);
	switch (l->kind) {
	case L_ENTRY:
	case L_LEAF:
		of_text(o, l->name, l->name_len);
		of_ch(o, '(');
		if (l->f && l->f->node) {
			const struct utext *u = &r->ut[l->f->node - 1];
			of_text(o, u->s, u->len);
		}
		for (int i = 0; l->f && !l->f->node && i < l->f->nargs; i++) {
			if (i)
				of_str(o, ", ");
			num(o, l->f->args[i]);
		}
		if (l->kind == L_LEAF && l->has_ret) {
			/* strace's "open(...) = 3" */
			of_str(o, ") = ");
			text_ret(o, l);
			of_ch(o, ';');
		} else {
			of_str(o, l->kind == L_ENTRY ? ") {" : ");");
		}
		if (r->dw && l->f) {
			const char *sl = an_dwarf_srcline(r->dw, l->th->pid, l->f->addr);
			if (sl) {
				of_str(o, " /* ");
				of_text(o, sl, strlen(sl));
				of_str(o, " */");
			}
		}
		break;
	case L_EXIT:
		of_mem(o, "} /* ", 5);
		of_text(o, l->name, l->name_len);
		of_mem(o, " */", 3);
		break;
	case L_ORPHAN:
		of_str(o, "} /* ");
		of_text(o, l->name, strlen(l->name));
		of_str(o, " */ [return without entry]");
		break;
	case L_SCHED_IN:
		of_str(o, "[sched_in] (duration: time off-CPU)");
		break;
	case L_EVENT:
		text_fields(o, l->ev, tpp_r_info(r->c->r)->arch, r->c->names);
		break;
	case L_LOST:
		/* uftrace's "LOST n records!!", with the CPU it was lost on */
		of_str(o, "/* LOST ");
		of_u64(o, l->lost);
		of_str(o, " events");
		if (l->cpu >= 0) {
			of_str(o, " of cpu ");
			of_i64(o, l->cpu);
		}
		of_str(o, " */");
		break;
	}
	if (l->kind == L_EXIT && l->has_ret) {
		of_str(o, " = ");
		text_ret(o, l);
	}
	if (l->flags & AN_CALL_NORET)
		of_str(o, " [no return]");
	if (l->flags & AN_CALL_EXCEPTION)
		of_str(o, " [exception]");
	else if (l->flags & AN_CALL_SUSPENDED)
		of_str(o, " [suspended]");
	else if (l->flags & AN_CALL_UNWOUND)
		of_str(o, " [unwound]");
	if (l->flags & AN_CALL_TAIL)
		of_str(o, " [tail]");
	of_ch(o, '\n');
}

/* ---- JSON (an array of line objects) and CSV */

int rp_json_marks(struct ofast *o, uint32_t flags, int first)
{
	static const struct {
		uint32_t bit;
		const char *json;
	} marks[] = {{AN_CALL_NORET, ",\"noret\":true"},         {AN_CALL_UNWOUND, ",\"unwound\":true"},
		     {AN_CALL_EXCEPTION, ",\"exception\":true"}, {AN_CALL_SUSPENDED, ",\"suspended\":true"},
		     {AN_CALL_TAIL, ",\"tail\":true"},           {AN_CALL_RESUMED, ",\"resumed\":true"}};
	int n = 0;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (flags & marks[i].bit) {
			of_str(o, marks[i].json + (first && !n));
			n++;
		}
	return n;
}

/* rp_json_line's frame part: arguments (raw, as text), source line, return value. */
static void json_call(struct rp *r, const struct line *l)
{
	struct ofast *o = r->o;
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
		if (l->ret_text) {
			of_str(o, ",\"ret_text\":");
			of_json_str(o, l->ret_text, l->ret_text_len);
		}
	}
}

/* rp_json_line's kernel event: its name and fields; beside a number that
 * people read as a name (a task state, a flag set, a system call), that
 * reading as FIELD_str, as dump's JSON has it. */
static void json_event(struct ofast *o, const struct tpp_event *ev, const char *arch, const struct tpp_names *nm)
{
	const struct tpp_type *t = ev->t;
	struct tcache *c = tc_get(t, arch, nm);
	of_str(o, ",\"event\":");
	of_json_str(o, t && t->name ? t->name : "?", t && t->name ? strlen(t->name) : 1);
	of_str(o, ",\"fields\":{");
	for (int i = 0; t && i < ev->nvals && i < t->nfields; i++) {
		if (i)
			of_ch(o, ',');
		const char *fn = t->fields[i].name;
		of_json_str(o, fn, strlen(fn));
		of_ch(o, ':');
		const union tpp_val *v = &ev->v[i];
		if (t->fields[i].type == TPP_F_U64)
			of_u64(o, v->u);
		else if (t->fields[i].type == TPP_F_S64)
			of_i64(o, v->i);
		else if (t->fields[i].type == TPP_F_STR && v->s.p)
			of_json_str(o, v->s.p, strnlen(v->s.p, v->s.len));
		else
			of_str(o, "null");
		char rd[512];
		size_t rn = 0;
		if (c && i == c->sc.args)
			rn = ff_call_text(&c->sc, ev, rd, sizeof(rd));
		else if (c && c->ff[i])
			rn = ff_text(rd, sizeof(rd), c->ff[i], v->u);
		else if (c && c->pf[i])
			rn = ff_pf_text(rd, sizeof(rd), c->pf[i], v->u);
		if (rn) {
			/* the key: the field's name and "_str", escaped as one string */
			char key[TPP_NAME_MAX + 8];
			size_t kl = strnlen(fn, TPP_NAME_MAX);
			memcpy(key, fn, kl);
			memcpy(key + kl, "_str", 4);
			of_ch(o, ',');
			of_json_str(o, key, kl + 4);
			of_ch(o, ':');
			of_json_str(o, rd, rn);
		}
	}
	of_ch(o, '}');
}

/* The line's process: its thread's, else the file's names; -1 unknown. */
static int32_t line_pid(const struct rp *r, const struct line *l)
{
	if (l->th && l->th->pid > 0)
		return l->th->pid;
	int32_t p = l->tid > 0 ? tpp_names_pid(r->c->names, l->tid) : -1;
	return p > 0 ? p : -1;
}

void rp_json_line(struct rp *r, const struct line *l)
{
	struct ofast *o = r->o;
	of_str(o, r->nlines ? ",\n{\"ts_ns\":" : "[\n{\"ts_ns\":");
	of_u64(o, l->ts);
	if (r->wall) {
		of_str(o, ",\"wall_ns\":");
		of_i64(o, tpp_clock_wall(r->wall, l->ts, NULL));
	}
	of_str(o, ",\"cpu\":");
	of_i64(o, l->cpu);
	of_str(o, ",\"tid\":");
	of_i64(o, l->tid);
	int32_t pid = line_pid(r, l);
	of_str(o, ",\"pid\":");
	if (pid > 0)
		of_i64(o, pid);
	else
		of_str(o, "null");
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
	if (l->kind == L_LOST) {
		of_str(o, ",\"lost\":");
		of_u64(o, l->lost);
	}
	if (l->name) {
		of_str(o, ",\"func\":");
		of_json_str(o, l->name, strlen(l->name));
	}
	json_call(r, l);
	rp_json_marks(o, l->flags, 0);
	if (l->ev)
		json_event(o, l->ev, tpp_r_info(r->c->r)->arch, r->c->names);
	of_ch(o, '}');
}

void rp_csv_line(struct rp *r, const struct line *l)
{
	struct ofast *o = r->o;
	if (!r->nlines)
		/* JSON's keys: a call's "func", a kernel event's "event", a
		 * loss's "lost" (one "name" column held all three) */
		of_str(o, r->wall ? "ts_ns,cpu,tid,pid,comm,kind,depth,dur_ns,func,event,lost,wall_ns\n"
				  : "ts_ns,cpu,tid,pid,comm,kind,depth,dur_ns,func,event,lost\n");
	of_u64(o, l->ts);
	of_ch(o, ',');
	of_i64(o, l->cpu);
	of_ch(o, ',');
	of_i64(o, l->tid);
	of_ch(o, ',');
	int32_t pid = line_pid(r, l);
	if (pid > 0)
		of_i64(o, pid);
	of_ch(o, ',');
	/* comm and names may hold anything: the one CSV quoter (esc.h) */
	if (l->comm)
		of_csv(o, l->comm, strnlen(l->comm, 16));
	of_ch(o, ',');
	of_str(o, lkind_name[l->kind]);
	of_ch(o, ',');
	of_u64(o, l->depth);
	of_ch(o, ',');
	if (l->has_dur)
		of_u64(o, l->dur);
	of_ch(o, ',');
	if (l->name && l->kind != L_LOST)
		of_csv(o, l->name, strlen(l->name));
	of_ch(o, ',');
	if (l->ev && l->ev->t && l->ev->t->name)
		of_csv(o, l->ev->t->name, strlen(l->ev->t->name));
	of_ch(o, ',');
	if (l->kind == L_LOST)
		of_u64(o, l->lost);
	if (r->wall) {
		of_ch(o, ',');
		of_i64(o, tpp_clock_wall(r->wall, l->ts, NULL));
	}
	of_ch(o, '\n');
}

void rp_text_free(struct rp *r)
{
	tc_free();
	for (size_t i = 0; i < r->nft; i++)
		for (int k = 0; k < 3; k++)
			free(r->ft[i].s[k]);
	free(r->ft);
}
