/* tpp_format — read and write tracepp trace files (specs/format.md, v1.2).
 *
 * Errors: every int-returning function returns >= 0 on success and a negative
 * errno value on failure (-EINVAL, -EIO, -ENOSPC, -EFBIG, -TPP_EBADFILE, ...).
 * The reader and writer also keep a one-line message naming the file and the
 * offset of the problem (tpp_r_error / tpp_w_error). Nothing here prints.
 *
 * Ownership: the writer copies everything it is given. Pointers the reader
 * returns (info, type table, chunk payloads) belong to the reader and stay
 * valid until tpp_r_close(), except payloads, valid until the next payload call.
 * Neither object is thread-safe; callers serialise access.
 */
#ifndef TPP_FORMAT_H
#define TPP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define TPP_MAJOR 1
#define TPP_MINOR 2

/* Format-specific errors, beyond errno values. */
#define TPP_EBADFILE 10001 /* not a tracepp file, or corrupt beyond repair */
#define TPP_EVERSION 10002 /* a newer major version */
#define TPP_ECHECKSUM 10003
#define TPP_ETRUNC 10004 /* ends in the middle of a structure */
#define TPP_ENOTOURS 10005 /* an output exists and is not a regular file of the caller's */

const char *tpp_strerror(int err); /* err negative or positive */
/* CRC-32C (Castagnoli) as the format uses it; chain calls by passing the
 * previous result as crc (start with 0). */
uint32_t tpp_crc32c(uint32_t crc, const void *data, size_t len);

enum tpp_ftype {
	TPP_F_U64 = 0, /* unsigned integer up to 64 bits */
	TPP_F_S64 = 1, /* signed integer */
	TPP_F_STR = 2, /* UTF-8/ASCII text, interned per chunk */
	TPP_F_BYTES = 3, /* opaque bytes */
};

/* Stream kinds: a CPU's kernel ring buffer, or one thread's in-process events. */
enum tpp_skind { TPP_S_CPU = 0, TPP_S_THREAD = 1 };

/* Chunk kinds, as stored. Unknown kinds are skipped by readers. */
enum tpp_ckind { TPP_C_EVENTS = 1, TPP_C_META = 2, TPP_C_INDEX = 3 };

#define TPP_MAX_FIELDS 32
#define TPP_MAX_TYPES 4096
#define TPP_NAME_MAX 128
#define TPP_CHUNK_RAW_MAX (16u << 20) /* readers refuse larger chunks */

struct tpp_field_def {
	const char *name;
	enum tpp_ftype type;
};

/* An event type of the file's schema. Ids are dense-ish, < TPP_MAX_TYPES. */
struct tpp_type_def {
	uint16_t id;
	const char *name;   /* "sched_switch", "func_entry", "uprobes:p_open" */
	const char *system; /* "sched", "tracepp", ... ; may be NULL */
	uint16_t nfields;
	const struct tpp_field_def *fields;
};

/* A field value. Strings/bytes point into reader- or caller-owned memory. */
union tpp_val {
	uint64_t u;
	int64_t i;
	struct {
		const char *p;
		uint32_t len;
	} s;
};

/* ---------------------------------------------------------------- time base
 * Every timestamp is CLOCK_MONOTONIC; the file also holds samples of
 * CLOCK_REALTIME - CLOCK_MONOTONIC (specs/format.md, "Time base") so that
 * files of several hosts can be put on one wall clock. */
struct tpp_clock_sample {
	uint64_t mono_ns;  /* CLOCK_MONOTONIC when taken; 0: not known (older files) */
	int64_t offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC then */
	int64_t err_ns;    /* how far the offset may be off either way; -1: not known */
};
struct tpp_clock {
	size_t n, cap;
	struct tpp_clock_sample *s; /* sorted by mono_ns, one per mono_ns */
};
/* Takes one sample now: the tightest of a few monotonic-realtime-monotonic
 * brackets, the error half of it. 0 or -errno. */
