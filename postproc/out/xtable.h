/* xtable — the tables `tracepp export --table` writes for analytics
 * engines, and the one place their columns are listed: the row writers
 * (CSV, JSON lines, ClickHouse RowBinary) and the CREATE TABLE statements
 * (ClickHouse, DuckDB) both read xt_tables, so the bytes and the schema
 * cannot drift apart. A row is written column by column in the listed
 * order; a value of the wrong type or a row of the wrong length is counted
 * in xt_w.bad (a bug of the caller, reported by it), never written.
 *
 * Strings are bytes (specs/format.md "Strings"): CSV and JSON lines take
 * them through esc.h (valid UTF-8 always; in CSV an empty string is "",
 * never an empty field, which readers take for NULL), RowBinary as they
 * are (a ClickHouse String is bytes). Nothing allocates; output goes through the
 * caller's ofast (its error convention: of_flush).
 */
#ifndef TPP_XTABLE_H
#define TPP_XTABLE_H
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "out_fast.h"

enum xt_type { XT_STR, XT_U64, XT_I64, XT_U32, XT_I32, XT_U8 };
struct xt_col {
	const char *name;
	enum xt_type type;
};
struct xt_table {
	const char *name;         /* events, calls, sched, io, net, tasks */
	const struct xt_col *cols;
	int ncols;
	const char *order_by;     /* the MergeTree sorting key */
	const char *about;        /* one line: what a row is */
};
extern const struct xt_table xt_tables[];
extern const size_t xt_ntables;
/* The table named name, NULL if none. */
const struct xt_table *xt_table(const char *name);

enum xt_fmt { XT_CSV, XT_JSONL, XT_ROWBINARY };
enum xt_engine { XT_CLICKHOUSE, XT_DUCKDB };
/* "CREATE TABLE name (...) ...;\n" for t in engine e's types; for
 * ClickHouse a MergeTree ordered by t->order_by. */
void xt_schema(FILE *f, const struct xt_table *t, enum xt_engine e, const char *name);

struct xt_w {
	struct ofast *o;
	const struct xt_table *t;
	enum xt_fmt fmt;
	int col;           /* the next column of the row */
	uint64_t rows, bad;
};
/* Starts writing rows of t; CSV's header line goes out here. */
void xt_begin(struct xt_w *w, struct ofast *o, const struct xt_table *t, enum xt_fmt fmt);
void xt_row(struct xt_w *w);
void xt_str(struct xt_w *w, const char *s, size_t n);
/* A string column whose value is JSON text the caller wrote through esc.h
 * (valid UTF-8, no control byte): the same bytes out as xt_str, without
 * looking for what esc.h already took care of. */
void xt_json(struct xt_w *w, const char *s, size_t n);
void xt_u64(struct xt_w *w, uint64_t v);
void xt_i64(struct xt_w *w, int64_t v);
void xt_u32(struct xt_w *w, uint32_t v);
void xt_i32(struct xt_w *w, int32_t v);
void xt_u8(struct xt_w *w, uint8_t v);
/* Ends the row (every column written, else counted in bad). */
void xt_end(struct xt_w *w);
#endif
