/* vals — one function argument or return value as text, the way uftrace's
 * replay shows it. A char is 'z' ('\n', '\0', or its number when not
 * printable), a float or double its value (from its IEEE bits), a pointer
 * hex, a signed integer signed, an unsigned one decimal below 100000, hex
 * above. A string is quoted, cut at 64 bytes ("..." after), its quotes,
 * backslashes and control bytes escaped.
 *
 * Writes at most len bytes (len >= VALS_MIN) without a NUL and returns how
 * many; nothing allocates or fails. */
#ifndef TPP_VALS_H
#define TPP_VALS_H

#include <stddef.h>
#include <stdint.h>

#define VALS_MIN 280 /* room for any value: a 64-byte string escaped */

enum vals_kind { VALS_SINT, VALS_UINT, VALS_CHAR, VALS_PTR, VALS_F32, VALS_F64, VALS_STR, VALS_BYTES };

/* bits: the value (VALS_STR/VALS_BYTES: unused); s, n: the string's bytes. */
size_t vals_text(char *buf, size_t len, enum vals_kind k, uint64_t bits, const char *s, size_t n);

#endif
