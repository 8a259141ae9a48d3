#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "cli.h"
#include "losses.h"
#include "an_types.h"
#include "an_run.h"
#include "an_pair.h"

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
	return tps_filter_match(ctx, ev);
}

int acli_open(struct acli *c, int argc, char **argv)
{
	if (optind >= argc)
		return acli_usage_error(c, "no trace file given (usage: tracepp %s [OPTIONS] FILE)", c->cmd);
	if (optind + 1 < argc)
		return acli_usage_error(c, "unexpected argument '%s' after the file", argv[optind + 1]);
	c->path = argv[optind];
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
	if (c->where) {
		char err[512] = "";
		rc = tps_filter_new(&c->where_f, c->where, c->r, c->names, err, sizeof(err));
		if (rc == 0 && !(c->where_want = calloc(TPP_MAX_TYPES, sizeof(*c->where_want))))
			rc = -ENOMEM;
		if (rc < 0) {
			if (rc == -ENOMEM)
				fprintf(stderr, "tracepp %s: out of memory\n", c->cmd);
			else
				fprintf(stderr, "tracepp %s: --where: %s\n", c->cmd, err[0] ? err : tpp_strerror(rc));
			acli_close(c);
			return rc == -ENOMEM ? 1 : 2;
		}
		tps_filter_want(c->where_f, c->where_want);
		c->f.keep = keep;
		c->f.keep_ctx = c->where_f;
		c->f.keep_want = c->where_want;
	}
	return 0;
}

int acli_fail(const struct acli *c, int err, const struct an_run_stats *st)
{
	fprintf(stderr, "tracepp %s: %s: %s\n", c->cmd, c->path,
		st && st->last_error[0] ? st->last_error : tpp_strerror(err));
	return 1;
}

void acli_report_tasks(const struct acli *c)
{
	if ((c->f.tids || c->f.comm) && c->task_asks && !c->task_hits) {
		char tids[96] = "";
		for (size_t i = 0, l = 0; c->f.tids && i < c->f.ntids && l < sizeof(tids) - 16; i++)
			l += (size_t)snprintf(tids + l, sizeof(tids) - l, "%s%d", i ? "," : "", (int)c->f.tids[i]);
		fprintf(stderr, "tracepp %s: no task matches%s%s%s%s in %s\n", c->cmd, c->f.tids ? " --tid=" : "",
			tids, c->f.comm ? " --comm=" : "", c->f.comm ? c->f.comm : "", c->path);
	}
}

void acli_report_run(const struct acli *c, const struct an_run_stats *st)
{
	/* Chunks found damaged when the file was opened (scan without index)
	 * never reach the iterator; count both. */
	uint64_t at_open = tpp_r_info(c->r)->damaged_chunks;
	cli_warn_damaged(c->cmd, st->damaged + at_open, st->damaged ? st->last_error : tpp_r_error(c->r));
	acli_report_tasks(c);
	/* the words tracepp info uses (losses.h) */
	struct tpp_losses l;
	tpp_losses(tpp_r_meta(c->r), &l);
	if (l.lost)
		fprintf(stderr, "tracepp %s: warning: %llu event(s) lost (dropped by the ring buffer or the "
			"recorder); counts are low\n", c->cmd, (unsigned long long)l.lost);
	if (l.unstored) {
		char types[256], inf[96] = "";
		tpp_losses_types(&l, types, sizeof(types));
		if (c->inferred >= 0)
			snprintf(inf, sizeof(inf), "; %lld switch-in(s) inferred from the events around them",
				 (long long)c->inferred);
		fprintf(stderr, "tracepp %s: note: %llu event(s) unstored (fired by the kernel, never stored%s%s)%s\n",
			c->cmd, (unsigned long long)l.unstored, types[0] ? ": " : "", types, inf);
	}
}

void acli_close(struct acli *c)
{
	free(c->ty);
	c->ty = NULL;
	tps_filter_free(c->where_f);
	free(c->where_want);
	c->where_f = NULL;
	c->where_want = NULL;
	c->f.keep = NULL;
	if (c->names)
		tpp_names_close(c->names);
	if (c->r)
		tpp_r_close(c->r);
	c->names = NULL;
	c->r = NULL;
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
		if (!comm || strcmp(comm, c->f.comm))
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

int acli_start(struct acli *c, const struct acli_spec *sp, int argc, char **argv)
{
	static const struct option common[] = {ACLI_LONGOPTS};
	const size_t ncommon = sizeof(common) / sizeof(common[0]);
	size_t nown = 0;
	while (sp->opts && sp->opts[nown].name)
		nown++;
	struct option lo[ncommon + nown + 1];
	memcpy(lo, common, sizeof(common));
	if (nown)
		memcpy(lo + ncommon, sp->opts, nown * sizeof(*lo));
	memset(&lo[ncommon + nown], 0, sizeof(*lo));
	char shortopts[64];
	snprintf(shortopts, sizeof(shortopts), "ht:c:%s", sp->shortopts ? sp->shortopts : "");

	acli_init(c, sp->cmd);
	int opt, rc;
	while ((opt = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
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
			"tracepp %s: %llu return(s) without entry, %llu call(s) without return, "
			"%llu unwound (%llu by an exception), %llu tail call(s)\n",
			c->cmd, (unsigned long long)ps->orphans, (unsigned long long)ps->noret,
			(unsigned long long)ps->unwound, (unsigned long long)ps->exception,
			(unsigned long long)ps->tail);
}
