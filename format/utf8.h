/* utf8 — strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
 * past U+10FFFF), the one definition every layer uses: the reader's CBOR
 * decoder (text strings), the writer (text or byte string, specs/format.md
 * "Strings"), and tracepp's output escapers (postproc/out/esc.h). Header
 * only, libc only; nothing allocates or prints. */
#ifndef TPP_UTF8_H
#define TPP_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Length (1..4) of the valid UTF-8 sequence that starts s[0, n), or 0 when
 * s[0] starts none (a stray continuation byte, a lead byte not followed by
 * what it needs, an overlong form, a surrogate, past U+10FFFF). n > 0. */
static inline size_t utf8_seq(const uint8_t *s, size_t n)
{
	uint8_t c = s[0];
	if (c < 0x80)
		return 1;
	size_t k;                     /* continuation bytes */
	uint8_t lo = 0x80, hi = 0xbf; /* the range of the first one */
	if (c < 0xc2 || c > 0xf4)
		return 0;
	if (c < 0xe0) {
		k = 1;
	} else if (c < 0xf0) {
		k = 2;
		lo = c == 0xe0 ? 0xa0 : lo; /* overlong */
		hi = c == 0xed ? 0x9f : hi; /* surrogates */
	} else {
		k = 3;
		lo = c == 0xf0 ? 0x90 : lo; /* overlong */
		hi = c == 0xf4 ? 0x8f : hi; /* past U+10FFFF */
	}
	if (n <= k || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i <= k; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return k + 1;
}

/* 1 if s[0, n) is all valid UTF-8. Runs of ASCII go eight bytes a step. */
static inline int utf8_valid(const void *p, size_t n)
{
	const uint8_t *s = p, *end = s + n;
	while (s < end) {
		if (end - s >= 8) {
			uint64_t w;
			memcpy(&w, s, sizeof(w));
			if (!(w & 0x8080808080808080ull)) {
				s += 8;
				continue;
			}
		}
		size_t k = utf8_seq(s, (size_t)(end - s));
		if (!k)
			return 0;
		s += k;
	}
	return 1;
}

#endif
