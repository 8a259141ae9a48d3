/* strings — bytes stay bytes (specs/format.md "Strings"): names, paths and
 * command lines that are not UTF-8 go through the writer and come out of
 * the reader byte for byte, UTF-8 ones stay text, and the file is CBOR that
 * libcbor accepts everywhere (the header, every metadata and events
 * payload). Format 1.0 wrote such bytes as text, which no CBOR decoder
 * takes: the file could not be opened. */
#include <cbor.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "layout.h"
#include "tpp_decode.h"
#include "tpp_test.h"

static const char *const weird[] = {
	"plain", "caf\xc3\xa9", "\xff", "a\xc3\x28\"b,c", "\x01\x02\x7f", "\xed\xa0\x80 surrogate",
	"\xf0\x9f\x98\x80", "cut \xe2\x82", "", "tab\tnl\nquote\"back\\slash",
};
#define NW (sizeof(weird) / sizeof(weird[0]))

/* Every text string in the CBOR item is valid UTF-8 (libcbor checked it on
 * load); counts the byte strings holding one of `weird`. */
static size_t bytes_of_weird(cbor_item_t *it)
{
	size_t n = 0;
	if (cbor_isa_bytestring(it) && cbor_bytestring_is_definite(it))
		for (size_t i = 0; i < NW; i++)
			n += cbor_bytestring_length(it) == strlen(weird[i]) &&
			     !memcmp(cbor_bytestring_handle(it), weird[i], strlen(weird[i]));
	if (cbor_isa_array(it))
		for (size_t i = 0; i < cbor_array_size(it); i++)
			n += bytes_of_weird(cbor_array_handle(it)[i]);
	if (cbor_isa_map(it))
		for (size_t i = 0; i < cbor_map_size(it); i++)
			n += bytes_of_weird(cbor_map_handle(it)[i].key) + bytes_of_weird(cbor_map_handle(it)[i].value);
	return n;
}

static size_t load(const uint8_t *b, size_t n, const char *what)
{
	struct cbor_load_result res;
	cbor_item_t *it = cbor_load(b, n, &res);
	CHECK(it, "libcbor loads %s (error %d at %zu)", what, (int)res.error.code, res.error.position);
	if (!it)
		return 0;
	size_t k = bytes_of_weird(it);
	cbor_decref(&it);
	return k;
}

