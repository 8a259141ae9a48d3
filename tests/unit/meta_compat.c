/* meta_compat — what the reader takes from a header and metadata written by
 * hand, with everything a newer writer or a damaged file may hold: unknown
 * keys carrying floats, tags, simple values and indefinite items, unknown
 * record kinds, repeated keys, indefinite maps and strings where meta.c
 * wants definite ones, wrong types, bad UTF-8, truncated and non-map
 * headers. The expectations are the behaviour of the libcbor-based reader
 * this one replaced (the test was run against both). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "layout.h"
#include "tpp_format.h"
#include "tpp_test.h"

static void text(struct buf *b, const char *s) { cbor_text(b, s); }
static void kv_int(struct buf *b, const char *k, int64_t v)
{
	text(b, k);
	cbor_int(b, v);
}
static void kv_text(struct buf *b, const char *k, const char *v)
{
	text(b, k);
	text(b, v);
}
static void raw(struct buf *b, const char *bytes, size_t n) { buf_put(b, bytes, n); }
#define RAW(b, s) raw(b, s, sizeof(s) - 1)

/* Writes the file: the fixed header, `hdr` as its CBOR, then one metadata
 * chunk per payload. No trailer: the reader finds the chunks by scanning. */
static void write_file(const char *path, const struct buf *hdr, const struct buf *chunks, int nchunks)
{
	struct buf f = {0};
	uint8_t fx[FILE_HDR_FIXED];
	memcpy(fx, FILE_MAGIC, 8);
	put_le16(fx + 8, TPP_MAJOR);
	put_le16(fx + 10, 0);
	put_le32(fx + 12, (uint32_t)hdr->len);
	put_le32(fx + 16, tpp_crc32c(tpp_crc32c(0, fx, 16), hdr->data, hdr->len));
	buf_put(&f, fx, sizeof(fx));
	buf_put(&f, hdr->data, hdr->len);
	for (int i = 0; i < nchunks; i++) {
		uint8_t h[CHUNK_HDR_SIZE] = {0};
		memcpy(h + CH_MAGIC, CHUNK_MAGIC, 4);
		h[CH_KIND] = TPP_C_META;
		put_le16(h + CH_HSIZE, CHUNK_HDR_SIZE);
		put_le32(h + CH_STREAM, STREAM_NONE);
		put_le32(h + CH_COUNT, 1);
		put_le32(h + CH_RAW, (uint32_t)chunks[i].len);
		put_le32(h + CH_STORED, (uint32_t)chunks[i].len);
		put_le32(h + CH_PCRC, tpp_crc32c(0, chunks[i].data, chunks[i].len));
		put_le32(h + CHUNK_HDR_SIZE - 4, tpp_crc32c(0, h, CHUNK_HDR_SIZE - 4));
		buf_put(&f, h, sizeof(h));
		buf_put(&f, chunks[i].data, chunks[i].len);
	}
	FILE *fp = fopen(path, "wb");
	CHECK(fp && !f.oom && fwrite(f.data, 1, f.len, fp) == f.len, "write %s", path);
	if (fp)
		fclose(fp);
	buf_free(&f);
}

/* A header map: the known keys, unknown ones of every kind, `types` as given. */
static void header(struct buf *b, const char *types, size_t tlen)
{
	cbor_head(b, CB_MAP, 14);
	kv_text(b, "producer", "meta_compat");
	kv_text(b, "producer_version", "1");
	kv_text(b, "hostname", "h");
	text(b, "future_float");
	RAW(b, "\xf9\x3e\x00");
	kv_text(b, "kernel", "k");
	text(b, "future_tag");
	RAW(b, "\xc1\x1a\x00\x12\xd6\x87");
	kv_text(b, "arch", "x86_64");
	text(b, "future_list");
	RAW(b, "\x9f\x01\x61" "a" "\xf6\xfb\x40\x09\x21\xfb\x54\x44\x2d\x18\xff");
	kv_text(b, "clock", "mono");
	kv_int(b, "ncpus", 4);
	kv_int(b, "wall_offset_ns", -5);
	text(b, "cmdline");
	cbor_head(b, CB_ARRAY, 3);
	text(b, "prog");
	cbor_uint(b, 7); /* not a string: left out of argv */
	text(b, "arg");
	text(b, "future_map");
	RAW(b, "\xbf\x61x\xf5\x61y\xf7\xff");
	text(b, "types");
	raw(b, types, tlen);
}

