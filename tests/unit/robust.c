/* robust — damaged files never crash, hang or over-allocate the reader, and
 * every intact chunk is still decoded:
 *  - every truncation point of a sample: events recovered never decrease as
 *    the prefix grows, and the full file yields every event;
 *  - thousands of random byte flips (run under ASan/UBSan by make check);
 *  - a writer killed before its trailer: every flushed chunk recovered;
 *  - column scans of all of them agree with tpp_iter, event for event. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode_all.h"
#include "scan_check.h"
#include "tpp_test.h"

static uint8_t *slurp(const char *p, size_t *n)
{
	struct stat st;
	if (stat(p, &st))
		return NULL;
	*n = (size_t)st.st_size;
	uint8_t *b = malloc(*n);
	FILE *f = fopen(p, "rb");
	if (!b || !f || fread(b, 1, *n, f) != *n) {
		free(b);
		if (f)
			fclose(f);
		return NULL;
	}
	fclose(f);
	return b;
}

static void spit(const char *p, const uint8_t *b, size_t n)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, b, n) != (ssize_t)n)
		abort();
	close(fd);
}

static long write_sample(const char *path, int abandon)
{
	struct tpp_writer *w;
	struct tpp_w_opts o = {.sz = sizeof(o), .chunk_events = 100};
	tpp_w_open(&w, path, &o);
	static const struct tpp_field_def f[] = {{"addr", TPP_F_U64}, {"comm", TPP_F_STR}, {"d", TPP_F_S64}};
	struct tpp_type_def t = {1, "e", "s", 3, f};
	tpp_w_add_type(w, &t);
	tpp_w_stream(w, 0, TPP_S_CPU, 0, -1, -1);
	tpp_w_stream(w, 1000, TPP_S_THREAD, -1, 10, 11);
	tpp_w_task(w, 1, 10, 11, "sample");
	long n = 0;
	for (int i = 0; i < 1000; i++, n++) {
		union tpp_val v[3] = {{.u = 0x400000 + (uint64_t)(i % 7) * 16}, {.s = {"sample", 6}}, {.i = -i}};
		tpp_w_event(w, i % 3 ? 0 : 1000, 1, 100 + (uint64_t)i * 37, 11, v);
		if (abandon && i == 649)
			tpp_w_flush(w);
	}
	uint8_t bid[4] = {1, 2, 3, 4};
	struct tpp_sym s = {0, 16, "fn"};
	tpp_w_mmap(w, 1, 10, 0x400000, 0x401000, 0, "/x", bid, 4);
	tpp_w_symtab(w, bid, 4, "/x", 1, &s);
	if (abandon) {
		tpp_w_abandon(w);
		return 650;
	}
	tpp_w_close(w);
	return n;
}

int main(void)
{
	char path[] = "/tmp/tpp-robust-XXXXXX", cut[64];
	close(mkstemp(path));
	snprintf(cut, sizeof(cut), "%s.cut", path);
	long dmg;
	/* TPP_ROBUST_QUICK: a tenth of the files (every truncation point up to
	 * the first chunk, then strides), for slow builds such as ThreadSanitizer,
	 * whose point is the threads, not the thousands of damages. */
	int quick = getenv("TPP_ROBUST_QUICK") != NULL;
	long total = write_sample(path, 0);
	CHECK(decode_all(path, 1, &dmg) == total && dmg == 0, "intact sample decodes fully");
	long scan_bad, scan_disagree = 0;
	CHECK(scan_all(path, &scan_bad) == total && scan_bad == 0, "intact sample scans fully");
	size_t n = 0;
	uint8_t *b = slurp(path, &n);
	CHECK(b != NULL, "read sample");

	/* every truncation point */
	long prev = 0;
	int decreasing = 0, crashed_open = 0;
	for (size_t len = 0; b && len <= n; len += quick && len > 256 && len + 11 < n ? 11 : 1) {
		spit(cut, b, len);
		long got = decode_all(cut, len % 2, &dmg);
		if (got < 0)
			got = 0;
		scan_all(cut, &scan_bad);
		scan_disagree += scan_bad;
		if (got < prev)
			decreasing++;
		if (len == n && got != total)
			crashed_open++;
		prev = got;
	}
	CHECK(decreasing == 0, "events recovered decreased %d times as the prefix grew", decreasing);
	CHECK(crashed_open == 0, "the whole file decodes");
	CHECK(prev == total, "full length gives all %ld events", total);

	/* random byte flips: no crash, and damage stays local */
	uint64_t x = 0x1234567;
	long worst = total;
	int rounds = quick ? 300 : 3000;
	for (int round = 0; b && round < rounds; round++) {
		uint8_t *m = malloc(n);
		memcpy(m, b, n);
		int flips = 1 + (int)(round % 4);
		for (int k = 0; k < flips; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			m[x % n] ^= (uint8_t)(1u << (x >> 32) % 8);
		}
		spit(cut, m, n);
		long got = decode_all(cut, round % 2, &dmg);
		if (got >= 0 && got < worst)
			worst = got;
		if (round % 4 == 0) {
			scan_all(cut, &scan_bad);
			scan_disagree += scan_bad;
		}
		free(m);
	}
	CHECK(1, "%d damaged files read without a crash (fewest events recovered: %ld)", rounds, worst);
	CHECK(scan_disagree == 0, "column scans of truncated and damaged files agree with tpp_iter (%ld differences)",
	      scan_disagree);

	/* one flipped payload byte costs one chunk, not the file */
	const uint8_t *hit = NULL;
	for (size_t i = n / 2; b && i + 4 < n; i++)
		if (!memcmp(b + i, "TPCK", 4)) {
			hit = b + i;
			break;
		}
	if (hit) {
		uint8_t *m = malloc(n);
		memcpy(m, b, n);
		m[(hit - b) + 48 + 2] ^= 0x40;
		spit(cut, m, n);
		long got = decode_all(cut, 1, &dmg);
		CHECK(dmg >= 1 && got >= total - 110 && got < total, "a bad payload skips one chunk: %ld of %ld, %ld damaged", got,
		      total, dmg);
		CHECK(scan_all(cut, &scan_bad) == got && scan_bad == 0, "a scan skips the same chunk");
		free(m);
	}

	/* a writer killed after a flush: everything flushed is there */
	write_sample(path, 1);
	long got = decode_all(path, 1, &dmg);
	/* chunks that filled after the flush were written too: at least 650 */
	CHECK(got >= 650 && got < 1000 && dmg == 0, "abandoned writer: %ld events recovered, 650 flushed, %ld damaged", got, dmg);
	free(b);
	unlink(path);
	unlink(cut);
	TEST_DONE();
}
