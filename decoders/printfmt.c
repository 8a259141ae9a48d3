/* printfmt — the flag and symbol tables of a kernel print format (see
 * tpp_decode.h, tpp_pfmt_parse). The text comes from a file, so it is
 * untrusted: every read is bounded by the text's end, the expression
 * evaluator's recursion by PF_DEPTH, a table by PF_ENTRIES, a name by
 * PF_NAME; anything outside the small C subset the kernel writes there drops
 * that table (a partial table would print names the kernel would not). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tpp_decode.h"

#define PF_DEPTH 200     /* calls deep the evaluator may go (parentheses, casts, operators) */
#define PF_ENTRIES 1024  /* {value, "NAME"} pairs of one table */
#define PF_NAME 128      /* bytes of a name, with its NUL */
#define PF_POOL (64u << 10)
#define PF_CALLS 32      /* __print_ calls looked at per format: the kernel's most is 10
			  * (ext4_fc_stats); each may scan to the text's end, so this
			  * keeps a hostile text's cost linear in its length */

struct cur {
	const char *p, *end;
	int depth, bad;
};

static int is_id0(char c)
{
	return c == '_' || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

static int is_id(char c)
{
	return is_id0(c) || (c >= '0' && c <= '9');
}

static char peek(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
		c->p++;
	return c->p < c->end ? *c->p : 0;
}

static int eat(struct cur *c, char ch)
{
	if (peek(c) != ch)
		return 0;
	c->p++;
	return 1;
}

/* A C string literal (adjacent ones joined) into out[cap]; 0 or -1. */
static int str_lit(struct cur *c, char *out, size_t cap)
{
	size_t n = 0;
	if (peek(c) != '"')
		return -1;
	while (peek(c) == '"') {
		c->p++;
		for (;;) {
			if (c->p >= c->end)
				return -1;
			char ch = *c->p++;
			if (ch == '"')
				break;
			if (ch == '\\') {
				if (c->p >= c->end)
					return -1;
				ch = *c->p++;
				ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch;
			}
			/* printable ASCII only: names go to terminals as they are,
			 * and the kernel's are all plain words */
			if (ch < 0x20 || ch > 0x7e)
				return -1;
			if (n + 1 >= cap)
				return -1;
			out[n++] = ch;
		}
	}
	out[n] = 0;
	return 0;
}

/* Past a string literal starting at c->p (for scanning). */
static void skip_str(struct cur *c)
{
	for (c->p++; c->p < c->end && *c->p != '"'; c->p++)
		if (*c->p == '\\' && c->p + 1 < c->end)
			c->p++;
	if (c->p < c->end)
		c->p++;
}

static uint64_t expr(struct cur *c, int min_prec);

static uint64_t number(struct cur *c)
{
	uint64_t v = 0;
	unsigned base = 10;
	const char *p = c->p;
	if (p + 1 < c->end && p[0] == '0' && (p[1] | 32) == 'x') {
		base = 16;
		p += 2;
	} else if (*p == '0') {
		base = 8;
	}
	const char *digits = p;
	for (; p < c->end; p++) {
		unsigned d = *p >= '0' && *p <= '9' ? (unsigned)(*p - '0')
			   : (*p | 32) >= 'a' && (*p | 32) <= 'f' ? (unsigned)((*p | 32) - 'a' + 10) : 99;
		if (d >= base)
			break;
		v = v * base + d; /* a literal past 64 bits wraps: the kernel's never are */
	}
	if (p == digits && base == 16)
		c->bad = 1;
	while (p < c->end && (*p == 'u' || *p == 'U' || *p == 'l' || *p == 'L'))
		p++;
	if (p < c->end && is_id(*p))
		c->bad = 1; /* 1f, 09, 0x1g: no constant this subset knows */
	c->p = p;
	return v;
}

/* "(unsigned long)" ahead: the width and signedness of a cast, or 0 when
 * the parenthesis opens an expression. A typedef this cannot size (gfp_t)
 * keeps the value: the kernel's masks fit their types. */
static int cast_ahead(struct cur *c, unsigned *bits, int *sgn)
{
	const char *p = c->p + 1, *q;
	while (p < c->end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= c->end || !is_id0(*p))
		return 0;
	for (q = p; q < c->end && (is_id(*q) || *q == ' ' || *q == '\t' || *q == '*'); q++)
		;
	if (q >= c->end || *q != ')')
		return 0;
	char ty[96];
	size_t n = (size_t)(q - p);
	if (n >= sizeof(ty))
		return 0;
	memcpy(ty, p, n);
	ty[n] = 0;
	*bits = 64;
	*sgn = 0;
	int uns = strstr(ty, "unsigned") != NULL;
	if (strchr(ty, '*'))
		*bits = 64;
	else if (strstr(ty, "char"))
		*bits = 8, *sgn = !uns;
	else if (strstr(ty, "short"))
		*bits = 16, *sgn = !uns;
	else if (strstr(ty, "long"))
		*bits = 64, *sgn = !uns;
	else if ((strstr(ty, "int") && !strstr(ty, "_t")) || !strcmp(ty, "unsigned") || !strcmp(ty, "signed"))
		*bits = 32, *sgn = !uns;
	else if (ty[0] == 'u' || ty[0] == 's' || !strncmp(ty, "__u", 3) || !strncmp(ty, "__s", 3)) {
		const char *d = ty + (ty[0] == '_' ? 3 : 1);
		int w = atoi(d);
		if (w == 8 || w == 16 || w == 32 || w == 64)
			*bits = (unsigned)w, *sgn = ty[0] == 's' || ty[2] == 's';
	}
	c->p = q + 1;
	return 1;
}

static uint64_t unary(struct cur *c)
{
	if (++c->depth > PF_DEPTH) {
		c->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	char ch = peek(c);
	unsigned bits;
	int sgn;
	if (ch == '(' && cast_ahead(c, &bits, &sgn)) {
		v = unary(c);
		if (bits < 64) {
			uint64_t m = (1ULL << bits) - 1;
			v &= m;
			if (sgn && (v >> (bits - 1)) & 1)
				v |= ~m;
		}
	} else if (ch == '(') {
		c->p++;
		v = expr(c, 1);
		if (!eat(c, ')'))
			c->bad = 1;
	} else if (ch == '~' || ch == '!' || ch == '-' || ch == '+') {
		c->p++;
		v = unary(c);
		v = ch == '~' ? ~v : ch == '!' ? !v : ch == '-' ? 0 - v : v;
	} else if (ch >= '0' && ch <= '9') {
		v = number(c);
	} else {
		c->bad = 1; /* an identifier (an enum the kernel left unresolved), a string... */
	}
	c->depth--;
	return v;
}

/* The binary operator at c->p: its precedence (C's, 1 lowest), and length. */
static int binop(struct cur *c, char op[3])
{
	static const struct {
		const char *s;
		int prec;
	} ops[] = {{"||", 1}, {"&&", 2}, {"==", 6}, {"!=", 6}, {"<=", 7}, {">=", 7}, {"<<", 8}, {">>", 8},
		   {"|", 3},  {"^", 4},  {"&", 5},  {"<", 7},  {">", 7},  {"+", 9},  {"-", 9},  {"*", 10},
		   {"/", 10}, {"%", 10}};
	peek(c);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i].s);
		if ((size_t)(c->end - c->p) >= n && !memcmp(c->p, ops[i].s, n)) {
			memcpy(op, ops[i].s, n + 1);
			return ops[i].prec;
		}
	}
	return 0;
}