#define HEADER(b, types) header(b, types, sizeof(types) - 1)

/* Two definitions of type 1 (the first holds), fields of a known and an
 * unknown type, and an unknown key with a float. */
static const char types_ok[] = "\x82"
			       "\xa5\x62id\x01\x64name\x62" "ev\x66system\x63sys"
			       "\x66" "fields\x82\x82\x61" "a\x63u64\x82\x61" "b\x65weird"
			       "\x65later\xf9\x41\x00"
			       "\xa3\x62id\x01\x64name\x63two\x66" "fields\x80";

static struct tpp_reader *open_ok(const char *path)
{
	struct tpp_reader *r;
	char msg[512];
	int e = tpp_r_open(&r, path, msg, sizeof(msg));
	CHECK(e == 0, "open: %s", msg);
	return e ? NULL : r;
}

static void records(struct buf *b)
{
	cbor_head(b, CB_ARRAY, 17);
	/* a stream, with unknown keys of every kind */
	cbor_head(b, CB_MAP, 9);
	kv_text(b, "k", "stream");
	kv_int(b, "id", 7);
	text(b, "x");
	RAW(b, "\xf9\x3c\x00");
	kv_text(b, "kind", "thread");
	text(b, "y");
	RAW(b, "\xd8\x20\x9f\xff");
	kv_int(b, "cpu", -1);
	kv_int(b, "pid", 10);
	kv_int(b, "tid", 11);
	text(b, "z");
	RAW(b, "\x5f\x41\x01\xff");
	/* a kind from the future */
	cbor_head(b, CB_MAP, 2);
	kv_text(b, "k", "from-the-future");
	kv_int(b, "id", 8);
	/* tasks: a long comm is cut; an indefinite comm reads as ""; a pid
	 * that is not an integer drops the record; "k" repeated: the first */
	cbor_head(b, CB_MAP, 5);
	kv_text(b, "k", "task");
	kv_int(b, "ts", 5);
	kv_int(b, "pid", 10);
	kv_int(b, "tid", 11);
	kv_text(b, "comm", "worker-with-a-name-well-over-thirty-two-bytes");
	cbor_head(b, CB_MAP, 6);
	kv_text(b, "k", "task");
	kv_text(b, "k", "lost");
	kv_int(b, "ts", 6);
	kv_int(b, "pid", 10);
	kv_int(b, "tid", 12);
	text(b, "comm");
	RAW(b, "\x7f\x61" "a\x61" "b\xff");
	cbor_head(b, CB_MAP, 4);
	kv_text(b, "k", "task");
	kv_int(b, "ts", 7);
	kv_text(b, "pid", "ten");
	kv_int(b, "tid", 13);
	/* mmaps: one whole; one whose path is indefinite (dropped); one whose
	 * build id is indefinite (kept, without it) */
	for (int i = 0; i < 3; i++) {
		cbor_head(b, CB_MAP, 8);
		kv_text(b, "k", "mmap");
		kv_int(b, "ts", 1);
		kv_int(b, "pid", 10);
		kv_int(b, "start", 4096 * (i + 1));
		kv_int(b, "end", 4096 * (i + 2));
		kv_int(b, "pgoff", 0);
		text(b, "path");
		if (i == 1)
			RAW(b, "\x7f\x64/bin\x62/y\xff");
		else
			text(b, i ? "/bin/z" : "/bin/x");
		text(b, "build_id");
		if (i == 2)
			RAW(b, "\x5f\x41\x01\xff");
		else
			RAW(b, "\x42\x01\x02");
	}
	/* a symbol table: entries not [int, int, text] are skipped */
	cbor_head(b, CB_MAP, 4);
	kv_text(b, "k", "symtab");
	kv_text(b, "path", "/bin/x");
	text(b, "build_id");
	RAW(b, "\x42\x01\x02");
	text(b, "syms");
	RAW(b, "\x86\x83\x19\x10\x00\x10\x64main\x83\x19\x10\x68\x08\xc0\x61x\x83\x19\x10\x04\x04\x61" "f\x64junk\x82\x01\x02\x61g");
	cbor_head(b, CB_MAP, 5);
	kv_text(b, "k", "lost");
	kv_int(b, "stream", 7);
	kv_int(b, "count", 3);
	kv_int(b, "from", 1);
	kv_int(b, "to", 2);
	/* a note whose pairs are an indefinite map: non-text values skipped */
	cbor_head(b, CB_MAP, 3);
	kv_text(b, "k", "note");
	kv_text(b, "kind", "n");
	text(b, "kv");
	RAW(b, "\xbf\x61" "a\x61" "b\x61" "c\x01\x61" "d\x61" "e\xff");
	/* an indefinite record: meta.c looks up nothing in it */
	RAW(b, "\xbf\x61k\x64lost\x66stream\x07\x65" "count\x18\x64\x64" "from\x01\x62to\x02\xff");
	/* a note whose pairs are not a map: dropped */
	cbor_head(b, CB_MAP, 2);
	kv_text(b, "k", "note");
	kv_text(b, "kv", "none");
	/* not a map at all, a float, a tag */
	text(b, "stream");
	RAW(b, "\xfb\x3f\xf0\x00\x00\x00\x00\x00\x00");
	RAW(b, "\xc0\xa1\x61k\x66stream");
	/* a stream with a cpu id: kind other than "thread" */
	cbor_head(b, CB_MAP, 6);
	kv_text(b, "k", "stream");
	kv_int(b, "id", 3);
	kv_text(b, "kind", "cpu");
	kv_int(b, "cpu", 2);
	kv_int(b, "pid", -1);
	kv_int(b, "tid", -1);
}

