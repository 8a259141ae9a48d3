/* cbor_tree — the reader's CBOR decoder (format/cbor_tree.c) and libcbor,
 * which it replaced, agree on every input tried:
 *  - the header and every metadata chunk of the sample traces (or of the
 *    files named on the command line), each truncated at every byte (the
 *    chunks record by record), and thousands of mutations of them;
 *  - random trees of every kind of item, definite or not, and mutations;
 *  - crafted edges: libcbor's nesting limit, counts whose allocation
 *    fails, reserved bytes, breaks out of place, and UTF-8 (every string
 *    of one and two bytes, the boundaries of the longer forms).
 * Agreeing means: both accept, or both reject with the same error at the
 * same position; accepted, the same items (kinds, values, bytes, counts,
 * definite or not) and the same answers to every lookup meta.c makes. */
#include <cbor.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbor_same.h"
#include "cbor_tree.h"
#include "layout.h"
#include "sample_traces.h"
#include "tpp_format.h"
#include "tpp_test.h"

/* libcbor allocates what a count says: under ASan an absurd size must come
 * back NULL, as from glibc, rather than abort the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

_Static_assert((int)CT_ETRUNC == CBOR_ERR_NOTENOUGHDATA && (int)CT_ENODATA == CBOR_ERR_NODATA &&
		       (int)CT_EMALFORMED == CBOR_ERR_MALFORMATED && (int)CT_ENOMEM == CBOR_ERR_MEMERROR &&
		       (int)CT_ESYNTAX == CBOR_ERR_SYNTAXERROR,
	       "failures numbered as libcbor's");

/* ----------------------------------------------------------------- agreeing */
static struct ct_tree tree;
static long tried, disagreed, allocation_dependent;

/* Whether libcbor's answer on b depends on the machine: a count whose
 * allocation glibc does not refuse outright but may not get (above 2^20
 * items here). Walks every head in order, as far as libcbor could read. */
static int allocation_dependent_count(const uint8_t *p, const uint8_t *end)
{
	while (p < end) {
		unsigned mj;
		uint64_t v;
		if ((*p & 31) >= 28) {
			p++;
			continue;
		}
		if (cbor_get_head(&p, end, &mj, &v))
			return 0;
		if ((mj == CB_BYTES || mj == CB_TEXT) && v > (uint64_t)(end - p))
			return 0;
		if (mj == CB_BYTES || mj == CB_TEXT)
			p += v;
		if ((mj == CB_ARRAY && v > (1u << 20) && v <= PTRDIFF_MAX / sizeof(void *)) ||
		    (mj == CB_MAP && v > (1u << 20) && v <= PTRDIFF_MAX / (2 * sizeof(void *))))
			return 1;
	}
	return 0;
}

static void agree(const uint8_t *b, size_t n, const char *what)
{
	if (allocation_dependent_count(b, b + n)) {
		allocation_dependent++;
		return;
	}
	tried++;
	struct cbor_load_result res;
	cbor_item_t *it = cbor_load(b, n, &res);
	size_t pos;
	int e = ct_parse(&tree, b, n, &pos);
	int same;
	if (it)
		same = !e && same_item(it, tree.n) && same_answers(it, tree.n);
	else
		same = e == (int)res.error.code && (e == CT_ENODATA || pos == res.error.position);
	if (!same && ++disagreed <= 5) {
		fprintf(stderr, "%s (%zu bytes): libcbor %s code %d at %zu, cbor_tree code %d at %zu:", what, n,
			it ? "accepts" : "rejects", it ? 0 : res.error.code, it ? 0 : res.error.position, e, pos);
		for (size_t i = 0; i < n && i < 48; i++)
			fprintf(stderr, " %02x", b[i]);
		fputc('\n', stderr);
	}
	if (it)
		cbor_decref(&it);
}

