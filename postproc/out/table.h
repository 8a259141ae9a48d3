/* table — the analyses' result tables, emitted as aligned text, JSON or CSV
 * through one table of callbacks per format (like uftrace's dump ops), so the
 * commands never branch on the output format.
 *
 * A table is a list of columns (JSON key, text title, kind) and rows of
 * cells. JSON output is an array of objects keyed by tbl_col.key; CSV has a
 * header line of keys; text is aligned with human units (ns/µs/ms/s,
 * KiB/MiB), which is why text rows are kept until tbl_close (tables are
 * summaries: one row per task, device or function, never per event).
 *
 * Strings go out through esc.h: escaped JSON, RFC 4180 CSV, and in text
 * control bytes and bytes that are not UTF-8 as \xNN.
 * Ownership: columns must outlive the table; cell strings are copied.
 * Errors: tbl_open returns NULL on -ENOMEM; tbl_close returns 0 or -EIO when
 * writing failed. Nothing prints to stderr.
 */
#ifndef TPP_TABLE_H
#define TPP_TABLE_H
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

enum tbl_fmt { TBL_TEXT, TBL_JSON, TBL_CSV };
enum tbl_kind {
	TBL_STR,   /* text */
	TBL_INT,   /* signed integer */
	TBL_NS,    /* duration in ns: raw number in JSON/CSV, human in text */
	TBL_BYTES, /* size in bytes: raw in JSON/CSV, KiB/MiB in text */
	TBL_F64,   /* real number (rates, depths) */
	TBL_RAWJSON, /* pre-rendered JSON value: JSON only (histograms) */
	TBL_DSTR,  /* text in JSON and CSV only (null / empty when NULL): the
		    * text table shows it in another column */
};
struct tbl_col {
	const char *key;   /* JSON key / CSV header: a contract, keep stable */
	const char *title; /* text header; NULL = key */
	enum tbl_kind kind;
};
struct tbl_cell {
	const char *s; /* TBL_STR, TBL_RAWJSON; NULL shows as "-" / null */
	int64_t i;     /* TBL_INT, TBL_NS, TBL_BYTES */
	double f;      /* TBL_F64 */
};

/* Parses "text", "json" or "csv"; -1 when unknown. */
int tbl_parse_fmt(const char *s);

struct table;
struct table *tbl_open(FILE *out, enum tbl_fmt fmt, const struct tbl_col *cols, size_t ncols);
/* cells has ncols entries. */
int tbl_row(struct table *t, const struct tbl_cell *cells);
/* Writes what is pending (text is aligned here), frees t. */
int tbl_close(struct table *t);

/* Human units into buf (>= 16 bytes): "812 ns", "12.3 µs", "4.56 ms", "1.234 s". */
char *human_ns(char *buf, size_t len, uint64_t ns);
/* "512 B", "3.5 KiB", "12.0 MiB", "1.50 GiB". */
char *human_bytes(char *buf, size_t len, uint64_t b);
/* Parses a duration: "250", "250ns", "1.5us", "3ms", "2s" (default unit
 * given). 0 or -EINVAL. */
int parse_duration(const char *s, const char *default_unit, uint64_t *ns);
/* Writes s as a JSON string literal (quotes included), escaped by esc.h. */
void json_str(FILE *f, const char *s);
#endif
