/* sc_parse — bpftrace programs and kernel filter expressions into the AST
 * of sc_int.h, by recursive descent with C's precedence. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "sc_int.h"

struct ps {
	struct sc_lex L;
	struct sc_tok t;   /* current token */
	struct sc_arena *a;
	char *err;
	size_t errlen;
	int failed;
	int in_pred;       /* inside /predicate/: '/' ends it unless in parentheses */
	int parens;
};

static void next(struct ps *P)
{
	P->t = sc_lex_next(&P->L);
	if (P->L.failed)
		P->failed = 1;
}

static struct sc_node *fail(struct ps *P, struct sc_pos pos, const char *what)
{
	if (!P->failed)
		sc_errat(P->err, P->errlen, pos, "%s", what);
	P->failed = 1;
	return NULL;
}

static int is_op(const struct ps *P, int op) { return P->t.kind == TK_PUNCT && P->t.op == op; }
static int is_word(const struct ps *P, const char *w)
{
	return P->t.kind == TK_IDENT && P->t.len == strlen(w) && !memcmp(P->t.p, w, P->t.len);
}

static struct sc_node *unexpected(struct ps *P, const char *wanted)
{
	char msg[160];
	if (P->t.kind == TK_EOF)
		snprintf(msg, sizeof(msg), "syntax error: the program ends where %s was expected", wanted);
	else
		snprintf(msg, sizeof(msg), "syntax error: unexpected '%.*s', expected %s", (int)(P->t.len > 40 ? 40 : P->t.len),
			 P->t.p, wanted);
	return fail(P, P->t.pos, msg);
}

static int expect(struct ps *P, int op, const char *what)
{
	if (!is_op(P, op)) {
		unexpected(P, what);
		return -1;
	}
	next(P);
	return 0;
}

static struct sc_node *node(struct ps *P, int kind, struct sc_pos pos)
{
	struct sc_node *n = sc_alloc(P->a, sizeof(*n));
	if (!n)
		return fail(P, pos, "out of memory");
	n->kind = (uint8_t)kind;
	n->pos = pos;
	return n;
}

/* A growing list of nodes, copied into the arena when done. */
struct list {
	struct sc_node *v[256];
	uint32_t n;
};
static int push(struct ps *P, struct list *l, struct sc_node *x)
{
	if (l->n == 256) {
		fail(P, x->pos, "too many items in one list (256 at most)");
		return -1;
	}
	l->v[l->n++] = x;
	return 0;
}
static struct sc_node **keep(struct ps *P, struct list *l)
{
	struct sc_node **k = sc_alloc(P->a, (l->n + 1) * sizeof(*k));
	if (k && l->n)
		memcpy(k, l->v, l->n * sizeof(*k));
	if (!k)
		fail(P, P->t.pos, "out of memory");
	return k;
}

static struct sc_node *expr(struct ps *P);

static const struct {
	const char *name;
	int id;
} builtins[] = {
	{"nsecs", B_NSECS}, {"elapsed", B_ELAPSED}, {"cpu", B_CPU}, {"pid", B_PID}, {"tid", B_TID},
	{"comm", B_COMM}, {"func", B_FUNC}, {"probe", B_PROBE}, {"retval", B_RETVAL},
	{"uid", B_UNAVAILABLE}, {"gid", B_UNAVAILABLE}, {"username", B_UNAVAILABLE}, {"cgroup", B_UNAVAILABLE},
	{"kstack", B_UNAVAILABLE}, {"ustack", B_UNAVAILABLE}, {"curtask", B_UNAVAILABLE}, {"rand", B_UNAVAILABLE},
	{"numaid", B_UNAVAILABLE}, {"ctx", B_UNAVAILABLE}, {"jiffies", B_UNAVAILABLE}, {"sarg0", B_UNAVAILABLE},
	{"sarg1", B_UNAVAILABLE}, {"sarg2", B_UNAVAILABLE}, {"cpid", B_UNAVAILABLE},
};

