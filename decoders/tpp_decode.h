/* tpp_decode — typed events out of a tracepp file, streaming, bounded memory.
 *
 * Every byte of a file is untrusted: a damaged chunk is reported and skipped,
 * never trusted. Errors follow tpp_format.h: negative errno-style values, a
 * message from tpp_iter_error(). Nothing here prints.
 *
 * Memory: an iterator holds one decompressed chunk per stream it is reading
 * (at most TPP_CHUNK_RAW_MAX each) and a slice of it decoded column by
 * column (1024 events), plus a reorder window per stream; the
 * event it returns, and any string in it, is valid until the next call.
 * Only v[0..nvals) of a returned event exist: never copy it whole.
 */
#ifndef TPP_DECODE_H
#define TPP_DECODE_H

#include "tpp_format.h"

struct tpp_event {
	uint64_t ts;     /* CLOCK_MONOTONIC ns */
	uint32_t stream;
	int32_t cpu;     /* -1 when the stream is a thread's */
	int32_t tid;     /* the task that ran, -1 unknown */
	uint16_t type;
	uint16_t nvals;
	const struct tpp_type *t; /* schema of this event: names of v[] */
	union tpp_val v[TPP_MAX_FIELDS];
};

/* Decoding one chunk payload (tpp_r_payload output). The struct is public so
 * it can live on the stack; its fields are private. */
struct tpp_chunk_dec {
	const struct tpp_reader *r;
	const struct tpp_chunk *c;
	const struct tpp_stream_info *si;
	const uint8_t *p, *end;
	/* columns: [pos, end) */
	const uint8_t *col_type, *col_type_end, *col_ts, *col_ts_end, *col_tid, *col_tid_end;
	const uint8_t *strtab, *strtab_end;
	uint32_t nstr;
	const uint8_t **str_ptr; /* nstr offsets into strtab, allocated */
	uint32_t *str_len;
	uint32_t done, count;
	uint32_t maxf; /* the most fields of any type in the chunk */
	uint32_t stream;
	const uint32_t *want; /* tpp_dec_want: kept across tpp_dec_begin */
	/* string handles for column scans (tpp_scan_opts.intern): kept too */
	uint64_t (*intern)(void *ctx, const char *s, uint32_t len);
	void *intern_ctx;
	int32_t thread_tid; /* thread streams: the tid of every event; else -1 */
	int32_t cpu;        /* the cpu of every event, -1 for a thread's stream */
	uint64_t last_ts;
	int64_t last_tid;
	/* per-type field columns, built lazily in begin() */
	struct tpp_dec_tcols *tcols;
	uint32_t ntcols;
	char err[160];
};
/* Prepares to decode chunk c's payload raw[0..len). Returns 0 or negative error. */
int tpp_dec_begin(struct tpp_chunk_dec *d, const struct tpp_reader *r, const struct tpp_chunk *c,
		  const uint8_t *raw, size_t len);
/* 1: *ev holds the next event; 0: end of chunk; <0: corrupt payload (message
 * in d->err; stop decoding this chunk) or -ENOMEM. */
int tpp_dec_next(struct tpp_chunk_dec *d, struct tpp_event *ev);
/* Decode only the fields whose bit is set in want[type id] (bit i: field i;
 * want has TPP_MAX_TYPES entries, NULL: all, the default). Fields left out
 * read as 0 / an empty NULL string. Holds from the next tpp_dec_begin on;
 * want must outlive the decoding. */
void tpp_dec_want(struct tpp_chunk_dec *d, const uint32_t *want);
void tpp_dec_end(struct tpp_chunk_dec *d);

/* Whole-file iteration. */
struct tpp_iter;
struct tpp_iter_opts {
	size_t sz;          /* sizeof(struct tpp_iter_opts) */
	int sorted;         /* 1: global time order (k-way merge of streams) */
	uint64_t from_ts;   /* time range filter, inclusive; 0/0 = everything */
	uint64_t to_ts;
	uint32_t window;    /* per-stream reorder window in events, default 256 */
	/* Fields to decode per type, as for tpp_dec_want (NULL: all). Skipping
	 * the fields an analysis never reads is most of the decoding saved. */
	const uint32_t *want;
};
int tpp_iter_open(struct tpp_iter **it, struct tpp_reader *r, const struct tpp_iter_opts *o);
/* 1: *ev valid until the next call; 0: end; <0: a chunk was damaged and
 * skipped (message in tpp_iter_error); calling again continues after it.
 * Damage found while opening the file (the recovery scan skipping bytes that
 * hold no intact chunk header) is not repeated here: it is counted in
 * tpp_r_info()->damaged_chunks, with the first message in tpp_r_error(). */
