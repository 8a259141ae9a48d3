/* out_fast — see out_fast.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "esc.h"
#include "out_fast.h"

void of_init(struct ofast *o, int fd)
{
	o->fd = fd;
	o->err = 0;
	o->len = 0;
}

int of_flush(struct ofast *o)
{
	size_t off = 0;
	while (off < o->len && !o->err) {
		ssize_t k = write(o->fd, o->buf + off, o->len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			o->err = k < 0 ? -errno : -EIO;
		else
			off += (size_t)k;
	}
	o->len = 0;
	return o->err;
}

void of_mem_big(struct ofast *o, const char *s, size_t n)
{
	if (n > sizeof(o->buf) / 2) {
		of_flush(o);
		while (n) { /* huge strings go out in pieces */
			size_t k = n < sizeof(o->buf) ? n : sizeof(o->buf);
			memcpy(o->buf, s, k);
			o->len = k;
			of_flush(o);
			s += k;
			n -= k;
		}
		return;
	}
	of_room(o, n);
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static const char digits2[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
			      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
			      "8081828384858687888990919293949596979899";

/* Writes v's digits ending at end; returns where they start. */
static inline char *digits(char *end, uint64_t v)
{
	char *p = end;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;
		v /= 100;
		*--p = digits2[d + 1];
		*--p = digits2[d];
	}
	if (v >= 10) {
		*--p = digits2[v * 2 + 1];
		*--p = digits2[v * 2];
	} else {
		*--p = (char)('0' + v);
	}
	return p;
}

static inline unsigned ndigits(uint64_t v)
{
	unsigned n = 1;
	for (;;) {
		if (v < 10)
			return n;
		if (v < 100)
			return n + 1;
		if (v < 1000)
			return n + 2;
		if (v < 10000)
			return n + 3;
		v /= 10000;
		n += 4;
	}
}

void of_u64(struct ofast *o, uint64_t v)
{
	/* straight into the buffer: a copy from a scratch array was a libc
	 * call per number */
	unsigned n = ndigits(v);
	of_room(o, 20);
	digits(o->buf + o->len + n, v);
	o->len += n;
}

void of_i64(struct ofast *o, int64_t v)
{
	if (v < 0) {
		of_ch(o, '-');
		of_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		of_u64(o, (uint64_t)v);
	}
}

void of_hex(struct ofast *o, uint64_t v)
{
	char t[20];
	char *p = t + sizeof(t);
	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	of_mem(o, p, (size_t)(t + sizeof(t) - p));
}

void of_u64w(struct ofast *o, uint64_t v, int w)
{
	/* zero-padded to w, at most 24 wide, straight into the buffer */
	unsigned n = ndigits(v), k = w > (int)n ? (unsigned)w : n;
	if (k > 24)
		k = n > 24 ? n : 24;
	of_room(o, 24);
	memset(o->buf + o->len, '0', 24); /* a fixed size: no libc call */
	digits(o->buf + o->len + k, v);
	o->len += k;
}

/* of_frac3 and of_frac3_n (out_fast.h), entry r of each made from r's
 * three digits a, b, c */
#define D10(M, a, b) M(a, b, 0), M(a, b, 1), M(a, b, 2), M(a, b, 3), M(a, b, 4), \
	M(a, b, 5), M(a, b, 6), M(a, b, 7), M(a, b, 8), M(a, b, 9)
#define D100(M, a) D10(M, a, 0), D10(M, a, 1), D10(M, a, 2), D10(M, a, 3), D10(M, a, 4), \
	D10(M, a, 5), D10(M, a, 6), D10(M, a, 7), D10(M, a, 8), D10(M, a, 9)
#define D1000(M) D100(M, 0), D100(M, 1), D100(M, 2), D100(M, 3), D100(M, 4), \
	D100(M, 5), D100(M, 6), D100(M, 7), D100(M, 8), D100(M, 9)
#define FRAC3(a, b, c) {'.', '0' + (a), '0' + (b), '0' + (c)}
#define FRAC3_N(a, b, c) ((c) ? 4 : (b) ? 3 : (a) ? 2 : 0)
const char of_frac3[1000][4] = {D1000(FRAC3)};
const uint8_t of_frac3_n[1000] = {D1000(FRAC3_N)};

