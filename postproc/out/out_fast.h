/* out_fast — buffered stdout writing without printf on the hot path, so
 * text dumps keep pace with the decoder. All functions append to a 64 KiB
 * buffer flushed with write(2); of_flush() reports a failed write (EPIPE,
 * ENOSPC) once, as a negative errno. */
#ifndef TPP_OUT_FAST_H
#define TPP_OUT_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ofast {
	int fd, err;
	size_t len;
	char buf[1 << 16];
};

void of_init(struct ofast *o, int fd);
int of_flush(struct ofast *o);

static inline void of_room(struct ofast *o, size_t n)
{
	if (o->len + n > sizeof(o->buf))
		of_flush(o);
}
void of_mem_big(struct ofast *o, const char *s, size_t n);
static inline void of_mem(struct ofast *o, const char *s, size_t n)
{
	/* Short pieces (field names, task names, digits) are most of what is
	 * written: copied with two overlapping loads and stores rather than a
	 * libc call each. */
	if (__builtin_expect(n <= 32 && o->len + 32 <= sizeof(o->buf), 1)) {
		char *d = o->buf + o->len;
		if (n > 16) {
			/* export's prepared pieces (a call's name and category) */
			char a[16], b[16];
			memcpy(a, s, 16);
			memcpy(b, s + n - 16, 16);
			memcpy(d, a, 16);
			memcpy(d + n - 16, b, 16);
		} else if (n >= 8) {
			uint64_t a, b;
			memcpy(&a, s, 8);
			memcpy(&b, s + n - 8, 8);
			memcpy(d, &a, 8);
			memcpy(d + n - 8, &b, 8);
		} else if (n >= 4) {
			uint32_t a, b;
			memcpy(&a, s, 4);
			memcpy(&b, s + n - 4, 4);
			memcpy(d, &a, 4);
			memcpy(d + n - 4, &b, 4);
		} else if (n) {
			d[0] = s[0];
			d[n / 2] = s[n / 2];
			d[n - 1] = s[n - 1];
		}
		o->len += n;
		return;
	}
	of_mem_big(o, s, n);
}
static inline void of_str(struct ofast *o, const char *s) { of_mem(o, s, strlen(s)); }
static inline void of_ch(struct ofast *o, char c)
{
	of_room(o, 1);
	o->buf[o->len++] = c;
}
void of_u64(struct ofast *o, uint64_t v);
void of_i64(struct ofast *o, int64_t v);
void of_hex(struct ofast *o, uint64_t v);        /* 0x-prefixed */
void of_u64w(struct ofast *o, uint64_t v, int w); /* zero-padded to w digits */
/* v / 1000 with its thousandths, exact in the fewest digits: 1.234, 1.5, 2
 * (trailing zeros and a bare dot dropped) */
void of_milli(struct ofast *o, uint64_t v);
/* ".000" to ".999": of_frac3[r] is "." and r in three digits (4 bytes, no
 * NUL), for callers that write a number's thousandths in one store
 * (export's hot path); of_frac3_len(r) of them make of_milli's decimals. */
extern const char of_frac3[1000][4];
extern const uint8_t of_frac3_n[1000];
static inline unsigned of_frac3_len(unsigned r) { return of_frac3_n[r]; }
void of_ts(struct ofast *o, uint64_t ns);         /* seconds.nanoseconds */
/* Wall-clock ns since the epoch as ISO-8601 UTC to the nanosecond,
 * "2026-11-26T03:43:23.123456789Z" (30 characters); wall_iso writes it and
 * its NUL into buf (>= 40 bytes) and returns its length. of_wall keeps the
 * date and time of the last second in *sec_cache (zero it first): events
 * come many a second. */
struct of_wallc {
	int64_t sec;
	int ok;
	char head[24];
};
size_t wall_iso(char *buf, size_t n, int64_t ns);
void of_wall(struct ofast *o, struct of_wallc *sec_cache, int64_t ns);
/* The escapes of esc.h, the one place they are defined. Text for humans:
 * control bytes and bytes that are not UTF-8 as \xNN. */
void of_text(struct ofast *o, const char *s, size_t n);
/* A JSON string literal, quotes included; always valid UTF-8. */
void of_json_str(struct ofast *o, const char *s, size_t n);
/* An RFC 4180 CSV field, quoted when it must be. */
void of_csv(struct ofast *o, const char *s, size_t n);
/* JSON inside a quoted CSV field (a cell holding an object, as dump's
 * and export --table's "fields"): the caller writes the field's outer
 * quotes; of_csv_dq copies s[0, n) with every '"' doubled (JSON text
 * already escaped: no control byte, valid UTF-8), of_csv_json_str writes
 * a JSON string literal that way, streaming in bounded pieces. */
void of_csv_dq(struct ofast *o, const char *s, size_t n);
void of_csv_json_str(struct ofast *o, const char *s, size_t n);

#endif
