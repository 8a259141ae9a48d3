/* sc_code — each site's predicate and body compiled to register bytecode,
 * with the types checked on the way. A field is read from its column slot,
 * which depends on the event type: a probe on several types is compiled
 * once per type. Every site is compiled twice: a first pass learns what
 * the maps and self-> variables hold and which fields each type needs (a
 * map may be read in a probe written before the one that assigns it), the
 * second reports errors and keeps the code. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc_int.h"

#define MAX_VARS 64
#define MAX_LOOPS 16

struct loop {
	uint32_t brk[64], cont[64];
	int nbrk, ncont;
};
struct cg {
	struct sc_prog *P;
	struct sc_site *s;
	struct sc_code *c;
	struct {
		const char *name;
		uint32_t len;
		struct sc_type ty;
		int set;
	} var[MAX_VARS];
	int nvars, top, filter;
	int missing, leaves; /* filters: a field the type lacks; comparisons it has */
	struct loop loops[MAX_LOOPS];
	int nloops;
	int bad; /* this site's code failed (an error, or a filter field the type lacks) */
};

static const struct sc_type T_NONE = {TY_NONE, 0, 0}, T_U64 = {TY_INT, 0, 0}, T_S64 = {TY_INT, 1, 0},
			    T_STR = {TY_STR, 0, 0};

