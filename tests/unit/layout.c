/* layout — a written file's bytes are where specs/format.md says they are.
 * The expected values are spelled out here from the spec, not from
 * format/layout.h, so the two cannot drift together. */
#include <cbor.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpp_format.h"
#include "tpp_test.h"

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

int main(void)
{
	char path[] = "/tmp/tpp-layout-XXXXXX";
	close(mkstemp(path));
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o)};
	CHECK(tpp_w_open(&w, path, &o) == 0, "open");
	static const struct tpp_field_def f[] = {{"v", TPP_F_U64}};
	struct tpp_type_def t = {3, "ev", "sys", 1, f};
	tpp_w_add_type(w, &t);
	tpp_w_stream(w, 9, TPP_S_CPU, 9, -1, -1);
	for (int i = 0; i < 100; i++)
		tpp_w_event(w, 9, 3, 1000 + (uint64_t)i * 10, 5, &(union tpp_val){.u = (uint64_t)i});
	CHECK(tpp_w_close(w) == 0, "close");

	FILE *fp = fopen(path, "rb");
	struct stat st;
	stat(path, &st);
	size_t n = (size_t)st.st_size;
	uint8_t *b = malloc(n);
	CHECK(fread(b, 1, n, fp) == n, "read");
	fclose(fp);
	CHECK(!memcmp(b, "\x89TPP\r\n\x1a\n", 8), "magic");
	CHECK(b[8] == TPP_MAJOR && b[9] == 0 && b[10] == TPP_MINOR && b[11] == 0, "version %d.%d", TPP_MAJOR, TPP_MINOR);
	uint32_t h = le32(b + 12);
	uint32_t crc = tpp_crc32c(0, b, 16);
	CHECK(le32(b + 16) == tpp_crc32c(crc, b + 20, h), "header crc over fixed part and map");
	struct cbor_load_result res;
	cbor_item_t *m = cbor_load(b + 20, h, &res);
	CHECK(m && cbor_isa_map(m) && res.read == h, "header is one CBOR map filling H bytes");
	if (m)
		cbor_decref(&m);
	/* first chunk: the metadata (stream declaration), then the events chunk */
	size_t off = 20 + h;
	int seen_events = 0;
	while (off + 48 <= n && !memcmp(b + off, "TPCK", 4)) {
		const uint8_t *c = b + off;
		uint32_t hs = c[6] | c[7] << 8;
		CHECK(hs == 48, "header size 48");
		CHECK(le32(c + 44) == tpp_crc32c(0, c, 44), "chunk header crc");
		uint32_t stored = le32(c + 36);
		CHECK(le32(c + 40) == tpp_crc32c(0, c + 48, stored), "payload crc");
		if (c[4] == 1) {
			seen_events = 1;
			CHECK(le32(c + 8) == 9 && le32(c + 12) == 100, "stream id and count");
			CHECK(le64(c + 16) == 1000 && le64(c + 24) == 1990, "min and max ts");
			CHECK((c[5] & 2) && !(c[5] & ~3), "flags: in time order (bit 1), nothing unknown");
		}
		if (c[4] == 2 || c[4] == 3)
			CHECK(le32(c + 8) == 0xffffffffu, "metadata/index chunks have no stream");
		off += 48 + stored;
		if (c[4] == 3)
			break;
	}
	CHECK(seen_events, "an events chunk");
	CHECK(off + 40 == n, "index chunk ends where the trailer starts");
	const uint8_t *tr = b + n - 40;
	CHECK(!memcmp(tr + 32, "TPPEND\r\n", 8), "trailer magic");
	CHECK(le32(tr + 24) == tpp_crc32c(0, tr, 24) && le32(tr + 28) == 0, "trailer crc");
	CHECK(le64(tr + 8) == 100, "trailer event total");
	CHECK(le64(tr) < n && !memcmp(b + le64(tr), "TPCK", 4) && b[le64(tr) + 4] == 3, "trailer points at the index");
	free(b);
	unlink(path);
	TEST_DONE();
}
