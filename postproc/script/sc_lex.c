/* sc_lex — tokens of bpftrace programs and of kernel filter expressions,
 * each with its line and column for error messages. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "sc_int.h"

void sc_errat(char *err, size_t errlen, struct sc_pos pos, const char *fmt, ...)
{
	if (!errlen || err[0])
		return;
	int k = snprintf(err, errlen, "%u:%u: ", pos.line, pos.col);
	if (k < 0 || (size_t)k >= errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
	va_end(ap);
}

void sc_lex_init(struct sc_lex *L, const char *src, size_t len, struct sc_arena *a, char *err, size_t errlen)
{
	memset(L, 0, sizeof(*L));
	L->src = L->p = src;
	L->end = src + len;
	L->pos.line = L->pos.col = 1;
	L->arena = a;
	L->err = err;
	L->errlen = errlen;
	if (errlen)
		err[0] = 0;
	/* a script's "#!/usr/bin/env bpftrace" line */
	if (len >= 2 && src[0] == '#' && src[1] == '!')
		while (L->p < L->end && *L->p != '\n')
			L->p++;
}

static void adv(struct sc_lex *L)
{
	if (*L->p == '\n') {
		L->pos.line++;
		L->pos.col = 1;
	} else {
		L->pos.col++;
	}
	L->p++;
}

static int fail(struct sc_lex *L, struct sc_pos pos, const char *msg)
{
	if (!L->failed)
		sc_errat(L->err, L->errlen, pos, "%s", msg);
	L->failed = 1;
	return TK_EOF;
}

void sc_lex_skip_space(struct sc_lex *L)
{
	while (L->p < L->end) {
		if (isspace((unsigned char)*L->p)) {
			adv(L);
		} else if (*L->p == '/' && L->p + 1 < L->end && L->p[1] == '/') {
			while (L->p < L->end && *L->p != '\n')
				adv(L);
		} else if (*L->p == '/' && L->p + 1 < L->end && L->p[1] == '*') {
			struct sc_pos at = L->pos;
			adv(L);
			adv(L);
			while (L->p < L->end && !(*L->p == '*' && L->p + 1 < L->end && L->p[1] == '/'))
				adv(L);
			if (L->p >= L->end) {
				fail(L, at, "comment never ends");
				return;
			}
			adv(L);
			adv(L);
		} else if (*L->p == '#' && L->pos.col == 1) {
			/* #include and #define lines: the file's types need no C headers */
			while (L->p < L->end && *L->p != '\n')
				adv(L);
		} else {
			return;
		}
	}
}

static int ident_ch(int c) { return isalnum(c) || c == '_'; }

static const struct {
	const char *s;
	int op;
} ops[] = {
	{"<<=", P_SHLEQ}, {">>=", P_SHREQ}, {"->", P_ARROW}, {"==", P_EQ}, {"!=", P_NE}, {"<=", P_LE},
	{">=", P_GE}, {"&&", P_AND}, {"||", P_OR}, {"<<", P_SHL}, {">>", P_SHR}, {"++", P_INC}, {"--", P_DEC},
	{"+=", P_ADDEQ}, {"-=", P_SUBEQ}, {"*=", P_MULEQ}, {"/=", P_DIVEQ}, {"%=", P_MODEQ}, {"&=", P_ANDEQ},
	{"|=", P_OREQ}, {"^=", P_XOREQ},
};

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int lex_string(struct sc_lex *L, struct sc_tok *t)
{
	adv(L); /* the quote */
	const char *s = L->p;
	size_t cap = 0;
	while (s < L->end && *s != '"') {
		if (*s == '\\' && s + 1 < L->end)
			s++;
		s++;
		cap++;
	}
	char *out = sc_alloc(L->arena, cap + 1);
	if (!out)
		return fail(L, t->pos, "out of memory");
	size_t n = 0;
	while (L->p < L->end && *L->p != '"') {
		char c = *L->p;
		if (c == '\n')
			return fail(L, t->pos, "string literal runs past the end of its line");
		if (c != '\\') {
			out[n++] = c;
			adv(L);
			continue;
		}
		adv(L);
		if (L->p >= L->end)
			break;
		c = *L->p;
		adv(L);
		switch (c) {
		case 'n': out[n++] = '\n'; break;
		case 't': out[n++] = '\t'; break;
		case 'r': out[n++] = '\r'; break;
		case '\\': out[n++] = '\\'; break;
		case '"': out[n++] = '"'; break;
		case '\'': out[n++] = '\''; break;
		case 'x': {
			int v = 0, k = 0;
			while (k < 2 && L->p < L->end && hexval(*L->p) >= 0) {
				v = v * 16 + hexval(*L->p);
				adv(L);
				k++;
			}
			if (!k)
				return fail(L, L->pos, "\\x needs hex digits");
			out[n++] = (char)v;
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				int v = c - '0', k = 1;
				while (k < 3 && L->p < L->end && *L->p >= '0' && *L->p <= '7') {
					v = v * 8 + (*L->p - '0');
					adv(L);
					k++;
				}
				out[n++] = (char)v;
				break;
			}
			return fail(L, L->pos, "unknown escape in string literal");
		}
	}
	if (L->p >= L->end)
		return fail(L, t->pos, "string literal never ends");
	adv(L);
	t->sval = out;
	t->slen = (uint32_t)n;
	return TK_STR;
}

