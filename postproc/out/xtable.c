/* xtable — the export tables' columns, their rows in three formats and
 * their CREATE TABLE statements (xtable.h). */
#include <string.h>

#include "xtable.h"

#define COLS(a) a, (int)(sizeof(a) / sizeof(a[0]))
/* every row says which recording it comes from */
#define ORIGIN {"host", XT_STR}, {"trace_id", XT_STR}

static const struct xt_col c_events[] = {
	ORIGIN, {"wall_ns", XT_U64}, {"wall_err_ns", XT_I64}, {"ts_ns", XT_U64}, {"cpu", XT_I32}, {"tid", XT_I32}, {"pid", XT_I32},
	{"comm", XT_STR}, {"type", XT_STR}, {"fields", XT_STR},
};
static const struct xt_col c_calls[] = {
	ORIGIN, {"tid", XT_I32}, {"pid", XT_I32}, {"comm", XT_STR}, {"func", XT_STR}, {"depth", XT_U32},
	{"ts_ns", XT_U64}, {"wall_ns", XT_U64}, {"wall_err_ns", XT_I64}, {"dur_ns", XT_U64}, {"self_ns", XT_U64}, {"offcpu_ns", XT_U64},
	{"args", XT_STR}, {"has_ret", XT_U8}, {"ret", XT_I64}, {"ended", XT_STR}, {"resumed", XT_U8},
};
static const struct xt_col c_sched[] = {
	ORIGIN, {"kind", XT_STR}, {"cpu", XT_I32}, {"tid", XT_I32}, {"pid", XT_I32}, {"comm", XT_STR},
	{"ts_ns", XT_U64}, {"wall_ns", XT_U64}, {"wall_err_ns", XT_I64}, {"dur_ns", XT_U64},
};
static const struct xt_col c_io[] = {
	ORIGIN, {"dev", XT_STR}, {"op", XT_STR}, {"sector", XT_U64}, {"bytes", XT_U64},
	{"ts_ns", XT_U64}, {"wall_ns", XT_U64}, {"wall_err_ns", XT_I64}, {"insert_ns", XT_U64}, {"issue_ns", XT_U64},
	{"complete_ns", XT_U64}, {"queue_ns", XT_U64}, {"device_ns", XT_U64}, {"error", XT_I64},
};
static const struct xt_col c_net[] = {
	ORIGIN, {"ts_ns", XT_U64}, {"wall_ns", XT_U64}, {"wall_err_ns", XT_I64}, {"cpu", XT_I32}, {"tid", XT_I32}, {"pid", XT_I32},
	{"comm", XT_STR}, {"dev", XT_STR}, {"dir", XT_STR}, {"len", XT_U64}, {"rc", XT_I64},
};
static const struct xt_col c_conns[] = {
	ORIGIN, {"saddr", XT_STR}, {"sport", XT_U32}, {"daddr", XT_STR}, {"dport", XT_U32}, {"state", XT_STR},
	{"ts_ns", XT_U64}, {"wall_ns", XT_U64}, {"wall_err_ns", XT_I64}, {"dur_ns", XT_I64},
	{"tx_bytes", XT_U64}, {"rx_bytes", XT_U64}, {"sends", XT_U64}, {"recvs", XT_U64}, {"errors", XT_U64},
};
static const struct xt_col c_tasks[] = {
	ORIGIN, {"pid", XT_I32}, {"tid", XT_I32}, {"comm", XT_STR}, {"oncpu_ns", XT_U64},
	{"runq_wait_ns", XT_U64}, {"offcpu_ns", XT_U64}, {"switches", XT_U64}, {"voluntary", XT_U64},
	{"involuntary", XT_U64}, {"migrations", XT_U64}, {"wakeups", XT_U64}, {"wakeup_avg_ns", XT_U64},
	{"wakeup_max_ns", XT_U64}, {"partial", XT_U8},
};

const struct xt_table xt_tables[] = {
	{"events", COLS(c_events), "host, trace_id, ts_ns", "one row per event, every field"},
	{"calls", COLS(c_calls), "host, trace_id, tid, ts_ns", "one row per paired call, as replay pairs them"},
	{"sched", COLS(c_sched), "host, trace_id, ts_ns", "one row per on-CPU slice (run) and run-queue wait"},
	{"io", COLS(c_io), "host, trace_id, ts_ns", "one row per completed block request with its phases"},
	{"net", COLS(c_net), "host, trace_id, ts_ns", "one row per packet event (queue, xmit, recv)"},
	{"tasks", COLS(c_tasks), "host, trace_id, tid", "one row per task, the numbers of tracepp sched"},
	{"conns", COLS(c_conns), "host, trace_id, ts_ns", "one row per TCP connection, as tracepp net --conns"},
};
const size_t xt_ntables = sizeof(xt_tables) / sizeof(xt_tables[0]);

const struct xt_table *xt_table(const char *name)
{
	for (size_t i = 0; i < xt_ntables; i++)
		if (!strcmp(xt_tables[i].name, name))
			return &xt_tables[i];
	return NULL;
}

static const char *const ch_type[] = {"String", "UInt64", "Int64", "UInt32", "Int32", "UInt8"};
static const char *const duck_type[] = {"VARCHAR", "UBIGINT", "BIGINT", "UINTEGER", "INTEGER", "UTINYINT"};