/* ------------------------------------------------------------------- inputs */
static const uint8_t interesting[] = {
	0x00, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1f, 0x20, 0x38, 0x3b, 0x3f, 0x40, 0x58, 0x5b, 0x5c, 0x5f,
	0x60, 0x61, 0x78, 0x7b, 0x7f, 0x80, 0x81, 0x98, 0x9b, 0x9f, 0xa0, 0xa1, 0xb8, 0xbb, 0xbf, 0xc0, 0xc5,
	0xc6, 0xd4, 0xd5, 0xd7, 0xd8, 0xdb, 0xdc, 0xdf, 0xe0, 0xf3, 0xf4, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc,
	0xff, 0x7e, 0xc2, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xbf,
};

/* One to three random edits: a byte replaced (at random, or by one that
 * means something to CBOR or UTF-8), inserted, deleted, or a bit flipped. */
static void mutate(const uint8_t *b, size_t n, const char *what)
{
	uint8_t m[4096];
	if (n + 3 > sizeof(m) || !n)
		return;
	memcpy(m, b, n);
	size_t k = n;
	for (unsigned edits = 1 + rnd() % 3; edits--;) {
		size_t at = rnd() % k;
		uint8_t x = rnd() % 2 ? interesting[rnd() % sizeof(interesting)] : (uint8_t)rnd();
		switch (rnd() % 4) {
		case 0:
			m[at] = x;
			break;
		case 1:
			memmove(m + at + 1, m + at, k++ - at);
			m[at] = x;
			break;
		case 2:
			if (k > 1)
				memmove(m + at, m + at + 1, --k - at);
			break;
		default:
			m[at] ^= (uint8_t)(1u << rnd() % 8);
		}
	}
	agree(m, k, what);
}

static void every_prefix(const uint8_t *b, size_t n, const char *what)
{
	for (size_t k = 0; k <= n; k++)
		agree(b, k, what);
}

/* A metadata chunk, then each record of it alone, truncated and mutated. */
static void chunk(const uint8_t *b, size_t n, const char *what)
{
	agree(b, n, what);
	for (int i = 0; i <= 256; i++)
		agree(b, n * (size_t)i / 256, what);
	const uint8_t *p = b, *end = b + n;
	unsigned mj;
	uint64_t cnt;
	if (cbor_get_head(&p, end, &mj, &cnt) || mj != CB_ARRAY)
		return;
	for (uint64_t i = 0; i < cnt; i++) {
		struct cbor_load_result res;
		cbor_item_t *rec = cbor_load(p, (size_t)(end - p), &res);
		if (!rec)
			break;
		cbor_decref(&rec);
		every_prefix(p, res.read, what);
		for (int k = 0; k < 40; k++)
			mutate(p, res.read, what);
		p += res.read;
	}
}

static int files;

static void from_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t fixed[FILE_HDR_FIXED];
	if (f && fread(fixed, 1, sizeof(fixed), f) == sizeof(fixed)) {
		size_t hl = get_le32(fixed + 12);
		uint8_t *h = malloc(hl ? hl : 1);
		if (h && fread(h, 1, hl, f) == hl) {
			every_prefix(h, hl, "header");
			for (int k = 0; k < 2000; k++)
				mutate(h, hl, "header");
		}
		free(h);
	}
	if (f)
		fclose(f);
	struct tpp_reader *r;
	char msg[256];
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "%s", msg);
	if (!r)
		return;
	files++;
	uint8_t *buf = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		long n = c->kind == TPP_C_META ? tpp_r_payload(r, c, &buf, &cap) : -1;
		if (n > 0)
			chunk(buf, (size_t)n, "metadata chunk");
	}
	free(buf);
	tpp_r_close(r);
}