int tpp_iter_next(struct tpp_iter *it, const struct tpp_event **ev);
/* As tpp_iter_next, but a run of events at once: returns n >= 1 events at
 * *first, each *stride bytes after the one before (stride 0 when n is 1),
 * all valid until the next call; 0 at the end; <0 as tpp_iter_next. Runs
 * are what a stream gives before another stream's next event. */
int tpp_iter_run(struct tpp_iter *it, const struct tpp_event **first, size_t *stride);
const char *tpp_iter_error(const struct tpp_iter *it);
struct tpp_iter_stats {
	uint64_t events, chunks, damaged_chunks, out_of_order;
};
/* Final once tpp_iter_next has returned 0. */
void tpp_iter_stats(const struct tpp_iter *it, struct tpp_iter_stats *st);
void tpp_iter_close(struct tpp_iter *it);

/* Column scans: the same global time order as a sorted tpp_iter, handed
 * out as runs of column arrays instead of event rows, for analyses that read
 * a few numbers of many events (latency --sched). No row is built and no
 * field copied twice, and a second thread decodes ahead while the caller
 * works, each stream a bounded ring of slices ahead.
 *
 * want names per type the numeric fields to decode (as tpp_iter_opts.want):
 * a type's k-th wanted field, in field order, is col[k] (k < TPP_SCAN_COLS);
 * col[k] of an event whose type wants fewer fields reads 0. Every event is
 * handed out, whatever its type. Damage is reported and skipped as by
 * tpp_iter_next; the order is tpp_iter's (time, then stream), exactly, for
 * every file whose chunks say they are sorted and do not overlap. */
#define TPP_SCAN_COLS 4
struct tpp_cols {
	uint32_t stream;
	int32_t cpu; /* -1 when the stream is a thread's */
	const uint64_t *ts;
	const int32_t *tid;
	const uint16_t *type;
	const uint64_t *col[TPP_SCAN_COLS];
};
/* A slice as the thread that decoded it sees it, for tpp_scan_opts.prep. */
struct tpp_slice {
	uint32_t n, stream;
	int32_t cpu;
	uint64_t *ts;
	int32_t *tid;
	uint16_t *type;
	uint64_t *col[TPP_SCAN_COLS];
};
#define TPP_SCAN_STATE 64
struct tpp_scan;
struct tpp_scan_opts {
	size_t sz;           /* sizeof(struct tpp_scan_opts) */
	uint64_t from_ts;    /* time range, inclusive; 0/0 = everything */
	uint64_t to_ts;
	const uint32_t *want; /* must outlive the scan */
	int threads;         /* 0: decode ahead in a second thread when the
	                        machine has more than one CPU; 1: never */
	/* Optional work done on each slice where it is decoded, before the
	 * merge sees it: it may rewrite the slice's arrays in place. Work that
	 * depends on one stream alone (per-CPU state of a CPU's stream) is done
	 * there, beside the merge instead of in it. A stream's slices come in
	 * order, each with the stream's own TPP_SCAN_STATE bytes (zeroed at
	 * first); different streams' slices may be prepared at once, on
	 * different threads. */
	void (*prep)(void *ctx, struct tpp_slice *sl, void *state);
	void *prep_ctx;
	/* Optional: string fields may be wanted too, handed out as handles the
	 * caller makes: a wanted string field's col[k] is what intern returned
	 * for its bytes. It is called once per chunk for each distinct string
	 * a wanted field holds there, on whichever thread decodes the chunk
	 * (so it must be thread-safe), and must return the same handle for
	 * the same bytes every time; 0 means out of memory (the chunk is then
	 * reported damaged). Interning once per chunk, not per event, keeps a
	 * string field as cheap as a number. */
	uint64_t (*intern)(void *ctx, const char *s, uint32_t len);
	void *intern_ctx;
};
/* 0, or -ENOTSUP when the file needs tpp_iter (a stream whose chunks
 * overlap in time or are not marked sorted, or a wanted field that is not
 * a number or, with intern, a string, or more than TPP_SCAN_COLS of them),
 * or -ENOMEM / -EAGAIN. */
int tpp_scan_open(struct tpp_scan **s, struct tpp_reader *r, const struct tpp_scan_opts *o);
/* A run: events [from, to) of c, one stream's, in time order. */
struct tpp_run {
	const struct tpp_cols *c;
	uint32_t from, to;
};
/* The next n runs in order, 1 <= n <= max, into runs[], valid until the
 * next call; 0 at the end; <0 as tpp_iter_next (message in tpp_scan_error).
 * Many runs a call: streams that interleave finely give runs of an event
 * or two, and a call per run cost more than the events in it. */