static int err(struct cg *g, struct sc_pos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int err(struct cg *g, struct sc_pos pos, const char *fmt, ...)
{
	g->bad = 1;
	if (g->P->infer || g->P->failed)
		return -1;
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* a filter's error on one type only keeps that type from matching:
	 * it is reported when no type can */
	if (g->filter)
		sc_errat(g->P->err, sizeof(g->P->err), pos, "%s", msg);
	else
		sc_fail(g->P, pos, "%s", msg);
	return -1;
}

static uint32_t emit(struct cg *g, int op, int a, int b, int c, uint32_t x)
{
	struct sc_code *k = g->c;
	if (k->n == k->cap) {
		uint32_t nc = k->cap ? k->cap * 2 : 64;
		struct sc_ins *ni = realloc(k->ins, nc * sizeof(*ni));
		if (!ni) {
			g->bad = 1;
			g->P->failed = 1;
			snprintf(g->P->err, sizeof(g->P->err), "out of memory");
			return 0;
		}
		k->ins = ni;
		k->cap = nc;
	}
	k->ins[k->n] = (struct sc_ins){(uint8_t)op, (uint8_t)a, (uint8_t)b, (uint8_t)c, x};
	return k->n++;
}

static int tmp(struct cg *g, struct sc_pos pos)
{
	if (g->top >= SC_MAX_REGS) {
		err(g, pos, "expression too deep (%d registers)", SC_MAX_REGS);
		return 0;
	}
	int r = g->top++;
	if (g->top > g->c->nregs)
		g->c->nregs = (uint16_t)g->top;
	return r;
}

static void imm(struct cg *g, int dst, int64_t v)
{
	if (v >= INT32_MIN && v <= INT32_MAX)
		emit(g, OP_IMM, dst, 0, 0, (uint32_t)(int32_t)v);
	else
		emit(g, OP_CONST, dst, 0, 0, (uint32_t)sc_pool_add(g->P, (uint64_t)v));
}

static uint64_t str_const(struct cg *g, const char *s, size_t n)
{
	const struct sc_str *x = sc_pstr(g->P, s, n);
	return x ? sc_sv(x) : 0;
}

static int same_type(struct sc_type a, struct sc_type b) { return a.t == b.t && (a.t != TY_TS || a.aux == b.aux); }
static const char *tname(struct sc_type t)
{
	return t.t == TY_INT ? "an integer" : t.t == TY_STR ? "a string" : t.t == TY_TS ? "a timestamp" : "nothing";
}

/* ------------------------------------------------------------ maps */

static int map_index(struct cg *g, const struct sc_node *n)
{
	struct sc_prog *P = g->P;
	for (uint32_t i = 0; i < P->nmaps; i++)
		if (strlen(P->maps[i].name) == n->nlen && !memcmp(P->maps[i].name, n->name, n->nlen))
			return (int)i;
	if (P->nmaps == P->mcap) {
		uint32_t nc = P->mcap ? P->mcap * 2 : 16;
		struct sc_mapdef *nm = realloc(P->maps, nc * sizeof(*nm));
		if (!nm)
			return -1;
		P->maps = nm;
		P->mcap = nc;
	}
	struct sc_mapdef *d = &P->maps[P->nmaps];
	memset(d, 0, sizeof(*d));
	if (!(d->name = sc_strndup(&P->arena, n->name, n->nlen)))
		return -1;
	d->keyed = n->keyed;
	d->nkeys = (uint8_t)n->nkids;
	d->at = n->pos;
	return (int)P->nmaps++;
}

static const char *kind_name(int k)
{
	static const char *const names[] = {"nothing", "integers", "strings", "timestamps", "count()", "sum()",
					    "avg()", "min()", "max()", "stats()", "hist()", "lhist()"};
	return k >= 0 && k <= MK_LHIST ? names[k] : "?";
}

/* The map n names, its keys' types checked against what it had. */
static struct sc_mapdef *map_use(struct cg *g, const struct sc_node *n, const struct sc_type *keys)
{
	int i = map_index(g, n);
	if (i < 0) {
		err(g, n->pos, "out of memory");
		return NULL;
	}
	struct sc_mapdef *d = &g->P->maps[i];
	if (d->keyed != n->keyed || (d->keyed && d->nkeys != n->nkids)) {
		err(g, n->pos, "%s is used with %u key%s at %u:%u, here with %u", d->name, d->keyed ? d->nkeys : 0,
		    d->nkeys == 1 ? "" : "s", d->at.line, d->at.col, n->keyed ? n->nkids : 0);
		return NULL;
	}
	for (uint32_t k = 0; k < n->nkids; k++) {
		if (d->keys[k].t == TY_NONE) {
			d->keys[k] = keys[k];
		} else if (keys[k].t != TY_NONE && !same_type(d->keys[k], keys[k])) {
			err(g, n->kids[k]->pos, "key %u of %s is %s elsewhere, here %s", k + 1, d->name, tname(d->keys[k]),
			    tname(keys[k]));
			return NULL;
		}
	}
	return d;
}

static int map_kind(struct cg *g, struct sc_mapdef *d, int kind, struct sc_type vty, struct sc_pos pos)
{
	if (d->kind == MK_NONE) {
		d->kind = (uint8_t)kind;
		d->vty = vty;
		d->vsign = vty.sign;
		d->at = pos;
		return 0;
	}
	if (d->kind != kind || ((kind == MK_INT || kind == MK_STR || kind == MK_TS) && !same_type(d->vty, vty))) {
		return err(g, pos, "%s holds %s (from %u:%u), not %s", d->name,
			   d->kind == MK_INT || d->kind == MK_STR || d->kind == MK_TS ? tname(d->vty) : kind_name(d->kind),
			   d->at.line, d->at.col,
			   kind == MK_INT || kind == MK_STR || kind == MK_TS ? tname(vty) : kind_name(kind));
	}
	return 0;
}

static struct sc_type gen(struct cg *g, struct sc_node *n, int dst);

/* Evaluates a map's keys into consecutive registers: the first, or 0
 * when there are none. */
static int gen_keys(struct cg *g, struct sc_node *n, struct sc_type *kt)
{
	if (!n->nkids)
		return 0;
	int base = g->top;
	for (uint32_t k = 0; k < n->nkids; k++)
		tmp(g, n->pos);
	for (uint32_t k = 0; k < n->nkids; k++) {
		kt[k] = gen(g, n->kids[k], base + (int)k);
		if (kt[k].t == TY_NONE)
			return -1;
	}
	return base;
}

/* ------------------------------------------------------- variables */

static int var_find(struct cg *g, const struct sc_node *n)
{
	for (int i = 0; i < g->nvars; i++)
		if (g->var[i].len == n->nlen && !memcmp(g->var[i].name, n->name, n->nlen))
			return i;
	return -1;
}

static int self_index(struct cg *g, const struct sc_node *n, int create)
{
	struct sc_prog *P = g->P;
	for (uint32_t i = 0; i < P->nselfs; i++)
		if (strlen(P->selfs[i].name) == n->nlen && !memcmp(P->selfs[i].name, n->name, n->nlen))
			return (int)i;
	if (!create)
		return -1;
	if (P->nselfs == P->selfcap) {
		uint32_t nc = P->selfcap ? P->selfcap * 2 : 16;
		void *ns = realloc(P->selfs, nc * sizeof(*P->selfs));
		if (!ns)
			return -1;
		P->selfs = ns;
		P->selfcap = nc;
	}
	P->selfs[P->nselfs].name = sc_strndup(&P->arena, n->name, n->nlen);
	P->selfs[P->nselfs].ty = T_NONE;
	P->selfs[P->nselfs].at = n->pos;
	return (int)P->nselfs++;
}

/* -------------------------------------------------------- fields */

static const char *site_desc(const struct cg *g) { return g->s->probe ? g->s->probe : "this probe"; }

/* A field of the site's event type: its value in dst. */
static struct sc_type field(struct cg *g, int f, int dst)
{
	struct sc_tinfo *ti = &g->P->ti[g->s->type];
	const struct tpp_field_def *fd = &g->s->t->fields[f];
	ti->want |= 1u << f;
	if (fd->type == TPP_F_BYTES)
		ti->rows_only = 1;
	emit(g, OP_FIELD, dst, g->P->infer ? 0 : ti->slot[f], 0, 0);
	return fd->type == TPP_F_U64 ? T_U64 : fd->type == TPP_F_S64 ? T_S64 : T_STR;
}

static int find_field(const struct tpp_type *t, const char *name, uint32_t len)
{
	for (int i = 0; t && i < t->nfields && i < TPP_MAX_FIELDS; i++)
		if (t->fields[i].name && strlen(t->fields[i].name) == len && !memcmp(t->fields[i].name, name, len))
			return i;
	return -1;
}

static struct sc_type gen_builtin_named(struct cg *g, struct sc_node *n, int id, int dst);

/* A filter's name for what every event has, as the kernel names it: the
 * builtin, or -1. */
static int common_field(const struct sc_node *n)
{
	static const struct {
		const char *name;
		int id;
	} common[] = {{"common_pid", B_TID}, {"pid", B_TID}, {"tid", B_TID}, {"comm", B_COMM}, {"COMM", B_COMM},
		      {"cpu", B_CPU}, {"CPU", B_CPU}, {"common_cpu", B_CPU}};
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		if (strlen(common[i].name) == n->nlen && !memcmp(common[i].name, n->name, n->nlen))
			return common[i].id;
	return -1;
}

static struct sc_type gen_field(struct cg *g, struct sc_node *n, int dst)
{
	struct sc_site *s = g->s;
	if (!s->t) {
		err(g, n->pos, "args->%.*s: %s has no event fields", (int)n->nlen, n->name, site_desc(g));
		return T_NONE;
	}
	int f = find_field(s->t, n->name, n->nlen);
	if (f >= 0)
		return field(g, f, dst);
	if (n->filter) {
		int id = common_field(n);
		if (id >= 0)
			return gen_builtin_named(g, n, id, dst);
		/* the comparison is unknown for this type (sc_code's gen_flogic) */
		g->missing = 1;
		return T_NONE;
	}
	if (n->nlen == 10 && !memcmp(n->name, "common_pid", 10))
		return gen_builtin_named(g, n, B_TID, dst);
	char have[300];
	size_t k = 0;
	have[0] = 0;
	for (int i = 0; i < s->t->nfields && k + 40 < sizeof(have); i++)
		k += (size_t)snprintf(have + k, sizeof(have) - k, "%s%s", i ? ", " : "", s->t->fields[i].name);
	err(g, n->pos, "%s has no field '%.*s' (it has: %s)", site_desc(g), (int)n->nlen, n->name,
	    s->t->nfields ? have : "none");
	return T_NONE;
}

/* ------------------------------------------------------ builtins */

static struct sc_type gen_builtin_named(struct cg *g, struct sc_node *n, int id, int dst)
{
	struct sc_site *s = g->s;
	switch (id) {
	case B_NSECS: emit(g, OP_TS, dst, 0, 0, 0); return T_U64;
	case B_ELAPSED: emit(g, OP_ELAPSED, dst, 0, 0, 0); return T_U64;
	case B_CPU: emit(g, OP_CPU, dst, 0, 0, 0); return T_U64;
	case B_PID: emit(g, OP_PID, dst, 0, 0, 0); return T_U64;
	case B_TID: emit(g, OP_TID, dst, 0, 0, 0); return T_U64;
	case B_COMM: g->P->uses_comm = 1; emit(g, OP_COMM, dst, 0, 0, 0); return T_STR;
	case B_PROBE: emit(g, OP_PROBE, dst, 0, 0, 0); return T_STR;
	case B_FUNC:
		if (s->kind != SK_UPROBE && s->kind != SK_URETPROBE) {
			err(g, n->pos, "func: %s is not a function's probe", site_desc(g));
			return T_NONE;
		}
		emit(g, OP_FUNC, dst, 0, 0, 0);
		return T_STR;
	case B_RETVAL:
		if (s->kind != SK_URETPROBE) {
			err(g, n->pos, "retval: only a uretprobe has a return value, not %s", site_desc(g));
			return T_NONE;
		}
		if (s->ret_f < 0) {
			err(g, n->pos, "retval: %s did not record %s's return values (%s:%s)", g->P->src_name,
			    s->fn ? s->fn : "the function", s->t ? s->t->system : "", s->t ? s->t->name : "");
			return T_NONE;
		}
		return field(g, s->ret_f, dst);
	default:
		err(g, n->pos, "%.*s is not in a recording: bpftrace reads it from the live system", (int)n->nlen, n->name);
		return T_NONE;
	}
}

static struct sc_type gen_arg(struct cg *g, struct sc_node *n, int dst)
{
	struct sc_site *s = g->s;
	if (s->kind != SK_UPROBE) {
		err(g, n->pos, "arg%lld: %s", (long long)n->ival,
		    s->kind == SK_URETPROBE ? "a return has no arguments (save them at the uprobe, @arg[tid] = arg0)"
		    : s->kind == SK_TP      ? "tracepoints name their fields: args->NAME"
					    : "only a uprobe has arguments");
		return T_NONE;
	}
	if (n->ival >= s->narg) {
		err(g, n->pos, "arg%lld: %s recorded %d argument%s of %s (record more with tracerec -A %s:...)",
		    (long long)n->ival, g->P->src_name, s->narg, s->narg == 1 ? "" : "s", s->fn, s->fn);
		return T_NONE;
	}
	return field(g, s->arg_f[n->ival], dst);
}

/* ------------------------------------------------------ operators */

static int arith_op(int op, int sign)
{
	switch (op) {
	case '+': return OP_ADD;
	case '-': return OP_SUB;
	case '*': return OP_MUL;
	case '/': return sign ? OP_DIVS : OP_DIVU;
	case '%': return sign ? OP_MODS : OP_MODU;
	case '&': return OP_AND;
	case '|': return OP_OR;
	case '^': return OP_XOR;
	case P_SHL: return OP_SHL;
	case P_SHR: return sign ? OP_SHRS : OP_SHRU;
	}
	return -1;
}

static void gen_bool(struct cg *g, int r)
{
	emit(g, OP_LNOT, r, r, 0, 0);
	emit(g, OP_LNOT, r, r, 0, 0);
}

static struct sc_type gen_bin(struct cg *g, struct sc_node *n, int dst)
{
	int op = n->op;
	if (op == P_AND || op == P_OR) {
		struct sc_type a = gen(g, n->a, dst);
		if (a.t != TY_INT) {
			if (a.t != TY_NONE)
				err(g, n->a->pos, "%s needs integers", op == P_AND ? "&&" : "||");
			return T_NONE;
		}
		uint32_t j = emit(g, op == P_AND ? OP_JZ : OP_JNZ, dst, 0, 0, 0);
		struct sc_type b = gen(g, n->b, dst);
		if (b.t != TY_INT) {
			if (b.t != TY_NONE)
				err(g, n->b->pos, "%s needs integers", op == P_AND ? "&&" : "||");
			return T_NONE;
		}
		gen_bool(g, dst);
		uint32_t end = emit(g, OP_JMP, 0, 0, 0, 0);
		g->c->ins[j].x = g->c->n;
		imm(g, dst, op == P_OR);
		g->c->ins[end].x = g->c->n;
		return T_S64;
	}
	if (op == 'G') { /* filter: text ~ "glob" */
		struct sc_type a = gen(g, n->a, dst);
		if (a.t == TY_NONE)
			return T_NONE;
		if (a.t != TY_STR || n->b->kind != E_STR) {
			err(g, n->pos, "~ matches a text field against a \"glob\"");
			return T_NONE;
		}
		char pat[512];
		snprintf(pat, sizeof(pat), "%.*s", (int)n->b->nlen, n->b->name);
		emit(g, OP_GLOB, dst, dst, 0, (uint32_t)sc_pool_add(g->P, str_const(g, pat, strlen(pat))));
		return T_S64;
	}
	int save = g->top, r = tmp(g, n->pos);
	struct sc_type a = gen(g, n->a, dst), b = gen(g, n->b, r);
	g->top = save;
	if (a.t == TY_NONE || b.t == TY_NONE)
		return T_NONE;
	if (a.t == TY_STR || b.t == TY_STR || a.t == TY_TS || b.t == TY_TS) {
		if ((op != P_EQ && op != P_NE) || a.t != b.t) {
			err(g, n->pos, "%s and %s cannot be compared or combined this way (strings: == and != only)", tname(a),
			    tname(b));
			return T_NONE;
		}
		emit(g, op == P_EQ ? OP_EQ : OP_NE, dst, dst, r, 0);
		return T_S64;
	}
	int sign = a.sign && b.sign;
	switch (op) {
	case P_EQ: emit(g, OP_EQ, dst, dst, r, 0); return T_S64;
	case P_NE: emit(g, OP_NE, dst, dst, r, 0); return T_S64;
	case '<': emit(g, sign ? OP_LTS : OP_LTU, dst, dst, r, 0); return T_S64;
	case P_LE: emit(g, sign ? OP_LES : OP_LEU, dst, dst, r, 0); return T_S64;
	case '>': emit(g, sign ? OP_LTS : OP_LTU, dst, r, dst, 0); return T_S64;
	case P_GE: emit(g, sign ? OP_LES : OP_LEU, dst, r, dst, 0); return T_S64;
	}
	int o = arith_op(op, sign);
	if (o < 0) {
		err(g, n->pos, "unknown operator");
		return T_NONE;
	}
	emit(g, o, dst, dst, r, 0);
	/* a shift keeps its left side's type; the rest C's rule */
	return (op == P_SHL || op == P_SHR) ? a : sign ? T_S64 : T_U64;
}

/* ------------------------------------------------------ functions */

static int name_is(const struct sc_node *n, const char *s) { return strlen(s) == n->nlen && !memcmp(s, n->name, n->nlen); }

static int is_agg(const struct sc_node *n)
{
	static const char *const aggs[] = {"count", "sum", "avg", "min", "max", "stats", "hist", "lhist"};
	if (n->kind != E_CALL)
		return 0;
	for (size_t i = 0; i < sizeof(aggs) / sizeof(aggs[0]); i++)
		if (name_is(n, aggs[i]))
			return (int)i + 1;
	return 0;
}

static int const_int(struct cg *g, struct sc_node *n, int64_t *v, const char *what)
{
	if (n->kind == E_INT) {
		*v = n->ival;
		return 0;
	}
	if (n->kind == E_UN && n->op == '-' && n->a->kind == E_INT) {
		*v = -n->a->ival;
		return 0;
	}
	return err(g, n->pos, "%s must be an integer literal", what);
}

static int nargs(struct cg *g, struct sc_node *n, uint32_t lo, uint32_t hi)
{
	if (n->nkids < lo || n->nkids > hi) {
		if (lo == hi)
			return err(g, n->pos, "%.*s() takes %u argument%s", (int)n->nlen, n->name, lo, lo == 1 ? "" : "s");
		return err(g, n->pos, "%.*s() takes %u to %u arguments", (int)n->nlen, n->name, lo, hi);
	}
	return 0;
}

static struct sc_type gen_call(struct cg *g, struct sc_node *n, int dst)
{
	if (name_is(n, "str")) {
		if (nargs(g, n, 1, 2))
			return T_NONE;
		struct sc_type t = gen(g, n->kids[0], dst);
		if (t.t == TY_INT) {
			err(g, n->pos, "str(): the value is an address; reading memory needs the live process (record the text with tracerec -A FUNC:ARG, a char * parameter)");
			return T_NONE;
		}
		if (t.t != TY_STR)
			return T_NONE;
		int64_t len = 64;
		if (n->nkids == 2 && const_int(g, n->kids[1], &len, "str()'s length"))
			return T_NONE;
		/* bpftrace's strings hold 64 bytes, a NUL included */
		emit(g, OP_STRN, dst, dst, 0, (uint32_t)(len < 1 ? 0 : len > 64 ? 63 : len - 1));
		return T_STR;
	}
	if (name_is(n, "strncmp")) {
		if (nargs(g, n, 3, 3))
			return T_NONE;
		int64_t len = 0;
		int save = g->top, r = tmp(g, n->pos);
		struct sc_type a = gen(g, n->kids[0], dst), b = gen(g, n->kids[1], r);
		g->top = save;
		if (a.t != TY_STR || b.t != TY_STR) {
			err(g, n->pos, "strncmp() compares two strings");
			return T_NONE;
		}
		if (const_int(g, n->kids[2], &len, "strncmp()'s length"))
			return T_NONE;
		emit(g, OP_STRNCMP, dst, dst, r, (uint32_t)(len < 0 ? 0 : len > 65536 ? 65536 : len));
		return T_S64;
	}
	if (name_is(n, "strftime")) {
		if (nargs(g, n, 2, 2))
			return T_NONE;
		if (n->kids[0]->kind != E_STR) {
			err(g, n->pos, "strftime()'s format must be a string literal");
			return T_NONE;
		}
		if (gen(g, n->kids[1], dst).t != TY_INT) {
			err(g, n->kids[1]->pos, "strftime() formats nanoseconds (nsecs)");
			return T_NONE;
		}
		struct sc_type t = {TY_TS, 0, (uint16_t)sc_pool_add(g->P, str_const(g, n->kids[0]->name, n->kids[0]->nlen))};
		return t;
	}
	if (name_is(n, "usym") || name_is(n, "ksym")) {
		if (nargs(g, n, 1, 1) || gen(g, n->kids[0], dst).t != TY_INT)
			return T_NONE;
		if (name_is(n, "ksym")) {
			err(g, n->pos, "ksym(): a recording holds no kernel symbols");
			return T_NONE;
		}
		emit(g, OP_USYM, dst, dst, 0, 0);
		return T_STR;
	}
	if (name_is(n, "ntop")) {
		if (nargs(g, n, 1, 2))
			return T_NONE;
		struct sc_type t = gen(g, n->kids[n->nkids - 1], dst);
		if (t.t == TY_NONE)
			return T_NONE;
		emit(g, OP_NTOP, dst, dst, 0, t.t == TY_STR);
		return T_STR;
	}
	if (name_is(n, "speculation")) {
		if (nargs(g, n, 0, 0))
			return T_NONE;
		emit(g, OP_SPEC, dst, 0, 0, 0);
		return T_S64;
	}
	if (is_agg(n)) {
		err(g, n->pos, "%.*s() is an aggregation: assign it to a map (@x = %.*s(...))", (int)n->nlen, n->name,
		    (int)n->nlen, n->name);
		return T_NONE;
	}
	static const char *const stmt_only[] = {"printf", "print", "clear", "zero", "delete", "exit", "time",
						"speculate", "commit", "discard"};
	for (size_t i = 0; i < sizeof(stmt_only) / sizeof(stmt_only[0]); i++)
		if (name_is(n, stmt_only[i])) {
			err(g, n->pos, "%s() has no value: use it as a statement", stmt_only[i]);
			return T_NONE;
		}
	static const char *const live[] = {"system", "cat", "signal", "override", "kaddr", "uaddr", "reg", "buf",
					   "sizeof", "offsetof", "join", "cgroupid", "kptr", "uptr", "macaddr",
					   "path", "skboutput", "socket_cookie"};
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
		if (name_is(n, live[i])) {
			err(g, n->pos, "%s() needs the live system, not a recording", live[i]);
			return T_NONE;
		}
	err(g, n->pos, "unknown function '%.*s'", (int)n->nlen, n->name);
	return T_NONE;
}

/* ----------------------------------------------------- expressions */

static struct sc_type gen(struct cg *g, struct sc_node *n, int dst)
{
	switch (n->kind) {
	case E_INT:
		imm(g, dst, n->ival);
		return T_S64;
	case E_STR:
		emit(g, OP_CONST, dst, 0, 0, (uint32_t)sc_pool_add(g->P, str_const(g, n->name, n->nlen)));
		return T_STR;
	case E_BUILTIN:
		return gen_builtin_named(g, n, n->op, dst);
	case E_FIELD:
		return gen_field(g, n, dst);
	case E_ARG:
		return gen_arg(g, n, dst);
	case E_MAP: {
		struct sc_type kt[SC_MAX_KEYS];
		int save = g->top, base = gen_keys(g, n, kt);
		g->top = save;
		if (base < 0)
			return T_NONE;
		struct sc_mapdef *d = map_use(g, n, kt);
		if (!d)
			return T_NONE;
		if (d->kind == MK_NONE) {
			if (!g->P->infer)
				err(g, n->pos, "%s is read but never assigned", d->name);
			emit(g, OP_IMM, dst, 0, 0, 0);
			return T_S64;
		}
		if (d->kind >= MK_STATS) {
			err(g, n->pos, "%s holds %s: print it, its values cannot be read", d->name, kind_name(d->kind));
			return T_NONE;
		}
		emit(g, OP_MGET, dst, base, 0, (uint32_t)(d - g->P->maps));
		if (d->kind == MK_INT || d->kind == MK_STR || d->kind == MK_TS)
			return d->vty;
		return d->kind == MK_COUNT ? T_U64 : d->vsign ? T_S64 : T_U64;
	}
	case E_VAR: {
		int v = var_find(g, n);
		if (v < 0 || !g->var[v].set) {
			if (n->nlen > 1 && n->name[1] >= '0' && n->name[1] <= '9')
				err(g, n->pos, "%.*s: positional parameters are not supported", (int)n->nlen, n->name);
			else
				err(g, n->pos, "%.*s is used before it is assigned", (int)n->nlen, n->name);
			return T_NONE;
		}
		emit(g, OP_MOV, dst, v, 0, 0);
		return g->var[v].ty;
	}
	case E_SELF: {
		int v = self_index(g, n, 0);
		if (v < 0 || g->P->selfs[v].ty.t == TY_NONE) {
			if (!g->P->infer)
				err(g, n->pos, "self->%.*s is read but never assigned", (int)n->nlen, n->name);
			emit(g, OP_IMM, dst, 0, 0, 0);
			return T_S64;
		}
		emit(g, OP_SGET, dst, 0, 0, (uint32_t)v);
		return g->P->selfs[v].ty;
	}
	case E_CALL:
		return gen_call(g, n, dst);
	case E_UN: {
		struct sc_type t = gen(g, n->a, dst);
		if (t.t != TY_INT) {
			if (t.t != TY_NONE)
				err(g, n->pos, "'%c' needs an integer", n->op);
			return T_NONE;
		}
		emit(g, n->op == '-' ? OP_NEG : n->op == '!' ? OP_LNOT : OP_BNOT, dst, dst, 0, 0);
		return n->op == '!' ? T_S64 : n->op == '-' ? T_S64 : t;
	}
	case E_BIN:
		return gen_bin(g, n, dst);
	case E_TERN: {
		if (gen(g, n->a, dst).t != TY_INT)
			return T_NONE;
		uint32_t j = emit(g, OP_JZ, dst, 0, 0, 0);
		struct sc_type a = gen(g, n->b, dst);
		uint32_t end = emit(g, OP_JMP, 0, 0, 0, 0);
		g->c->ins[j].x = g->c->n;
		struct sc_type b = gen(g, n->c, dst);
		g->c->ins[end].x = g->c->n;
		if (a.t == TY_NONE || b.t == TY_NONE)
			return T_NONE;
		if (!same_type(a, b)) {
			err(g, n->pos, "the two sides of ?: are %s and %s", tname(a), tname(b));
			return T_NONE;
		}
		return a.t == TY_INT ? (a.sign && b.sign ? T_S64 : T_U64) : a;
	}
	case E_CAST: {
		struct sc_type t = gen(g, n->a, dst);
		if (t.t != TY_INT) {
			if (t.t != TY_NONE)
				err(g, n->pos, "a cast needs an integer");
			return T_NONE;
		}
		int bits = n->op < 0 ? -n->op : n->op;
		if (bits < 64)
			emit(g, n->op < 0 ? OP_SEXT : OP_ZEXT, dst, dst, 0, (uint32_t)bits);
		return n->op < 0 ? T_S64 : T_U64;
	}
	case E_ASSIGN:
	case E_INCDEC:
		err(g, n->pos, "an assignment is a statement here, not a value");
		return T_NONE;
	}
	err(g, n->pos, "cannot compile this");
	return T_NONE;
}

/* ----------------------------------------------------- statements */

static int stmt(struct cg *g, struct sc_node *n);

static int gen_agg(struct cg *g, struct sc_node *lhs, struct sc_node *call)
{
	int which = is_agg(call);
	static const int kinds[] = {0, MK_COUNT, MK_SUM, MK_AVG, MK_MIN, MK_MAX, MK_STATS, MK_HIST, MK_LHIST};
	static const int ops[] = {0, OP_COUNT, OP_SUM, OP_AVG, OP_MIN, OP_MAX, OP_STATS, OP_HIST, OP_LHIST};
	int save = g->top, v = 0;
	struct sc_type vt = T_S64;
	int64_t lh[3] = {0, 0, 0};
	if (which == 1) {
		if (nargs(g, call, 0, 0))
			return -1;
	} else {
		if (nargs(g, call, which == 8 ? 4 : 1, which == 8 ? 4 : 1))
			return -1;
		v = tmp(g, call->pos);
		vt = gen(g, call->kids[0], v);
		if (vt.t != TY_INT)
			return vt.t == TY_NONE ? -1 : err(g, call->kids[0]->pos, "%.*s() needs an integer", (int)call->nlen, call->name);
		if (which == 8) {
			if (const_int(g, call->kids[1], &lh[0], "lhist()'s min") ||
			    const_int(g, call->kids[2], &lh[1], "lhist()'s max") ||
			    const_int(g, call->kids[3], &lh[2], "lhist()'s step"))
				return -1;
			if (lh[0] < 0)
				return err(g, call->pos, "lhist(): min must be non-negative (it is %lld)", (long long)lh[0]);
			if (lh[1] <= lh[0] || lh[2] <= 0)
				return err(g, call->pos, "lhist(): needs min < max and a step above 0");
			if ((lh[1] - lh[0]) / lh[2] > 1000)
				return err(g, call->pos, "lhist(): at most 1000 buckets ((max - min) / step)");
		}
	}
	struct sc_type kt[SC_MAX_KEYS];
	int base = gen_keys(g, lhs, kt);
	g->top = save;
	if (base < 0)
		return -1;
	struct sc_mapdef *d = map_use(g, lhs, kt);
	if (!d || map_kind(g, d, kinds[which], vt, call->pos))
		return -1;
	if (which == 8) {
		if (d->lstep && (d->lmin != lh[0] || d->lmax != lh[1] || d->lstep != lh[2]))
			return err(g, call->pos, "%s is an lhist() with other bounds elsewhere", d->name);
		d->lmin = lh[0];
		d->lmax = lh[1];
		d->lstep = lh[2];
	}
	if (which == 2 || which == 3 || which == 6)
		d->vsign |= vt.sign;
	if (which == 4 || which == 5)
		d->vsign = 1;
	emit(g, ops[which], v, base, 0, (uint32_t)(d - g->P->maps));
	return 0;
}

/* x = v, x += v ... for a map, a $variable or a self-> variable. */
static int gen_assign(struct cg *g, struct sc_node *lhs, int op, struct sc_node *rhs, struct sc_pos pos)
{
	if (lhs->kind == E_MAP && op == '=' && is_agg(rhs))
		return gen_agg(g, lhs, rhs);
	int save = g->top, v = tmp(g, pos);
	struct sc_type t;
	if (rhs) {
		t = gen(g, rhs, v);
		if (t.t == TY_NONE)
			return -1;
	} else { /* ++ / -- */
		imm(g, v, 1);
		t = T_S64;
	}
	if (op != '=' && t.t != TY_INT)
		return err(g, pos, "%s needs an integer", rhs ? "a compound assignment" : "++ and --");
	if (lhs->kind == E_VAR) {
		int i = var_find(g, lhs);
		if (i < 0)
			return err(g, lhs->pos, "too many variables");
		if (!g->var[i].set) {
			if (op != '=')
				return err(g, lhs->pos, "%.*s is used before it is assigned", (int)lhs->nlen, lhs->name);
			g->var[i].set = 1;
			g->var[i].ty = t;
		} else if (!same_type(g->var[i].ty, t) && op == '=') {
			return err(g, pos, "%.*s holds %s, not %s", (int)lhs->nlen, lhs->name, tname(g->var[i].ty), tname(t));
		}
		if (op == '=') {
			emit(g, OP_MOV, i, v, 0, 0);
		} else {
			if (g->var[i].ty.t != TY_INT)
				return err(g, pos, "%.*s is not an integer", (int)lhs->nlen, lhs->name);
			emit(g, arith_op(op, g->var[i].ty.sign), i, i, v, 0);
		}
		g->top = save;
		return 0;
	}
	if (lhs->kind == E_SELF) {
		int i = self_index(g, lhs, 1);
		if (i < 0)
			return err(g, lhs->pos, "out of memory");
		struct sc_type *st = &g->P->selfs[i].ty;
		if (st->t == TY_NONE) {
			*st = t;
			g->P->selfs[i].at = pos;
		} else if (!same_type(*st, t) && (op == '=' || st->t != TY_INT)) {
			return err(g, pos, "self->%.*s holds %s (from %u:%u), not %s", (int)lhs->nlen, lhs->name, tname(*st),
				   g->P->selfs[i].at.line, g->P->selfs[i].at.col, tname(t));
		}
		if (op != '=') {
			int o = tmp(g, pos);
			emit(g, OP_SGET, o, 0, 0, (uint32_t)i);
			emit(g, arith_op(op, st->sign), v, o, v, 0);
		}
		emit(g, OP_SSET, v, 0, 0, (uint32_t)i);
		g->top = save;
		return 0;
	}
	/* a map */
	struct sc_type kt[SC_MAX_KEYS];
	int base = gen_keys(g, lhs, kt);
	if (base < 0)
		return -1;
	struct sc_mapdef *d = map_use(g, lhs, kt);
	if (!d)
		return -1;
	int kind = t.t == TY_STR ? MK_STR : t.t == TY_TS ? MK_TS : MK_INT;
	if (op != '=' && (d->kind == MK_COUNT || d->kind == MK_SUM))
		kind = d->kind; /* @x++ after @x = count() counts on */
	if (map_kind(g, d, kind, t, pos))
		return -1;
	uint32_t mi = (uint32_t)(d - g->P->maps);
	if (op == '=') {
		emit(g, OP_MSET, v, base, 0, mi);
	} else if (op == '+' || op == '-') {
		if (op == '-')
			emit(g, OP_NEG, v, v, 0, 0);
		emit(g, OP_MADD, v, base, v, mi);
	} else {
		int o = tmp(g, pos);
		emit(g, OP_MGET, o, base, 0, mi);
		emit(g, arith_op(op, d->vsign), v, o, v, 0);
		emit(g, OP_MSET, v, base, 0, mi);
	}
	g->top = save;
	return 0;
}

static int gen_printf(struct cg *g, struct sc_node *n)
{
	if (!n->nkids || n->kids[0]->kind != E_STR)
		return err(g, n->pos, "printf() needs a format string literal first");
	if (n->nkids > 33)
		return err(g, n->pos, "printf() takes at most 32 values");
	int save = g->top, base = g->top;
	struct sc_type at[32];
	for (uint32_t k = 1; k < n->nkids; k++)
		tmp(g, n->pos);
	for (uint32_t k = 1; k < n->nkids; k++)
		if ((at[k - 1] = gen(g, n->kids[k], base + (int)k - 1)).t == TY_NONE)
			return -1;
	g->top = save;
	int f = g->P->infer ? 0 : sc_fmt_compile(g->P, n->kids[0]->pos, n->kids[0]->name, n->kids[0]->nlen, at, n->nkids - 1);
	if (f < 0) {
		g->bad = 1;
		return -1;
	}
	emit(g, OP_PRINTF, 0, base, 0, (uint32_t)f);
	return 0;
}

static int map_arg(struct cg *g, struct sc_node *n, const char *fn)
{
	if (!n->nkids || n->kids[0]->kind != E_MAP || n->kids[0]->keyed)
		return err(g, n->pos, "%s() takes a map (%s(@x))", fn, fn), -1;
	int i = map_index(g, n->kids[0]);
	if (i < 0)
		return err(g, n->pos, "out of memory"), -1;
	return i;
}

static int gen_stmt_call(struct cg *g, struct sc_node *n)
{
	if (name_is(n, "printf"))
		return gen_printf(g, n);
	if (name_is(n, "print")) {
		if (nargs(g, n, 1, 3))
			return -1;
		if (n->kids[0]->kind == E_MAP && !n->kids[0]->keyed) {
			int m = map_index(g, n->kids[0]), save = g->top, t = tmp(g, n->pos), d = tmp(g, n->pos);
			if (m < 0)
				return -1;
			if (n->nkids > 1 && gen(g, n->kids[1], t).t != TY_INT)
				return err(g, n->kids[1]->pos, "print()'s top must be an integer");
			if (n->nkids < 2)
				imm(g, t, 0);
			if (n->nkids > 2 && gen(g, n->kids[2], d).t != TY_INT)
				return err(g, n->kids[2]->pos, "print()'s divisor must be an integer");
			if (n->nkids < 3)
				imm(g, d, 1);
			g->top = save;
			emit(g, OP_PRINTM, 0, t, d, (uint32_t)m);
			return 0;
		}
		if (n->nkids != 1)
			return err(g, n->pos, "print() of a value takes one argument");
		int save = g->top, v = tmp(g, n->pos);
		struct sc_type t = gen(g, n->kids[0], v);
		g->top = save;
		if (t.t == TY_NONE)
			return -1;
		emit(g, OP_PRINTV, v, 0, 0, (uint32_t)t.t | (uint32_t)t.sign << 8 | (uint32_t)t.aux << 16);
		return 0;
	}
	if (name_is(n, "clear") || name_is(n, "zero")) {
		int m = map_arg(g, n, name_is(n, "clear") ? "clear" : "zero");
		if (m < 0 || nargs(g, n, 1, 1))
			return -1;
		emit(g, name_is(n, "clear") ? OP_CLEAR : OP_ZERO, 0, 0, 0, (uint32_t)m);
		return 0;
	}
	if (name_is(n, "delete")) {
		if (nargs(g, n, 1, 1))
			return -1;
		struct sc_node *m = n->kids[0];
		if (m->kind != E_MAP || !m->keyed)
			return err(g, n->pos, "delete() takes a map entry: delete(@x[key])");
		struct sc_type kt[SC_MAX_KEYS];
		int save = g->top, base = gen_keys(g, m, kt);
		g->top = save;
		struct sc_mapdef *d = base < 0 ? NULL : map_use(g, m, kt);
		if (!d)
			return -1;
		emit(g, OP_MDEL, 0, base, 0, (uint32_t)(d - g->P->maps));
		return 0;
	}
	if (name_is(n, "exit")) {
		if (nargs(g, n, 0, 0))
			return -1;
		emit(g, OP_EXIT, 0, 0, 0, 0);
		return 0;
	}
	if (name_is(n, "time")) {
		if (nargs(g, n, 0, 1))
			return -1;
		if (n->nkids && n->kids[0]->kind != E_STR)
			return err(g, n->pos, "time()'s format must be a string literal");
		const char *f = n->nkids ? n->kids[0]->name : "%H:%M:%S\n";
		uint32_t fl = n->nkids ? n->kids[0]->nlen : 9;
		emit(g, OP_TIME, 0, 0, 0, (uint32_t)sc_pool_add(g->P, str_const(g, f, fl)));
		return 0;
	}
	if (name_is(n, "speculate") || name_is(n, "commit") || name_is(n, "discard")) {
		if (nargs(g, n, 1, 1))
			return -1;
		int save = g->top, v = tmp(g, n->pos);
		struct sc_type t = gen(g, n->kids[0], v);
		g->top = save;
		if (t.t != TY_INT)
			return t.t == TY_NONE ? -1 : err(g, n->pos, "%.*s() takes a speculation's id", (int)n->nlen, n->name);
		emit(g, name_is(n, "speculate") ? OP_SPECULATE : name_is(n, "commit") ? OP_COMMIT : OP_DISCARD, v, 0, 0, 0);
		return 0;
	}
	int save = g->top, v = tmp(g, n->pos);
	struct sc_type t = gen(g, n, v);
	g->top = save;
	return t.t == TY_NONE ? -1 : 0;
}

static int block(struct cg *g, struct sc_node *b)
{
	int rc = 0;
	for (uint32_t i = 0; i < b->nkids; i++)
		rc |= stmt(g, b->kids[i]);
	return rc;
}

static int stmt(struct cg *g, struct sc_node *n)
{
	switch (n->kind) {
	case S_BLOCK:
		return block(g, n);
	case S_EXPR: {
		struct sc_node *e = n->a;
		if (e->kind == E_ASSIGN)
			return gen_assign(g, e->a, e->op, e->b, e->pos);
		if (e->kind == E_INCDEC) {
			if (e->a->kind != E_MAP && e->a->kind != E_VAR && e->a->kind != E_SELF)
				return err(g, e->pos, "++ and -- change a map or a variable");
			return gen_assign(g, e->a, e->op == P_INC ? '+' : '-', NULL, e->pos);
		}
		if (e->kind == E_CALL)
			return gen_stmt_call(g, e);
		int save = g->top, v = tmp(g, e->pos);
		struct sc_type t = gen(g, e, v);
		g->top = save;
		return t.t == TY_NONE ? -1 : 0;
	}
	case S_IF: {
		int save = g->top, v = tmp(g, n->pos);
		struct sc_type t = gen(g, n->a, v);
		g->top = save;
		if (t.t != TY_INT)
			return t.t == TY_NONE ? -1 : err(g, n->a->pos, "if needs an integer condition, not %s", tname(t));
		uint32_t j = emit(g, OP_JZ, v, 0, 0, 0);
		int rc = stmt(g, n->b);
		if (n->c) {
			uint32_t end = emit(g, OP_JMP, 0, 0, 0, 0);
			g->c->ins[j].x = g->c->n;
			rc |= stmt(g, n->c);
			g->c->ins[end].x = g->c->n;
		} else {
			g->c->ins[j].x = g->c->n;
		}
		return rc;
	}
	case S_UNROLL: {
		int64_t k = 0;
		if (const_int(g, n->a, &k, "unroll's count"))
			return -1;
		if (k < 1 || k > 100)
			return err(g, n->a->pos, "unroll takes 1 to 100");
		int rc = 0;
		for (int64_t i = 0; i < k && !rc; i++)
			rc = stmt(g, n->b);
		return rc;
	}
	case S_WHILE: {
		if (g->nloops == MAX_LOOPS)
			return err(g, n->pos, "loops nest %d deep at most", MAX_LOOPS);
		struct loop *l = &g->loops[g->nloops++];
		l->nbrk = l->ncont = 0;
		uint32_t top = g->c->n;
		int save = g->top, v = tmp(g, n->pos);
		struct sc_type t = gen(g, n->a, v);
		g->top = save;
		if (t.t != TY_INT) {
			g->nloops--;
			return t.t == TY_NONE ? -1 : err(g, n->a->pos, "while needs an integer condition");
		}
		uint32_t j = emit(g, OP_JZ, v, 0, 0, 0);
		int rc = stmt(g, n->b);
		emit(g, OP_JMP, 0, 0, 0, top);
		g->c->ins[j].x = g->c->n;
		for (int i = 0; i < l->nbrk; i++)
			g->c->ins[l->brk[i]].x = g->c->n;
		for (int i = 0; i < l->ncont; i++)
			g->c->ins[l->cont[i]].x = top;
		g->nloops--;
		return rc;
	}
	case S_BREAK:
	case S_CONTINUE: {
		if (!g->nloops)
			return err(g, n->pos, "%s outside a while loop", n->kind == S_BREAK ? "break" : "continue");
		struct loop *l = &g->loops[g->nloops - 1];
		if (l->nbrk == 64 || l->ncont == 64)
			return err(g, n->pos, "too many breaks in one loop");
		uint32_t j = emit(g, OP_JMP, 0, 0, 0, 0);
		if (n->kind == S_BREAK)
			l->brk[l->nbrk++] = j;
		else
			l->cont[l->ncont++] = j;
		return 0;
	}
	case S_RETURN:
		emit(g, OP_RET, 0, 0, 0, 0);
		return 0;
	}
	return err(g, n->pos, "not a statement");
}

/* A filter's logic over three values, as SQL treats a missing column: 0
 * false, 1 unknown (a comparison on a field this type lacks), 2 true;
 * NOT is 2 - x, AND the least, OR the greatest, and an event passes only
 * a true filter. So "a == 1 || b == 2" keeps the events of types with
 * either field, and "!(a == 1)" never keeps a type without a. */
static int gen_flogic(struct cg *g, struct sc_node *n, int dst)
{
	if (n->kind == E_UN && n->op == '!') {
		int save = g->top, t = tmp(g, n->pos);
		if (gen_flogic(g, n->a, dst))
			return -1;
		imm(g, t, 2);
		emit(g, OP_SUB, dst, t, dst, 0);
		g->top = save;
		return 0;
	}
	if (n->kind == E_BIN && (n->op == P_AND || n->op == P_OR)) {
		int save = g->top, r = tmp(g, n->pos), t = tmp(g, n->pos);
		if (gen_flogic(g, n->a, dst) || gen_flogic(g, n->b, r))
			return -1;
		/* AND: the least of the two, OR: the greatest */
		emit(g, OP_LTU, t, n->op == P_AND ? r : dst, n->op == P_AND ? dst : r, 0);
		uint32_t j = emit(g, OP_JZ, t, 0, 0, 0);
		emit(g, OP_MOV, dst, r, 0, 0);
		g->c->ins[j].x = g->c->n;
		g->top = save;
		return 0;
	}
	uint32_t start = g->c->n;
	g->missing = 0;
	struct sc_type t = gen(g, n, dst);
	if (g->missing) {
		g->c->n = start;
		imm(g, dst, 1);
		return 0;
	}
	if (t.t != TY_INT)
		return t.t == TY_NONE ? -1 : err(g, n->pos, "a filter is a condition");
	g->leaves++;
	gen_bool(g, dst);
	emit(g, OP_ADD, dst, dst, dst, 0);
	return 0;
}

/* The $variables of a site, each in its own register from 0 up. */
static void collect_vars(struct cg *g, struct sc_node *n)
{
	if (!n)
		return;
	if (n->kind == E_VAR && var_find(g, n) < 0 && g->nvars < MAX_VARS) {
		g->var[g->nvars].name = n->name;
		g->var[g->nvars].len = n->nlen;
		g->var[g->nvars].set = 0;
		g->nvars++;
	}
	collect_vars(g, n->a);
	collect_vars(g, n->b);
	collect_vars(g, n->c);
	for (uint32_t i = 0; i < n->nkids; i++)
		collect_vars(g, n->kids[i]);
}

static int compile_site(struct sc_prog *P, struct sc_site *s, struct sc_node *pred, struct sc_node *body,
			struct sc_node *filter)
{
	struct cg g;
	memset(&g, 0, sizeof(g));
	g.P = P;
	g.s = s;
	g.c = &s->code;
	g.filter = filter != NULL;
	s->code.n = 0;
	s->code.nregs = 0;
	collect_vars(&g, pred);
	collect_vars(&g, body);
	if (g.nvars == MAX_VARS)
		return err(&g, s->p ? s->p->pos : (struct sc_pos){1, 1}, "a probe uses at most %d variables", MAX_VARS - 1);
	g.top = g.nvars;
	s->code.nregs = (uint16_t)g.nvars;
	int rc = 0;
	if (filter) {
		int v = tmp(&g, filter->pos), two = tmp(&g, filter->pos);
		if (gen_flogic(&g, filter, v) || g.bad || !g.leaves) {
			/* a type the filter cannot judge never passes */
			s->code.n = 0;
			imm(&g, v, 0);
			emit(&g, OP_RETV, v, 0, 0, 0);
			return 1;
		}
		imm(&g, two, 2);
		emit(&g, OP_EQ, v, v, two, 0);
		emit(&g, OP_RETV, v, 0, 0, 0);
		return 0;
	}
	if (pred) {
		int v = tmp(&g, pred->pos);
		struct sc_type t = gen(&g, pred, v);
		if (t.t != TY_INT && t.t != TY_NONE)
			err(&g, pred->pos, "a predicate is a condition, not %s", tname(t));
		g.top = g.nvars;
		emit(&g, OP_JNZ, v, 0, 0, s->code.n + 2);
		emit(&g, OP_RET, 0, 0, 0, 0);
	}
	rc |= block(&g, body);
	emit(&g, OP_RET, 0, 0, 0, 0);
	return rc || g.bad ? -1 : 0;
}

/* Column slots from what the first pass wanted: a type's k-th wanted
 * field, in field order, is slot k (tpp_scan's rule). */
static void assign_slots(struct sc_prog *P)
{
	for (unsigned id = 0; id < TPP_MAX_TYPES; id++) {
		struct sc_tinfo *ti = &P->ti[id];
		memset(ti->slot, -1, sizeof(ti->slot));
		memset(ti->field, -1, sizeof(ti->field));
		ti->nslots = 0;
		ti->addr_slot = -1;
		const struct tpp_type *t = ti->want ? tpp_r_type(P->r, (uint16_t)id) : NULL;
		for (unsigned f = 0; t && f < t->nfields && f < TPP_MAX_FIELDS; f++) {
			if (!(ti->want >> f & 1))
				continue;
			ti->slot[f] = (int8_t)ti->nslots;
			ti->field[ti->nslots] = (int8_t)f;
			ti->conv[ti->nslots] = t->fields[f].type == TPP_F_STR ? 1 : t->fields[f].type == TPP_F_BYTES ? 2 : 0;
			ti->nslots++;
		}
		if (ti->nslots > TPP_SCAN_COLS)
			ti->rows_only = 1;
	}
}

/* The one-statement bodies the run loop does itself (sc_site.fast). */
static void fast_site(struct sc_prog *P, struct sc_site *s)
{
	struct sc_node *b = s->p->body, *e;
	if (s->p->pred || s->dyn || !s->t || b->nkids != 1 || b->kids[0]->kind != S_EXPR)
		return;
	e = b->kids[0]->a;
	if (e->kind != E_ASSIGN || e->op != '=' || e->a->kind != E_MAP || e->a->nkids > 1)
		return;
	int which = is_agg(e->b);
	if (which != 1 && which != 2 && which != 7)
		return;
	const struct tpp_type *t = s->t;
	struct sc_tinfo *ti = &P->ti[s->type];
	int key = -1, val = -1;
	if (e->a->nkids) {
		struct sc_node *k = e->a->kids[0];
		int f = k->kind == E_FIELD ? find_field(t, k->name, k->nlen) : -1;
		if (f < 0 || ti->slot[f] < 0)
			return;
		key = ti->slot[f];
	}
	if (which != 1) {
		struct sc_node *v = e->b->kids[0];
		int f = v->kind == E_FIELD ? find_field(t, v->name, v->nlen) : -1;
		if (f < 0 || ti->slot[f] < 0 || t->fields[f].type > TPP_F_S64)
			return;
		val = ti->slot[f];
	}
	for (uint32_t i = 0; i < P->nmaps; i++)
		if (strlen(P->maps[i].name) == e->a->nlen && !memcmp(P->maps[i].name, e->a->name, e->a->nlen)) {
			s->fast.op = which == 1 ? OP_COUNT : which == 2 ? OP_SUM : OP_HIST;
			s->fast.key = (int8_t)key;
			s->fast.val = (int8_t)val;
			s->fast.map = i;
		}
}

int sc_compile_sites(struct sc_prog *P)
{
	/* the function's address is read for every event of a uprobe */
	for (uint32_t i = 0; i < P->nsites; i++) {
		struct sc_site *s = P->sites[i];
		if (s->dyn && s->addr_f >= 0) {
			P->ti[s->type].want |= 1u << s->addr_f;
			P->ti[s->type].dyn = 1;
		}
	}
	P->infer = 1;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < P->nsites; i++) {
			struct sc_site *s = P->sites[i];
			compile_site(P, s, s->p->pred, s->p->body, NULL);
		}
	}
	assign_slots(P);
	P->infer = 0;
	for (uint32_t i = 0; i < P->nsites && !P->failed; i++) {
		struct sc_site *s = P->sites[i];
		compile_site(P, s, s->p->pred, s->p->body, NULL);
		if (s->dyn && s->addr_f >= 0)
			P->ti[s->type].addr_slot = P->ti[s->type].slot[s->addr_f];
	}
	for (uint32_t i = 0; i < P->nmaps && !P->failed; i++)
		if (P->maps[i].kind == MK_NONE)
			sc_fail(P, P->maps[i].at, "%s is never assigned", P->maps[i].name);
	for (uint32_t i = 0; i < P->nsites && !P->failed; i++)
		if (P->sites[i]->kind == SK_TP)
			fast_site(P, P->sites[i]);
	return P->failed ? -EINVAL : 0;
}