/* A random item of every kind, definite or not, nested up to depth 5. */
static void gen(struct buf *b, int depth)
{
	static const uint8_t simple[] = {0xf4, 0xf5, 0xf6, 0xf7};
	static const char *const texts[] = {"k", "id", "path", "é", "€uro", "\xf0\x9d\x84\x9e", ""};
	uint64_t n = rnd() % 5;
	switch (rnd() % (depth >= 5 ? 8 : 14)) {
	case 0:
		cbor_head(b, CB_UINT, rnd() >> rnd() % 64);
		break;
	case 1:
		cbor_head(b, CB_NEGINT, rnd() >> rnd() % 64);
		break;
	case 2: {
		uint8_t x[70];
		for (size_t i = 0; i < sizeof(x); i++)
			x[i] = (uint8_t)rnd();
		cbor_bytes(b, x, rnd() % sizeof(x));
		break;
	}
	case 3:
	case 4:
		cbor_text(b, texts[rnd() % (sizeof(texts) / sizeof(*texts))]);
		break;
	case 5:
		buf_put(b, &simple[rnd() % 4], 1);
		break;
	case 6: {
		static const uint8_t fl[] = {0xf9, 0x3e, 0x00, 0xfa, 0x3f, 0xc0, 0, 0, 0xfb, 0x40, 9, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18};
		size_t at = rnd() % 3;
		buf_put(b, fl + (at == 0 ? 0 : at == 1 ? 3 : 8), at == 0 ? 3 : at == 1 ? 5 : 9);
		break;
	}
	case 7:
		cbor_head(b, CB_UINT, rnd() % 30);
		break;
	case 8:
		cbor_head(b, CB_TAG, rnd() % 2 ? rnd() % 6 : rnd() >> rnd() % 64);
		gen(b, depth + 1);
		break;
	case 9:
		cbor_head(b, CB_ARRAY, n);
		while (n--)
			gen(b, depth + 1);
		break;
	case 10:
		cbor_head(b, CB_MAP, n);
		while (n--) {
			if (rnd() % 4)
				cbor_text(b, meta_keys[rnd() % (sizeof(meta_keys) / sizeof(*meta_keys))]);
			else
				gen(b, depth + 1);
			gen(b, depth + 1);
		}
		break;
	case 11:
		buf_put(b, "\x9f", 1);
		while (n--)
			gen(b, depth + 1);
		buf_put(b, "\xff", 1);
		break;
	case 12:
		buf_put(b, "\xbf", 1);
		while (n--) {
			cbor_text(b, meta_keys[rnd() % (sizeof(meta_keys) / sizeof(*meta_keys))]);
			gen(b, depth + 1);
		}
		buf_put(b, "\xff", 1);
		break;
	default: {
		int text = rnd() % 2;
		buf_put(b, text ? "\x7f" : "\x5f", 1);
		while (n--)
			text ? cbor_text(b, texts[rnd() % 3]) : cbor_bytes(b, "ab", rnd() % 3);
		buf_put(b, "\xff", 1);
	}
	}
}

/* ------------------------------------------------------------ crafted edges */
static void nested(const uint8_t *open, size_t olen, size_t depth, const uint8_t *close, size_t clen)
{
	struct buf b = {0};
	for (size_t i = 0; i < depth; i++)
		buf_put(&b, open, olen);
	buf_put(&b, "\x01", 1);
	for (size_t i = 0; close && i < depth; i++)
		buf_put(&b, close, clen);
	agree(b.data, b.len, "nesting");
	buf_free(&b);
}

static void text_item(const uint8_t *s, size_t n)
{
	uint8_t b[16];
	b[0] = (uint8_t)(0x60 | n);
	memcpy(b + 1, s, n);
	agree(b, n + 1, "utf-8");
	/* and as a chunk of an indefinite string, in an array */
	uint8_t c[20] = {0x81, 0x7f};
	memcpy(c + 2, b, n + 1);
	c[n + 3] = 0xff;
	agree(c, n + 4, "utf-8 chunk");
}

