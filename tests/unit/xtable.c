/* xtable: every table's columns (unique, host and trace_id first, found by
 * name), its CREATE TABLE in both engines with a line per column, rows
 * byte for byte in the three formats (RowBinary's little-endian widths and
 * LEB128 string lengths past one byte), a value of the wrong type or a
 * short row counted as bad, and xt_json writing exactly what xt_str writes
 * for JSON text (random objects with quotes, backslashes, commas). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tpp_test.h"
#include "../../postproc/out/out_fast.h"
#include "../../postproc/out/xtable.h"

static struct ofast o;
static FILE *tmp;

static void start(void)
{
	tmp = tmpfile();
	of_init(&o, fileno(tmp));
}

/* what went out since start(), NUL-terminated, its length in *n */
static char *took(size_t *n)
{
	of_flush(&o);
	long len = ftell(tmp);
	static char buf[1 << 16];
	rewind(tmp);
	*n = fread(buf, 1, (size_t)len, tmp);
	buf[*n] = 0;
	fclose(tmp);
	return buf;
}

static void net_row(struct xt_w *w, const char *dev, size_t devlen)
{
	xt_row(w);
	xt_str(w, "h,1", 3);
	xt_str(w, "00000000000000ab", 16);
	xt_u64(w, 5);
	xt_u64(w, 1000000000005ull);
	xt_i64(w, 7);
	xt_i32(w, -1);
	xt_i32(w, 42);
	xt_i32(w, 40);
	xt_str(w, "", 0);
	xt_str(w, dev, devlen);
	xt_str(w, "xmit", 4);
	xt_u64(w, 60);
	xt_i64(w, -5);
	xt_end(w);
}

int main(void)
{
	for (size_t i = 0; i < xt_ntables; i++) {
		const struct xt_table *t = &xt_tables[i];
		CHECK(xt_table(t->name) == t, "%s", t->name);
		CHECK(t->ncols > 2 && !strcmp(t->cols[0].name, "host") && !strcmp(t->cols[1].name, "trace_id"),
		      "%s", t->name);
		for (int a = 0; a < t->ncols; a++)
			for (int b = a + 1; b < t->ncols; b++)
				CHECK(strcmp(t->cols[a].name, t->cols[b].name), "%s: %s twice", t->name, t->cols[a].name);
		for (int e = XT_CLICKHOUSE; e <= XT_DUCKDB; e++) {
			char *s = NULL;
			size_t n = 0;
			FILE *f = open_memstream(&s, &n);
			xt_schema(f, t, (enum xt_engine)e, "x");
			fclose(f);
			int lines = 0;
			for (char *p = s; (p = strstr(p, "\n    ")); p++)
				lines++;
			CHECK(lines == t->ncols && !strncmp(s, "CREATE TABLE x\n(\n", 17), "%s %d: %d lines", t->name, e, lines);
			CHECK(e == XT_DUCKDB || strstr(s, "ENGINE = MergeTree() ORDER BY ("), "%s", s);
			free(s);
		}
	}
	CHECK(!xt_table("nope"), "unknown table");

	const struct xt_table *net = xt_table("net");
	struct xt_w w;
	size_t n;
	start();
	xt_begin(&w, &o, net, XT_CSV);
	net_row(&w, "lo", 2);
	char *s = took(&n);
	CHECK(!strcmp(s, "host,trace_id,ts_ns,wall_ns,wall_err_ns,cpu,tid,pid,comm,dev,dir,len,rc\n"
			 "\"h,1\",00000000000000ab,5,1000000000005,7,-1,42,40,\"\",lo,xmit,60,-5\n"),
	      "csv: %s", s);
	CHECK(w.rows == 1 && !w.bad, "rows %llu bad %llu", (unsigned long long)w.rows, (unsigned long long)w.bad);

	start();
	xt_begin(&w, &o, net, XT_JSONL);
	net_row(&w, "a\"b", 3);
	s = took(&n);
	CHECK(!strcmp(s, "{\"host\":\"h,1\",\"trace_id\":\"00000000000000ab\",\"ts_ns\":5,\"wall_ns\":1000000000005,"
			 "\"wall_err_ns\":7,\"cpu\":-1,\"tid\":42,\"pid\":40,\"comm\":\"\",\"dev\":\"a\\\"b\",\"dir\":\"xmit\",\"len\":60,"
			 "\"rc\":-5}\n"),
	      "jsonl: %s", s);

	/* RowBinary: a 300-byte string's length is two LEB128 bytes, 0xac 0x02 */
	char big[300];
	memset(big, 'z', sizeof(big));
	start();
	xt_begin(&w, &o, net, XT_ROWBINARY);
	net_row(&w, big, sizeof(big));
	s = took(&n);
	size_t want = 1 + 3 + 1 + 16 + 8 + 8 + 8 + 4 + 4 + 4 + 1 + 2 + 300 + 1 + 4 + 8 + 8;
	CHECK(n == want, "rowbinary: %zu bytes, want %zu", n, want);
	const unsigned char *u = (const unsigned char *)s;
	CHECK(u[0] == 3 && !memcmp(s + 1, "h,1", 3) && u[4] == 16, "rowbinary head");
	CHECK(u[21] == 5 && !u[22] && !u[28], "ts_ns little-endian");
	CHECK(u[37] == 7 && !u[38] && !u[44], "wall_err_ns little-endian");
	CHECK(u[45] == 0xff && u[48] == 0xff && u[49] == 42, "cpu -1, tid 42");
	CHECK(u[57] == 0 && u[58] == 0xac && u[59] == 0x02 && u[60] == 'z', "LEB128 300 at 58: %02x %02x", u[58], u[59]);
	CHECK(u[n - 8] == 0xfb && u[n - 1] == 0xff, "rc -5");

	/* a wrong type, a short row: counted, the export refuses */
	start();
	xt_begin(&w, &o, net, XT_CSV);
	xt_row(&w);
	xt_u64(&w, 1); /* host is a string */
	xt_end(&w);
	xt_row(&w);
	xt_str(&w, "h", 1);
	xt_end(&w);
	took(&n);
	CHECK(w.bad >= 2, "bad %llu", (unsigned long long)w.bad);

	/* xt_json = xt_str on JSON text, in every format */
	const struct xt_table *ev = xt_table("events");
	static const char *const parts[] = {"{", "}", "\"k\":", "\"a,b\"", "\"q\\\"q\"", "\"\\\\\"", "12", ",",
					    "[1,2]", "\"é\"", "null", " "};
	for (int round = 0; round < 2000; round++) {
		char js[256];
		size_t len = 0;
		int k = (int)(rnd() % 12);
		for (int i = 0; i < k; i++) {
			const char *p = parts[rnd() % (sizeof(parts) / sizeof(parts[0]))];
			memcpy(js + len, p, strlen(p));
			len += strlen(p);
		}
		for (int f = XT_CSV; f <= XT_ROWBINARY; f++) {
			char a[1024], b[1024];
			size_t na, nb;
			for (int way = 0; way < 2; way++) {
				start();
				xt_begin(&w, &o, ev, (enum xt_fmt)f);
				o.len = 0; /* no header: the cell alone */
				w.col = ev->ncols - 1;
				(way ? xt_json : xt_str)(&w, js, len);
				s = took(&n);
				memcpy(way ? b : a, s, n);
				*(way ? &nb : &na) = n;
			}
			CHECK(na == nb && !memcmp(a, b, na), "format %d: %.*s: %.*s vs %.*s", f, (int)len, js, (int)na, a,
			      (int)nb, b);
		}
	}
	TEST_DONE();
}
