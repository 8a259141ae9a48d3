#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "esc.h"
#include "cli.h"
#include "losses.h"
#include "an_types.h"
#include "an_run.h"
#include "an_pair.h"
#include "an_grow.h"

/* What several files' tables keep until acli_finish. */
struct mrow {
	int file;
	size_t seq;
	int64_t key;
	struct tbl_cell *cells; /* ncols + 1: [0] is the host, strings owned */
};
struct mtab {
	const struct tbl_col *cols;
	size_t ncols;
	struct tbl_col *hcols; /* host + cols */
	struct mrow *rows;
	size_t nrows, cap;
	struct table *out; /* --by-host in JSON/CSV: rows written as they come */
};
struct acli_multi {
	struct mtab tab[4];
	int ntab;
	char **hostname;  /* per file, read at its open */
	char **label;     /* per file, made by acli_finish */
	struct note {
		FILE *f;
		char *buf;
		size_t len;
	} *notes;
	size_t seq;
	int failed;
};

void acli_init(struct acli *c, const char *cmd)
{
	memset(c, 0, sizeof(*c));
	c->cmd = cmd;
	c->fmt = TBL_TEXT;
	c->inferred = -1;
	optind = 1;
}

int acli_usage_error(const struct acli *c, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "tracepp %s: ", c->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

int acli_opt(struct acli *c, int opt, const char *arg)
{
	switch (opt) {
	case ACLI_OPT_FORMAT:
		if ((c->fmt = tbl_parse_fmt(arg)) < 0) {
			acli_usage_error(c, "--format: '%s' is not text, json or csv", arg);
			return -1;
		}
		return 1;
	case ACLI_OPT_RANGE:
		c->range = arg;
		return 1;
	case ACLI_OPT_WHERE:
		c->where = arg;
		return 1;
	case 't': {
		/* comma-separated list, repeatable */
		char *dup = strdup(arg), *save = NULL;
		if (!dup)
			return -1;
		for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *end;
			long v = strtol(tok, &end, 10);
			if (*end || end == tok || v < 0 || v > INT32_MAX) {
				acli_usage_error(c, "--tid: '%s' is not a thread id", tok);
				free(dup);
				return -1;
			}
			if (c->f.ntids == ACLI_MAX_TIDS) {
				acli_usage_error(c, "--tid: more than %d threads", ACLI_MAX_TIDS);
				free(dup);
				return -1;
			}
			c->tids[c->f.ntids++] = (int32_t)v;
		}
		free(dup);
		c->f.tids = c->tids;
		return 1;
	}
	case 'c':
		c->f.comm = arg;
		return 1;
	default:
		return 0;
	}
}

/* --where, asked event by event by an_run */
static int keep(void *ctx, const struct tpp_event *ev)
{
	struct acli *c = ctx;
	int k = tps_filter_match(c->where_f, ev);
	c->where_hits += (unsigned)k;
	return k;
}

int acli_where_open(struct acli *c)
{
	if (!c->where)
		return 0;
	char err[512] = "";
	int rc = tps_filter_new(&c->where_f, c->where, c->r, c->names, err, sizeof(err));
	if (rc == 0 && !(c->where_want = calloc(TPP_MAX_TYPES, sizeof(*c->where_want))))
		rc = -ENOMEM;
	if (rc < 0) {
		if (rc == -ENOMEM)
			fprintf(stderr, "tracepp %s: out of memory\n", c->cmd);
		else
			fprintf(stderr, "tracepp %s: --where: %s\n", c->cmd, err[0] ? err : tpp_strerror(rc));
		acli_where_close(c);
		return rc == -ENOMEM ? 1 : 2;
	}
	tps_filter_want(c->where_f, c->where_want);
	c->f.keep = keep;
	c->f.keep_ctx = c;
	c->f.keep_want = c->where_want;
	return 0;
}

void acli_where_close(struct acli *c)
{
	tps_filter_free(c->where_f);
	free(c->where_want);
	c->where_f = NULL;
	c->where_want = NULL;
	c->f.keep = NULL;
	c->f.keep_ctx = NULL;
	c->f.keep_want = NULL;
}

/* Opens c->files[i] as c->path: the file and its names, the time range and
 * --where against it. 0, or prints one error line, closes what it opened
 * and returns the exit status. */