int tpp_clock_measure(struct tpp_clock_sample *s);
/* The wall-clock ns (CLOCK_REALTIME) of monotonic time mono: the offset
 * interpolated linearly between the samples around mono (beyond the first or
 * last, the nearest segment's slope carries on). *err_ns (may be NULL): how
 * far it may be off, the samples' errors blended the same way plus, outside
 * them, the drift that slope adds; -1 when not known (one sample: the drift
 * is unknown; no sample: mono itself is returned). Pure: no allocation. */
int64_t tpp_clock_wall(const struct tpp_clock *c, uint64_t mono, int64_t *err_ns);
/* Building one (the reader does it at open): tpp_clock_add appends a sample,
 * tpp_clock_done sorts and drops repeated mono_ns; -ENOMEM or 0. */
int tpp_clock_add(struct tpp_clock *c, const struct tpp_clock_sample *s);
void tpp_clock_done(struct tpp_clock *c);
void tpp_clock_free(struct tpp_clock *c);

/* ------------------------------------------------------------------ writer */

struct tpp_writer;

/* Options; zero means default. `sz` must be sizeof(struct tpp_w_opts) so the
 * struct can grow without breaking callers. */
struct tpp_w_opts {
	size_t sz;
	uint32_t chunk_events;   /* events per chunk, default 65536 */
	uint32_t chunk_bytes;    /* raw payload bytes per chunk, default 1 MiB */
	uint64_t max_file_bytes; /* stop with -EFBIG before exceeding; 0 = none.
				  * Chunks are then kept small (1/16 of the cap)
				  * since one that does not fit is refused whole. */
	int lz4_accel;           /* LZ4 acceleration, default 1 */
	const char *producer;    /* default "tracepp" */
	const char *producer_version;
	int argc;                /* recorded command line */
	char *const *argv;
	int64_t wall_offset_ns;  /* CLOCK_REALTIME - CLOCK_MONOTONIC; 0 = measure, and
				  * then sample it again about every second and at close
				  * (a given offset is the caller's time base: no samples) */
	/* The file holds command lines, paths and memory: it is 0600 whatever
	 * the umask, or with group_read 0640 and owned by group gid. */
	int group_read;
	uint32_t gid;
};

/* Creates PATH and writes nothing yet. Safe on a shared host: the file is
 * made under a private random name (O_EXCL|O_NOFOLLOW) in PATH's directory
 * and renamed to PATH, which is replaced only when it is a regular file
 * owned by the caller (-TPP_ENOTOURS otherwise: a symlink, a FIFO, a
 * directory, another user's file, all left alone). */
int tpp_w_open(struct tpp_writer **w, const char *path, const struct tpp_w_opts *o);
/* Declares an event type. Only before the first event/record (header is
 * written lazily then). Copies the definition. */
int tpp_w_add_type(struct tpp_writer *w, const struct tpp_type_def *t);
/* The same, with the text of the kernel's "print fmt:" line of the event's
 * format file (NULL or "": none), stored for readers to name flag sets and
 * symbolic values as the kernel prints them (tpp_pfmt in tpp_decode.h). */
int tpp_w_add_type_fmt(struct tpp_writer *w, const struct tpp_type_def *t, const char *print_fmt);
/* Adds extra header key/value text pairs (e.g. "workload"). Before first event. */
int tpp_w_set_header_str(struct tpp_writer *w, const char *key, const char *val);

/* Declares a stream: id is chosen by the caller, unique per file. */
int tpp_w_stream(struct tpp_writer *w, uint32_t id, enum tpp_skind kind,
		 int32_t cpu, int32_t pid, int32_t tid);
/* Appends one event. vals has the type's nfields values in schema order.
 * tid is stored for CPU streams (the task that ran) and ignored for thread
 * streams (the stream's tid). Strings are copied. */
