/* Argument and return values as text (vals.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vals.h"

static size_t quoted(char *buf, size_t len, const char *s, size_t n)
{
	size_t o = 0;
	n = s ? strnlen(s, n) : 0;
	buf[o++] = '"';
	for (size_t j = 0; j < n && j < 64 && o + 8 < len; j++) { /* room for one escape and the end */
		unsigned char c = (unsigned char)s[j];
		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 32 || c == 127) {
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
		} else {
			buf[o++] = (char)c;
		}
	}
	memcpy(buf + o, n > 64 ? "\"..." : "\"", n > 64 ? 4 : 1);
	return o + (n > 64 ? 4 : 1);
}

static int chr(char *buf, size_t len, unsigned char c)
{
	if (c >= 32 && c < 127)
		return snprintf(buf, len, c == '\'' || c == '\\' ? "'\\%c'" : "'%c'", c);
	if (c == '\n' || c == '\t' || c == '\r' || !c)
		return snprintf(buf, len, "'\\%c'", c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : '0');
	return snprintf(buf, len, "%u", c);
}

size_t vals_text(char *buf, size_t len, enum vals_kind k, uint64_t bits, const char *s, size_t n)
{
	int w;
	float f;
	double d;
	uint32_t b32 = (uint32_t)bits;
	switch (k) {
	case VALS_STR:
		return quoted(buf, len, s, n);
	case VALS_BYTES:
		w = snprintf(buf, len, "<bytes>");
		break;
	case VALS_CHAR:
		w = chr(buf, len, (unsigned char)bits);
		break;
	case VALS_F32:
		memcpy(&f, &b32, sizeof(f));
		w = snprintf(buf, len, "%g", (double)f);
		break;
	case VALS_F64:
		memcpy(&d, &bits, sizeof(d));
		w = snprintf(buf, len, "%g", d);
		break;
	case VALS_PTR:
		w = snprintf(buf, len, "0x%" PRIx64, bits);
		break;
	case VALS_SINT:
		w = snprintf(buf, len, "%" PRId64, (int64_t)bits);
		break;
	default:
		w = snprintf(buf, len, bits < 100000 ? "%" PRIu64 : "0x%" PRIx64, bits);
	}
	return w < 0 ? 0 : (size_t)w < len ? (size_t)w : len - 1;
}