static int open_one(struct acli *c, int i)
{
	c->fi = i;
	c->path = c->files[i];
	c->f.from_ts = c->f.to_ts = 0;
	c->task_asks = c->task_hits = c->where_hits = 0;
	c->tasks_unfiltered = 0;
	c->inferred = -1;
	if (!(c->r = cli_open(c->cmd, c->path)))
		return 1;
	int rc = tpp_names_open(&c->names, c->r);
	if (rc < 0) {
		fprintf(stderr, "tracepp %s: %s: reading names: %s\n", c->cmd, c->path, tpp_strerror(rc));
		acli_close(c);
		return 1;
	}
	c->t0 = an_first_ts(c->r);
	if (c->range) {
		uint64_t from = 0, to = 0;
		if (cli_time_range(c->cmd, c->range, c->r, &from, &to) < 0) {
			acli_close(c);
			return 2;
		}
		c->f.from_ts = from;
		c->f.to_ts = to;
	}
	if ((rc = acli_where_open(c))) {
		acli_close(c);
		return rc;
	}
	return 0;
}

int acli_open(struct acli *c, int argc, char **argv)
{
	if (optind >= argc)
		return acli_usage_error(c, "no trace file given (usage: tracepp %s [OPTIONS] FILE%s)", c->cmd,
					c->m ? "..." : "");
	if (!c->m && optind + 1 < argc)
		return acli_usage_error(c, "unexpected argument '%s' after the file", argv[optind + 1]);
	c->files = argv + optind;
	c->nfiles = argc - optind;
	if (c->m && c->nfiles > 1) {
		c->m->hostname = calloc((size_t)c->nfiles, sizeof(char *));
		c->m->notes = calloc((size_t)c->nfiles, sizeof(*c->m->notes));
		if (!c->m->hostname || !c->m->notes) {
			fprintf(stderr, "tracepp %s: out of memory\n", c->cmd);
			return 1;
		}
		/* every file's hostname now: a label (acli_host) needs them all,
		 * and --folded prints one before the last file is read */
		for (int i = 0; i < c->nfiles; i++) {
			struct tpp_reader *r;
			char msg[768];
			if (tpp_r_open(&r, c->files[i], msg, sizeof(msg))) {
				/* now, before any file is analysed: a fleet's run that
				 * would stop at its 150th file stops at once */
				fprintf(stderr, "tracepp %s: %s\n", c->cmd, msg);
				acli_close(c);
				return 1;
			}
			const char *h = tpp_r_info(r)->hostname;
			c->m->hostname[i] = strdup(h && h[0] ? h : "?");
			tpp_r_close(r);
		}
	} else if (c->m) {
		free(c->m);
		c->m = NULL; /* one file: as ever */
	}
	return open_one(c, 0);
}

int acli_fail(const struct acli *c, int err, const struct an_run_stats *st)
{
	fprintf(stderr, "tracepp %s: %s: %s\n", c->cmd, c->path,
		st && st->last_error[0] ? st->last_error : tpp_strerror(err));
	return 1;
}

/* Says when the filters passed no event, one rule for every command: the
 * time range passed none, or --where passed none, or --tid/--comm passed
 * no task (asked after the others, so a task that passed passed them all);
 * any of them suffices, and the line names every filter given. st NULL:
 * the task filter alone (plot). */
static void report_none(const struct acli *c, const struct an_run_stats *st)
{
	int none = (st && c->range && !st->events) || (st && c->where && !c->where_hits) ||
		   ((c->f.tids || c->f.comm) && !c->task_hits && !c->tasks_unfiltered);
	if (!none)
		return;
	char tids[96], fl[512] = "";
	cli_tids_text(tids, sizeof(tids), c->f.tids, c->f.tids ? c->f.ntids : 0);
	const char *const name[] = {"tid", "comm", "where", "time-range"};
	const char *const val[] = {c->f.tids ? tids : NULL, c->f.comm, st ? c->where : NULL, st ? c->range : NULL};
	for (size_t i = 0; i < 4; i++)
		if (val[i])
			cli_filter_add(fl, sizeof(fl), name[i], val[i]);
	cli_no_match(c->cmd, c->path, fl);
}

void acli_report_tasks(const struct acli *c)
{
	report_none(c, NULL);
}

void acli_report_none(const struct acli *c, const struct an_run_stats *st)
{
	report_none(c, st);
}