/* The first field a filter names that no event type of the file has. */
static const struct sc_node *unknown_field(const struct tpp_file_info *fi, const struct sc_node *n)
{
	if (!n)
		return NULL;
	if (n->kind == E_FIELD && n->filter && common_field(n) < 0) {
		uint32_t i = 0;
		while (i < fi->ntypes && !(fi->types[i].name && find_field(&fi->types[i], n->name, n->nlen) >= 0))
			i++;
		if (i == fi->ntypes)
			return n;
	}
	const struct sc_node *u = unknown_field(fi, n->a);
	if (!u)
		u = unknown_field(fi, n->b);
	if (!u)
		u = unknown_field(fi, n->c);
	for (uint32_t i = 0; !u && i < n->nkids; i++)
		u = unknown_field(fi, n->kids[i]);
	return u;
}

int sc_compile_filter(struct sc_prog *P, struct sc_node *expr)
{
	const struct tpp_file_info *fi = tpp_r_info(P->r);
	/* A field no event type of the file has is a typo wherever it sits:
	 * inside an AND it would quietly turn the whole filter false. */
	const struct sc_node *u = unknown_field(fi, expr);
	if (u) {
		sc_errat(P->err, sizeof(P->err), u->pos, "'%.*s': no event type of %s has this field",
			 (int)u->nlen, u->name, P->src_name);
		P->failed = 1;
		return -EINVAL;
	}
	for (uint32_t i = 0; i < fi->ntypes; i++) {
		const struct tpp_type *t = &fi->types[i];
		if (!t->name || t->id >= TPP_MAX_TYPES)
			continue;
		struct sc_site *s = sc_alloc(&P->arena, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->kind = SK_FILTER;
		s->type = t->id;
		s->t = t;
		s->probe = t->name;
		s->addr_f = s->ret_f = -1;
		struct sc_tinfo *ti = &P->ti[t->id];
		if (!(ti->sites = sc_alloc(&P->arena, sizeof(*ti->sites))))
			return -ENOMEM;
		ti->sites[0] = s;
		ti->nsites = 1;
	}
	P->infer = 1;
	for (unsigned id = 0; id < TPP_MAX_TYPES; id++)
		if (P->ti[id].nsites)
			compile_site(P, P->ti[id].sites[0], NULL, NULL, expr);
	assign_slots(P);
	P->infer = 0;
	int matchable = 0;
	for (unsigned id = 0; id < TPP_MAX_TYPES && !P->failed; id++)
		if (P->ti[id].nsites)
			matchable += compile_site(P, P->ti[id].sites[0], NULL, NULL, expr) == 0;
	if (P->failed)
		return -EINVAL;
	if (!matchable) {
		if (!P->err[0])
			sc_errat(P->err, sizeof(P->err), expr->pos, "no event type of %s has the fields this filter names",
				 P->src_name);
		P->failed = 1;
		return -EINVAL;
	}
	P->err[0] = 0;
	return 0;
}
