/* out_fast against printf and a byte-by-byte reference: numbers at every
 * width and edge, timestamps, the text, JSON and CSV escapes of esc.h
 * (valid and broken UTF-8, quotes, commas, control bytes), and short
 * copies around the point where the buffer flushes. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tpp_test.h"
#include "../../postproc/out/esc.h"
#include "../../postproc/out/out_fast.h"


/* Length of the valid UTF-8 character at s, or 0: decoded to its code
 * point and checked against RFC 3629's ranges, written apart from
 * format/utf8.h so the two check each other. */
static size_t ref_utf8(const unsigned char *s, size_t n)
{
	unsigned c = s[0], len, cp, min;
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0)
		len = 2, cp = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		len = 3, cp = c & 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		len = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (unsigned i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

enum { R_TEXT, R_JSON, R_CSV };

/* What of_text, of_json_str and of_csv must write for s[0, n):
 *  text: printable ASCII and valid UTF-8 as they are, other bytes \xNN;
 *  JSON: quoted, \" \\, \u00XX below 0x20 and for 0x7f, \ufffd for each
 *        byte that is not UTF-8;
 *  CSV:  RFC 4180, quoted when a comma, quote or control byte is in it,
 *        '"' doubled, bytes that are not UTF-8 and NUL as U+FFFD. */
static size_t ref(char *out, const char *s, size_t n, int mode)
{
	int q = mode == R_JSON;
	for (size_t i = 0; mode == R_CSV && i < n; i++)
		q |= (unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == ',' || s[i] == '"';
	size_t k = 0;
	if (q)
		out[k++] = '"';
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t u = c >= 0x80 ? ref_utf8((const unsigned char *)s + i, n - i) : 0;
		if (u) {
			memcpy(out + k, s + i, u);
			k += u;
			i += u;
			continue;
		}
		i++;
		if (mode == R_TEXT)
			k += (size_t)(c < 0x20 || c >= 0x7f ? sprintf(out + k, "\\x%02x", c) : sprintf(out + k, "%c", c));
		else if (mode == R_JSON && c >= 0x80)
			k += (size_t)sprintf(out + k, "\\ufffd");
		else if (mode == R_JSON)
			k += (size_t)(c == '"' || c == '\\' ? sprintf(out + k, "\\%c", c)
				      : c < 0x20 || c == 0x7f ? sprintf(out + k, "\\u%04x", c)
							     : sprintf(out + k, "%c", c));
		else if (c >= 0x80 || !c)
			k += (size_t)sprintf(out + k, "\xef\xbf\xbd");
		else
			k += (size_t)(c == '"' ? sprintf(out + k, "\"\"") : sprintf(out + k, "%c", c));
	}
	if (q)
		out[k++] = '"';
	return k;
}

/* A string mixing printable ASCII, the bytes that need escapes, valid
 * UTF-8 of every length and the ways it goes wrong. */
static size_t mixed(char *s, size_t len)
{
	static const char *const pieces[] = {
		"\"", "\\", ",", "\n", "\r", "\x7f", "\x01", "\0", "caf\xc3\xa9", "\xe2\x82\xac",
		"\xf0\x9f\x98\x80", "\xff", "\xc3", "\xc3\x28", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", "\xf0\x9f\x98", "\x80", "\xef\xbf\xbd", "\xf4\x8f\xbf\xbf"};
	static const size_t plen[] = {1, 1, 1, 1, 1, 1, 1, 1, 5, 3, 4, 1, 1, 2, 2, 3, 3, 4, 3, 1, 3, 4};
	size_t k = 0;
	while (k < len) {
		if (rnd() % 3) {
			s[k++] = (char)(0x20 + rnd() % 0x5f);
		} else {
			size_t p = rnd() % (sizeof(plen) / sizeof(plen[0]));
			if (k + plen[p] > len)
				break;
			memcpy(s + k, pieces[p], plen[p]);
			k += plen[p];
		}
	}
	return k;
}

/* of_milli's reference: v / 1000 with three decimals, then its trailing
 * zeros and a bare dot dropped (the same number, fewest digits) */
static size_t ref_milli(char *out, uint64_t v)
{
	size_t k = (size_t)sprintf(out, "%" PRIu64 ".%03u", v / 1000, (unsigned)(v % 1000));
	while (out[k - 1] == '0')
		k--;
	if (out[k - 1] == '.')
		k--;
	return k;
}

int main(void)
{
	char path[] = "/tmp/tpp-of-XXXXXX";
	int fd = mkstemp(path);
	static struct ofast o;
	of_init(&o, fd);
	size_t cap = 64 << 20, n = 0, exact_ok = 0, exact_tries = 0;
	char *want = malloc(cap);
	uint64_t edge[] = {0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000, 4294967295u,
			   4294967296u, 999999999999999999u, 1000000000000000000u, UINT64_MAX};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		of_u64(&o, edge[i]);
		of_ch(&o, ' ');
		of_i64(&o, -(int64_t)(edge[i] >> 1));
		of_ch(&o, ' ');
		of_ts(&o, edge[i]);
		of_ch(&o, ' ');
		of_milli(&o, edge[i]);
		of_ch(&o, '\n');
		n += (size_t)sprintf(want + n, "%" PRIu64 " %" PRId64 " %" PRIu64 ".%09" PRIu64 " ", edge[i],
				     -(int64_t)(edge[i] >> 1), edge[i] / 1000000000u, edge[i] % 1000000000u);
		n += ref_milli(want + n, edge[i]);
		want[n++] = '\n';
	}
	/* every thousandth, below and above ten */
	for (uint64_t v = 0; v < 12000; v++) {
		of_milli(&o, v * 7 + v / 3);
		of_ch(&o, ',');
		n += ref_milli(want + n, v * 7 + v / 3);
		want[n++] = ',';
	}
	of_i64(&o, INT64_MIN);
	n += (size_t)sprintf(want + n, "%" PRId64, INT64_MIN);
	/* 300k random pieces: enough to wrap the 64 KiB buffer many times */
	char s[200];
	for (int i = 0; i < 300000; i++) {
		uint64_t v = rnd() >> (rnd() % 64);
		switch (rnd() % 6) {
		case 5:
			of_milli(&o, v);
			n += ref_milli(want + n, v);
			break;
		case 4: {
			int w = (int)(rnd() % 30);
			of_u64w(&o, v, w);
			n += (size_t)sprintf(want + n, "%0*" PRIu64, w > 24 ? 24 : w, v);
			break;
		}
		case 0:
			of_u64(&o, v);
			n += (size_t)sprintf(want + n, "%" PRIu64, v);
			break;
		case 1:
			of_ts(&o, v);
			n += (size_t)sprintf(want + n, "%" PRIu64 ".%09" PRIu64, v / 1000000000u, v % 1000000000u);
			break;
		case 2: { /* text, JSON and CSV of strings of every kind of byte */
			size_t len = rnd() % 200;
			if (rnd() % 2) {
				for (size_t k = 0; k < len; k++)
					s[k] = rnd() % 16 ? (char)(0x20 + rnd() % 0x60) : (char)(rnd() % 256);
			} else {
				len = mixed(s, len);
			}
			/* a buffer of exactly the output's size takes it all, and
			 * one byte less stops at a whole character */
			char exact[1300];
			size_t t = ref(exact, s, len, R_TEXT), used, k;
			k = esc_text(exact, t, s, len, &used);
			exact_ok += k == t && used == len;
			if (len && t) {
				k = esc_text(exact, t - 1, s, len, &used);
				exact_ok += used < len && k < t && k + 6 > t;
			} else {
				exact_ok++;
			}
			exact_tries += 2;
			switch (rnd() % 3) {
			case 0:
				of_text(&o, s, len);
				n += ref(want + n, s, len, R_TEXT);
				break;
			case 1:
				of_json_str(&o, s, len);
				n += ref(want + n, s, len, R_JSON);
				break;
			default:
				of_csv(&o, s, len);
				n += ref(want + n, s, len, R_CSV);
			}
			break;
		}
		default: { /* raw copies of every short length */
			size_t len = rnd() % 40;
			for (size_t k = 0; k < len; k++)
				s[k] = (char)('a' + rnd() % 26);
			of_mem(&o, s, len);
			memcpy(want + n, s, len);
			n += len;
		}
		}
		if (n > cap - 4096)
			break;
	}
	CHECK(exact_ok == exact_tries, "esc_text into exact-size buffers: %zu of %zu", exact_ok, exact_tries);
	CHECK(of_flush(&o) == 0, "flush");
	off_t size = lseek(fd, 0, SEEK_END);
	char *got = malloc((size_t)size + 1);
	CHECK(pread(fd, got, (size_t)size, 0) == size, "read back");
	CHECK((size_t)size == n, "%lld bytes written, %zu expected", (long long)size, n);
	size_t first = 0;
	while (first < n && first < (size_t)size && got[first] == want[first])
		first++;
	CHECK(first == n, "output differs from printf at byte %zu", first);
	close(fd);
	unlink(path);
	free(got);
	free(want);
	TEST_DONE();
}