void acli_report_run(const struct acli *c, const struct an_run_stats *st)
{
	/* Chunks found damaged when the file was opened (scan without index)
	 * never reach the iterator; count both. */
	uint64_t at_open = tpp_r_info(c->r)->damaged_chunks;
	cli_warn_damaged(c->cmd, st->damaged + at_open, st->damaged ? st->last_error : tpp_r_error(c->r));
	report_none(c, st);
	/* several files: each line says whose */
	const char *who = c->m ? c->path : "", *sep = c->m ? ": " : "";
	/* the words tracepp info uses (losses.h) */
	struct tpp_losses l;
	tpp_losses(tpp_r_meta(c->r), &l);
	if (l.lost)
		fprintf(stderr, "tracepp %s: warning: %s%s%llu event(s) lost (dropped by the ring buffer or the "
			"recorder); counts are low\n", c->cmd, who, sep, (unsigned long long)l.lost);
	if (l.unstored) {
		char types[256], inf[96] = "";
		tpp_losses_types(&l, types, sizeof(types));
		if (c->inferred >= 0)
			snprintf(inf, sizeof(inf), "; %lld switch-in(s) inferred from the events around them",
				 (long long)c->inferred);
		fprintf(stderr, "tracepp %s: note: %s%s%llu event(s) unstored (fired by the kernel, never stored%s%s)%s\n",
			c->cmd, who, sep, (unsigned long long)l.unstored, types[0] ? ": " : "", types, inf);
	}
}

/* The open file and what hangs on it; several files' tables stay. */
static void close_file(struct acli *c)
{
	free(c->ty);
	c->ty = NULL;
	acli_where_close(c);
	if (c->names)
		tpp_names_close(c->names);
	if (c->r)
		tpp_r_close(c->r);
	c->names = NULL;
	c->r = NULL;
}

static void free_multi(struct acli_multi *m, int nfiles)
{
	if (!m)
		return;
	for (int k = 0; k < m->ntab; k++) {
		struct mtab *t = &m->tab[k];
		for (size_t i = 0; i < t->nrows; i++) {
			for (size_t j = 0; j <= t->ncols; j++)
				free((char *)t->rows[i].cells[j].s);
			free(t->rows[i].cells);
		}
		free(t->rows);
		if (t->out)
			tbl_close(t->out);
		free(t->hcols);
	}
	for (int i = 0; i < nfiles; i++) {
		if (m->hostname)
			free(m->hostname[i]);
		if (m->label)
			free(m->label[i]);
		if (m->notes) {
			if (m->notes[i].f)
				fclose(m->notes[i].f);
			free(m->notes[i].buf);
		}
	}
	free(m->hostname);
	free(m->label);
	free(m->notes);
	free(m);
}

void acli_close(struct acli *c)
{
	close_file(c);
	free_multi(c->m, c->nfiles);
	c->m = NULL;
}

int acli_next(struct acli *c)
{
	close_file(c);
	if (c->fi + 1 >= c->nfiles)
		return 0;
	int rc = open_one(c, c->fi + 1);
	if (rc)
		return rc;
	if (!(c->ty = malloc(sizeof(*c->ty)))) {
		acli_fail(c, -ENOMEM, NULL);
		return 1;
	}
	an_types_init(c->ty, c->r);
	return ACLI_GO;
}

static int host_text(struct acli *c);

int acli_each(struct acli *c, int (*fn)(struct acli *c, void *ctx), int (*done)(struct acli *c, void *ctx),
	      void *ctx)
{
	int rc;
	do {
		if ((rc = fn(c, ctx)))
			return rc;
		/* a host's rows written as they came: out before the next file */
		if (c->m && c->by_host && c->m->ntab && c->m->tab[0].out && fflush(stdout))
			return 1;
		if (c->m && c->by_host && c->fmt == TBL_TEXT && !c->text_stream && host_text(c))
			return 1;
	} while ((rc = acli_next(c)) == ACLI_GO);
	if (!rc && acli_merged(c) && done)
		rc = done(c, ctx);
	return rc ? rc : acli_finish(c);
}

/* The name without its directory and a .tpp ending, into buf. */
static void file_name(const char *path, char *buf, size_t n)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t l = strlen(b);
	if (l > 4 && !strcmp(b + l - 4, ".tpp"))
		l -= 4;
	snprintf(buf, n, "%.*s", (int)l, b);
}