int tpp_w_event(struct tpp_writer *w, uint32_t stream, uint16_t type, uint64_t ts,
		int32_t tid, const union tpp_val *vals);

/* Appends n events to a thread stream, each of a type whose one field is
 * an integer (u64 or s64): types[i], ts[i], vals[i]. The file is what n
 * tpp_w_event calls would write; the cost per event is a fraction. */
int tpp_w_events1(struct tpp_writer *w, uint32_t stream, size_t n, const uint16_t *types, const uint64_t *ts,
		  const uint64_t *vals);

/* Metadata records (specs/format.md "Metadata"). */
int tpp_w_task(struct tpp_writer *w, uint64_t ts, int32_t pid, int32_t tid, const char *comm);
int tpp_w_mmap(struct tpp_writer *w, uint64_t ts, int32_t pid, uint64_t start, uint64_t end,
	       uint64_t pgoff, const char *path, const uint8_t *build_id, size_t bid_len);
struct tpp_sym {
	uint64_t addr; /* relative to the ELF object's load base (st_value) */
	uint64_t size;
	const char *name;
};
int tpp_w_symtab(struct tpp_writer *w, const uint8_t *build_id, size_t bid_len,
		 const char *path, size_t nsyms, const struct tpp_sym *syms);
int tpp_w_lost(struct tpp_writer *w, uint32_t stream, uint64_t count, uint64_t from_ts,
	       uint64_t to_ts);
/* A free-form metadata record: key/value pairs of text (e.g. host facts). */
int tpp_w_note(struct tpp_writer *w, const char *kind, size_t n, const char *const *keys,
	       const char *const *vals);

/* Writes every partial chunk out (the file is then recoverable up to here). */
int tpp_w_flush(struct tpp_writer *w);
/* Flushes, writes index and trailer, closes. Frees w even on error. */
int tpp_w_close(struct tpp_writer *w);
/* Closes without a trailer, as if killed (for tests). Frees w. */
void tpp_w_abandon(struct tpp_writer *w);

struct tpp_w_stats {
	uint64_t events;         /* buffered by tpp_w_event (even if its chunk then failed) */
	uint64_t events_written; /* inside chunks on disk (less after a refused chunk) */
	uint64_t chunks, raw_bytes, file_bytes;
};
void tpp_w_stats(const struct tpp_writer *w, struct tpp_w_stats *st);
/* tpp_w_close() that also reports the final statistics (st may be NULL). */
int tpp_w_close_stats(struct tpp_writer *w, struct tpp_w_stats *st);
const char *tpp_w_error(const struct tpp_writer *w);

/* ------------------------------------------------------------------ reader */

struct tpp_reader;

struct tpp_stream_info {
	uint32_t id;
	enum tpp_skind kind;
	int32_t cpu, pid, tid;
};

/* A parsed type: like tpp_type_def, owned by the reader. */
struct tpp_type {
	uint16_t id;
	char *name, *system;
	uint16_t nfields;
	struct tpp_field_def *fields;
	char *print_fmt; /* the kernel's print format (1.2 files), NUL-terminated, or NULL */
};

struct tpp_file_info {
	uint16_t major, minor;
	char *producer, *producer_version, *hostname, *kernel, *arch, *clock;
	int32_t ncpus;
	int64_t wall_offset_ns;
	int argc;
	char **argv;
	uint32_t ntypes;             /* entries in types (sparse ids: see tpp_r_type) */
	struct tpp_type *types;
	int has_trailer;             /* 0: writer died, chunks found by scanning */
	uint64_t file_size, data_end;/* data_end: end of the last intact chunk */
	uint64_t damaged_chunks;     /* chunks skipped (bad checksum, truncated) */
};

#define TPP_CHUNK_TS_SORTED 2 /* flags: the writer saw no timestamp go backwards */

