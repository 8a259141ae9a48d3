/* sc_fmt — printf formats (checked against their values when compiled,
 * then applied per event), values as text, and trace time as wall-clock
 * text for time() and strftime(). Integers are formatted as C's printf
 * formats the value a BPF program hands it: a conversion without a length
 * modifier reads 32 bits, as bpftrace's does. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sc_int.h"

int sc_buf_put(struct sc_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 4096;
		while (nc < b->len + n + 1)
			nc *= 2;
		char *np = realloc(b->p, nc);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

int sc_fmt_compile(struct sc_prog *P, struct sc_pos pos, const char *text, uint32_t len, const struct sc_type *args,
		   uint32_t nargs)
{
	struct sc_fspec f[65];
	uint32_t nf = 0, lit = 0, na = 0;
	for (uint32_t i = 0; i < len;) {
		if (text[i] != '%') {
			i++;
			continue;
		}
		if (nf == 64) {
			sc_fail(P, pos, "printf: at most 64 conversions");
			return -1;
		}
		struct sc_fspec *s = &f[nf];
		memset(s, 0, sizeof(*s));
		s->off = lit;
		s->len = i - lit;
		uint32_t k = i + 1;
		if (k < len && text[k] == '%') {
			s->conv = '%';
			nf++;
			i = lit = k + 1;
			continue;
		}
		char spec[24];
		size_t sl = 0;
		spec[sl++] = '%';
		while (k < len && strchr("-+ #0", text[k]) && sl < 8)
			spec[sl++] = text[k++];
		while (k < len && text[k] >= '0' && text[k] <= '9' && sl < 14)
			spec[sl++] = text[k++];
		if (k < len && text[k] == '.') {
			spec[sl++] = text[k++];
			while (k < len && text[k] >= '0' && text[k] <= '9' && sl < 19)
				spec[sl++] = text[k++];
		}
		char lm = 0;
		if (k + 1 < len && text[k] == 'h' && text[k + 1] == 'h') {
			lm = 'H';
			k += 2;
		} else if (k < len && text[k] == 'h') {
			lm = 'h';
			k++;
		} else if (k < len && strchr("lzjt", text[k])) {
			lm = 'l';
			while (k < len && strchr("lzjt", text[k]))
				k++;
		}
		if (k >= len || !strchr("diuxXocsp", text[k])) {
			sc_fail(P, pos, "printf: unknown conversion '%.*s'", (int)(k < len ? k + 1 - i : k - i), text + i);
			return -1;
		}
		char conv = text[k];
		if (strchr("diuxXo", conv)) {
			spec[sl++] = 'l';
			spec[sl++] = 'l';
		}
		spec[sl++] = conv == 'p' ? 'p' : conv;
		spec[sl] = 0;
		s->conv = conv;
		s->lenmod = lm;
		memcpy(s->spec, spec, sl + 1);
		if (na >= nargs) {
			sc_fail(P, pos, "printf: more conversions than values (%u)", nargs);
			return -1;
		}
		struct sc_type t = args[na];
		if (conv == 's' ? t.t == TY_INT : t.t != TY_INT) {
			sc_fail(P, pos, "printf: value %u is %s, not what %%%c prints", na + 1,
				t.t == TY_INT ? "an integer" : t.t == TY_STR ? "a string" : "a timestamp", conv);
			return -1;
		}
		na++;
		nf++;
		i = lit = k + 1;
	}
	if (na != nargs) {
		sc_fail(P, pos, "printf: %u value%s for %u conversion%s", nargs, nargs == 1 ? "" : "s", na, na == 1 ? "" : "s");
		return -1;
	}
	f[nf].off = lit;
	f[nf].len = len - lit;
	f[nf].conv = 0;
	nf++;
	if (P->nfmts == P->fmtcap) {
		uint32_t nc = P->fmtcap ? P->fmtcap * 2 : 16;
		struct sc_fmt *n = realloc(P->fmts, nc * sizeof(*n));
		if (!n)
			return -1;
		P->fmts = n;
		P->fmtcap = nc;
	}
	struct sc_fmt *F = &P->fmts[P->nfmts];
	F->text = text;
	F->len = len;
	F->nf = nf;
	F->f = sc_alloc(&P->arena, nf * sizeof(*F->f));
	F->arg = sc_alloc(&P->arena, (nargs + 1) * sizeof(*F->arg));
	if (!F->f || !F->arg)
		return -1;
	memcpy(F->f, f, nf * sizeof(*f));
	memcpy(F->arg, args, nargs * sizeof(*args));
	return (int)P->nfmts++;
}

/* snprintf into b, growing it. */
static int bprintf(struct sc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bprintf(struct sc_buf *b, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n < sizeof(small))
		return sc_buf_put(b, small, (size_t)n);
	char *big = malloc((size_t)n + 1);
	if (!big)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	int rc = sc_buf_put(b, big, (size_t)n);
	free(big);
	return rc;
}