const char *acli_host(struct acli *c, int i)
{
	struct acli_multi *m = c->m;
	if (!m)
		return NULL;
	if (!m->label && !(m->label = calloc((size_t)c->nfiles, sizeof(char *))))
		return "?";
	if (!m->label[i]) {
		/* the hostname; two runs on one host are told apart by their
		 * files' names, and files of one name in two directories by their
		 * paths */
		const char *h = m->hostname[i] ? m->hostname[i] : "?";
		char name[256], other[256], buf[600];
		file_name(c->files[i], name, sizeof(name));
		int same_host = 0, same_name = 0, same_path = 0;
		for (int j = 0; j < c->nfiles; j++) {
			if (j == i || !m->hostname[j] || strcmp(m->hostname[j], h))
				continue;
			same_host = 1;
			file_name(c->files[j], other, sizeof(other));
			same_name |= !strcmp(other, name);
			same_path |= !strcmp(c->files[j], c->files[i]);
		}
		if (!same_host)
			snprintf(buf, sizeof(buf), "%s", h);
		else if (same_path) /* one file given twice: its place in the list */
			snprintf(buf, sizeof(buf), "%s:%s#%d", h, c->files[i], i + 1);
		else
			snprintf(buf, sizeof(buf), "%s:%s", h, same_name ? c->files[i] : name);
		m->label[i] = strdup(buf);
	}
	return m->label[i] ? m->label[i] : "?";
}

struct table *acli_tbl_open(struct acli *c, const struct tbl_col *cols, size_t ncols)
{
	struct acli_multi *m = c->m;
	if (!m)
		return tbl_open(stdout, c->fmt, cols, ncols);
	for (int k = 0; k < m->ntab; k++)
		if (m->tab[k].cols == cols)
			return (struct table *)(void *)&m->tab[k];
	if (m->ntab == (int)(sizeof(m->tab) / sizeof(m->tab[0])))
		return NULL;
	struct mtab *t = &m->tab[m->ntab];
	if (!(t->hcols = malloc((ncols + 1) * sizeof(*t->hcols))))
		return NULL;
	t->hcols[0] = (struct tbl_col){"host", NULL, TBL_STR};
	memcpy(t->hcols + 1, cols, ncols * sizeof(*cols));
	t->cols = cols;
	t->ncols = ncols;
	m->ntab++;
	return (struct table *)(void *)t;
}

int acli_tbl_row(struct acli *c, struct table *tb, const struct tbl_cell *cells, int64_t key)
{
	if (!c->m)
		return tbl_row(tb, cells);
	struct mtab *t = (struct mtab *)(void *)tb;
	if (c->by_host && c->fmt != TBL_TEXT && t == &c->m->tab[0]) {
		/* host by host is the order rows come in: nothing to keep */
		if (!t->out && !(t->out = tbl_open(stdout, c->fmt, t->hcols, t->ncols + 1)))
			return -ENOMEM;
		struct tbl_cell v[t->ncols + 1];
		v[0] = (struct tbl_cell){.s = acli_host(c, c->fi)};
		memcpy(v + 1, cells, t->ncols * sizeof(*cells));
		return tbl_row(t->out, v);
	}
	if (an_grow(&t->rows, &t->cap, t->nrows + 1, sizeof(*t->rows), 64))
		return -ENOMEM;
	struct tbl_cell *v = calloc(t->ncols + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t j = 0; j < t->ncols; j++) {
		v[j + 1] = cells[j];
		/* strings of the file's names and the analysis: gone with them */
		if (cells[j].s && (t->cols[j].kind == TBL_STR || t->cols[j].kind == TBL_DSTR || t->cols[j].kind == TBL_RAWJSON))
			v[j + 1].s = strdup(cells[j].s);
		else
			v[j + 1].s = NULL;
	}
	t->rows[t->nrows++] = (struct mrow){c->fi, c->m->seq++, key, v};
	return 0;
}

int acli_tbl_close(struct acli *c, struct table *t)
{
	return c->m ? 0 : tbl_close(t);
}

FILE *acli_notes(struct acli *c)
{
	if (!c->m)
		return stdout;
	struct note *n = &c->m->notes[c->fi];
	if (!n->f)
		n->f = open_memstream(&n->buf, &n->len);
	return n->f;
}