static const struct {
	const char *name;
	int bits; /* negative: signed */
} casts[] = {
	{"int8", -8}, {"int16", -16}, {"int32", -32}, {"int64", -64}, {"uint8", 8}, {"uint16", 16},
	{"uint32", 32}, {"uint64", 64}, {"int", -32}, {"unsigned", 32}, {"long", -64}, {"char", -8},
};

static int cast_bits(const struct sc_tok *t)
{
	if (t->kind != TK_IDENT)
		return 0;
	for (size_t i = 0; i < sizeof(casts) / sizeof(casts[0]); i++)
		if (strlen(casts[i].name) == t->len && !memcmp(casts[i].name, t->p, t->len))
			return casts[i].bits;
	return 0;
}

/* args->name, args.name */
static struct sc_node *field_of(struct ps *P, struct sc_pos pos)
{
	if (P->t.kind != TK_IDENT)
		return unexpected(P, "a field name");
	struct sc_node *n = node(P, E_FIELD, pos);
	if (!n)
		return NULL;
	n->name = P->t.p;
	n->nlen = P->t.len;
	next(P);
	return n;
}

static struct sc_node *primary(struct ps *P)
{
	struct sc_tok t = P->t;
	struct sc_node *n;
	switch (t.kind) {
	case TK_INT:
		next(P);
		if (!(n = node(P, E_INT, t.pos)))
			return NULL;
		n->ival = (int64_t)t.ival;
		return n;
	case TK_STR:
		next(P);
		if (!(n = node(P, E_STR, t.pos)))
			return NULL;
		n->name = t.sval;
		n->nlen = t.slen;
		return n;
	case TK_MAPV: {
		next(P);
		if (!(n = node(P, E_MAP, t.pos)))
			return NULL;
		n->name = t.p;
		n->nlen = t.len;
		if (is_op(P, '[')) {
			next(P);
			struct list l = {.n = 0};
			int save = P->in_pred;
			P->in_pred = 0;
			for (;;) {
				struct sc_node *k = expr(P);
				if (!k || push(P, &l, k))
					return NULL;
				if (!is_op(P, ','))
					break;
				next(P);
			}
			P->in_pred = save;
			if (expect(P, ']', "']'"))
				return NULL;
			if (l.n > SC_MAX_KEYS)
				return fail(P, t.pos, "a map key has at most 8 parts");
			n->keyed = 1;
			n->kids = keep(P, &l);
			n->nkids = l.n;
		}
		return n;
	}
	case TK_VAR:
		next(P);
		if (!(n = node(P, E_VAR, t.pos)))
			return NULL;
		n->name = t.p;
		n->nlen = t.len;
		return n;
	case TK_PUNCT:
		if (t.op == '(') {
			next(P);
			P->parens++;
			n = expr(P);
			P->parens--;
			if (!n || expect(P, ')', "')'"))
				return NULL;
			return n;
		}
		return unexpected(P, "an expression");
	case TK_IDENT:
		break;
	default:
		return unexpected(P, "an expression");
	}
	next(P);
	if (t.len == 4 && !memcmp(t.p, "self", 4)) {
		if (expect(P, P_ARROW, "'->' after self"))
			return NULL;
		if (P->t.kind != TK_IDENT)
			return unexpected(P, "a per-thread variable name");
		if (!(n = node(P, E_SELF, t.pos)))
			return NULL;
		n->name = P->t.p;
		n->nlen = P->t.len;
		next(P);
		return n;
	}
	if (t.len == 4 && !memcmp(t.p, "args", 4)) {
		if (is_op(P, P_ARROW) || is_op(P, '.')) {
			next(P);
			return field_of(P, t.pos);
		}
		return fail(P, t.pos, "args is read one field at a time: args->NAME");
	}
	if (t.len > 3 && !memcmp(t.p, "arg", 3)) {
		int64_t k = 0;
		uint32_t i = 3;
		for (; i < t.len && t.p[i] >= '0' && t.p[i] <= '9' && k < 100; i++)
			k = k * 10 + (t.p[i] - '0');
		if (i == t.len) {
			if (!(n = node(P, E_ARG, t.pos)))
				return NULL;
			n->ival = k;
			return n;
		}
	}
	if (is_op(P, '(')) {
		next(P);
		if (!(n = node(P, E_CALL, t.pos)))
			return NULL;
		n->name = t.p;
		n->nlen = t.len;
		struct list l = {.n = 0};
		int save = P->in_pred;
		P->in_pred = 0;
		while (!is_op(P, ')')) {
			struct sc_node *a;
			/* speculate(x) and friends take a value; print and clear a map */
			if (!(a = expr(P)) || push(P, &l, a))
				return NULL;
			if (!is_op(P, ','))
				break;
			next(P);
		}
		P->in_pred = save;
		if (expect(P, ')', "')' closing the arguments"))
			return NULL;
		n->kids = keep(P, &l);
		n->nkids = l.n;
		return n;
	}
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (strlen(builtins[i].name) == t.len && !memcmp(builtins[i].name, t.p, t.len)) {
			if (!(n = node(P, E_BUILTIN, t.pos)))
				return NULL;
			n->op = (int16_t)builtins[i].id;
			n->name = t.p;
			n->nlen = t.len;
			return n;
		}
	char msg[160];
	snprintf(msg, sizeof(msg), "unknown identifier '%.*s'", (int)(t.len > 60 ? 60 : t.len), t.p);
	return fail(P, t.pos, msg);
}

