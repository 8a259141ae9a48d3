/* clock — the file's time base (specs/format.md "Time base"): wall-clock
 * times interpolated between offset samples, with errors, against sums
 * worked by hand; a measured sample against the kernel's clocks read around
 * it; a written file's samples read back; an older file's lone offset. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tpp_format.h"
#include "tpp_test.h"

static int64_t now(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void interpolation(void)
{
	struct tpp_clock c = {0};
	/* added out of order, one repeated: sorted and kept once */
	struct tpp_clock_sample b = {11000000000u, 2000, 30}, a = {1000000000u, 1000, 10};
	tpp_clock_add(&c, &b);
	tpp_clock_add(&c, &a);
	tpp_clock_add(&c, &b);
	tpp_clock_done(&c);
	CHECK(c.n == 2 && c.s[0].mono_ns == a.mono_ns, "2 samples sorted, got %zu", c.n);
	int64_t err;
	/* halfway: offset 1500, error 20 */
	CHECK(tpp_clock_wall(&c, 6000000000u, &err) == 6000001500 && err == 20, "mid: err %lld", (long long)err);
	/* at the samples: their own offsets and errors */
	CHECK(tpp_clock_wall(&c, a.mono_ns, &err) == 1000001000 && err == 10, "at start: err %lld", (long long)err);
	CHECK(tpp_clock_wall(&c, b.mono_ns, &err) == 11000002000 && err == 30, "at end: err %lld", (long long)err);
	/* 10 s after the last: the slope (100 ns/s) goes on, and its drift adds to the error */
	CHECK(tpp_clock_wall(&c, 21000000000u, &err) == 21000003000 && err == 30 + 1000, "after: err %lld",
	      (long long)err);
	/* 0.5 s before the first */
	CHECK(tpp_clock_wall(&c, 500000000u, &err) == 500000950 && err == 10 + 50, "before: err %lld",
	      (long long)err);
	/* a negative drift: the error still grows outside */
	struct tpp_clock_sample d = {21000000000u, 0, 6};
	tpp_clock_add(&c, &d);
	tpp_clock_done(&c);
	CHECK(tpp_clock_wall(&c, 16000000000u, &err) == 16000001000 && err == 18, "third segment: err %lld",
	      (long long)err);
	CHECK(tpp_clock_wall(&c, 31000000000u, &err) == 30999998000 && err == 6 + 2000, "after a fall: err %lld",
	      (long long)err);
	/* untrusted extremes saturate, no overflow (UBSan watches) */
	struct tpp_clock_sample e = {UINT64_MAX - 1, INT64_MAX, INT64_MAX};
	tpp_clock_add(&c, &e);
	tpp_clock_done(&c);
	CHECK(tpp_clock_wall(&c, UINT64_MAX, &err) == INT64_MAX && err == INT64_MAX, "saturated: err %lld",
	      (long long)err);
	tpp_clock_wall(&c, 0, &err);
	tpp_clock_free(&c);
	/* a crafted pair whose offset change times the distance passes 2^127
	 * (the review's case: UBSan's overflow in slope_over) */
	struct tpp_clock_sample x1 = {UINT64_MAX - 1, INT64_MIN, 0}, x2 = {UINT64_MAX, INT64_MAX, 0};
	tpp_clock_add(&c, &x1);
	tpp_clock_add(&c, &x2);
	tpp_clock_done(&c);
	CHECK(tpp_clock_wall(&c, 1, &err) == INT64_MIN && err == INT64_MAX, "crafted slope: %lld",
	      (long long)err);
	tpp_clock_free(&c);
	/* one sample of unknown time (an older file): a constant offset, error unknown */
	struct tpp_clock_sample old = {0, -5, -1};
	tpp_clock_add(&c, &old);
	tpp_clock_done(&c);
	CHECK(tpp_clock_wall(&c, 100, &err) == 95 && err == -1, "old file: err %lld", (long long)err);
	tpp_clock_free(&c);
	/* none: the monotonic time itself */
	CHECK(tpp_clock_wall(&c, 100, &err) == 100 && err == -1, "no sample");
	CHECK(tpp_clock_wall(NULL, 7, NULL) == 7, "no clock");
}

/* A sample lies between the clocks read just before and after it: its
 * monotonic time between the monotonic reads, and the realtime it implies
 * (mono + offset) between the realtime reads, give or take its error. */
