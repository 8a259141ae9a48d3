#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "esc.h"
#include "color.h"
#include "table.h"

struct table;
struct tbl_ops {
	void (*begin)(struct table *t);
	int (*row)(struct table *t, const struct tbl_cell *c);
	void (*end)(struct table *t);
};

struct table {
	FILE *f;
	const struct tbl_col *cols;
	size_t ncols;
	const struct tbl_ops *ops;
	size_t nrows;
	/* text: rendered cells kept for alignment */
	char **cells;
	size_t ncells, capcells;
	size_t *width;
};

int tbl_parse_fmt(const char *s)
{
	if (!strcmp(s, "text"))
		return TBL_TEXT;
	if (!strcmp(s, "json"))
		return TBL_JSON;
	if (!strcmp(s, "csv"))
		return TBL_CSV;
	return -1;
}

char *human_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.3g µs", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.3g ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", ns / 1e9);
	return buf;
}

char *human_bytes(char *buf, size_t len, uint64_t b)
{
	if (b < 1024)
		snprintf(buf, len, "%" PRIu64 " B", b);
	else if (b < (1u << 20))
		snprintf(buf, len, "%.1f KiB", b / 1024.0);
	else if (b < (1u << 30))
		snprintf(buf, len, "%.1f MiB", b / 1048576.0);
	else
		snprintf(buf, len, "%.2f GiB", b / 1073741824.0);
	return buf;
}

int parse_duration(const char *s, const char *def, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return -EINVAL;
	const char *u = *end ? end : def;
	double mul;
	if (!strcmp(u, "ns"))
		mul = 1;
	else if (!strcmp(u, "us") || !strcmp(u, "µs"))
		mul = 1e3;
	else if (!strcmp(u, "ms"))
		mul = 1e6;
	else if (!strcmp(u, "s"))
		mul = 1e9;
	else
		return -EINVAL;
	if (v * mul > 1.8e19)
		return -EINVAL;
	*ns = (uint64_t)(v * mul + 0.5);
	return 0;
}

void json_str(FILE *f, const char *s)
{
	esc_json_put(f, s, s ? strlen(s) : 0);
}

/* ---- text: keep rendered cells, align at the end */

/* Keeps a malloc'd cell: the table owns it from here, even on error. */
static int keep_owned(struct table *t, char *d)
{
	if (!d)
		return -ENOMEM;
	if (t->ncells == t->capcells) {
		size_t nc = t->capcells ? t->capcells * 2 : 64;
		char **n = realloc(t->cells, nc * sizeof(*n));
		if (!n) {
			free(d);
			return -ENOMEM;
		}
		t->cells = n;
		t->capcells = nc;
	}
	t->cells[t->ncells++] = d;
	return 0;
}

static int keep(struct table *t, const char *s)
{
	return keep_owned(t, strdup(s));
}

/* Display width: count UTF-8 lead bytes so "µs" aligns. */
static size_t dwidth(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static int text_row(struct table *t, const struct tbl_cell *c)
{
	char buf[64];
	for (size_t i = 0; i < t->ncols; i++) {
		const char *s = buf;
		switch (t->cols[i].kind) {
		case TBL_STR:
			/* the text form: a name never breaks the row or the terminal */
			if (c[i].s) {
				if (keep_owned(t, esc_text_dup(c[i].s, strlen(c[i].s))))
					return -ENOMEM;
				continue;
			}
			s = "-";
			break;
		case TBL_INT:
			snprintf(buf, sizeof(buf), "%" PRId64, c[i].i);
			break;
		case TBL_NS:
			human_ns(buf, sizeof(buf), (uint64_t)c[i].i);
			break;
		case TBL_BYTES:
			human_bytes(buf, sizeof(buf), (uint64_t)c[i].i);
			break;
		case TBL_F64:
			snprintf(buf, sizeof(buf), "%.2f", c[i].f);
			break;
		case TBL_RAWJSON:
		case TBL_DSTR:
			continue;
		}
		if (keep(t, s))
			return -ENOMEM;
	}
	return 0;
}

static int in_text(enum tbl_kind k)
{
	return k != TBL_RAWJSON && k != TBL_DSTR;
}

static void text_end(struct table *t)
{
	size_t nshown = 0;
	for (size_t i = 0; i < t->ncols; i++)
		nshown += in_text(t->cols[i].kind);
	if (!nshown)
		return;
	size_t *w = calloc(t->ncols, sizeof(*w));
	if (!w)
		return;
	size_t k = 0;
	for (size_t i = 0; i < t->ncols; i++) {
		if (!in_text(t->cols[i].kind))
			continue;
		const char *h = t->cols[i].title ? t->cols[i].title : t->cols[i].key;
		w[i] = dwidth(h);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t dw = dwidth(t->cells[r * nshown + k]);
			if (dw > w[i])
				w[i] = dw;
		}
		k++;
	}
	for (long r = -1; r < (long)t->nrows; r++) {
		k = 0;
		int first = 1;
		for (size_t i = 0; i < t->ncols; i++) {
			if (!in_text(t->cols[i].kind))
				continue;
			const char *s = r < 0 ? (t->cols[i].title ? t->cols[i].title : t->cols[i].key)
					      : t->cells[r * nshown + k];
			size_t pad = w[i] - dwidth(s);
			if (!first)
				fputs("  ", t->f);
			/* Text columns left-aligned, numbers right-aligned. */
			int left = t->cols[i].kind == TBL_STR;
			int last = k == nshown - 1;
			if (!left)
				fprintf(t->f, "%*s", (int)pad, "");
			if (r < 0 && oc_on) /* the header line bold (color.h) */
				fprintf(t->f, OC_BOLD "%s" OC_RESET, s);
			else
				fputs(s, t->f);
			if (left && !last)
				fprintf(t->f, "%*s", (int)pad, "");
			first = 0;
			k++;
		}
		putc('\n', t->f);
	}
	free(w);
}