static struct sc_node *postfix(struct ps *P)
{
	struct sc_node *n = primary(P);
	if (n && (is_op(P, P_INC) || is_op(P, P_DEC))) {
		struct sc_node *x = node(P, E_INCDEC, n->pos);
		if (!x)
			return NULL;
		x->op = (int16_t)P->t.op;
		x->post = 1;
		x->a = n;
		next(P);
		return x;
	}
	return n;
}

static struct sc_node *unary(struct ps *P)
{
	struct sc_tok t = P->t;
	if (t.kind == TK_PUNCT && (t.op == '!' || t.op == '~' || t.op == '-' || t.op == '+')) {
		next(P);
		struct sc_node *a = unary(P);
		if (!a)
			return NULL;
		if (t.op == '+')
			return a;
		struct sc_node *n = node(P, E_UN, t.pos);
		if (n) {
			n->op = (int16_t)t.op;
			n->a = a;
		}
		return n;
	}
	if (t.kind == TK_PUNCT && (t.op == P_INC || t.op == P_DEC)) {
		next(P);
		struct sc_node *a = unary(P), *n;
		if (!a || !(n = node(P, E_INCDEC, t.pos)))
			return NULL;
		n->op = (int16_t)t.op;
		n->a = a;
		return n;
	}
	if (t.kind == TK_PUNCT && t.op == '(') {
		/* (int32)x: a cast when the parenthesis holds a type name */
		struct sc_lex save = P->L;
		next(P);
		int bits = cast_bits(&P->t);
		if (bits) {
			next(P);
			if (is_op(P, ')')) {
				next(P);
				struct sc_node *a = unary(P), *n;
				if (!a || !(n = node(P, E_CAST, t.pos)))
					return NULL;
				n->op = (int16_t)bits;
				n->a = a;
				return n;
			}
		}
		P->L = save;
		P->t = t;
	}
	return postfix(P);
}

/* Binary operators by precedence, loosest first. */
static const int levels[][5] = {
	{P_OR}, {P_AND}, {'|'}, {'^'}, {'&'}, {P_EQ, P_NE}, {'<', '>', P_LE, P_GE}, {P_SHL, P_SHR}, {'+', '-'},
	{'*', '/', '%'},
};
#define NLEVELS ((int)(sizeof(levels) / sizeof(levels[0])))

