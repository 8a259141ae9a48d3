/* writer_limits — a file size cap stops the writer cleanly: the file stays
 * under the cap, ends with a trailer, and holds exactly the events the
 * writer says it wrote. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tpp_decode.h"
#include "tpp_test.h"

int main(void)
{
	char path[] = "/tmp/tpp-cap-XXXXXX";
	close(mkstemp(path));
	const uint64_t cap = 256 << 10;
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o), .max_file_bytes = cap};
	CHECK(tpp_w_open(&w, path, &o) == 0, "open");
	static const struct tpp_field_def f[] = {{"v", TPP_F_U64}, {"name", TPP_F_STR}};
	struct tpp_type_def t = {1, "e", "s", 2, f};
	tpp_w_add_type(w, &t);
	tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1);
	uint64_t x = 1;
	int e = 0;
	long accepted = 0;
	char name[16];
	for (long i = 0; i < 10000000 && !e; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		snprintf(name, sizeof(name), "t%llu", (unsigned long long)(x >> 60));
		union tpp_val v[2] = {{.u = x}, {.s = {name, (uint32_t)strlen(name)}}};
		e = tpp_w_event(w, 0, 1, (uint64_t)i * 1000, (int32_t)(x >> 50), v);
		accepted += !e;
	}
	CHECK(e == -EFBIG, "the cap stops the writer with EFBIG (got %d)", e);
	struct tpp_w_stats st;
	CHECK(tpp_w_close_stats(w, &st) == 0, "a capped file still closes cleanly");
	struct stat sb;
	stat(path, &sb);
	CHECK((uint64_t)sb.st_size <= cap, "file %lld bytes under the cap %llu", (long long)sb.st_size,
	      (unsigned long long)cap);
	CHECK((uint64_t)sb.st_size > cap * 3 / 4, "and not far under it: %lld", (long long)sb.st_size);
	struct tpp_reader *r;
	char msg[256];
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "%s", msg);
	CHECK(tpp_r_info(r)->has_trailer, "trailer written");
	struct tpp_iter *it;
	struct tpp_iter_opts io = {.sz = sizeof(io)};
	tpp_iter_open(&it, r, &io);
	const struct tpp_event *ev;
	uint64_t n = 0;
	while (tpp_iter_next(it, &ev) == 1)
		n++;
	CHECK(n == st.events_written, "file holds %llu events, writer says %llu written", (unsigned long long)n,
	      (unsigned long long)st.events_written);
	/* the event whose chunk hit the cap was buffered too, then refused with it */
	CHECK(st.events == (uint64_t)accepted + 1 && st.events_written < st.events, "buffered %llu, written %llu",
	      (unsigned long long)st.events, (unsigned long long)st.events_written);
	tpp_iter_close(it);
	tpp_r_close(r);
	unlink(path);
	TEST_DONE();
}