/* ---- JSON */

static void json_begin(struct table *t)
{
	fputs("[", t->f);
}

static int json_row(struct table *t, const struct tbl_cell *c)
{
	fputs(t->nrows ? ",\n {" : "\n {", t->f);
	for (size_t i = 0; i < t->ncols; i++) {
		if (i)
			fputs(", ", t->f);
		json_str(t->f, t->cols[i].key);
		fputs(": ", t->f);
		switch (t->cols[i].kind) {
		case TBL_STR:
		case TBL_DSTR:
			if (c[i].s)
				json_str(t->f, c[i].s);
			else
				fputs("null", t->f);
			break;
		case TBL_INT:
		case TBL_NS:
		case TBL_BYTES:
			fprintf(t->f, "%" PRId64, c[i].i);
			break;
		case TBL_F64:
			fprintf(t->f, "%.6g", c[i].f);
			break;
		case TBL_RAWJSON:
			fputs(c[i].s ? c[i].s : "null", t->f);
			break;
		}
	}
	fputs("}", t->f);
	return 0;
}

static void json_end(struct table *t)
{
	fputs(t->nrows ? "\n]\n" : "]\n", t->f);
}

/* ---- CSV */

static void csv_field(FILE *f, const char *s)
{
	esc_csv_put(f, s, strlen(s));
}

static void csv_begin(struct table *t)
{
	int first = 1;
	for (size_t i = 0; i < t->ncols; i++) {
		if (t->cols[i].kind == TBL_RAWJSON)
			continue;
		if (!first)
			putc(',', t->f);
		csv_field(t->f, t->cols[i].key);
		first = 0;
	}
	putc('\n', t->f);
}

static int csv_row(struct table *t, const struct tbl_cell *c)
{
	int first = 1;
	for (size_t i = 0; i < t->ncols; i++) {
		if (t->cols[i].kind == TBL_RAWJSON)
			continue;
		if (!first)
			putc(',', t->f);
		first = 0;
		switch (t->cols[i].kind) {
		case TBL_STR:
		case TBL_DSTR:
			csv_field(t->f, c[i].s ? c[i].s : "");
			break;
		case TBL_F64:
			fprintf(t->f, "%.6g", c[i].f);
			break;
		default:
			fprintf(t->f, "%" PRId64, c[i].i);
		}
	}
	putc('\n', t->f);
	return 0;
}

static const struct tbl_ops ops[] = {
	[TBL_TEXT] = {NULL, text_row, text_end},
	[TBL_JSON] = {json_begin, json_row, json_end},
	[TBL_CSV] = {csv_begin, csv_row, NULL},
};

struct table *tbl_open(FILE *out, enum tbl_fmt fmt, const struct tbl_col *cols, size_t ncols)
{
	struct table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->f = out;
	t->cols = cols;
	t->ncols = ncols;
	t->ops = &ops[fmt];
	if (t->ops->begin)
		t->ops->begin(t);
	return t;
}

int tbl_row(struct table *t, const struct tbl_cell *cells)
{
	int rc = t->ops->row(t, cells);
	if (!rc)
		t->nrows++;
	return rc;
}

int tbl_close(struct table *t)
{
	if (t->ops->end)
		t->ops->end(t);
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	int rc = ferror(t->f) ? -EIO : 0;
	free(t);
	return rc;
}
