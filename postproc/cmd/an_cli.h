/* an_cli — what the analysis commands (replay, callgraph, latency, sched,
 * io, net) share: the common options (--format, --time-range, --tid,
 * --comm, --where), opening the file and its names with one clear error line, and the
 * closing warnings (damaged chunks, lost events). These print: they are the
 * CLI side of the analyses (postproc/analysis/an_*.h). Time parsing follows cli.h. */
#ifndef TPP_AN_CLI_H
#define TPP_AN_CLI_H
#include <getopt.h>
#include "an_types.h"
#include "an_run.h"
#include "an_pair.h"
#include "script.h"
#include "table.h"

#define ACLI_MAX_TIDS 256
struct acli {
	const char *cmd;   /* "sched", for messages "tracepp sched: ..." */
	int fmt;           /* enum tbl_fmt */
	const char *path;
	const char *range; /* --time-range text until the file is open */
	const char *where; /* --where text until the file is open */
	struct tps_filter *where_f; /* compiled by acli_open: c->f.keep */
	uint32_t *where_want;
	struct an_filter f;
	int32_t tids[ACLI_MAX_TIDS];
	struct tpp_reader *r;
	struct tpp_names *names;
	uint64_t t0;       /* first event: replay prints times relative to it */
	struct an_types *ty; /* the file's event classes, set by acli_start */
	uint64_t task_asks, task_hits; /* acli_task_wanted's questions, yes answers */
	int tasks_unfiltered; /* the file's rows are none of them a task's (latency --io/--net): --tid/--comm pass them all */
	int text_stream;      /* the command prints lines, not tables (callgraph --folded): no "host" headings */
	uint64_t where_hits; /* events --where passed */
	void *user;        /* free for the command (its analysis state) */
	int64_t inferred;  /* switch-ins the analysis inferred, for the closing note; -1: none made */
	/* Several files (acli_spec.multi_file): one analysis per file in turn
	 * (acli_next), so memory is one file's analysis, not all of theirs;
	 * their rows meet in the tables of acli_tbl_*, with a host column. */
	char **files;
	int nfiles, fi;    /* the FILE operands, the one open (c->path) */
	int by_host;       /* --by-host: rows grouped by host, each as alone */
	struct acli_multi *m; /* the tables and notes kept across files */
};
#define ACLI_OPT_FORMAT 0x1001
#define ACLI_OPT_RANGE 0x1002
#define ACLI_OPT_WHERE 0x1003
#define ACLI_OPT_BYHOST 0x1004
#define ACLI_LONGOPTS                                                  \
	{"format", required_argument, 0, ACLI_OPT_FORMAT},             \
	{"time-range", required_argument, 0, ACLI_OPT_RANGE},          \
	{"where", required_argument, 0, ACLI_OPT_WHERE},               \
	{"tid", required_argument, 0, 't'},                            \
	{"comm", required_argument, 0, 'c'},                           \
	{"help", no_argument, 0, 'h'}

/* What makes a command its own: its usage text, its long options (the
 * common ones are added; NULL or {0}-terminated), its short option letters
 * beyond the common "ht:c:", and a handler for its options, which returns 0,
 * or an exit status after printing one error line (acli_usage_error). */
struct acli_spec {
	const char *cmd;
	const char *usage;
	const struct option *opts;
	const char *shortopts;
	int (*opt)(struct acli *c, void *ctx, int opt, const char *arg);
	void *ctx;
	/* --format is the command's own (export's chrome|folded): opt gets it
	 * as ACLI_OPT_FORMAT instead of text|json|csv */
	int own_format;
	/* no event the command reads is a task's (io, net: per device): --tid
	 * and --comm are refused, not quietly ignored */
	int no_tasks;
	/* FILE... : several files, one per host or run (acli_next), and
	 * --by-host */
	int multi_file;
};
/* The usage lines of several files (acli_spec.multi_file). */
#define ACLI_MULTI_USAGE                                                              \
	"Several files (one per host or run): one table with a host column (hostname,\n"   \
	"or hostname:FILE when two files share one), every host's rows in one order;\n"  \
	"each file is read alone, so a host's rows are what its file alone gives.\n"       \
	"  --by-host                rows host by host, each in its file's own order, as\n"    \
	"                           each file is done (text: a \"host LABEL:\" section per\n"  \
	"                           file, what the command prints of that file alone)\n"
#define ACLI_GO (-1)
/* The common start of every analysis command: parses argv (--help prints
 * the usage and returns 0), opens FILE and its names, parses the time range
 * and classifies the file's event types into c->ty. ACLI_GO to go on, else
 * the exit status to return (everything already closed). */
int acli_start(struct acli *c, const struct acli_spec *sp, int argc, char **argv);
/* an_run over c's file, filter and progress line; 0, or prints the failure
 * ("tracepp CMD: FILE: what failed") and returns exit status 1. */
int acli_run(struct acli *c, int (*fn)(void *ctx, const struct tpp_event *ev), void *ctx,
	     struct an_run_stats *st);
