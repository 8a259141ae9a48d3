/* roundtrip — what goes into the writer comes out of the reader, byte for
 * byte: every field type, extreme values, several streams, late types,
 * metadata records, in file order and in global time order. */
#include <pthread.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "tpp_decode.h"
#include "tpp_test.h"
#include "scan_check.h"

#define N 50000
struct rec {
	uint32_t stream;
	uint16_t type;
	uint64_t ts;
	int32_t tid;
	uint64_t u;
	int64_t s;
	char str[24];
	uint8_t bytes[8];
	uint32_t blen;
};


/* A string interned for scans: the handle is the address of its copy. */
struct istr {
	uint32_t len;
	char s[64];
};
static struct istr istrs[64];
static int nistr, interned_calls;
static pthread_mutex_t istr_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t test_intern(void *ctx, const char *s, uint32_t len)
{
	(void)ctx;
	uint64_t h = 0;
	pthread_mutex_lock(&istr_lock);
	interned_calls++;
	for (int i = 0; i < nistr && !h; i++)
		if (istrs[i].len == len && !memcmp(istrs[i].s, s, len))
			h = (uint64_t)(uintptr_t)&istrs[i];
	if (!h && nistr < 64 && len < 64) {
		istrs[nistr].len = len;
		memcpy(istrs[nistr].s, s, len);
		h = (uint64_t)(uintptr_t)&istrs[nistr++];
	}
	pthread_mutex_unlock(&istr_lock);
	return h;
}

/* t_mix's string and number read by a scan with an intern, in step with
 * tpp_iter: each handle names the iterator's string. */
static int scan_strings(struct tpp_reader *r, int threads, long *events, long *diffs)
{
	static uint32_t want[TPP_MAX_TYPES];
	want[3] = 1u << 1 | 1u << 2;
	struct tpp_scan *s;
	struct tpp_scan_opts so = {.sz = sizeof(so), .want = want, .threads = threads, .intern = test_intern};
	interned_calls = 0; /* before the scan's thread can intern */
	int e = tpp_scan_open(&s, r, &so);
	if (e)
		return e;
	struct tpp_iter *it;
	struct tpp_iter_opts io = {.sz = sizeof(io), .sorted = 1, .want = want};
	if ((e = tpp_iter_open(&it, r, &io))) {
		tpp_scan_close(s);
		return e;
	}
	*events = *diffs = 0;
	struct tpp_run runs[64];
	int nr;
	while ((nr = tpp_scan_runs(s, runs, 64)) > 0)
		for (int k = 0; k < nr; k++)
			for (uint32_t i = runs[k].from; i < runs[k].to; i++) {
				const struct tpp_event *ev;
				const struct tpp_cols *c = runs[k].c;
				++*events;
				if (tpp_iter_next(it, &ev) != 1 || ev->type != c->type[i]) {
					++*diffs;
					continue;
				}
				if (ev->type != 3) {
					*diffs += c->col[0][i] || c->col[1][i];
					continue;
				}
				const struct istr *is = (const struct istr *)(uintptr_t)c->col[0][i];
				*diffs += !is || is->len != ev->v[1].s.len || memcmp(is->s, ev->v[1].s.p, is->len) ||
					  c->col[1][i] != ev->v[2].u;
			}
	tpp_iter_close(it);
	tpp_scan_close(s);
	/* once per chunk and string, not per event */
	pthread_mutex_lock(&istr_lock);
	int calls = interned_calls;
	pthread_mutex_unlock(&istr_lock);
	if (nr < 0 || calls > 4 * (int)tpp_r_nchunks(r))
		++*diffs;
	return 0;
}

/* Column scans: a file of nstreams CPU streams in time order, with equal
 * timestamps across streams (ties go to the lower stream), read by
 * tpp_scan in step with tpp_iter: the same events, order and numbers, with
 * and without the second thread, whole and in a time range. */