int tpp_scan_runs(struct tpp_scan *s, struct tpp_run *runs, int max);
const char *tpp_scan_error(const struct tpp_scan *s);
/* Final once tpp_scan_runs has returned 0. */
void tpp_scan_stats(const struct tpp_scan *s, struct tpp_iter_stats *st);
void tpp_scan_close(struct tpp_scan *s);

/* Field access by name: index into ev->v, or -1. Cached per type. */
int tpp_field_index(const struct tpp_type *t, const char *name);

/* ----------------------------------------------------------- names, symbols */
struct tpp_names;
/* Builds lookup tables from the file's metadata (tasks, maps, symbols). */
int tpp_names_open(struct tpp_names **n, const struct tpp_reader *r);
void tpp_names_close(struct tpp_names *n);
/* The task name of tid (last known), or NULL. */
const char *tpp_names_comm(const struct tpp_names *n, int32_t tid);
/* The thread-group id (pid) of tid, or -1. */
int32_t tpp_names_pid(const struct tpp_names *n, int32_t tid);
/* Symbol containing addr in process pid's address space: returns the name
 * and sets *off to addr - symbol start, or NULL when unknown. */
const char *tpp_names_sym(const struct tpp_names *n, int32_t pid, uint64_t addr, uint64_t *off);
/* 1 if addr lies in an executable file mapping of pid, 0 if pid has some
 * but none holds it (the uretprobe trampoline, JIT code), -1 if the file
 * has no maps of pid. */
int tpp_names_mapped(const struct tpp_names *n, int32_t pid, uint64_t addr);
/* The function a probe event type (uprobe or kprobe, entry or return)
 * probes: from the recorder's "probe" note, else the event's name without
 * "__return"; NULL for other types. Names a call whose task's memory maps
 * are not in the file. */
const char *tpp_names_probe(const struct tpp_names *n, uint16_t type);
/* What the recorder's notes ("probe", "arg_types": specs/format.md) say
 * the fields of an event type hold, per field index: how to print them
 * (a char as 'z', a double from its bits). NULL when no note types it. */
enum tpp_vcode {
	TPP_V_NONE = 0, /* not typed: as the field's own type says */
	TPP_V_SINT, TPP_V_UINT, TPP_V_CHAR, TPP_V_BOOL, TPP_V_PTR, TPP_V_STR, TPP_V_F32, TPP_V_F64
};
const uint8_t *tpp_names_vcodes(const struct tpp_names *n, uint16_t type);

/* ------------------------------------------------ flag sets, symbolic values
 * The kernel's print format of an event type (tpp_type.print_fmt, files of
 * format 1.2 on) says how some of its numbers read:
 *   __print_flags(REC->f, "|", {MASK, "NAME"}, ...)  a set of names,
 *   __print_symbolic(REC->f, {VALUE, "NAME"}, ...)   one name,
 * MASK and VALUE being C constant expressions. tpp_pfmt_parse reads those
 * tables for every numeric field f the format passes to them as it is
 * (casts and parentheses aside: an expression of f is not taken). The text
 * is untrusted: longer than TPP_PFMT_MAX it is not read; a table that holds
 * anything outside the C subset the kernel writes (unresolved enum names, a
 * division by zero, nesting deeper than the evaluator allows) is dropped
 * whole, never taken in part. */
#define TPP_PFMT_MAX (64u << 10)
struct tpp_pentry {
	uint64_t val;  /* the mask (a set) or the value (one name) */
	uint32_t name; /* offset of its NUL-terminated name in the table's pool */
};
struct tpp_pfield {
	int flags;             /* 1: a set (__print_flags), 0: one value (__print_symbolic) */
	char delim[8];         /* a set's names are joined with it */
	char *zero;            /* what the format prints for 0 ("none"), or NULL */
	uint32_t n, pool_len;
	struct tpp_pentry *ent; /* n entries, in the format's order (it matters: first match wins) */
	char *pool;
};
struct tpp_pfmt {
	struct tpp_pfield *f[TPP_MAX_FIELDS]; /* per field index of the type, NULL: none */
};
/* *out: the tables of fmt[0..len) (the caller tpp_pfmt_free()s it), NULL when
 * it has none. 0, or -ENOMEM. */
int tpp_pfmt_parse(const struct tpp_type *t, const char *fmt, size_t len, struct tpp_pfmt **out);
void tpp_pfmt_free(struct tpp_pfmt *p);
/* The table of field `field` of event type `type` (from the file's print
 * formats, parsed at tpp_names_open), or NULL. */
const struct tpp_pfield *tpp_names_pfield(const struct tpp_names *n, uint16_t type, unsigned field);

#endif