static long long as_signed(uint64_t v, char lm)
{
	return lm == 'l' ? (long long)v : lm == 'h' ? (short)v : lm == 'H' ? (signed char)v : (int)v;
}
static unsigned long long as_unsigned(uint64_t v, char lm)
{
	return lm == 'l' ? v : lm == 'h' ? (unsigned short)v : lm == 'H' ? (unsigned char)v : (unsigned)v;
}

int sc_format(struct sc_rt *rt, struct sc_buf *b, const struct sc_fmt *F, const uint64_t *args)
{
	uint32_t na = 0;
	int rc = 0;
	for (uint32_t i = 0; i < F->nf && !rc; i++) {
		const struct sc_fspec *s = &F->f[i];
		rc = sc_buf_put(b, F->text + s->off, s->len);
		if (rc || !s->conv)
			continue;
		if (s->conv == '%') {
			rc = sc_buf_put(b, "%", 1);
			continue;
		}
		uint64_t v = args[na];
		struct sc_type t = F->arg[na++];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		switch (s->conv) {
		case 'd':
		case 'i':
			rc = bprintf(b, s->spec, as_signed(v, s->lenmod));
			break;
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			rc = bprintf(b, s->spec, as_unsigned(v, s->lenmod));
			break;
		case 'c':
			rc = bprintf(b, s->spec, (int)(unsigned char)v);
			break;
		case 'p':
			rc = bprintf(b, s->spec, (void *)(uintptr_t)v);
			break;
		case 's':
			if (t.t == TY_TS) {
				struct sc_buf tb = {0};
				const struct sc_str *f = sc_vs(rt->P->pool[t.aux]);
				rc = sc_strftime(rt, &tb, f->s, f->len, v);
				if (!rc)
					rc = sc_buf_put(&tb, "", 1);
				if (!rc)
					rc = bprintf(b, s->spec, tb.p);
				free(tb.p);
			} else {
				rc = bprintf(b, s->spec, sc_vs(v)->s);
			}
			break;
		}
#pragma GCC diagnostic pop
	}
	return rc;
}

void sc_value_text(struct sc_rt *rt, struct sc_buf *b, struct sc_type ty, uint64_t v)
{
	char num[24];
	switch (ty.t) {
	case TY_STR: {
		const struct sc_str *s = sc_vs(v);
		if (s)
			sc_buf_put(b, s->s, s->len);
		break;
	}
	case TY_TS: {
		const struct sc_str *f = sc_vs(rt->P->pool[ty.aux]);
		sc_strftime(rt, b, f->s, f->len, v);
		break;
	}
	default: {
		int n = ty.sign ? snprintf(num, sizeof(num), "%lld", (long long)v)
				: snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
		sc_buf_put(b, num, (size_t)n);
	}
	}
}

int sc_strftime(struct sc_rt *rt, struct sc_buf *b, const char *fmt, size_t flen, uint64_t ns)
{
	/* trace time is CLOCK_MONOTONIC: the file says how far the wall
	 * clock was ahead of it when recording began */
	int64_t wall = (int64_t)ns + rt->wall_off;
	time_t secs = (time_t)(wall / 1000000000);
	long nsec = (long)(wall % 1000000000);
	if (nsec < 0) {
		nsec += 1000000000;
		secs--;
	}
	struct tm tm;
	if (!localtime_r(&secs, &tm))
		return sc_buf_put(b, "?", 1);
	/* %f, as bpftrace's strftime: the microseconds */
	char f[512], us[8];
	size_t k = 0;
	snprintf(us, sizeof(us), "%06ld", nsec / 1000);
	for (size_t i = 0; i < flen && k + 8 < sizeof(f); i++) {
		if (fmt[i] == '%' && i + 1 < flen && fmt[i + 1] == 'f') {
			memcpy(f + k, us, 6);
			k += 6;
			i++;
		} else if (fmt[i] == '%' && i + 1 < flen) {
			f[k++] = fmt[i++];
			f[k++] = fmt[i];
		} else {
			f[k++] = fmt[i];
		}
	}
	f[k] = 0;
	if (!k)
		return 0;
	char out[1024];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	size_t n = strftime(out, sizeof(out), f, &tm);
#pragma GCC diagnostic pop
	return sc_buf_put(b, out, n);
}
