/* script — bpftrace-style programs and kernel-style event filters over a
 * recorded file: one engine for `tracepp script` and every `--where`.
 *
 * A program (tps_prog_new) is compiled against one open file: its probes
 * are matched to the file's event types and each probe's predicate and
 * body compiled, per event type, to bytecode over the event's decoded
 * columns. tps_prog_run then feeds the whole file through it in time
 * order and prints as bpftrace prints: printf lines as they come, maps at
 * the end. A filter (tps_filter_new) is a kernel filter expression,
 * "prev_state == 1 && comm ~ \"bash*\"", compiled the same way and asked
 * event by event.
 *
 * Errors: negative errno values (-EINVAL for a bad program or filter,
 * -ENOMEM, or a tpp_format.h code from the file); the message, "LINE:COL:
 * what" for a program, goes to the caller's err buffer. Nothing here
 * prints except what the program itself prints (to the fd it is given).
 * Ownership: a program or filter keeps pointers to the reader and names it
 * was built on (they must outlive it) and owns everything else; free it
 * with tps_prog_free / tps_filter_free.
 */
#ifndef TPP_SCRIPT_H
#define TPP_SCRIPT_H
#include <stddef.h>
#include <stdint.h>
#include "tpp_decode.h"

struct tps_prog;
struct tps_opts {
	size_t sz;            /* sizeof(struct tps_opts) */
	const char *file;     /* the trace file's name, for messages */
	int json;             /* output as bpftrace -f json */
	int fd;               /* where output goes */
	uint64_t from_ts, to_ts; /* time range, inclusive; 0/0 = everything */
	int rows;             /* 1: never column scans (to compare the two paths) */
	/* Optional: called with the events read so far after each batch of
	 * them, and once with done = 1 when the events end, before END's
	 * output (a progress line is cleared there). */
	void (*progress)(void *ctx, uint64_t events, int done);
	void *progress_ctx;
};
/* Compiles src[0..len) against the file r (and its names n). */
int tps_prog_new(struct tps_prog **p, const char *src, size_t len, struct tpp_reader *r,
		 const struct tpp_names *n, const struct tps_opts *o, char *err, size_t errlen);
/* Warnings found while compiling (probes that will see few or no events),
 * one line each, without a trailing newline; NULL past the last. */
const char *tps_prog_warning(const struct tps_prog *p, int i);

struct tps_stats {
	uint64_t events;       /* events read */
	uint64_t fired;        /* probe firings */
	uint64_t damaged;      /* damaged chunks skipped */
	char damage[256];      /* the first damage's message */
	uint64_t spec_dropped; /* speculations left open at the end: output dropped */
	uint64_t spec_full;    /* speculation() calls that found none free */
	int exited;            /* the program called exit() */
	int columns;           /* it ran over column scans */
};
/* Runs the program over the file. 0, or <0 (a write error, -ENOMEM, a
 * run-time error of the program: message in err). Damage in the file is
 * counted in st, not an error. */
int tps_prog_run(struct tps_prog *p, struct tps_stats *st, char *err, size_t errlen);
/* The probes that never fired, one at a time ("tracepoint:a:b at 1:1");
 * NULL past the last. */
const char *tps_prog_silent(struct tps_prog *p, int i);
void tps_prog_free(struct tps_prog *p);

struct tps_filter;
/* Compiles a kernel filter expression for every event type of r: field
 * names of the event, and common_pid (the tid), pid/tid, comm and cpu for
 * types without such fields; ==, !=, <, <=, >, >=, & (bits in common), ~
 * (glob match of text), &&, ||, !, parentheses. A type that lacks a field
 * the expression names never matches; -EINVAL when no type has it. */
int tps_filter_new(struct tps_filter **f, const char *expr, struct tpp_reader *r, const struct tpp_names *n,
		   char *err, size_t errlen);
/* Adds the fields the filter reads to want (TPP_MAX_TYPES entries), for
 * tpp_iter_opts.want. */
void tps_filter_want(const struct tps_filter *f, uint32_t *want);
/* 1 when ev passes, 0 when not. */
int tps_filter_match(struct tps_filter *f, const struct tpp_event *ev);
void tps_filter_free(struct tps_filter *f);
#endif