static struct sc_node *binary(struct ps *P, int lv)
{
	if (lv == NLEVELS)
		return unary(P);
	struct sc_node *l = binary(P, lv + 1);
	while (l && P->t.kind == TK_PUNCT) {
		int op = P->t.op, hit = 0;
		for (int k = 0; k < 5 && levels[lv][k]; k++)
			hit |= levels[lv][k] == op;
		/* inside /predicate/, a bare '/' ends it */
		if (!hit || (op == '/' && P->in_pred && !P->parens))
			break;
		struct sc_pos pos = P->t.pos;
		next(P);
		struct sc_node *r = binary(P, lv + 1), *n;
		if (!r || !(n = node(P, E_BIN, pos)))
			return NULL;
		n->op = (int16_t)op;
		n->a = l;
		n->b = r;
		l = n;
	}
	return l;
}

static struct sc_node *expr(struct ps *P)
{
	struct sc_node *c = binary(P, 0);
	if (!c || !is_op(P, '?'))
		return c;
	struct sc_pos pos = P->t.pos;
	next(P);
	struct sc_node *a = expr(P), *b, *n;
	if (!a || expect(P, ':', "':' of ?:") || !(b = expr(P)) || !(n = node(P, E_TERN, pos)))
		return NULL;
	n->a = c;
	n->b = a;
	n->c = b;
	return n;
}

static struct sc_node *block(struct ps *P);

static int assign_op(int op)
{
	switch (op) {
	case '=': return '=';
	case P_ADDEQ: return '+';
	case P_SUBEQ: return '-';
	case P_MULEQ: return '*';
	case P_DIVEQ: return '/';
	case P_MODEQ: return '%';
	case P_ANDEQ: return '&';
	case P_OREQ: return '|';
	case P_XOREQ: return '^';
	case P_SHLEQ: return P_SHL;
	case P_SHREQ: return P_SHR;
	}
	return 0;
}

/* One statement; *braced when it ended with a block (no ';' needed). */
static struct sc_node *stmt(struct ps *P, int *braced)
{
	struct sc_tok t = P->t;
	struct sc_node *n;
	*braced = 0;
	if (is_word(P, "if")) {
		next(P);
		if (expect(P, '(', "'(' after if"))
			return NULL;
		P->parens++;
		struct sc_node *c = expr(P);
		P->parens--;
		if (!c || expect(P, ')', "')'"))
			return NULL;
		struct sc_node *th = block(P), *el = NULL;
		if (!th)
			return NULL;
		if (is_word(P, "else")) {
			next(P);
			int b;
			el = is_word(P, "if") ? stmt(P, &b) : block(P);
			if (!el)
				return NULL;
		}
		if (!(n = node(P, S_IF, t.pos)))
			return NULL;
		n->a = c;
		n->b = th;
		n->c = el;
		*braced = 1;
		return n;
	}
	if (is_word(P, "unroll") || is_word(P, "while")) {
		int unroll = is_word(P, "unroll");
		next(P);
		if (expect(P, '(', "'('"))
			return NULL;
		struct sc_node *c = expr(P);
		if (!c || expect(P, ')', "')'"))
			return NULL;
		struct sc_node *body = block(P);
		if (!body || !(n = node(P, unroll ? S_UNROLL : S_WHILE, t.pos)))
			return NULL;
		n->a = c;
		n->b = body;
		*braced = 1;
		return n;
	}
	if (is_word(P, "return") || is_word(P, "break") || is_word(P, "continue")) {
		int k = is_word(P, "return") ? S_RETURN : is_word(P, "break") ? S_BREAK : S_CONTINUE;
		next(P);
		return node(P, k, t.pos);
	}
	if (is_op(P, '{')) {
		*braced = 1;
		return block(P);
	}
	struct sc_node *e = expr(P);
	if (!e)
		return NULL;
	if (P->t.kind == TK_PUNCT && assign_op(P->t.op)) {
		if (e->kind != E_MAP && e->kind != E_VAR && e->kind != E_SELF)
			return fail(P, P->t.pos, "only a map, a $variable or a self-> variable can be assigned");
		int op = assign_op(P->t.op);
		struct sc_pos pos = P->t.pos;
		next(P);
		struct sc_node *r = expr(P);
		if (!r || !(n = node(P, E_ASSIGN, pos)))
			return NULL;
		n->op = (int16_t)op;
		n->a = e;
		n->b = r;
		e = n;
	}
	if (!(n = node(P, S_EXPR, t.pos)))
		return NULL;
	n->a = e;
	return n;
}