/* Precedence climbing: the loop takes operators of one level, recursion
 * (counted in depth) only goes up a level. Unsigned 64-bit arithmetic, as
 * the kernel's unsigned long masks. */
static uint64_t expr(struct cur *c, int min_prec)
{
	if (++c->depth > PF_DEPTH) {
		c->bad = 1;
		return 0;
	}
	uint64_t v = unary(c);
	char op[3];
	int prec;
	while (!c->bad && (prec = binop(c, op)) >= min_prec && prec) {
		c->p += strlen(op);
		uint64_t r = expr(c, prec + 1);
		if (c->bad)
			break;
		switch (op[0]) {
		case '|': v = op[1] ? (v || r) : v | r; break;
		case '&': v = op[1] ? (v && r) : v & r; break;
		case '^': v ^= r; break;
		case '=': v = v == r; break;
		case '!': v = v != r; break;
		case '<':
			if (op[1] == '<') {
				if (r >= 64)
					c->bad = 1;
				else
					v <<= r;
			} else {
				v = op[1] ? v <= r : v < r;
			}
			break;
		case '>':
			if (op[1] == '>') {
				if (r >= 64)
					c->bad = 1;
				else
					v >>= r;
			} else {
				v = op[1] ? v >= r : v > r;
			}
			break;
		case '+': v += r; break;
		case '-': v -= r; break;
		case '*': v *= r; break;
		case '/':
		case '%':
			if (!r)
				c->bad = 1;
			else
				v = op[0] == '/' ? v / r : v % r;
			break;
		}
	}
	c->depth--;
	return v;
}