void xt_schema(FILE *f, const struct xt_table *t, enum xt_engine e, const char *name)
{
	fprintf(f, "CREATE TABLE %s\n(\n", name ? name : t->name);
	for (int i = 0; i < t->ncols; i++)
		fprintf(f, "    %s %s%s\n", t->cols[i].name,
			(e == XT_CLICKHOUSE ? ch_type : duck_type)[t->cols[i].type], i + 1 < t->ncols ? "," : "");
	if (e == XT_CLICKHOUSE)
		fprintf(f, ") ENGINE = MergeTree() ORDER BY (%s);\n", t->order_by);
	else
		fputs(");\n", f);
}

void xt_begin(struct xt_w *w, struct ofast *o, const struct xt_table *t, enum xt_fmt fmt)
{
	*w = (struct xt_w){.o = o, .t = t, .fmt = fmt};
	if (fmt != XT_CSV)
		return;
	for (int i = 0; i < t->ncols; i++) {
		if (i)
			of_ch(o, ',');
		of_str(o, t->cols[i].name);
	}
	of_ch(o, '\n');
}

void xt_row(struct xt_w *w)
{
	w->col = 0;
	if (w->fmt == XT_JSONL)
		of_ch(w->o, '{');
}

/* The next column is of type ty: its separator and JSON key out; 0 if the
 * caller lost its place (nothing written). */
static int next(struct xt_w *w, enum xt_type ty)
{
	if (w->col >= w->t->ncols || w->t->cols[w->col].type != ty) {
		w->bad++;
		w->col = w->t->ncols + 1; /* the rest of this row is not written either */
		return 0;
	}
	const char *name = w->t->cols[w->col].name;
	if (w->fmt == XT_CSV && w->col) {
		of_ch(w->o, ',');
	} else if (w->fmt == XT_JSONL) {
		of_str(w->o, w->col ? ",\"" : "\"");
		of_str(w->o, name);
		of_str(w->o, "\":");
	}
	w->col++;
	return 1;
}

/* RowBinary: little-endian fixed widths */
static void le(struct ofast *o, uint64_t v, int n)
{
	char b[32]; /* of_mem may load 16 bytes at once: room for it */
	for (int i = 0; i < n; i++)
		b[i] = (char)(v >> (8 * i));
	of_mem(o, b, (size_t)n);
}

void xt_str(struct xt_w *w, const char *s, size_t n)
{
	if (!next(w, XT_STR))
		return;
	if (w->fmt == XT_CSV) {
		/* an empty string quoted: an empty field is NULL to DuckDB's
		 * and other CSV readers, and a String is never NULL */
		if (n)
			of_csv(w->o, s, n);
		else
			of_mem(w->o, "\"\"", 2);
	} else if (w->fmt == XT_JSONL) {
		of_json_str(w->o, s, n);
	} else {
		/* the length as an unsigned LEB128, then the bytes */
		char b[32]; /* of_mem may load 16 bytes at once: room for it */
		int k = 0;
		size_t v = n;
		do {
			b[k++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
		of_mem(w->o, b, (size_t)k);
		of_mem(w->o, s, n);
	}
}

/* s[0, n) with every `c` written as `pre` `c` (memchr's pace: JSON text
 * has a quote every few bytes, where esc.h's loop leaves its fast path) */
static void doubled(struct ofast *o, const char *s, size_t n, char c, char pre)
{
	const char *e = s + n, *q;
	while ((q = memchr(s, c, (size_t)(e - s)))) {
		of_mem(o, s, (size_t)(q - s));
		char two[2] = {pre, c};
		of_mem(o, two, 2);
		s = q + 1;
	}
	of_mem(o, s, (size_t)(e - s));
}

void xt_json(struct xt_w *w, const char *s, size_t n)
{
	/* the cases doubled() cannot take go the general way */
	if (w->fmt == XT_ROWBINARY || !n || (w->fmt == XT_JSONL && memchr(s, '\\', n)) ||
	    (w->fmt == XT_CSV && !memchr(s, '"', n))) {
		xt_str(w, s, n);
		return;
	}
	if (!next(w, XT_STR))
		return;
	of_ch(w->o, '"');
	/* CSV (RFC 4180): quoted, its quotes doubled; JSON: its quotes
	 * escaped (no backslash, no control byte, valid UTF-8: nothing else
	 * to escape) */
	doubled(w->o, s, n, '"', w->fmt == XT_CSV ? '"' : '\\');
	of_ch(w->o, '"');
}

static void num(struct xt_w *w, enum xt_type ty, uint64_t u, int64_t i, int width)
{
	if (!next(w, ty))
		return;
	if (w->fmt == XT_ROWBINARY)
		le(w->o, u, width);
	else if (ty == XT_I64 || ty == XT_I32)
		of_i64(w->o, i);
	else
		of_u64(w->o, u);
}

void xt_u64(struct xt_w *w, uint64_t v) { num(w, XT_U64, v, 0, 8); }
void xt_i64(struct xt_w *w, int64_t v) { num(w, XT_I64, (uint64_t)v, v, 8); }
void xt_u32(struct xt_w *w, uint32_t v) { num(w, XT_U32, v, 0, 4); }
void xt_i32(struct xt_w *w, int32_t v) { num(w, XT_I32, (uint32_t)v, v, 4); }
void xt_u8(struct xt_w *w, uint8_t v) { num(w, XT_U8, v, 0, 1); }

void xt_end(struct xt_w *w)
{
	if (w->col != w->t->ncols) {
		/* a short row would shift every column after it: the caller's bug,
		 * counted; the row's bytes are out already, so the output is void */
		w->bad++;
	}
	if (w->fmt == XT_CSV)
		of_ch(w->o, '\n');
	else if (w->fmt == XT_JSONL)
		of_str(w->o, "}\n");
	w->rows++;
	w->col = 0;
}