static void measure(void)
{
	int64_t r0 = now(CLOCK_REALTIME), m0 = now(CLOCK_MONOTONIC);
	struct tpp_clock_sample s;
	CHECK(tpp_clock_measure(&s) == 0, "measure");
	int64_t m1 = now(CLOCK_MONOTONIC), r1 = now(CLOCK_REALTIME);
	CHECK((int64_t)s.mono_ns >= m0 && (int64_t)s.mono_ns <= m1, "mono in its bracket");
	int64_t wall = (int64_t)s.mono_ns + s.offset_ns;
	CHECK(wall + s.err_ns >= r0 && wall - s.err_ns <= r1, "realtime %lld in [%lld, %lld] +- %lld",
	      (long long)wall, (long long)r0, (long long)r1, (long long)s.err_ns);
	CHECK(s.err_ns >= 0 && s.err_ns <= m1 - m0, "error %lld within the reads' %lld", (long long)s.err_ns,
	      (long long)(m1 - m0));
}

/* Writes a file of n events at monotonic times; returns 0. */
static int write_file(const char *path, int64_t given_offset, int close_it)
{
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o), .wall_offset_ns = given_offset};
	if (tpp_w_open(&w, path, &o))
		return -1;
	static const struct tpp_field_def f[] = {{"v", TPP_F_U64}};
	struct tpp_type_def t = {1, "e", "s", 1, f};
	tpp_w_add_type(w, &t);
	tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1);
	union tpp_val v = {.u = 1};
	tpp_w_event(w, 0, 1, (uint64_t)now(CLOCK_MONOTONIC), 1, &v);
	if (!close_it) {
		tpp_w_flush(w);
		tpp_w_abandon(w);
		return 0;
	}
	return tpp_w_close(w);
}

static void file(void)
{
	char path[] = "/tmp/tpp-clock-XXXXXX";
	close(mkstemp(path));
	char msg[256];
	struct tpp_reader *r;
	/* written and closed: the header's sample and the one at close */
	int64_t m0 = now(CLOCK_MONOTONIC);
	CHECK(write_file(path, 0, 1) == 0, "write");
	int64_t m1 = now(CLOCK_MONOTONIC);
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "%s", msg);
	const struct tpp_clock *c = tpp_r_clock(r);
	CHECK(c->n == 2, "start and end samples: %zu", c->n);
	if (c->n == 2) {
		CHECK((int64_t)c->s[0].mono_ns >= m0 && c->s[1].mono_ns > c->s[0].mono_ns &&
			      (int64_t)c->s[1].mono_ns <= m1,
		      "samples at open and close");
		CHECK(c->s[0].offset_ns == tpp_r_info(r)->wall_offset_ns, "the header's offset is the first");
		CHECK(c->s[0].err_ns >= 0 && c->s[1].err_ns >= 0, "errors known");
		int64_t err;
		uint64_t mid = c->s[0].mono_ns + (c->s[1].mono_ns - c->s[0].mono_ns) / 2;
		tpp_clock_wall(c, mid, &err);
		CHECK(err >= 0 && err <= (c->s[0].err_ns > c->s[1].err_ns ? c->s[0].err_ns : c->s[1].err_ns),
		      "between them the error is known: %lld", (long long)err);
	}
	tpp_r_close(r);
	/* killed before closing, recovered: the header's sample alone, its
	 * error known at its own time only */
	CHECK(write_file(path, 0, 0) == 0, "write");
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "%s", msg);
	c = tpp_r_clock(r);
	CHECK(!tpp_r_info(r)->has_trailer && c->n == 1 && c->s[0].mono_ns, "recovered: %zu", c->n);
	int64_t err;
	if (c->n == 1) {
		tpp_clock_wall(c, c->s[0].mono_ns, &err);
		CHECK(err == c->s[0].err_ns, "at the sample its error");
		tpp_clock_wall(c, c->s[0].mono_ns + 1000, &err);
		CHECK(err == -1, "later: unknown drift");
	}
	tpp_r_close(r);
	/* a caller's own offset (a converter, an older writer): no samples of
	 * the writer's, the offset alone of unknown error */
	CHECK(write_file(path, -123456789, 1) == 0, "write");
	CHECK(tpp_r_open(&r, path, msg, sizeof(msg)) == 0, "%s", msg);
	c = tpp_r_clock(r);
	CHECK(c->n == 1 && !c->s[0].mono_ns && c->s[0].offset_ns == -123456789, "given offset: %zu", c->n);
	CHECK(tpp_clock_wall(c, 1000000000, &err) == 1000000000 - 123456789 && err == -1, "given offset's wall");
	tpp_r_close(r);
	unlink(path);
}

int main(void)
{
	interpolation();
	measure();
	file();
	TEST_DONE();
}
