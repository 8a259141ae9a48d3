/* esc — the one JSON string escaper, the one RFC 4180 CSV quoter and the
 * one text form for humans that every tracepp command writes a trace's
 * strings through. Those strings are bytes (specs/format.md "Strings"):
 * comm, argv, paths and symbol names need not be UTF-8 and may hold quotes,
 * commas and control bytes. Whatever they hold, all three outputs are valid
 * UTF-8, and one string never breaks the line or record around it:
 *  - JSON: `"` and `\` as \" and \\; bytes below 0x20 and 0x7f as \u00XX;
 *    valid UTF-8 as it is; each byte that is not part of a valid UTF-8
 *    sequence as \ufffd (U+FFFD, the replacement character).
 *  - CSV (RFC 4180): a field holding `,` `"` CR LF or any other control byte
 *    is quoted, with `"` doubled; each byte that is not UTF-8, and NUL,
 *    becomes U+FFFD; everything else is kept.
 *  - text: printable ASCII and valid UTF-8 as they are; control bytes, 0x7f
 *    and bytes that are not UTF-8 as \xNN.
 *
 * The escapers fill a caller's buffer, so out_fast.h writes straight into
 * its own and stdio callers go through the wrappers below: the same code
 * either way. Each takes src[0, n), writes at most `room` bytes (room >=
 * ESC_MIN_ROOM) to dst, stops at a whole input character, sets *used to the
 * input consumed and returns the bytes written: as much as fits, so a
 * buffer of exactly the output's size takes it all. Nothing allocates or
 * fails.
 */
#ifndef TPP_ESC_H
#define TPP_ESC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

#define ESC_MIN_ROOM 8 /* the longest escape of one input character is 6 */

static const char esc_hex[] = "0123456789abcdef";

enum esc_mode { ESC_TEXT, ESC_JSON, ESC_CSV };

/* Eight input bytes that go out as they are, in one step: printable ASCII
 * (0x20..0x7e) for text; and no '"' or '\' for JSON; for CSV any ASCII
 * but '"' and NUL. */
static inline int esc_has(uint64_t x, uint8_t b)
{
	uint64_t y = x ^ (0x0101010101010101ull * b);
	return ((y - 0x0101010101010101ull) & ~y & 0x8080808080808080ull) != 0;
}
static inline int esc_plain8(uint64_t x, enum esc_mode m)
{
	if (x & 0x8080808080808080ull)
		return 0;
	if (m == ESC_CSV)
		return !esc_has(x, '"') && !esc_has(x, 0);
	if (((x - 0x2020202020202020ull) & ~x & 0x8080808080808080ull) || esc_has(x, 0x7f))
		return 0;
	return m == ESC_TEXT || (!esc_has(x, '"') && !esc_has(x, '\\'));
}

/* The one loop behind the three (m is a constant in each, so the
 * compiler keeps only its own cases). */
static inline __attribute__((always_inline)) size_t esc_run(char *dst, size_t room, const char *src, size_t n,
							    size_t *used, enum esc_mode m)
{
	const uint8_t *s = (const uint8_t *)src, *e = s + n;
	char *d = dst, *de = dst + room;
	while (s < e) {
		if (e - s >= 8 && de - d >= 8) {
			uint64_t x;
			memcpy(&x, s, 8);
			if (esc_plain8(x, m)) {
				memcpy(d, &x, 8);
				d += 8;
				s += 8;
				continue;
			}
		}
		uint8_t c = *s;
		size_t k = c >= 0x80 ? utf8_seq(s, (size_t)(e - s)) : 1;
		int keep = k > 1 || (k && (m == ESC_CSV ? c && c != '"'
						       : c >= 0x20 && c != 0x7f && (m == ESC_TEXT || (c != '"' && c != '\\'))));
		/* what this character takes: itself, or its escape */
		size_t need = keep ? k : m == ESC_TEXT ? 4 : m == ESC_CSV ? 3 : c == '"' || c == '\\' ? 2 : 6;
		if ((size_t)(de - d) < need)
			break;
		if (keep) {
			memcpy(d, s, k);
			d += k;
			s += k;
			continue;
		}
		s++;
		if (m == ESC_CSV && c == '"') {
			memcpy(d, "\"\"", 2);
			d += 2;
		} else if (m == ESC_CSV) {
			memcpy(d, "\xef\xbf\xbd", 3); /* U+FFFD: not UTF-8, or NUL */
			d += 3;
		} else if (m == ESC_TEXT) {
			memcpy(d, (const char[4]){'\\', 'x', esc_hex[c >> 4], esc_hex[c & 15]}, 4);
			d += 4;
		} else if (c == '"' || c == '\\') {
			memcpy(d, (const char[2]){'\\', (char)c}, 2);
			d += 2;
		} else if (c >= 0x80) {
			memcpy(d, "\\ufffd", 6);
			d += 6;
		} else {
			memcpy(d, (const char[6]){'\\', 'u', '0', '0', esc_hex[c >> 4], esc_hex[c & 15]}, 6);
			d += 6;
		}
	}
	*used = (size_t)(s - (const uint8_t *)src);
	return (size_t)(d - dst);
}

static inline size_t esc_text(char *dst, size_t room, const char *src, size_t n, size_t *used)
{
	return esc_run(dst, room, src, n, used, ESC_TEXT);
}

/* The inside of a JSON string literal (the quotes are the caller's). */
static inline size_t esc_json(char *dst, size_t room, const char *src, size_t n, size_t *used)
{
	return esc_run(dst, room, src, n, used, ESC_JSON);
}

/* 1 if a CSV field holding s[0, n) must be quoted (RFC 4180 section 2: it
 * holds a comma, a quote or a line break; here any control byte too, so no
 * reader is ever surprised). */
static inline int esc_csv_quoted(const char *src, size_t n)
{
	const uint8_t *s = (const uint8_t *)src;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] == 0x7f || s[i] == ',' || s[i] == '"')
			return 1;
	return 0;
}

/* A CSV field's characters (the quotes, when esc_csv_quoted, are the
 * caller's). */
static inline size_t esc_csv(char *dst, size_t room, const char *src, size_t n, size_t *used)
{
	return esc_run(dst, room, src, n, used, ESC_CSV);
}

/* Any of the three, for code that takes one as a parameter. */
typedef size_t (*esc_fn)(char *dst, size_t room, const char *src, size_t n, size_t *used);

/* stdio: a JSON string literal, quotes included; a CSV field, quoted when
 * it must be; the text form. s may be NULL when n is 0. */
void esc_json_put(FILE *f, const char *s, size_t n);
void esc_csv_put(FILE *f, const char *s, size_t n);
void esc_text_put(FILE *f, const char *s, size_t n);
/* The text form into a malloc'd, NUL-terminated string; NULL on -ENOMEM. */
char *esc_text_dup(const char *s, size_t n);

#endif
