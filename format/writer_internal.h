/* writer_internal — the writer's state. Private to format/. */
#ifndef TPP_WRITER_INTERNAL_H
#define TPP_WRITER_INTERNAL_H

#include "buf.h"
#include "tpp_format.h"

struct wtype {
	int defined, in_header;
	uint16_t id, nfields;
	char *name, *system;
	char *print_fmt; /* the kernel's "print fmt:" text, or NULL */
	char *fnames[TPP_MAX_FIELDS];
	uint8_t ftypes[TPP_MAX_FIELDS];
};

/* One event type's field columns inside the chunk being built. */
struct wcols {
	unsigned n, present;
	struct buf f[TPP_MAX_FIELDS];
	uint64_t last[TPP_MAX_FIELDS]; /* previous value, for delta coding */
};

/* A chunk's string table: each distinct string stored once, looked up by
 * an open-addressing hash of (hash << 32 | index + 1). */
struct strtab {
	struct buf pool;
	uint32_t *off, *len;
	uint32_t n, cap;
	uint64_t *slots;
	uint32_t nslots;
};
int64_t strtab_intern(struct strtab *t, const char *s, uint32_t len);
void strtab_reset(struct strtab *t);
void strtab_free(struct strtab *t);

struct wstream {
	uint32_t id;
	int kind;
	struct wstream *next;
	struct buf types, ts, tids;
	uint32_t count;
	int backwards; /* a timestamp in this chunk went back: no sorted flag */
	size_t bytes;
	uint64_t min_ts, max_ts, prev_ts;
	int64_t prev_tid;
	struct strtab strs;
	/* per type id below ncols (grown to the highest id seen): a stream
	 * costs what its types need, not 40 KiB for all 4096 (one per traced
	 * thread adds up) */
	uint16_t *present;
	uint32_t npresent, ncols;
	struct wcols **cols;
};

struct tpp_writer {
	struct tpp_w_opts o;
	char path[512];
	char msg[640];
	int fd, err, header_done;
	int can_reserve, disk_full, ending; /* see keep_room() in writer.c */
	uint64_t reserved;                  /* file bytes with disk space kept */
	int argc;
	char **argv;
	uint64_t off;
	struct wtype types[TPP_MAX_TYPES];
	char *extra_k[32], *extra_v[32];
	unsigned nextra;
	struct wstream *streams, *last, **hash;
	size_t nstreams, hcap;
	struct buf pay, comp, meta;
	uint32_t nmeta;
	uint64_t meta_min, meta_max;
	struct tpp_chunk *idx;
	size_t nidx, idx_cap;
	struct tpp_w_stats st;
	uint64_t st_lost;
	/* the time base (specs/format.md "Time base"): sampled by the writer
	 * when it measured the offset itself */
	int clock_own;
	struct tpp_clock_sample clock0; /* at open: the header's */
	uint64_t clock_last;            /* mono_ns of the last sample taken */
};

#endif