static int lex_number(struct sc_lex *L, struct sc_tok *t)
{
	uint64_t v = 0;
	int over = 0;
	if (L->p + 1 < L->end && L->p[0] == '0' && (L->p[1] == 'x' || L->p[1] == 'X')) {
		adv(L);
		adv(L);
		if (L->p >= L->end || hexval(*L->p) < 0)
			return fail(L, t->pos, "hex number without digits");
		while (L->p < L->end && (hexval(*L->p) >= 0 || *L->p == '_')) {
			if (*L->p != '_') {
				over |= v >> 60 != 0;
				v = v * 16 + (uint64_t)hexval(*L->p);
			}
			adv(L);
		}
	} else {
		while (L->p < L->end && (isdigit((unsigned char)*L->p) || *L->p == '_')) {
			if (*L->p != '_') {
				uint64_t d = (uint64_t)(*L->p - '0');
				over |= v > (UINT64_MAX - d) / 10;
				v = v * 10 + d;
			}
			adv(L);
		}
		/* 1e6: an integer with an exponent, as bpftrace writes them */
		if (L->p + 1 < L->end && (*L->p == 'e' || *L->p == 'E') && isdigit((unsigned char)L->p[1])) {
			adv(L);
			unsigned e = 0;
			while (L->p < L->end && isdigit((unsigned char)*L->p)) {
				e = e * 10 + (unsigned)(*L->p - '0');
				adv(L);
				if (e > 30)
					break;
			}
			while (e--) {
				over |= v > UINT64_MAX / 10;
				v *= 10;
			}
		}
	}
	if (over)
		return fail(L, t->pos, "number too large for 64 bits");
	if (L->p < L->end && ident_ch((unsigned char)*L->p))
		return fail(L, L->pos, "a number runs into a name");
	t->ival = v;
	return TK_INT;
}

struct sc_tok sc_lex_next(struct sc_lex *L)
{
	struct sc_tok t;
	memset(&t, 0, sizeof(t));
	sc_lex_skip_space(L);
	t.pos = L->pos;
	t.p = L->p;
	if (L->failed || L->p >= L->end) {
		t.kind = TK_EOF;
		return t;
	}
	unsigned char c = (unsigned char)*L->p;
	if (isalpha(c) || c == '_') {
		while (L->p < L->end && ident_ch((unsigned char)*L->p))
			adv(L);
		t.kind = TK_IDENT;
	} else if (c == '@' || c == '$') {
		adv(L);
		while (L->p < L->end && ident_ch((unsigned char)*L->p))
			adv(L);
		t.kind = c == '@' ? TK_MAPV : TK_VAR;
		if (c == '$' && L->p - t.p == 1)
			t.kind = fail(L, t.pos, "'$' must begin a variable name");
	} else if (isdigit(c)) {
		t.kind = lex_number(L, &t);
	} else if (c == '"') {
		t.kind = lex_string(L, &t);
	} else {
		t.kind = TK_PUNCT;
		t.op = c;
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			size_t n = strlen(ops[i].s);
			if ((size_t)(L->end - L->p) >= n && !memcmp(L->p, ops[i].s, n)) {
				t.op = ops[i].op;
				for (size_t k = 0; k < n; k++)
					adv(L);
				break;
			}
		}
		if (t.op == c) {
			if (!strchr("(){}[],;:?/*%+-!~&|^<>=.", c)) {
				char msg[64];
				if (isprint(c))
					snprintf(msg, sizeof(msg), "unexpected character '%c'", c);
				else
					snprintf(msg, sizeof(msg), "unexpected byte 0x%02x", c);
				t.kind = fail(L, t.pos, msg);
				return t;
			}
			adv(L);
		}
	}
	t.len = (uint32_t)(L->p - t.p);
	return t;
}

static int path_provider(const char *s, size_t n)
{
	static const char *const pp[] = {"uprobe", "uretprobe", "u", "ur", "usdt", "U"};
	for (size_t i = 0; i < sizeof(pp) / sizeof(pp[0]); i++)
		if (strlen(pp[i]) == n && !memcmp(pp[i], s, n))
			return 1;
	return 0;
}

struct sc_tok sc_lex_attach(struct sc_lex *L)
{
	struct sc_tok t;
	memset(&t, 0, sizeof(t));
	sc_lex_skip_space(L);
	t.pos = L->pos;
	t.p = L->p;
	t.kind = TK_IDENT;
	while (L->p < L->end && ident_ch((unsigned char)*L->p))
		adv(L);
	if (L->p < L->end && *L->p == ':' && path_provider(t.p, (size_t)(L->p - t.p))) {
		/* the binary: a path, '/' and all */
		adv(L);
		while (L->p < L->end && *L->p != ':' && !isspace((unsigned char)*L->p) && *L->p != ',' && *L->p != '{')
			adv(L);
	}
	while (L->p < L->end && !isspace((unsigned char)*L->p) && *L->p != ',' && *L->p != '{' && *L->p != '/')
		adv(L);
	t.len = (uint32_t)(L->p - t.p);
	if (!t.len)
		t.kind = TK_EOF;
	return t;
}
