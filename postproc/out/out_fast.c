/* out_fast — see out_fast.h. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

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

/* Up to 64 bytes of text straight into the buffer, escapes inline. */
static inline __attribute__((always_inline)) void text_piece(struct ofast *o, const char *s,
							      size_t n)
{
	of_room(o, 4 * n);
	char *d = o->buf + o->len;
	size_t i = 0;
	/* eight bytes at a time while none is below 0x20 or 0x7f */
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, s + i, 8);
		y = x ^ 0x7f7f7f7f7f7f7f7full;
		if (((x - 0x2020202020202020ull) & ~x) & 0x8080808080808080ull)
			break;
		if (((y - 0x0101010101010101ull) & ~y) & 0x8080808080808080ull)
			break;
		memcpy(d, &x, 8);
		d += 8;
	}
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (__builtin_expect(c >= 0x20 && c != 0x7f, 1)) {
			*d++ = (char)c;
			continue;
		}
		d[0] = '\\';
		d[1] = 'x';
		d[2] = "0123456789abcdef"[c >> 4];
		d[3] = "0123456789abcdef"[c & 15];
		d += 4;
	}
	o->len = (size_t)(d - o->buf);
}

void of_text(struct ofast *o, const char *s, size_t n)
{
	/* in pieces, so that the room escapes may need (4 bytes a byte) stays
	 * small whatever the length */
	for (; n > 64; s += 64, n -= 64)
		text_piece(o, s, 64);
	text_piece(o, s, n);
}

void of_json_str(struct ofast *o, const char *s, size_t n)
{
	of_ch(o, '"');
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			run++;
			continue;
		}
		of_mem(o, s + i - run, run);
		run = 0;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			of_mem(o, e, 2);
		} else if (c < 0x20) {
			char e[6] = {'\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15]};
			of_mem(o, e, 6);
		} else {
			/* bytes >= 0x80: kept when they form valid UTF-8 is more work than
			 * it is worth for kernel strings; escape as U+00XX (Latin-1) */
			char e[6] = {'\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15]};
			of_mem(o, e, 6);
		}
	}
	of_mem(o, s + n - run, run);
	of_ch(o, '"');
}