static void scan_file(const char *path, int nstreams)
{
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o), .chunk_events = 300};
	CHECK(tpp_w_open(&w, path, &o) == 0, "open writer");
	static const struct tpp_field_def f1[] = {{"u", TPP_F_U64}, {"name", TPP_F_STR}, {"s", TPP_F_S64}};
	static const struct tpp_field_def f5[] = {{"a", TPP_F_U64}, {"b", TPP_F_S64}, {"c", TPP_F_U64},
						  {"d", TPP_F_U64}, {"e", TPP_F_U64}};
	struct tpp_type_def t1 = {3, "t_mix", "test", 3, f1}, t5 = {9, "t_five", "test", 5, f5};
	CHECK(tpp_w_add_type(w, &t1) == 0 && tpp_w_add_type(w, &t5) == 0, "types");
	for (int k = 0; k < nstreams; k++)
		CHECK(tpp_w_stream(w, (uint32_t)k * 3, TPP_S_CPU, k, -1, -1) == 0, "stream %d", k);
	uint64_t ts[8] = {0};
	int n = 20000;
	for (int i = 0; i < n; i++) {
		int k = (int)(rnd() % (uint64_t)nstreams);
		/* small steps, often 0: ties inside and across streams */
		ts[k] += rnd() % 3 == 0 ? 0 : rnd() % 4000;
		if (rnd() % 50 == 0)
			ts[k] += 1ull << 40; /* and deltas of many bytes */
		union tpp_val v[5];
		uint16_t type = rnd() % 3 ? 3 : 9;
		v[0].u = rnd();
		if (type == 3) {
			v[1].s.p = "abc";
			v[1].s.len = (uint32_t)(rnd() % 4);
			v[2].i = -(int64_t)(rnd() % 100000);
		} else {
			v[1].i = (int64_t)rnd();
			v[2].u = rnd() % 5;
			v[3].u = UINT64_MAX - rnd() % 3;
			v[4].u = rnd() % 2;
		}
		CHECK(tpp_w_event(w, (uint32_t)k * 3, type, ts[k], (int32_t)(rnd() % 9000) - 1, v) == 0, "event");
	}
	CHECK(tpp_w_close(w) == 0, "close");
	struct tpp_reader *r;
	char msg[256];
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "open reader: %s", msg);
	static uint32_t want[TPP_MAX_TYPES], five[TPP_MAX_TYPES];
	want[3] = 1u << 0 | 1u << 2; /* u and s: the string is left out */
	want[9] = 1u << 1 | 1u << 3 | 1u << 4;
	struct scan_cmp c;
	for (int threads = 0; threads < 2; threads++) {
		CHECK(scan_vs_iter(r, want, 0, 0, threads, &c) == 0, "scan opens");
		CHECK(c.events == n && c.diffs == 0, "%d streams, threads %d: %ld events, %ld differ dmg %ld/%ld", nstreams, threads,
		      c.events, c.diffs, c.damaged_scan, c.damaged_iter);
		CHECK(c.ss.events == c.si.events && c.ss.chunks == c.si.chunks && c.ss.out_of_order == 0,
		      "scan stats: %llu events, %llu chunks", (unsigned long long)c.ss.events,
		      (unsigned long long)c.ss.chunks);
		uint64_t from = ts[0] / 3, to = ts[0] / 3 * 2;
		CHECK(scan_vs_iter(r, want, from, to, threads, &c) == 0, "ranged scan opens");
		CHECK(c.events == (long)c.si.events && c.events > 0 && c.events < n && c.diffs == 0,
		      "time range: %ld events, %ld differ", c.events, c.diffs);
	}
	for (int threads = 0; threads < 2; threads++) {
		long events = 0, diffs = 0;
		CHECK(scan_strings(r, threads, &events, &diffs) == 0, "scan with strings opens");
		CHECK(events == n && diffs == 0, "strings as handles, threads %d: %ld events, %ld differ", threads,
		      events, diffs);
	}
	five[9] = 0x1f;
	CHECK(scan_vs_iter(r, five, 0, 0, 0, &c) == -ENOTSUP, "five numbers of a type do not fit the columns");
	five[9] = 0;
	five[3] = 1u << 1;
	CHECK(scan_vs_iter(r, five, 0, 0, 0, &c) == -ENOTSUP, "a string field does not fit the columns");
	tpp_r_close(r);
}

