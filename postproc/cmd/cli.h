/* cli — what every tracepp subcommand shares: opening a file with one
 * clear error line, --format and --time-range parsing, the trace's span. */
#ifndef TPP_CLI_H
#define TPP_CLI_H

#include <stdint.h>
#include "tpp_decode.h"

enum out_format { OUT_TEXT, OUT_JSON, OUT_CSV };

/* Opens path; on failure prints "tracepp CMD: MESSAGE" and returns NULL. A
 * file cut short (a full disk), or recovered without trailer, gets a
 * one-line note on stderr. */
struct tpp_reader *cli_open(const char *cmd, const char *path);
/* Why the file ends early, from its writer's "writer_end" note ("...its
 * disk filled (ENOSPC)"), or NULL when it does not say. */
const char *cli_cut_short(const struct tpp_reader *r);
/* "text"|"json"|"csv" (allowed: a mask of 1<<OUT_*). -1 with a message if not. */
int cli_format(const char *cmd, const char *arg, unsigned allowed);
/* Earliest and latest event timestamps, from the chunk index. */
void cli_span(const struct tpp_reader *r, uint64_t *start, uint64_t *end);
/* Parses "A,B" or "A~B": each bound absolute ns ("123456789"), or relative to
 * the trace start with a unit ("1.5s", "200ms", "30us", "100ns"); either side
 * may be empty. Returns 0, or -1 with a message printed. */
int cli_time_range(const char *cmd, const char *arg, const struct tpp_reader *r, uint64_t *from, uint64_t *to);
/* The one rule for a damaged file, the same in every command: the result
 * is what the intact chunks hold, the exit status 0 (1 means no result),
 * and one line on stderr, "tracepp CMD: warning: N damaged chunk(s)
 * skipped (MSG)", MSG naming the file and offset of one damage. Nothing is
 * printed when n is 0. */
void cli_warn_damaged(const char *cmd, uint64_t n, const char *msg);
/* The one line for filters that pass no event, the same in every command:
 * "tracepp CMD: no event of FILE passes --tid=1 --where=EXPR" on stderr. It
 * is no error (exit 0), as perf script and uftrace replay have it. filters
 * names the given ones, built with cli_filter_add. */
void cli_no_match(const char *cmd, const char *path, const char *filters);
/* Appends " --NAME=VAL" to buf (cap bytes, NUL-terminated), cut to fit. */
void cli_filter_add(char *buf, size_t cap, const char *name, const char *val);
/* The n thread ids as --tid takes them, "1,2,3", into buf (cap bytes), the
 * list cut where it would not fit: every --tid given, not the last one's text. */
void cli_tids_text(char *buf, size_t cap, const int32_t *tids, size_t n);

/* Parses a duration with unit ("10us", "1.5ms", "2s", "500" = ns). -1 on error. */
int cli_duration(const char *s, uint64_t *ns);

#endif