/* The end of the argument starting at c->p: the top-level ',' or ')'. */
static const char *arg_end(const struct cur *c)
{
	int depth = 0;
	for (const char *p = c->p; p < c->end; p++) {
		if (*p == '"') {
			struct cur s = {p, c->end, 0, 0};
			skip_str(&s);
			p = s.p - 1;
		} else if (*p == '(' || *p == '{' || *p == '[') {
			if (++depth > PF_DEPTH)
				return NULL;
		} else if (*p == ')' || *p == '}' || *p == ']') {
			if (!depth--)
				return p;
		} else if (*p == ',' && !depth) {
			return p;
		}
	}
	return NULL;
}

/* The field an argument names, "REC->f" under any parentheses and casts,
 * as an index of t's fields; -1 for anything else (an expression of it). */
static int field_arg(const struct tpp_type *t, const char *p, const char *end)
{
	char s[PF_NAME + 16];
	size_t n = 0;
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t') {
			if (n + 1 >= sizeof(s))
				return -1;
			s[n++] = *p;
		}
	s[n] = 0;
	char *b = s, *e = s + n;
	for (int guard = 0; guard < PF_DEPTH && b < e && *b == '('; guard++) {
		char *close = b;
		for (int d = 0; close < e; close++) {
			d += *close == '(';
			if (*close == ')' && !--d)
				break;
		}
		if (close >= e)
			return -1;
		if (close == e - 1) { /* "(REC->f)" */
			b++;
			e--;
		} else if (is_id0(b[1]) &&
			   strspn(b + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789*") ==
				   (size_t)(close - b - 1)) {
			b = close + 1; /* a cast, "(unsigned long)REC->f" */
		} else {
			return -1; /* an expression of the field */
		}
	}
	if (e - b < 6 || memcmp(b, "REC->", 5))
		return -1;
	b += 5;
	for (char *q = b; q < e; q++)
		if (!is_id(*q))
			return -1;
	for (unsigned i = 0; i < t->nfields; i++)
		if (t->fields[i].name && strlen(t->fields[i].name) == (size_t)(e - b) &&
		    !memcmp(t->fields[i].name, b, (size_t)(e - b)))
			return (int)i;
	return -1;
}

static void pfield_free(struct tpp_pfield *f)
{
	if (!f)
		return;
	free(f->zero);
	free(f->ent);
	free(f->pool);
	free(f);
}

static int add_entry(struct tpp_pfield *f, uint64_t v, const char *name, size_t *pool_cap)
{
	size_t nl = strlen(name) + 1;
	if (f->n >= PF_ENTRIES || f->pool_len + nl > PF_POOL)
		return -1;
	if (f->n >= 8 && !(f->n & (f->n - 1))) { /* full at 8, 16, 32 ... */
		struct tpp_pentry *e = realloc(f->ent, f->n * 2 * sizeof(*e));
		if (!e)
			return -1;
		f->ent = e;
	}
	if (f->pool_len + nl > *pool_cap) {
		size_t nc = *pool_cap ? *pool_cap * 2 : 512;
		while (nc < f->pool_len + nl)
			nc *= 2;
		char *p = realloc(f->pool, nc);
		if (!p)
			return -1;
		f->pool = p;
		*pool_cap = nc;
	}
	memcpy(f->pool + f->pool_len, name, nl);
	f->ent[f->n].val = v;
	f->ent[f->n].name = (uint32_t)f->pool_len;
	f->pool_len += (uint32_t)nl;
	f->n++;
	return 0;
}