/* A file of one u64 type (1, "t_w") in chunks of chunk_events events. */
static struct tpp_writer *window_writer(const char *path, uint32_t chunk_events)
{
	struct tpp_writer *w = NULL;
	struct tpp_w_opts o = {.sz = sizeof(o), .chunk_events = chunk_events};
	CHECK(tpp_w_open(&w, path, &o) == 0, "open writer");
	static const struct tpp_field_def f1[] = {{"u", TPP_F_U64}};
	struct tpp_type_def t1 = {1, "t_w", "test", 1, f1};
	CHECK(w && tpp_w_add_type(w, &t1) == 0, "type");
	return w;
}

/* The file in time order, through a reorder window of window events. */
static struct tpp_iter *window_iter(const char *path, uint32_t window, struct tpp_reader **r)
{
	char msg[256];
	struct tpp_iter *it = NULL;
	CHECK(tpp_r_open(r, path, msg, sizeof(msg)) == 0, "open reader: %s", msg);
	struct tpp_iter_opts io = {.sz = sizeof(io), .sorted = 1, .window = window};
	CHECK(tpp_iter_open(&it, *r, &io) == 0, "iter");
	return it;
}

/* Bytes malloc holds now (0 under the ASan allocator: its checks then say nothing). */
static size_t heap_held(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* The reorder window: a thread's stream with one step back in one chunk
 * (a clock read on another CPU) comes out in time order, and the window is
 * left once it drains: the sorted chunks after it come out in runs again. */
static void window_file(const char *path)
{
	enum { NW = 3000, CH = 100, BACK = 1050, NC = 200 };
	struct tpp_writer *w = window_writer(path, CH);
	CHECK(tpp_w_stream(w, 1000, TPP_S_THREAD, -1, 5, 5) == 0 && tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1) == 0,
	      "streams");
	static uint64_t want[NW + NC];
	int n = 0;
	for (int i = 0, j = 0; i < NW; i++) {
		/* the CPU's events between the thread's, never at the same ns */
		if (i % (NW / NC) == 0 && j < NC) {
			uint64_t t = 10ull * (uint64_t)i + 5;
			CHECK(tpp_w_event(w, 0, 1, t, 9, (union tpp_val[]){{.u = 0}}) == 0, "cpu event");
			want[n++] = t;
			j++;
		}
		uint64_t t = 10ull * (uint64_t)i + (i == BACK ? 0 : 20);
		CHECK(tpp_w_event(w, 1000, 1, t, 5, (union tpp_val[]){{.u = (uint64_t)i}}) == 0, "event %d", i);
		want[n++] = t;
	}
	CHECK(tpp_w_close(w) == 0, "close");
	/* time order: the file's timestamps sorted (all distinct) */
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && want[k] < want[k - 1]; k--) {
			uint64_t x = want[k];
			want[k] = want[k - 1];
			want[k - 1] = x;
		}
	struct tpp_reader *r;
	struct tpp_iter *it = window_iter(path, 64, &r);
	const struct tpp_event *ev;
	size_t stride;
	int k, got = 0, bad = 0, longest_after = 0;
	while ((k = tpp_iter_run(it, &ev, &stride)) > 0) {
		if (got > BACK + 2 * CH && k > longest_after)
			longest_after = k;
		for (int i = 0; i < k; i++, ev = (const struct tpp_event *)(const void *)((const char *)ev + stride))
			bad += got >= n || ev->ts != want[got++];
	}
	CHECK(k == 0 && got == n && !bad, "window: %d of %d events, %d out of place", got, n, bad);
	CHECK(longest_after > 1, "after the window drains, runs again (longest %d)", longest_after);
	tpp_iter_close(it);
	tpp_r_close(r);
	unlink(path);
}

/* Thread streams that each step back once in their first chunk go
 * through the reorder window, then leave it: its slots are given back
 * there, not kept per stream until the iterator closes. */
