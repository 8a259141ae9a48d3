/* vals_text against values whose text is known: chars as uftrace shows
 * them ('z', '\n', a number when not printable), floats and doubles from
 * their IEEE bits, signed and unsigned integers, pointers, and strings
 * quoted with their quotes, backslashes and control bytes escaped, cut at
 * 64 bytes; never more than the room given. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tpp_test.h"
#include "../../postproc/out/vals.h"

static const char *text(enum vals_kind k, uint64_t bits, const char *s, size_t n)
{
	static char buf[VALS_MIN + 1];
	size_t len = vals_text(buf, VALS_MIN, k, bits, s, n);
	buf[len] = 0;
	return buf;
}

static uint64_t dbits(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	return b;
}

static uint64_t fbits(float f)
{
	uint32_t b;
	memcpy(&b, &f, sizeof(b));
	return b;
}

#define IS(got, want) CHECK(!strcmp((got), (want)), "got [%s], want [%s]", (got), (want))

int main(void)
{
	IS(text(VALS_CHAR, 'z', NULL, 0), "'z'");
	IS(text(VALS_CHAR, '{', NULL, 0), "'{'");
	IS(text(VALS_CHAR, '\'', NULL, 0), "'\\''");
	IS(text(VALS_CHAR, '\n', NULL, 0), "'\\n'");
	IS(text(VALS_CHAR, 0, NULL, 0), "'\\0'");
	IS(text(VALS_CHAR, 200, NULL, 0), "200");
	IS(text(VALS_CHAR, 0x17a, NULL, 0), "'z'"); /* a register's bits above the char */
	IS(text(VALS_F64, dbits(1.5), NULL, 0), "1.5");
	IS(text(VALS_F64, dbits(-6.25e-300), NULL, 0), "-6.25e-300");
	IS(text(VALS_F32, fbits(2.0f), NULL, 0), "2");
	IS(text(VALS_F32, 0xdead00000000ull | fbits(0.5f), NULL, 0), "0.5");
	IS(text(VALS_SINT, (uint64_t)-5, NULL, 0), "-5");
	IS(text(VALS_UINT, 99999, NULL, 0), "99999");
	IS(text(VALS_UINT, 4000000000u, NULL, 0), "0xee6b2800");
	IS(text(VALS_PTR, 16, NULL, 0), "0x10");
	IS(text(VALS_STR, 0, "hello", 5), "\"hello\"");
	IS(text(VALS_STR, 0, "a\"b\\c\n", 6), "\"a\\\"b\\\\c\\x0a\"");
	IS(text(VALS_STR, 0, "ab\0cd", 5), "\"ab\"");
	IS(text(VALS_STR, 0, NULL, 3), "\"\"");
	char big[200];
	memset(big, 'x', sizeof(big));
	const char *t = text(VALS_STR, 0, big, sizeof(big));
	CHECK(strlen(t) == 1 + 64 + 4 && !strcmp(t + 65, "\"..."), "long string: [%s]", t);
	memset(big, '\n', 64);
	t = text(VALS_STR, 0, big, 64);
	CHECK(strlen(t) == 2 + 64 * 4, "escaped string: %zu bytes", strlen(t));
	/* never more than the room given */
	char small[VALS_MIN];
	memset(big, '\1', sizeof(big));
	size_t n = vals_text(small, sizeof(small), VALS_STR, 0, big, sizeof(big));
	CHECK(n <= sizeof(small), "%zu bytes in %zu", n, sizeof(small));
	TEST_DONE();
}