static void good_file(const char *path)
{
	struct buf h = {0}, c[4] = {{0}};
	HEADER(&h, types_ok);
	records(&c[0]);
	RAW(&c[1], "\x9f\xa2\x61k\x66stream\x62id\x14\xff"); /* indefinite: damaged */
	/* text that is not UTF-8 (a 1.0 writer's kernel bytes) is read as
	 * bytes: the chunk is not lost for it (libcbor refused it whole) */
	RAW(&c[2], "\x81\xa3\x61k\x66stream\x62id\x15\x61q\x62\xc3\x28");
	/* nesting no reader needs, under an unknown key: still read */
	cbor_head(&c[3], CB_ARRAY, 1);
	cbor_head(&c[3], CB_MAP, 7);
	kv_text(&c[3], "k", "stream");
	kv_int(&c[3], "id", 22);
	kv_text(&c[3], "kind", "thread");
	kv_int(&c[3], "cpu", -1);
	kv_int(&c[3], "pid", 1);
	kv_int(&c[3], "tid", 2);
	text(&c[3], "deep");
	for (int i = 0; i < 1000; i++)
		RAW(&c[3], "\x81");
	RAW(&c[3], "\x00");
	write_file(path, &h, c, 4);
	buf_free(&h);
	for (int i = 0; i < 4; i++)
		buf_free(&c[i]);

	struct tpp_reader *r = open_ok(path);
	if (!r)
		return;
	const struct tpp_file_info *in = tpp_r_info(r);
	CHECK(in->producer && !strcmp(in->producer, "meta_compat") && !strcmp(in->arch, "x86_64") &&
		      !strcmp(in->clock, "mono") && in->ncpus == 4 && in->wall_offset_ns == -5,
	      "header strings and integers");
	CHECK(in->argc == 2 && !strcmp(in->argv[0], "prog") && !strcmp(in->argv[1], "arg") && !in->argv[2],
	      "argv: the strings of cmdline");
	const struct tpp_type *t = tpp_r_type(r, 1);
	CHECK(in->ntypes == 1 && t && !strcmp(t->name, "ev") && !strcmp(t->system, "sys") && t->nfields == 2 &&
		      !strcmp(t->fields[0].name, "a") && t->fields[0].type == TPP_F_U64 &&
		      t->fields[1].type == TPP_F_BYTES,
	      "type 1: the first definition, an unknown field type as bytes");
	CHECK(in->damaged_chunks == 1, "one damaged metadata chunk (%llu)",
	      (unsigned long long)in->damaged_chunks);
	CHECK(tpp_r_nstreams(r) == 3, "streams 3, 7 and 22 (%zu)", tpp_r_nstreams(r));
	const struct tpp_stream_info *s = tpp_r_stream_by_id(r, 7);
	CHECK(s && s->kind == TPP_S_THREAD && s->cpu == -1 && s->pid == 10 && s->tid == 11, "stream 7");
	s = tpp_r_stream_by_id(r, 3);
	CHECK(s && s->kind == TPP_S_CPU && s->cpu == 2, "stream 3");
	CHECK(tpp_r_stream_by_id(r, 22) && !tpp_r_stream_by_id(r, 20) && !tpp_r_stream_by_id(r, 21),
	      "the deep record read, the damaged chunk's not, nor the incomplete one");
	const struct tpp_meta *m = tpp_r_meta(r);
	CHECK(m->ntasks == 2, "tasks: %zu", m->ntasks);
	if (m->ntasks == 2) {
		CHECK(m->tasks[0].tid == 11 && strlen(m->tasks[0].comm) == 31 &&
			      !strncmp(m->tasks[0].comm, "worker-with-a-name", 18),
		      "a long comm cut to 31 bytes");
		CHECK(m->tasks[1].tid == 12 && m->tasks[1].ts == 6 && !m->tasks[1].comm[0],
		      "an indefinite comm reads as empty; the first \"k\" holds");
	}
	CHECK(m->nmmaps == 2, "mmaps: %zu", m->nmmaps);
	if (m->nmmaps == 2) {
		CHECK(!strcmp(m->mmaps[0].path, "/bin/x") && m->mmaps[0].bid_len == 2 && m->mmaps[0].build_id[1] == 2,
		      "mmap with its build id");
		CHECK(!strcmp(m->mmaps[1].path, "/bin/z") && m->mmaps[1].bid_len == 0, "an indefinite build id: none");
	}
	CHECK(m->nsymtabs == 1 && m->symtabs[0].nsyms == 2, "one symbol table of 2 symbols");
	if (m->nsymtabs == 1 && m->symtabs[0].nsyms == 2)
		CHECK(m->symtabs[0].syms[0].addr == 0x1000 && !strcmp(m->symtabs[0].syms[0].name, "main") &&
			      m->symtabs[0].syms[1].addr == 0x1004 && m->symtabs[0].syms[1].size == 4,
		      "symbols sorted by address");
	CHECK(m->nlost == 1 && m->lost_total == 3, "lost: %zu records, %llu events", m->nlost,
	      (unsigned long long)m->lost_total);
	CHECK(m->nnotes == 1 && m->notes[0].n == 2 && !strcmp(m->notes[0].keys[1], "d") &&
		      !strcmp(m->notes[0].vals[1], "e") && !strcmp(m->notes[0].kind, "n"),
	      "a note from an indefinite map, its text pairs only");
	tpp_r_close(r);
}