static struct sc_node *block(struct ps *P)
{
	struct sc_pos pos = P->t.pos;
	if (expect(P, '{', "'{'"))
		return NULL;
	struct list l = {.n = 0};
	while (!is_op(P, '}')) {
		if (is_op(P, ';')) {
			next(P);
			continue;
		}
		if (P->t.kind == TK_EOF)
			return unexpected(P, "'}'");
		int braced;
		struct sc_node *s = stmt(P, &braced);
		if (!s || push(P, &l, s))
			return NULL;
		if (is_op(P, ';'))
			next(P);
		else if (!braced && !is_op(P, '}'))
			return unexpected(P, "';' or '}'");
	}
	next(P);
	struct sc_node *b = node(P, S_BLOCK, pos);
	if (!b)
		return NULL;
	b->kids = keep(P, &l);
	b->nkids = l.n;
	return b;
}

static int probe(struct ps *P, struct sc_probe *pr)
{
	struct sc_tok aps[64];
	uint32_t n = 0;
	pr->pos = P->L.pos;
	for (;;) {
		struct sc_tok a = sc_lex_attach(&P->L);
		if (a.kind == TK_EOF) {
			P->t = sc_lex_next(&P->L);
			unexpected(P, "a probe (BEGIN, END, tracepoint:SYS:NAME, uprobe:BIN:FUNC, interval:s:N)");
			return -1;
		}
		if (n == 64) {
			fail(P, a.pos, "a probe lists at most 64 attach points");
			return -1;
		}
		if (!n)
			pr->pos = a.pos;
		aps[n++] = a;
		sc_lex_skip_space(&P->L);
		if (P->L.p < P->L.end && *P->L.p == ',') {
			P->L.p++;
			P->L.pos.col++;
			continue;
		}
		break;
	}
	if (!(pr->aps = sc_alloc(P->a, n * sizeof(*pr->aps)))) {
		fail(P, pr->pos, "out of memory");
		return -1;
	}
	memcpy(pr->aps, aps, n * sizeof(*aps));
	pr->naps = n;
	next(P);
	if (is_op(P, '/')) {
		next(P);
		P->in_pred = 1;
		P->parens = 0;
		pr->pred = expr(P);
		P->in_pred = 0;
		if (!pr->pred || expect(P, '/', "'/' closing the predicate"))
			return -1;
	}
	if (!is_op(P, '{')) {
		unexpected(P, "'{' opening the probe's actions");
		return -1;
	}
	return (pr->body = block(P)) ? 0 : -1;
}

