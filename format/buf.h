/* buf — a growable byte buffer and the little encoders every layer uses:
 * LEB128 varints, zigzag, CBOR item heads and little-endian integers.
 * Invariant: data is NULL only while cap == 0; len <= cap. Allocation
 * failure is sticky (oom = 1) and checked once by the owner, so the hot
 * path needs no error branch per byte. */
#ifndef TPP_BUF_H
#define TPP_BUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

struct buf {
	uint8_t *data;
	size_t len, cap;
	int oom;
};

int buf_grow_slow(struct buf *b, size_t need);

static inline int buf_reserve(struct buf *b, size_t n)
{
	if (__builtin_expect(b->len + n <= b->cap, 1))
		return 0;
	return buf_grow_slow(b, n);
}
static inline void buf_free(struct buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
static inline void buf_put(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}
static inline uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static inline void buf_varint(struct buf *b, uint64_t v)
{
	if (buf_reserve(b, 10))
		return;
	uint8_t *p = b->data + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->data);
}

/* Reads a varint from [*p, end). Returns 0, or -1 if truncated or longer
 * than 10 bytes (never reads past end). */
static inline int get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	if (__builtin_expect(p < end && *p < 0x80, 1)) {
		*out = *p;
		*pp = p + 1;
		return 0;
	}
	if (__builtin_expect(end - p >= 10, 1)) {
		/* ten bytes are there: no bounds check per byte. Two and three
		 * bytes (timestamp deltas of micro- to milliseconds) are
		 * unpacked from one load; a loop carried its shifts per byte. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		uint32_t x;
		memcpy(&x, p, sizeof(x));
		if (!(x & 0x8000)) {
			*out = (x & 0x7f) | (x >> 1 & 0x3f80);
			*pp = p + 2;
			return 0;
		}
		if (!(x & 0x800000)) {
			*out = (x & 0x7f) | (x >> 1 & 0x3f80) | (x >> 2 & 0x1fc000);
			*pp = p + 3;
			return 0;
		}
#endif
		uint64_t v = p[0] & 0x7f;
		for (unsigned i = 1; i < 10; i++) {
			uint8_t c = p[i];
			v |= (uint64_t)(c & 0x7f) << (7 * i);
			if (c < 0x80) {
				*out = v;
				*pp = p + i + 1;
				return 0;
			}
		}
		return -1;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (p >= end)
			return -1;
		uint8_t c = *p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = v;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

/* CBOR (RFC 8949) item head: major type 0..7 and argument. */
static inline void cbor_head(struct buf *b, unsigned major, uint64_t v)
{
	uint8_t h[9];
	size_t n;
	major <<= 5;
	if (v < 24) {
		h[0] = (uint8_t)(major | v);
		n = 1;
	} else if (v <= 0xff) {
		h[0] = (uint8_t)(major | 24);
		h[1] = (uint8_t)v;
		n = 2;
	} else if (v <= 0xffff) {
		h[0] = (uint8_t)(major | 25);
		h[1] = (uint8_t)(v >> 8);
		h[2] = (uint8_t)v;
		n = 3;
	} else if (v <= 0xffffffffu) {
		h[0] = (uint8_t)(major | 26);
		for (int i = 0; i < 4; i++)
			h[1 + i] = (uint8_t)(v >> (24 - 8 * i));
		n = 5;
	} else {
		h[0] = (uint8_t)(major | 27);
		for (int i = 0; i < 8; i++)
			h[1 + i] = (uint8_t)(v >> (56 - 8 * i));
		n = 9;
	}
	buf_put(b, h, n);
}
enum { CB_UINT = 0, CB_NEGINT = 1, CB_BYTES = 2, CB_TEXT = 3, CB_ARRAY = 4, CB_MAP = 5, CB_TAG = 6, CB_SIMPLE = 7 };
static inline void cbor_uint(struct buf *b, uint64_t v) { cbor_head(b, CB_UINT, v); }
static inline void cbor_int(struct buf *b, int64_t v)
{
	if (v >= 0)
		cbor_head(b, CB_UINT, (uint64_t)v);
	else
		cbor_head(b, CB_NEGINT, (uint64_t)(-(v + 1)));
}
static inline void cbor_text(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	cbor_head(b, CB_TEXT, n);
	buf_put(b, s, n);
}
static inline void cbor_bytes(struct buf *b, const void *p, size_t n)
{
	cbor_head(b, CB_BYTES, n);
	buf_put(b, p, n);
}
/* A string from outside (the kernel, /proc, a command line, an ELF file):
 * text when its bytes are valid UTF-8, else a byte string holding them as
 * they are (specs/format.md "Strings"). */
static inline void cbor_str(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	cbor_head(b, s && !utf8_valid(s, n) ? CB_BYTES : CB_TEXT, n);
	buf_put(b, s, n);
}

/* Decodes a CBOR head from [*p, end): major type and argument. Only definite
 * lengths (the format never uses indefinite ones). Returns 0 or -1. */
static inline int cbor_get_head(const uint8_t **pp, const uint8_t *end, unsigned *major, uint64_t *arg)
{
	const uint8_t *p = *pp;
	if (p >= end)
		return -1;
	uint8_t c = *p++;
	unsigned ai = c & 31;
	*major = c >> 5;
	uint64_t v;
	if (ai < 24) {
		v = ai;
	} else if (ai <= 27) {
		unsigned n = 1u << (ai - 24);
		if ((size_t)(end - p) < n)
			return -1;
		v = 0;
		for (unsigned i = 0; i < n; i++)
			v = (v << 8) | *p++;
	} else {
		return -1;
	}
	*arg = v;
	*pp = p;
	return 0;
}

static inline void put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void put_le32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void put_le64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline uint16_t get_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t get_le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static inline uint64_t get_le64(const uint8_t *p) { return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32; }

uint32_t tpp_crc32c(uint32_t crc, const void *data, size_t len);

#endif