/* The header `hdr` is refused with `want` in the message. */
static void refused(const char *path, const struct buf *hdr, const char *want)
{
	write_file(path, hdr, NULL, 0);
	struct tpp_reader *r;
	char msg[512] = "";
	int e = tpp_r_open(&r, path, msg, sizeof(msg));
	CHECK(e == -TPP_EBADFILE && strstr(msg, want), "want \"%s\", got %d \"%s\"", want, e, msg);
}

static void bad_headers(const char *path)
{
	struct buf h = {0};
	RAW(&h, "\x81\x01");
	refused(path, &h, "offset 20: header is not a valid CBOR map");
	buf_free(&h);
	RAW(&h, "\xa2\x61" "a\x01\x62" "b");
	refused(path, &h, "offset 24: header is not a valid CBOR map"); /* a string cut short: at its head */
	buf_free(&h);
	RAW(&h, "\xa2\x61" "a\x01\x61" "b");
	refused(path, &h, "offset 26: header is not a valid CBOR map"); /* a value due: at the end */
	buf_free(&h);
	RAW(&h, "\xa2\x61" "a\x1c\x00");
	refused(path, &h, "offset 23: header is not a valid CBOR map"); /* a reserved byte */
	buf_free(&h);
	RAW(&h, "\xa2\x61" "a\x62\xc3\x28\x00");
	refused(path, &h, "offset 27: header is not a valid CBOR map"); /* text not UTF-8 is bytes: a value due */
	buf_free(&h);
	RAW(&h, "\xa1\x61" "a\x01\xff");
	refused(path, &h, "offset 20: header has no event schema"); /* what follows the map is not read */
	buf_free(&h);
	RAW(&h, "\xbf\x65types\x80\xff");
	refused(path, &h, "header has no event schema"); /* an indefinite map: nothing is looked up */
	buf_free(&h);
	HEADER(&h, "\x81\xa2\x62id\x19\x10\x00\x66" "fields\x80");
	refused(path, &h, "event type 0 of the schema is invalid");
	buf_free(&h);

	/* types as an indefinite array, and a type's fields too, are read */
	HEADER(&h, "\x9f\xa3\x62id\x02\x64name\x61t\x66" "fields\x9f\x82\x61" "f\x63s64\xff\xff");
	write_file(path, &h, NULL, 0);
	buf_free(&h);
	struct tpp_reader *r = open_ok(path);
	if (r) {
		const struct tpp_type *t = tpp_r_type(r, 2);
		CHECK(t && !strcmp(t->name, "t") && !strcmp(t->system, "") && t->nfields == 1 &&
			      t->fields[0].type == TPP_F_S64,
		      "a type from indefinite arrays");
		tpp_r_close(r);
	}
}