/* One __print_flags / __print_symbolic call, c->p just past its '(';
 * the table, or NULL (not a plain field, or outside the subset). */
static struct tpp_pfield *one_call(struct cur *c, const struct tpp_type *t, int flags, int *field)
{
	const char *ae = arg_end(c);
	if (!ae || *ae != ',' || (*field = field_arg(t, c->p, ae)) < 0)
		return NULL;
	c->p = ae + 1;
	struct tpp_pfield *f = calloc(1, sizeof(*f));
	if (!f || !(f->ent = malloc(8 * sizeof(*f->ent)))) {
		free(f);
		return NULL;
	}
	f->flags = flags;
	size_t pool_cap = 0;
	char name[PF_NAME];
	if (flags && (str_lit(c, f->delim, sizeof(f->delim)) || !eat(c, ',')))
		goto bad;
	while (eat(c, '{')) {
		c->depth = 0;
		uint64_t v = expr(c, 1);
		if (c->bad || !eat(c, ','))
			goto bad;
		if (peek(c) != '"') {
			/* the table's end mark, { -1, NULL }: nothing after it counts */
			const char *e = arg_end(c);
			if (!e || *e != '}')
				goto bad;
			c->p = e + 1;
			break;
		}
		if (str_lit(c, name, sizeof(name)) || !eat(c, '}') || add_entry(f, v, name, &pool_cap))
			goto bad;
		if (!eat(c, ','))
			break;
	}
	if (!eat(c, ')') || !f->n)
		goto bad;
	return f;
bad:
	pfield_free(f);
	return NULL;
}

int tpp_pfmt_parse(const struct tpp_type *t, const char *fmt, size_t len, struct tpp_pfmt **out)
{
	*out = NULL;
	if (!t || !fmt || len > TPP_PFMT_MAX)
		return 0;
	struct tpp_pfmt *pf = NULL;
	struct cur c = {fmt, fmt + len, 0, 0};
	const char *prev = NULL; /* the last character before the identifier */
	int calls = 0;
	while (c.p < c.end && calls < PF_CALLS) {
		char ch = *c.p;
		if (ch == '"') {
			skip_str(&c);
			prev = c.p - 1;
			continue;
		}
		if (!is_id0(ch)) {
			if (ch != ' ' && ch != '\t')
				prev = c.p;
			c.p++;
			continue;
		}
		const char *id = c.p;
		while (c.p < c.end && is_id(*c.p))
			c.p++;
		size_t n = (size_t)(c.p - id);
		int flags = n >= 13 && !memcmp(id, "__print_flags", 13) && (n == 13 || (n == 17 && !memcmp(id + 13, "_u64", 4)));
		int sym = n >= 16 && !memcmp(id, "__print_symbolic", 16) && (n == 16 || (n == 20 && !memcmp(id + 16, "_u64", 4)));
		const char *before = prev;
		prev = c.p - 1;
		if ((!flags && !sym) || !eat(&c, '('))
			continue;
		calls++;
		struct cur call = c;
		call.bad = call.depth = 0;
		int fi = -1;
		struct tpp_pfield *f = one_call(&call, t, flags, &fi);
		if (!f)
			continue; /* scan on inside it: nothing there is taken */
		c.p = call.p;
		/* "(REC->f) ? __print_flags(...) : \"none\"": what 0 reads as */
		struct cur z = c;
		char zero[PF_NAME];
		if (flags && before && *before == '?' && eat(&z, ':') && !str_lit(&z, zero, sizeof(zero)))
			f->zero = strdup(zero);
		if (!pf && !(pf = calloc(1, sizeof(*pf)))) {
			pfield_free(f);
			return -ENOMEM;
		}
		if (t->fields[fi].type > TPP_F_S64 || pf->f[fi]) {
			pfield_free(f); /* not a number, or its second table: the first holds */
			continue;
		}
		pf->f[fi] = f;
	}
	*out = pf;
	return 0;
}

void tpp_pfmt_free(struct tpp_pfmt *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < TPP_MAX_FIELDS; i++)
		pfield_free(p->f[i]);
	free(p);
}