/* --by-host in text: the file's own tables under "host LABEL:" (the rows
 * as the file alone gives them, without the host column the heading
 * says), then its notes, as soon as the file is done: memory is one
 * file's rows, not every host's until the end (review s7 B1). */
static int host_text(struct acli *c)
{
	struct acli_multi *m = c->m;
	const char *h = acli_host(c, c->fi);
	int rc = 0;
	fputs(c->fi ? "\nhost " : "host ", stdout);
	esc_text_put(stdout, h, strlen(h)); /* the file's bytes: no line break, no escape code */
	fputs(":\n", stdout);
	for (int k = 0; k < m->ntab; k++) {
		struct mtab *t = &m->tab[k];
		struct table *out = tbl_open(stdout, TBL_TEXT, t->cols, t->ncols);
		for (size_t i = 0; i < t->nrows; i++) {
			if (out && tbl_row(out, t->rows[i].cells + 1))
				rc = 1;
			for (size_t j = 0; j <= t->ncols; j++)
				free((char *)t->rows[i].cells[j].s);
			free(t->rows[i].cells);
		}
		t->nrows = 0;
		if (!out || tbl_close(out))
			rc = 1;
	}
	struct note *n = &m->notes[c->fi];
	if (n->f) {
		fflush(n->f);
		fwrite(n->buf, 1, n->len, stdout);
		fclose(n->f);
		free(n->buf);
		*n = (struct note){0};
	}
	return fflush(stdout) || rc ? 1 : 0;
}

