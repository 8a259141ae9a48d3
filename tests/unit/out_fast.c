/* out_fast against printf and a byte-by-byte reference: numbers at every
 * width and edge, timestamps, escapes, and short copies around the point
 * where the buffer flushes. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tpp_test.h"
#include "../../postproc/out/out_fast.h"


/* Appends the expected text for of_text(s, n): printable bytes as they
 * are, bytes below 0x20 and 0x7f as \xNN. */
static size_t ref_text(char *out, const char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f)
			k += (size_t)sprintf(out + k, "\\x%02x", c);
		else
			out[k++] = (char)c;
	}
	return k;
}

int main(void)
{
	char path[] = "/tmp/tpp-of-XXXXXX";
	int fd = mkstemp(path);
	static struct ofast o;
	of_init(&o, fd);
	size_t cap = 64 << 20, n = 0;
	char *want = malloc(cap);
	uint64_t edge[] = {0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000, 4294967295u,
			   4294967296u, 999999999999999999u, 1000000000000000000u, UINT64_MAX};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		of_u64(&o, edge[i]);
		of_ch(&o, ' ');
		of_i64(&o, -(int64_t)(edge[i] >> 1));
		of_ch(&o, ' ');
		of_ts(&o, edge[i]);
		of_ch(&o, '\n');
		n += (size_t)sprintf(want + n, "%" PRIu64 " %" PRId64 " %" PRIu64 ".%09" PRIu64 "\n", edge[i],
				     -(int64_t)(edge[i] >> 1), edge[i] / 1000000000u, edge[i] % 1000000000u);
	}
	of_i64(&o, INT64_MIN);
	n += (size_t)sprintf(want + n, "%" PRId64, INT64_MIN);
	/* 300k random pieces: enough to wrap the 64 KiB buffer many times */
	char s[200];
	for (int i = 0; i < 300000; i++) {
		uint64_t v = rnd() >> (rnd() % 64);
		switch (rnd() % 5) {
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
		case 2: { /* text, mostly printable, sometimes control bytes */
			size_t len = rnd() % 200;
			for (size_t k = 0; k < len; k++)
				s[k] = rnd() % 16 ? (char)(0x20 + rnd() % 0x60) : (char)(rnd() % 256);
			of_text(&o, s, len);
			n += ref_text(want + n, s, len);
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