struct tpp_chunk {
	uint64_t offset;  /* of the chunk header in the file */
	uint8_t kind;     /* enum tpp_ckind */
	uint8_t flags;    /* TPP_CHUNK_TS_SORTED, and the storage bits */
	uint32_t stream;
	uint32_t count;
	uint64_t first_ts, last_ts;
	uint32_t raw_size, comp_size;
	uint32_t crc;
	uint32_t hdr_size;
};

/* Opens and validates the header; reads the trailer's index or, if there is
 * none, scans for intact chunks. On failure *r is NULL and, when errmsg is not
 * NULL, a message is copied there (errmsg_len bytes max). */
int tpp_r_open(struct tpp_reader **r, const char *path, char *errmsg, size_t errmsg_len);
void tpp_r_close(struct tpp_reader *r);
const struct tpp_file_info *tpp_r_info(const struct tpp_reader *r);
const struct tpp_type *tpp_r_type(const struct tpp_reader *r, uint16_t id); /* NULL if unknown */
const char *tpp_r_error(const struct tpp_reader *r); /* last error, "" if none */

/* The chunk list (from the index, or from the recovery scan), in file order. */
size_t tpp_r_nchunks(const struct tpp_reader *r);
const struct tpp_chunk *tpp_r_chunk(const struct tpp_reader *r, size_t i);
/* Streams declared by metadata (loaded at open). */
size_t tpp_r_nstreams(const struct tpp_reader *r);
const struct tpp_stream_info *tpp_r_stream(const struct tpp_reader *r, size_t i);
const struct tpp_stream_info *tpp_r_stream_by_id(const struct tpp_reader *r, uint32_t id);

/* Reads, verifies and decompresses chunk c into *buf (caller-owned, grown
 * with realloc as needed; *cap its size). Returns the raw length, or a
 * negative error with the message set (the file is not touched). */
long tpp_r_payload(struct tpp_reader *r, const struct tpp_chunk *c, uint8_t **buf,
		   size_t *cap);
/* The same for threads sharing r: compressed bytes go through the caller's
 * *zbuf (grown as needed; *zcap its size) and a failure's message into err,
 * so any number of threads may call it at once. The rest of the reader is
 * read-only after tpp_r_open. */
long tpp_r_payload_r(const struct tpp_reader *r, const struct tpp_chunk *c, uint8_t **buf, size_t *cap,
		     uint8_t **zbuf, size_t *zcap, char *err, size_t errlen);

/* ---------------------------------------------------------------- metadata
 * Loaded from every intact metadata chunk at open, in file order. */
struct tpp_task {
	uint64_t ts;
	int32_t pid, tid;
	char comm[32];
};
struct tpp_mmap {
	uint64_t ts, start, end, pgoff;
	int32_t pid;
	char *path;
	uint8_t build_id[64];
	uint32_t bid_len;
};
struct tpp_symtab {
	uint8_t build_id[64];
	uint32_t bid_len;
	char *path;
	size_t nsyms;
	struct tpp_sym *syms; /* sorted by addr */
};
struct tpp_lost {
	uint32_t stream;
	uint64_t count, from_ts, to_ts;
};
struct tpp_note {
	char *kind;
	size_t n;
	char **keys, **vals;
};
struct tpp_meta {
	size_t ntasks, nmmaps, nsymtabs, nlost, nnotes;
	struct tpp_task *tasks; /* in file order; per tid, the record with the latest ts holds */
	struct tpp_mmap *mmaps;
	struct tpp_symtab *symtabs;
	struct tpp_lost *lost;
	struct tpp_note *notes;
	uint64_t lost_total;
};
const struct tpp_meta *tpp_r_meta(const struct tpp_reader *r);
/* The file's time base: the header's offset and every `clock` record (an
 * older file: the header's offset alone, of unknown error; a file without
 * one: no sample). Owned by the reader. Wall-clock time of an event:
 * tpp_clock_wall(tpp_r_clock(r), ev->ts, &err). */
const struct tpp_clock *tpp_r_clock(const struct tpp_reader *r);

#endif