static int by_host_first;
static int cmp_row(const void *a, const void *b)
{
	const struct mrow *x = a, *y = b;
	if (!by_host_first && x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int acli_finish(struct acli *c)
{
	struct acli_multi *m = c->m;
	if (!m)
		return 0;
	int rc = 0;
	by_host_first = c->by_host;
	for (int k = 0; k < m->ntab; k++) {
		struct mtab *t = &m->tab[k];
		if (t->out) {
			rc |= tbl_close(t->out) ? 1 : 0;
			t->out = NULL;
			continue;
		}
		if (c->by_host && c->fmt == TBL_TEXT)
			continue; /* printed host by host (host_text) */
		if (t->nrows)
			qsort(t->rows, t->nrows, sizeof(*t->rows), cmp_row);
		struct table *out = tbl_open(stdout, c->fmt, t->hcols, t->ncols + 1);
		for (size_t i = 0; out && i < t->nrows; i++) {
			struct tbl_cell h = {.s = acli_host(c, t->rows[i].file)};
			t->rows[i].cells[0] = h;
			tbl_row(out, t->rows[i].cells);
			t->rows[i].cells[0].s = NULL; /* not ours to free */
		}
		if (!out || tbl_close(out))
			rc = 1;
	}
	for (int i = 0; i < c->nfiles; i++) {
		struct note *n = &m->notes[i];
		if (!n->f)
			continue;
		fflush(n->f);
		if (n->len) {
			const char *h = acli_host(c, i);
			fputs("\nhost ", stdout);
			esc_text_put(stdout, h, strlen(h)); /* the file's bytes: no line break, no escape code */
			fputc(':', stdout);
			fwrite(n->buf, 1, n->len, stdout);
		}
	}
	return rc || fflush(stdout) ? 1 : 0;
}

int acli_task_wanted(struct acli *c, int32_t tid, const char *comm)
{
	c->task_asks++;
	if (c->f.tids) {
		size_t i = 0;
		while (i < c->f.ntids && c->f.tids[i] != tid)
			i++;
		if (i == c->f.ntids)
			return 0;
	}
	if (c->f.comm) {
		if (!comm && c->names)
			comm = tpp_names_comm(c->names, tid);
		if (!comm || !an_comm_match(c->f.comm, comm))
			return 0;
	}
	c->task_hits++;
	return 1;
}

static const char where_usage[] =
	"  --where=FILTER           only events the filter passes, in the kernel's filter syntax\n"
	"                           (as tracerec --filter): 'prev_state == 1 && prev_comm ~ \"bash*\"';\n"
	"                           a field no event type of the file has is an error\n"
	"  -h, --help               this text\n";

static int start(struct acli *c, const struct acli_spec *sp, int argc, char **argv)
{
	static const struct option common[] = {ACLI_LONGOPTS};
	const size_t ncommon = sizeof(common) / sizeof(common[0]);
	size_t nown = 0;
	while (sp->opts && sp->opts[nown].name)
		nown++;
	struct option lo[ncommon + nown + 2];
	memcpy(lo, common, sizeof(common));
	if (nown)
		memcpy(lo + ncommon, sp->opts, nown * sizeof(*lo));
	memset(&lo[ncommon + nown], 0, 2 * sizeof(*lo));
	/* several files: --by-host (ACLI_MULTI_USAGE says it) */
	if (sp->multi_file)
		lo[ncommon + nown] = (struct option){"by-host", no_argument, 0, ACLI_OPT_BYHOST};
	char shortopts[64];
	snprintf(shortopts, sizeof(shortopts), "ht:c:%s", sp->shortopts ? sp->shortopts : "");

	acli_init(c, sp->cmd);
	if (sp->multi_file && !(c->m = calloc(1, sizeof(*c->m)))) {
		acli_fail(c, -ENOMEM, NULL);
		return 1;
	}
	int opt, rc;
	while ((opt = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (opt == ACLI_OPT_BYHOST) {
			c->by_host = 1;
			continue;
		}
		if (opt == ACLI_OPT_FORMAT && sp->own_format) {
			if ((rc = sp->opt(c, sp->ctx, opt, optarg)))
				return rc;
			continue;
		}
		if ((opt == 't' || opt == 'c') && sp->no_tasks)
			return acli_usage_error(c, "--%s: %s reports per device, and no event it reads is a task's",
						opt == 't' ? "tid" : "comm", sp->cmd);
		if ((rc = acli_opt(c, opt, optarg)) < 0)
			return 2;
		if (rc)
			continue;
		if (opt == 'h') {
			fputs(sp->usage, stdout);
			fputs(where_usage, stdout);
			return 0;
		}
		if (opt == '?' || opt == ':' || !sp->opt) {
			fputs(sp->usage, stderr);
			fputs(where_usage, stderr);
			return 2;
		}
		if ((rc = sp->opt(c, sp->ctx, opt, optarg)))
			return rc;
	}
	if ((rc = acli_open(c, argc, argv)))
		return rc;
	if (!(c->ty = malloc(sizeof(*c->ty)))) {
		acli_fail(c, -ENOMEM, NULL);
		acli_close(c);
		return 1;
	}
	an_types_init(c->ty, c->r);
	return ACLI_GO;
}

int acli_start(struct acli *c, const struct acli_spec *sp, int argc, char **argv)
{
	int rc = start(c, sp, argc, argv);
	if (rc != ACLI_GO)
		acli_close(c); /* (what start opened: idempotent) */
	return rc;
}

int acli_run(struct acli *c, int (*fn)(void *ctx, const struct tpp_event *ev), void *ctx,
	     struct an_run_stats *st)
{
	int rc = an_run(c->r, &c->f, 1, fn, ctx, st);
	return rc < 0 ? acli_fail(c, rc, st) : 0;
}

int acli_run_cols(struct acli *c, int (*fn)(void *ctx, const struct tpp_run *runs, int n),
		  void *ctx, struct an_run_stats *st)
{
	const char *env = getenv("TPP_SCAN");
	if (env && !strcmp(env, "0"))
		return ACLI_GO;
	int rc = an_run_cols(c->r, &c->f, env && !strcmp(env, "1"), 1, fn, ctx, st);
	if (rc == -ENOTSUP)
		return ACLI_GO;
	return rc < 0 ? acli_fail(c, rc, st) : 0;
}

void acli_need(const struct acli *c, int have, const char *what)
{
	if (!have)
		fprintf(stderr, "tracepp %s: warning: %s has no %s events\n", c->cmd, c->path, what);
}

void acli_report_pairs(const struct acli *c, const struct an_pair_stats *ps)
{
	/* each mark a frame can close with, as replay prints it */
	if (ps->orphans || ps->noret || ps->unwound || ps->tail)
		fprintf(stderr,
			"tracepp %s: %s%s%llu return(s) without entry, %llu call(s) without return, "
			"%llu unwound (%llu by an exception), %llu tail call(s)\n",
			c->cmd, c->m ? c->path : "", c->m ? ": " : "", (unsigned long long)ps->orphans, (unsigned long long)ps->noret,
			(unsigned long long)ps->unwound, (unsigned long long)ps->exception,
			(unsigned long long)ps->tail);
}
