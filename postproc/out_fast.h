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
static inline void of_mem(struct ofast *o, const char *s, size_t n)
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
void of_ts(struct ofast *o, uint64_t ns);         /* seconds.nanoseconds */
/* Text for humans: control characters as \xNN. */
void of_text(struct ofast *o, const char *s, size_t n);
/* A JSON string literal, quotes included. */
void of_json_str(struct ofast *o, const char *s, size_t n);

#endif