static void window_memory(const char *path)
{
	enum { NT = 300, NE = 400, CH = 100 };
	struct tpp_writer *w = window_writer(path, CH);
	for (int t = 0; t < NT; t++)
		CHECK(tpp_w_stream(w, 1000 + (uint32_t)t, TPP_S_THREAD, -1, 5 + t, 5 + t) == 0, "stream %d", t);
	for (int i = 0; i < NE; i++)
		for (int t = 0; t < NT; t++)
			CHECK(tpp_w_event(w, 1000 + (uint32_t)t, 1, (i == 5 ? 4400ull : 1000ull * (uint64_t)i + 500) + (uint64_t)t,
					  5 + t, (union tpp_val[]){{.u = (uint64_t)i}}) == 0,
			      "event");
	CHECK(tpp_w_close(w) == 0, "close");
	struct tpp_reader *r;
	struct tpp_iter *it = window_iter(path, 256, &r);
	const struct tpp_event *ev;
	size_t peak = 0, at_half = 0;
	int n = 0;
	while (tpp_iter_next(it, &ev) > 0) {
		size_t held = heap_held();
		if (++n > NT * NE / 2 && !at_half)
			at_half = held;
		if (held > peak)
			peak = held;
	}
	CHECK(n == NT * NE, "window memory: %d events", n);
	/* 300 windows of 257 slots are ~40 MB; with the ASan allocator
	 * mallinfo2 reads 0 and this says nothing */
	CHECK(at_half < 16u << 20, "window memory: %zu bytes held half way (peak %zu)", at_half, peak);
	tpp_iter_close(it);
	tpp_r_close(r);
	unlink(path);
}

/* Thread streams whose chunks overlap (a step back across a chunk's
 * edge) stay in the window to their end; ended, they give their window
 * and buffers back while a long stream goes on. */
static void window_memory_end(const char *path)
{
	enum { NT = 300, NE = 200, CH = 100, LONG = 4000 };
	struct tpp_writer *w = window_writer(path, CH);
	int bad = 0;
	bad += tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1) != 0;
	for (int t = 0; t < NT; t++)
		bad += tpp_w_stream(w, 1000 + (uint32_t)t, TPP_S_THREAD, -1, 5 + t, 5 + t) != 0;
	for (int i = 0; i < LONG; i++) {
		bad += tpp_w_event(w, 0, 1, 1000ull * (uint64_t)i + 999, 9, (union tpp_val[]){{.u = 0}}) != 0;
		for (int t = 0; i < NE && t < NT; t++)
			bad += tpp_w_event(w, 1000 + (uint32_t)t, 1,
					   (i == CH ? 1000ull * (CH - 1) + 400 : 1000ull * (uint64_t)i + 500) + (uint64_t)t,
					   5 + t, (union tpp_val[]){{.u = (uint64_t)i}}) != 0;
	}
	CHECK(!bad && tpp_w_close(w) == 0, "write");
	struct tpp_reader *r;
	struct tpp_iter *it = window_iter(path, 256, &r);
	const struct tpp_event *ev;
	size_t late = 0;
	int n = 0;
	while (tpp_iter_next(it, &ev) > 0)
		if (++n == NT * NE + LONG / 2 + 100) { /* the thread streams long ended */
			late = heap_held();
		}
	CHECK(n == NT * NE + LONG, "window memory at the end: %d events", n);
	CHECK(late < 16u << 20, "window memory at the end: %zu bytes held after the windowed streams ended", late);
	tpp_iter_close(it);
	tpp_r_close(r);
	unlink(path);
}