int main(void)
{
	char path[] = "/tmp/tpp-strings-XXXXXX";
	close(mkstemp(path));
	char *argv[NW];
	for (size_t i = 0; i < NW; i++)
		argv[i] = (char *)weird[i];
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o), .argc = (int)NW, .argv = argv, .chunk_events = 7};
	CHECK(tpp_w_open(&w, path, &o) == 0, "open writer");
	static const struct tpp_field_def f[] = {{"name", TPP_F_STR}, {"n", TPP_F_U64}};
	struct tpp_type_def t = {1, "ev", "test", 2, f};
	CHECK(tpp_w_add_type(w, &t) == 0 && tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1) == 0, "schema");
	struct tpp_sym syms[NW];
	for (size_t i = 0; i < NW; i++) {
		char tname[32];
		snprintf(tname, sizeof(tname), "%s", weird[i]);
		CHECK(tpp_w_task(w, 1, 10, (int32_t)(100 + i), tname) == 0, "task %zu", i);
		CHECK(tpp_w_mmap(w, 1, 10, 4096 * (i + 1), 4096 * (i + 2), 0, weird[i], NULL, 0) == 0, "mmap %zu", i);
		syms[i] = (struct tpp_sym){0x100 * i, 0x10, weird[i]};
	}
	CHECK(tpp_w_symtab(w, NULL, 0, "/weird", NW, syms) == 0, "symtab");
	CHECK(tpp_w_note(w, "n", NW, (const char *const *)weird, (const char *const *)weird) == 0, "note");
	for (size_t i = 0; i < 3 * NW; i++) {
		union tpp_val v[2] = {{.s = {weird[i % NW], (uint32_t)strlen(weird[i % NW])}}, {.u = i}};
		CHECK(tpp_w_event(w, 0, 1, 1000 + i, 7, v) == 0, "event %zu", i);
	}
	CHECK(tpp_w_close(w) == 0, "close");

	/* libcbor takes every CBOR item of the file; the non-UTF-8 strings are
	 * byte strings (argv in the header; comm, path, symbol and note in the
	 * metadata; the chunks' string tables) */
	FILE *fp = fopen(path, "rb");
	uint8_t fixed[FILE_HDR_FIXED];
	CHECK(fp && fread(fixed, 1, sizeof(fixed), fp) == sizeof(fixed), "read header");
	uint32_t hlen = get_le32(fixed + 12);
	uint8_t *hb = malloc(hlen);
	CHECK(hb && fread(hb, 1, hlen, fp) == hlen, "read header map");
	size_t nbad = 0;
	for (size_t i = 0; i < NW; i++)
		nbad += !utf8_valid(weird[i], strlen(weird[i]));
	CHECK(load(hb, hlen, "the header") == nbad, "argv: %zu byte strings", nbad);
	free(hb);
	fclose(fp);
	struct tpp_reader *r;
	char msg[512];
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "open reader: %s", msg);
	if (!r)
		TEST_DONE();
	uint8_t *raw = NULL;
	size_t cap = 0, in_meta = 0, in_events = 0;
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		long n = tpp_r_payload(r, c, &raw, &cap);
		CHECK(n > 0, "payload %zu", i);
		if (n <= 0)
			continue;
		size_t k = load(raw, (size_t)n, c->kind == TPP_C_META ? "metadata" : "events");
		*(c->kind == TPP_C_META ? &in_meta : &in_events) += k;
	}
	free(raw);
	/* in the metadata: comm, path, symbol, note key and note value */
	CHECK(in_meta >= 5 * nbad, "metadata: %zu byte strings, want at least %zu", in_meta, 5 * nbad);
	CHECK(in_events >= nbad, "events: %zu byte strings, want at least %zu", in_events, nbad);

	/* and the reader gives the bytes back as they went in */
	const struct tpp_file_info *in = tpp_r_info(r);
	CHECK(in->argc == (int)NW, "argc %d", in->argc);
	for (int i = 0; i < in->argc && i < (int)NW; i++)
		CHECK(!strcmp(in->argv[i], weird[i]), "argv[%d]", i);
	const struct tpp_meta *m = tpp_r_meta(r);
	CHECK(m->ntasks == NW && m->nmmaps == NW && m->nsymtabs == 1 && m->nnotes == 1, "records");
	for (size_t i = 0; i < m->ntasks && i < NW; i++)
		CHECK(!strcmp(m->tasks[i].comm, weird[i]) && !strcmp(m->mmaps[i].path, weird[i]), "comm, path %zu", i);
	for (size_t i = 0; m->nsymtabs == 1 && i < m->symtabs[0].nsyms && i < NW; i++)
		CHECK(!strcmp(m->symtabs[0].syms[i].name, weird[i]), "symbol %zu", i);
	for (size_t i = 0; m->nnotes == 1 && i < m->notes[0].n && i < NW; i++)
		CHECK(!strcmp(m->notes[0].keys[i], weird[i]) && !strcmp(m->notes[0].vals[i], weird[i]), "note %zu", i);
	struct tpp_iter *it;
	struct tpp_iter_opts io = {.sz = sizeof(io)};
	CHECK(tpp_iter_open(&it, r, &io) == 0, "iter");
	const struct tpp_event *ev;
	size_t k = 0;
	while (tpp_iter_next(it, &ev) > 0) {
		const char *want = weird[ev->v[1].u % NW];
		CHECK(ev->v[0].s.len == strlen(want) && !memcmp(ev->v[0].s.p, want, ev->v[0].s.len),
		      "event %llu's string", (unsigned long long)ev->v[1].u);
		k++;
	}
	CHECK(k == 3 * NW, "events read: %zu", k);
	tpp_iter_close(it);
	tpp_r_close(r);
	unlink(path);
	TEST_DONE();
}