int sc_parse(struct sc_ast *ast, const char *src, size_t len, struct sc_arena *a, char *err, size_t errlen)
{
	struct ps P;
	memset(&P, 0, sizeof(P));
	sc_lex_init(&P.L, src, len, a, err, errlen);
	P.a = a;
	P.err = err;
	P.errlen = errlen;
	memset(ast, 0, sizeof(*ast));
	uint32_t cap = 0;
	for (;;) {
		/* the token read after the last probe's '}' starts the next */
		if (P.t.p) {
			P.L.p = P.t.p;
			P.L.pos = P.t.pos;
			P.t.p = NULL;
		}
		sc_lex_skip_space(&P.L);
		if (P.L.failed)
			return -EINVAL;
		if (P.L.p >= P.L.end)
			break;
		if (ast->nprobes == cap) {
			uint32_t nc = cap ? cap * 2 : 16;
			struct sc_probe *np = sc_alloc(a, nc * sizeof(*np));
			if (!np) {
				fail(&P, P.L.pos, "out of memory");
				return -ENOMEM;
			}
			if (cap)
				memcpy(np, ast->probes, cap * sizeof(*np));
			ast->probes = np;
			cap = nc;
		}
		if (probe(&P, &ast->probes[ast->nprobes]))
			return -EINVAL;
		ast->nprobes++;
	}
	if (!ast->nprobes) {
		struct sc_pos p = {1, 1};
		sc_errat(err, errlen, p, "the program has no probes");
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------ kernel filters */

static struct sc_node *f_or(struct ps *P);

/* FIELD OP VALUE */
static struct sc_node *f_pred(struct ps *P)
{
	if (P->t.kind != TK_IDENT)
		return unexpected(P, "a field name");
	struct sc_node *f = node(P, E_FIELD, P->t.pos);
	if (!f)
		return NULL;
	f->name = P->t.p;
	f->nlen = P->t.len;
	f->filter = 1;
	next(P);
	if (P->t.kind != TK_PUNCT)
		return unexpected(P, "a comparison (==, !=, <, <=, >, >=, &, ~)");
	int op = P->t.op;
	if (op != P_EQ && op != P_NE && op != '<' && op != '>' && op != P_LE && op != P_GE && op != '&' && op != '~')
		return unexpected(P, "a comparison (==, !=, <, <=, >, >=, &, ~)");
	struct sc_pos pos = P->t.pos;
	next(P);
	struct sc_node *v;
	int neg = 0;
	if (is_op(P, '-')) {
		neg = 1;
		next(P);
	}
	if (P->t.kind == TK_INT) {
		if (!(v = node(P, E_INT, P->t.pos)))
			return NULL;
		v->ival = neg ? -(int64_t)P->t.ival : (int64_t)P->t.ival;
	} else if (!neg && (P->t.kind == TK_STR || P->t.kind == TK_IDENT)) {
		/* the kernel takes an unquoted word as text too */
		if (!(v = node(P, E_STR, P->t.pos)))
			return NULL;
		v->name = P->t.kind == TK_STR ? P->t.sval : P->t.p;
		v->nlen = P->t.kind == TK_STR ? P->t.slen : P->t.len;
	} else {
		return unexpected(P, "a number or a string");
	}
	next(P);
	struct sc_node *n = node(P, E_BIN, pos);
	if (!n)
		return NULL;
	n->op = (int16_t)(op == '~' ? 'G' : op);
	n->a = f;
	n->b = v;
	return n;
}

static struct sc_node *f_not(struct ps *P)
{
	if (is_op(P, '!')) {
		struct sc_pos pos = P->t.pos;
		next(P);
		struct sc_node *a = f_not(P), *n;
		if (!a || !(n = node(P, E_UN, pos)))
			return NULL;
		n->op = '!';
		n->a = a;
		return n;
	}
	if (is_op(P, '(')) {
		next(P);
		struct sc_node *n = f_or(P);
		if (!n || expect(P, ')', "')'"))
			return NULL;
		return n;
	}
	return f_pred(P);
}

static struct sc_node *f_chain(struct ps *P, int op, struct sc_node *(*sub)(struct ps *))
{
	struct sc_node *l = sub(P);
	while (l && is_op(P, op)) {
		struct sc_pos pos = P->t.pos;
		next(P);
		struct sc_node *r = sub(P), *n;
		if (!r || !(n = node(P, E_BIN, pos)))
			return NULL;
		n->op = (int16_t)op;
		n->a = l;
		n->b = r;
		l = n;
	}
	return l;
}
static struct sc_node *f_and(struct ps *P) { return f_chain(P, P_AND, f_not); }
static struct sc_node *f_or(struct ps *P) { return f_chain(P, P_OR, f_and); }

int sc_parse_filter(struct sc_node **expr_out, const char *src, size_t len, struct sc_arena *a, char *err,
		    size_t errlen)
{
	struct ps P;
	memset(&P, 0, sizeof(P));
	sc_lex_init(&P.L, src, len, a, err, errlen);
	P.a = a;
	P.err = err;
	P.errlen = errlen;
	next(&P);
	struct sc_node *e = f_or(&P);
	if (e && P.t.kind != TK_EOF)
		e = unexpected(&P, "&&, || or the end of the filter");
	*expr_out = e;
	return e ? 0 : -EINVAL;
}