void of_milli(struct ofast *o, uint64_t v)
{
	/* one pass into the buffer: export writes two per call (us.ns) */
	uint64_t q = v / 1000;
	unsigned r = (unsigned)(v % 1000), n = q < 10 ? 1 : ndigits(q);
	of_room(o, 24);
	char *p = o->buf + o->len;
	if (q < 10) /* most durations: no digit loop */
		p[0] = (char)('0' + q);
	else
		digits(p + n, q);
	memcpy(p + n, of_frac3[r], 4);
	o->len += n + of_frac3_len(r);
}

void of_ts(struct ofast *o, uint64_t ns)
{
	/* seconds, a dot, then exactly nine digits of nanoseconds */
	uint64_t sec = ns / 1000000000u;
	uint32_t frac = (uint32_t)(ns % 1000000000u);
	unsigned n = ndigits(sec);
	of_room(o, 32);
	char *p = o->buf + o->len;
	digits(p + n, sec);
	p += n;
	*p = '.';
	char *end = p + 10;
	for (int i = 0; i < 4; i++) {
		unsigned d = (frac % 100) * 2;
		frac /= 100;
		*--end = digits2[d + 1];
		*--end = digits2[d];
	}
	*--end = (char)('0' + frac);
	o->len += n + 10;
}

/* "YYYY-MM-DDTHH:MM:SS" of second sec, UTC, into head (>= 24 bytes) */
static int iso_head(char *head, int64_t sec)
{
	time_t t = (time_t)sec;
	struct tm tm;
	if (!gmtime_r(&t, &tm))
		return 0;
	return strftime(head, 24, "%Y-%m-%dT%H:%M:%S", &tm) > 0;
}

static void split_ns(int64_t ns, int64_t *sec, uint32_t *frac)
{
	*sec = ns / 1000000000;
	int64_t f = ns % 1000000000;
	if (f < 0) { /* before 1970: the second below, as gmtime counts */
		f += 1000000000;
		--*sec;
	}
	*frac = (uint32_t)f;
}

size_t wall_iso(char *buf, size_t n, int64_t ns)
{
	int64_t sec;
	uint32_t frac;
	split_ns(ns, &sec, &frac);
	char head[24];
	if (!iso_head(head, sec))
		snprintf(head, sizeof(head), "?");
	int k = snprintf(buf, n, "%s.%09uZ", head, frac);
	return k < 0 ? 0 : (size_t)k >= n ? n - 1 : (size_t)k;
}

void of_wall(struct ofast *o, struct of_wallc *c, int64_t ns)
{
	int64_t sec;
	uint32_t frac;
	split_ns(ns, &sec, &frac);
	if (!c->ok || c->sec != sec) {
		c->ok = iso_head(c->head, sec);
		c->sec = sec;
		if (!c->ok)
			snprintf(c->head, sizeof(c->head), "?");
	}
	of_str(o, c->head);
	of_ch(o, '.');
	of_u64w(o, frac, 9);
	of_ch(o, 'Z');
}

/* The escapers of esc.h, straight into the buffer: the room they get is
 * all that is left of it, at least 256 bytes. */
static inline void escaped(struct ofast *o, esc_fn fn, const char *s, size_t n)
{
	while (n) {
		of_room(o, 256);
		size_t used, k = fn(o->buf + o->len, sizeof(o->buf) - o->len, s, n, &used);
		o->len += k;
		s += used;
		n -= used;
	}
}

void of_text(struct ofast *o, const char *s, size_t n)
{
	escaped(o, esc_text, s, n);
}

void of_json_str(struct ofast *o, const char *s, size_t n)
{
	of_ch(o, '"');
	escaped(o, esc_json, s, n);
	of_ch(o, '"');
}

void of_csv(struct ofast *o, const char *s, size_t n)
{
	int q = esc_csv_quoted(s, n);
	if (q)
		of_ch(o, '"');
	escaped(o, esc_csv, s, n);
	if (q)
		of_ch(o, '"');
}

void of_csv_dq(struct ofast *o, const char *s, size_t n)
{
	while (n) {
		const char *q = memchr(s, '"', n);
		size_t k = q ? (size_t)(q - s) + 1 : n;
		of_mem(o, s, k);
		if (q)
			of_ch(o, '"');
		s += k;
		n -= k;
	}
}

void of_csv_json_str(struct ofast *o, const char *s, size_t n)
{
	of_mem(o, "\"\"", 2);
	while (n) {
		char tmp[256];
		size_t used, k = esc_json(tmp, sizeof(tmp), s, n, &used);
		of_csv_dq(o, tmp, k);
		s += used;
		n -= used;
	}
	of_mem(o, "\"\"", 2);
}