static void crafted(void)
{
	for (size_t d = 2046; d <= 2049; d++) {
		nested((const uint8_t *)"\x81", 1, d, NULL, 0);
		nested((const uint8_t *)"\x9f", 1, d, (const uint8_t *)"\xff", 1);
		nested((const uint8_t *)"\xa1\x00", 2, d, NULL, 0);
		nested((const uint8_t *)"\xd8\x20", 2, d, NULL, 0);
	}
	nested((const uint8_t *)"\x81", 1, 100000, NULL, 0);
	/* counts: libcbor's size arithmetic overflows, or glibc refuses it */
	static const uint64_t counts[] = {SIZE_MAX / 8 + 1, SIZE_MAX / 16 + 1, PTRDIFF_MAX / 8 + 1, PTRDIFF_MAX / 16 + 1,
					  UINT64_MAX, 1000, 100, 2};
	for (size_t i = 0; i < sizeof(counts) / sizeof(*counts); i++)
		for (unsigned mj = CB_ARRAY; mj <= CB_MAP; mj++) {
			struct buf b = {0};
			cbor_head(&b, mj, counts[i]);
			buf_put(&b, "\x01\x02\x03", 3);
			agree(b.data, b.len, "count");
			buf_free(&b);
		}
	/* every initial byte, alone and followed by bytes to read */
	for (unsigned c = 0; c < 256; c++) {
		uint8_t b[12] = {(uint8_t)c, 1, 2, 3, 4, 5, 6, 7, 8, 0x61, 0x61, 0xff};
		for (size_t n = 1; n <= sizeof(b); n++)
			agree(b, n, "initial byte");
		uint8_t in[4][4] = {{0x9f, (uint8_t)c, 0xff}, {0xbf, (uint8_t)c, 0xff}, {0x7f, (uint8_t)c, 0xff},
				    {0x5f, (uint8_t)c, 0xff}};
		for (int k = 0; k < 4; k++)
			agree(in[k], 3, "inside an indefinite item");
		uint8_t odd[] = {0xbf, 0x01, (uint8_t)c, 0xff, 0xff};
		agree(odd, sizeof(odd), "indefinite map");
	}
	/* UTF-8: every string of one and two bytes; the edges of longer ones */
	for (unsigned a = 0; a < 256; a++) {
		uint8_t s[4] = {(uint8_t)a};
		text_item(s, 1);
		for (unsigned b = 0; b < 256; b++) {
			s[1] = (uint8_t)b;
			text_item(s, 2);
			if (a < 0xe0)
				continue;
			static const uint8_t tails[] = {0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff};
			for (size_t c = 0; c < sizeof(tails); c++) {
				s[2] = tails[c];
				text_item(s, 3);
				s[3] = tails[(c * 7 + b) % sizeof(tails)];
				text_item(s, 4);
				s[3] = 0x80;
				text_item(s, 4);
			}
		}
	}
	for (int i = 0; i < 20000; i++) {
		uint8_t s[15];
		size_t n = 1 + rnd() % sizeof(s);
		for (size_t k = 0; k < n; k++)
			s[k] = (uint8_t)(rnd() % 3 ? 0x80 | rnd() : rnd());
		text_item(s, n);
	}
}

int main(int argc, char **argv)
{
	for_each_trace(argc, argv, from_file);
	CHECK(files > 0, "some trace files were read");
	long real = tried;
	CHECK(disagreed == 0, "%ld of %ld inputs from traces disagree", disagreed, tried);
	long before = tried, bad = disagreed;
	for (int i = 0; i < 20000; i++) {
		struct buf b = {0};
		gen(&b, 0);
		agree(b.data, b.len, "random tree");
		for (int k = 0; k < 3; k++)
			mutate(b.data, b.len, "random tree");
		buf_free(&b);
	}
	CHECK(disagreed == bad, "%ld of %ld random inputs disagree", disagreed - bad, tried - before);
	before = tried, bad = disagreed;
	crafted();
	CHECK(disagreed == bad, "%ld of %ld crafted inputs disagree", disagreed - bad, tried - before);
	CHECK(bad_skips == 0, "%d nodes whose skip is not their subtree", bad_skips);
	CHECK(allocation_dependent < tried / 100, "%ld inputs left out for an allocation libcbor may not get",
	      allocation_dependent);
	ct_free(&tree);
	printf("# cbor_tree: %ld inputs agree (%ld from traces), %ld left out as allocation-dependent\n", tried, real,
	       allocation_dependent);
	TEST_DONE();
}