/* What a 1.0 writer wrote from kernel bytes: text strings that are not
 * UTF-8 in the header and in records. libcbor refused such a file whole;
 * the bytes are read as they are (specs/format.md "Strings"). */
static void old_writer_bytes(const char *path)
{
	struct buf h = {0}, c = {0};
	cbor_head(&h, CB_MAP, 3);
	kv_text(&h, "hostname", "h\xff");
	text(&h, "cmdline");
	cbor_head(&h, CB_ARRAY, 2);
	text(&h, "rec");
	text(&h, "a\xc3\x28\"b");
	text(&h, "types");
	cbor_head(&h, CB_ARRAY, 0);
	cbor_head(&c, CB_ARRAY, 2);
	cbor_head(&c, CB_MAP, 5);
	kv_text(&c, "k", "task");
	kv_int(&c, "ts", 5);
	kv_int(&c, "pid", 10);
	kv_int(&c, "tid", 11);
	kv_text(&c, "comm", "w\xfe\xed\xa0\x80");
	cbor_head(&c, CB_MAP, 5); /* and a 1.1 writer's byte string */
	kv_text(&c, "k", "task");
	kv_int(&c, "ts", 6);
	kv_int(&c, "pid", 10);
	kv_int(&c, "tid", 12);
	text(&c, "comm");
	cbor_bytes(&c, "b\x80", 2);
	write_file(path, &h, &c, 1);
	buf_free(&h);
	buf_free(&c);
	struct tpp_reader *r = open_ok(path);
	if (!r)
		return;
	const struct tpp_file_info *in = tpp_r_info(r);
	CHECK(in->hostname && !strcmp(in->hostname, "h\xff"), "hostname bytes");
	CHECK(in->argc == 2 && !strcmp(in->argv[1], "a\xc3\x28\"b"), "argv bytes");
	const struct tpp_meta *m = tpp_r_meta(r);
	CHECK(in->damaged_chunks == 0 && m->ntasks == 2, "both tasks read (%zu)", m->ntasks);
	if (m->ntasks == 2)
		CHECK(!strcmp(m->tasks[0].comm, "w\xfe\xed\xa0\x80") && !strcmp(m->tasks[1].comm, "b\x80"),
		      "comm bytes, from text and from a byte string");
	tpp_r_close(r);
}

int main(void)
{
	char path[] = "/tmp/tpp-meta-compat-XXXXXX";
	close(mkstemp(path));
	good_file(path);
	bad_headers(path);
	old_writer_bytes(path);
	unlink(path);
	TEST_DONE();
}