/* The same over columns (an_run_cols): ACLI_GO, before any event, when the
 * file does not suit a scan, so the caller runs acli_run instead. The
 * environment can choose: TPP_SCAN=0 never scans (the row path, for
 * comparing the two), TPP_SCAN=1 scans without a second thread. */
int acli_run_cols(struct acli *c, int (*fn)(void *ctx, const struct tpp_run *runs, int n),
		  void *ctx, struct an_run_stats *st);
/* Several files: after a file's work (its rows given to acli_tbl_row, its
 * report printed), closes it and opens the next one as acli_start did.
 * ACLI_GO when one is open, 0 after the last, else the exit status. */
int acli_next(struct acli *c);
/* fn(c, ctx) on every file in turn (acli_next between them), then, with
 * several merged (acli_merged), done(c, ctx) (may be NULL: where a command
 * writes what it merged across files), and acli_finish: 0 or the first exit status. */
int acli_each(struct acli *c, int (*fn)(struct acli *c, void *ctx), int (*done)(struct acli *c, void *ctx),
	      void *ctx);
/* Several files without --by-host: the command merges its rows across
 * files by a key of its own (an_merge.h) and writes one table in done(). */
static inline int acli_merged(const struct acli *c)
{
	return c->m && !c->by_host;
}
/* Tables over several files. With one file these are tbl_open, tbl_row and
 * tbl_close. With several, a first column `host` is added (the file's
 * hostname, or hostname:NAME, NAME the file's name without .tpp, when two
 * files share a hostname: two runs on one host). With --by-host in JSON or
 * CSV the rows go out as they come, host by host, each in the order the
 * command gives them alone (memory: nothing kept). Else they are kept until
 * acli_finish (text aligns its columns, so it keeps its rows by nature):
 * with --by-host in that order; merged, every host's rows ordered by key,
 * highest first (ties in the hosts' and the rows' order). A table is one
 * per cols across files. acli_tbl_close is then a no-op. */
struct table *acli_tbl_open(struct acli *c, const struct tbl_col *cols, size_t ncols);
int acli_tbl_row(struct acli *c, struct table *t, const struct tbl_cell *cells, int64_t key);
int acli_tbl_close(struct acli *c, struct table *t);
/* Where a command's closing text lines go: stdout with one file; with
 * several, kept per file and printed by acli_finish after the tables under
 * "host LABEL:". NULL on -ENOMEM. */
FILE *acli_notes(struct acli *c);
/* Several files: writes the tables and notes; 0 or 1 (writing failed). */
int acli_finish(struct acli *c);
/* The label of file i (see acli_tbl_open). */
const char *acli_host(struct acli *c, int i);

/* "tracepp CMD: warning: FILE has no WHAT events" unless have. */
void acli_need(const struct acli *c, int have, const char *what);
/* The pairing's unmatched entries and returns, on stderr, when any. */
void acli_report_pairs(const struct acli *c, const struct an_pair_stats *ps);

void acli_init(struct acli *c, const char *cmd);
/* Handles a common option; 1 handled, 0 not common, -1 bad value (printed). */
int acli_opt(struct acli *c, int opt, const char *arg);
/* Takes the FILE operand from argv[optind], opens it and the names, parses
 * the time range and compiles --where into c->f.keep. 0, or prints one error line, closes what it opened and
 * returns the exit status. */
int acli_open(struct acli *c, int argc, char **argv);
/* --where (c->where) compiled against the open file (c->r, c->names) into
 * c->f.keep, for a command that opens its files itself (export --table):
 * 0, or prints one error line and returns the exit status (2 for a filter
 * the file cannot take). acli_where_close frees it (idempotent). */
int acli_where_open(struct acli *c);
void acli_where_close(struct acli *c);
/* Prints warnings about what the analysis could not trust: damaged chunks,
 * lost events, unstored events (with c->inferred when set); and that
 * --tid/--comm/--where/--time-range passed no event (cli_no_match: a line,
 * exit 0, as uftrace and perf). */
void acli_report_run(const struct acli *c, const struct an_run_stats *st);
/* The line of acli_report_run that says --tid/--comm matched no task
 * (for a command that does not use acli_open: plot). */
void acli_report_tasks(const struct acli *c);
/* The line alone of acli_report_run that says the filters passed no event,
 * for a command that runs an_run itself (export --table): c->range,
 * c->where (c->where_hits counted by acli_where_open's filter) and the
 * task filter as acli_report_run judges them. */
void acli_report_none(const struct acli *c, const struct an_run_stats *st);
/* Releases what acli_open / acli_start opened (c->ty included). */
void acli_close(struct acli *c);
/* 1 if tid passes --tid/--comm (comm may be NULL: looked up); counted. */
int acli_task_wanted(struct acli *c, int32_t tid, const char *comm);
/* Prints "tracepp CMD: MESSAGE" and returns the exit status 2 (usage). */
int acli_usage_error(const struct acli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "tracepp CMD: FILE: what failed" and returns exit status 1. */
int acli_fail(const struct acli *c, int err, const struct an_run_stats *st);
#endif