int main(void)
{
	char path[] = "/tmp/tpp-rt-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	CHECK(tpp_crc32c(0, "123456789", 9) == 0xE3069283u, "crc32c check value %08x", tpp_crc32c(0, "123456789", 9));
	/* varints and zigzag at the edges */
	const int64_t edge[] = {0, 1, -1, 63, -64, 64, INT64_MAX, INT64_MIN, 1ll << 35, -(1ll << 35)};
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		struct buf b = {0};
		buf_varint(&b, zigzag(edge[i]));
		const uint8_t *p = b.data;
		uint64_t v = 0;
		CHECK(!get_varint(&p, b.data + b.len, &v) && unzigzag(v) == edge[i] && p == b.data + b.len,
		      "varint edge %lld", (long long)edge[i]);
		CHECK(get_varint(&(const uint8_t *){b.data}, b.data + b.len - 1, &v) == -1 || b.len == 1,
		      "truncated varint is refused");
		buf_free(&b);
	}

	static struct rec recs[N];
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o), .chunk_events = 777, .producer = "roundtrip"};
	CHECK(tpp_w_open(&w, path, &o) == 0, "open writer");
	static const struct tpp_field_def f1[] = {{"u", TPP_F_U64}, {"s", TPP_F_S64}, {"name", TPP_F_STR},
						  {"blob", TPP_F_BYTES}};
	static const struct tpp_field_def f2[] = {{"only", TPP_F_U64}};
	struct tpp_type_def t1 = {1, "t_all", "test", 4, f1}, t2 = {7, "t_one", "test", 1, f2};
	CHECK(tpp_w_add_type(w, &t1) == 0, "add type");
	CHECK(tpp_w_add_type(w, &t1) < 0, "a type id is defined once");
	CHECK(tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1) == 0, "stream cpu0");
	CHECK(tpp_w_stream(w, 1, TPP_S_CPU, 1, -1, -1) == 0, "stream cpu1");
	CHECK(tpp_w_stream(w, 1000, TPP_S_THREAD, -1, 77, 78) == 0, "stream thread");
	CHECK(tpp_w_stream(w, 1, TPP_S_CPU, 1, -1, -1) < 0, "duplicate stream refused");
	CHECK(tpp_w_task(w, 5, 77, 78, "worker \"x\"") == 0, "task");
	static const char *names[] = {"", "a", "swapper/0", "kworker/u8:2-events", "tab\there", "x\0y"};
	uint64_t ts[3] = {1000, 2000, 3000};
	int late_added = 0;
	for (int i = 0; i < N; i++) {
		struct rec *r = &recs[i];
		r->stream = (uint32_t[]){0, 1, 1000}[rnd() % 3];
		int si = r->stream == 1000 ? 2 : (int)r->stream;
		ts[si] += rnd() % 5000;
		r->ts = ts[si];
		if (rnd() % 100 == 0 && r->ts > 500)
			r->ts -= 400; /* a little out of order, as per-CPU clocks can be */
		r->tid = r->stream == 1000 ? 78 : (int32_t)(rnd() % 70000) - 5;
		if (i == N / 2 && !late_added) {
			CHECK(tpp_w_add_type(w, &t2) == 0, "late type");
			late_added = 1;
		}
		r->type = (late_added && rnd() % 4 == 0) ? 7 : 1;
		r->u = (uint64_t[]){0, 1, UINT64_MAX, 0xffff888100000000ull, rnd()}[rnd() % 5];
		r->s = (int64_t[]){0, -1, INT64_MIN, INT64_MAX, (int64_t)rnd()}[rnd() % 5];
		const char *nm = names[rnd() % 6];
		snprintf(r->str, sizeof(r->str), "%s", nm);
		r->blen = (uint32_t)(rnd() % 9);
		for (uint32_t k = 0; k < r->blen; k++)
			r->bytes[k] = (uint8_t)rnd();
		union tpp_val v[4];
		v[0].u = r->u;
		v[1].i = r->s;
		v[2].s.p = r->str;
		v[2].s.len = (uint32_t)strlen(r->str);
		v[3].s.p = (const char *)r->bytes;
		v[3].s.len = r->blen;
		if (r->type == 7)
			v[0].u = r->u;
		CHECK(tpp_w_event(w, r->stream, r->type, r->ts, r->tid, v) == 0, "event %d", i);
	}
	CHECK(tpp_w_event(w, 5, 1, 1, 1, NULL) < 0, "event on an undeclared stream is refused");
	uint8_t bid[20] = {1, 2, 3};
	struct tpp_sym syms[3] = {{0x1000, 0x10, "alpha"}, {0x1010, 0x20, "beta"}, {0x1100, 0, "gamma"}};
	CHECK(tpp_w_mmap(w, 9, 77, 0x400000, 0x500000, 0x1000, "/bin/x", bid, 20) == 0, "mmap");
	CHECK(tpp_w_symtab(w, bid, 20, "/bin/x", 3, syms) == 0, "symtab");
	CHECK(tpp_w_lost(w, 1, 42, 100, 200) == 0, "lost");
	const char *k[] = {"a"}, *vv[] = {"b"};
	CHECK(tpp_w_note(w, "host", 1, k, vv) == 0, "note");
	struct tpp_w_stats st;
	tpp_w_stats(w, &st);
	CHECK(st.events == N, "writer counted %llu", (unsigned long long)st.events);
	CHECK(tpp_w_close(w) == 0, "close");

	struct tpp_reader *r;
	char msg[256];
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "open reader: %s", msg);
	const struct tpp_file_info *in = tpp_r_info(r);
	CHECK(in->has_trailer && in->major == 1, "trailer and version");
	CHECK(!strcmp(in->producer, "roundtrip"), "producer");
	CHECK(tpp_r_type(r, 7) && !strcmp(tpp_r_type(r, 7)->name, "t_one"), "late type read back");
	const struct tpp_meta *me = tpp_r_meta(r);
	CHECK(me->ntasks == 1 && !strcmp(me->tasks[0].comm, "worker \"x\"") && me->tasks[0].tid == 78, "task");
	CHECK(me->nmmaps == 1 && me->mmaps[0].start == 0x400000 && me->mmaps[0].bid_len == 20, "mmap");
	CHECK(me->nsymtabs == 1 && me->symtabs[0].nsyms == 3, "symtab");
	CHECK(me->lost_total == 42 && me->nlost == 1 && me->lost[0].to_ts == 200, "lost");
	CHECK(me->nnotes == 1 && !strcmp(me->notes[0].vals[0], "b"), "note");
	CHECK(tpp_r_nstreams(r) == 3 && tpp_r_stream_by_id(r, 1000)->tid == 78, "streams");
	struct tpp_names *nm;
	CHECK(tpp_names_open(&nm, r) == 0, "names");
	uint64_t off = 0;
	CHECK(tpp_names_sym(nm, 77, 0x400000 + 0x15, &off) && !strcmp(tpp_names_sym(nm, 77, 0x400015, &off), "beta") && off == 5,
	      "symbol of a PIE/shared mapping");
	CHECK(tpp_names_sym(nm, 77, 0x400000 + 0x40, &off) == NULL, "address in no symbol");
	CHECK(!strcmp(tpp_names_comm(nm, 78), "worker \"x\"") && tpp_names_pid(nm, 78) == 77, "comm and pid");
	tpp_names_close(nm);

	/* file order: per stream, events come back in the order written */
	for (int sorted = 0; sorted < 2; sorted++) {
		struct tpp_iter *it;
		struct tpp_iter_opts io = {.sz = sizeof(io), .sorted = sorted, .window = 64};
		CHECK(tpp_iter_open(&it, r, &io) == 0, "iter");
		int pos[3] = {0, 0, 0}, bad = 0, n = 0;
		uint64_t last = 0;
		int backwards = 0;
		const struct tpp_event *ev;
		while (tpp_iter_next(it, &ev) == 1) {
			int si = ev->stream == 1000 ? 2 : (int)ev->stream;
			n++;
			if (sorted) {
				backwards += ev->ts < last;
				last = ev->ts;
				continue;
			}
			while (pos[si] < N && recs[pos[si]].stream != ev->stream)
				pos[si]++;
			const struct rec *rc = &recs[pos[si]++];
			int ok = rc->ts == ev->ts && rc->type == ev->type && rc->tid == ev->tid && ev->v[0].u == rc->u;
			if (ok && rc->type == 1)
				ok = ev->v[1].i == rc->s && ev->v[2].s.len == strlen(rc->str) &&
				     !memcmp(ev->v[2].s.p, rc->str, ev->v[2].s.len) && ev->v[3].s.len == rc->blen &&
				     !memcmp(ev->v[3].s.p, rc->bytes, rc->blen);
			if (!ok && bad++ < 3)
				fprintf(stderr, "mismatch at stream %u event %d\n", ev->stream, pos[si] - 1);
			CHECK(ev->cpu == (ev->stream == 1000 ? -1 : (int32_t)ev->stream), "cpu of stream");
		}
		CHECK(n == N, "%s: read %d of %d events", sorted ? "sorted" : "file order", n, N);
		CHECK(!bad, "%d events differ", bad);
		if (sorted)
			CHECK(backwards == 0, "sorted output went backwards %d times", backwards);
		tpp_iter_close(it);
	}
	/* projection: in step with a full sorted read, the wanted fields are
	 * the same and the others read as 0 / NULL */
	{
		static uint32_t want[TPP_MAX_TYPES];
		want[1] = 1u << 0 | 1u << 2; /* t_all: u and name */
		struct tpp_iter *full, *proj;
		struct tpp_iter_opts fo = {.sz = sizeof(fo), .sorted = 1, .window = 64};
		struct tpp_iter_opts po = fo;
		po.want = want;
		CHECK(tpp_iter_open(&full, r, &fo) == 0 && tpp_iter_open(&proj, r, &po) == 0, "two iterators");
		const struct tpp_event *a, *b;
		int n = 0, bad = 0;
		while (tpp_iter_next(full, &a) == 1) {
			if (tpp_iter_next(proj, &b) != 1) {
				bad++;
				break;
			}
			n++;
			int ok = a->ts == b->ts && a->type == b->type && a->tid == b->tid && a->nvals == b->nvals;
			if (ok && a->type == 1)
				ok = b->v[0].u == a->v[0].u && b->v[2].s.len == a->v[2].s.len &&
				     !memcmp(b->v[2].s.p, a->v[2].s.p, a->v[2].s.len) && b->v[1].u == 0 &&
				     b->v[3].s.p == NULL && b->v[3].s.len == 0;
			if (ok && a->type == 7)
				ok = b->v[0].u == 0;
			if (!ok && bad++ < 3)
				fprintf(stderr, "projection differs at event %d\n", n);
		}
		CHECK(n == N && !bad && tpp_iter_next(proj, &b) == 0, "projection: %d events, %d differ", n, bad);
		tpp_iter_close(full);
		tpp_iter_close(proj);
	}
	/* runs: tpp_iter_run gives the same events in the same order */
	{
		struct tpp_iter *one, *run;
		struct tpp_iter_opts ro = {.sz = sizeof(ro), .sorted = 1, .window = 64};
		CHECK(tpp_iter_open(&one, r, &ro) == 0 && tpp_iter_open(&run, r, &ro) == 0, "two iterators");
		const struct tpp_event *a, *b;
		size_t stride;
		int n = 0, bad = 0, k, longest = 0;
		while ((k = tpp_iter_run(run, &b, &stride)) > 0) {
			longest = k > longest ? k : longest;
			for (int i = 0; i < k; i++, b = (const struct tpp_event *)(const void *)((const char *)b + stride)) {
				n++;
				if (tpp_iter_next(one, &a) != 1 || a->ts != b->ts || a->type != b->type ||
				    a->tid != b->tid || a->stream != b->stream || a->v[0].u != b->v[0].u)
					bad++;
			}
		}
		CHECK(k == 0 && n == N && !bad && tpp_iter_next(one, &a) == 0, "runs: %d events, %d differ", n, bad);
		CHECK(longest > 1, "runs hold more than one event (longest %d)", longest);
		tpp_iter_close(one);
		tpp_iter_close(run);
	}
	/* a scan leaves streams that need reordering to tpp_iter */
	{
		static uint32_t w1[TPP_MAX_TYPES];
		w1[1] = 1;
		struct scan_cmp c;
		CHECK(scan_vs_iter(r, w1, 0, 0, 0, &c) == -ENOTSUP, "scan refuses a file with events out of order");
	}
	/* a time range returns exactly the events inside it */
	uint64_t from = 20000, to = 400000;
	int want = 0;
	for (int i = 0; i < N; i++)
		want += recs[i].ts >= from && recs[i].ts <= to;
	struct tpp_iter *it;
	struct tpp_iter_opts io = {.sz = sizeof(io), .sorted = 1, .from_ts = from, .to_ts = to};
	CHECK(tpp_iter_open(&it, r, &io) == 0, "ranged iter");
	const struct tpp_event *ev;
	int got = 0;
	while (tpp_iter_next(it, &ev) == 1)
		got += ev->ts >= from && ev->ts <= to ? 1 : 1000000;
	struct tpp_iter_stats ist;
	tpp_iter_stats(it, &ist);
	CHECK(got == want, "time range: %d events, want %d", got, want);
	CHECK(ist.chunks < tpp_r_nchunks(r) / 2, "time range skipped chunks by index (%llu read)",
	      (unsigned long long)ist.chunks);
	tpp_iter_close(it);
	tpp_r_close(r);
	unlink(path);
	for (int k = 1; k <= 5; k += 2)
		scan_file(path, k);
	scan_file(path, 2);
	unlink(path);
	window_file(path);
	window_memory(path);
	window_memory_end(path);
	TEST_DONE();
}
