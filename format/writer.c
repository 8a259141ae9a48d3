/* writer — buffers events per stream in columns, and writes each full
 * stream buffer as one checksummed, LZ4-compressed chunk (specs/format.md).
 *
 * Why columns: a chunk holds one column per field of each event type, so
 * LZ4 sees runs of like values (the same type ids, small timestamp deltas,
 * repeating pids) and compresses far better than interleaved records. */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "layout.h"
#include "safefile.h"
#include "tpp_format.h"
#include "writer_internal.h"

static int fail(struct tpp_writer *w, int err, const char *fmt, ...)
{
	if (w->err)
		return w->err;
	w->err = err;
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(w->msg, sizeof(w->msg), "%s: ", w->path);
	if (n < 0 || (size_t)n >= sizeof(w->msg))
		n = 0;
	vsnprintf(w->msg + n, sizeof(w->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

/* The file, made private under a random name and renamed to path (see
 * safefile.h): a descriptor or -errno. */
static int create(const char *path, const struct tpp_w_opts *o)
{
	const char *base;
	int dfd = sf_dir_of(path, &base), fd = -1, e;
	if (dfd < 0)
		return dfd;
	char tmp[300];
	if ((e = sf_replaceable(dfd, base)) || (e = fd = sf_create_temp(dfd, base, tmp, sizeof(tmp))) < 0)
		goto out;
	if (o->group_read && (fchown(fd, (uid_t)-1, (gid_t)o->gid) || fchmod(fd, 0640)))
		e = -errno;
	else if (renameat(dfd, tmp, dfd, base))
		e = -errno;
	if (e < 0) {
		close(fd);
		unlinkat(dfd, tmp, 0);
	}
out:
	close(dfd);
	return e < 0 ? e : fd;
}

int tpp_w_open(struct tpp_writer **wp, const char *path, const struct tpp_w_opts *o)
{
	*wp = NULL;
	if (o && o->sz && o->sz > sizeof(*o))
		return -EINVAL; /* a newer caller than this library */
	struct tpp_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	if (o)
		memcpy(&w->o, o, o->sz && o->sz < sizeof(*o) ? o->sz : sizeof(*o));
	if (!w->o.chunk_events)
		w->o.chunk_events = 65536;
	if (!w->o.chunk_bytes)
		w->o.chunk_bytes = 1u << 20;
	if (w->o.chunk_bytes > TPP_CHUNK_RAW_MAX / 2)
		w->o.chunk_bytes = TPP_CHUNK_RAW_MAX / 2;
	if (w->o.max_file_bytes && w->o.chunk_bytes > w->o.max_file_bytes / 16) {
		uint64_t cb = w->o.max_file_bytes / 16;
		w->o.chunk_bytes = (uint32_t)(cb < 16384 ? 16384 : cb);
	}
	if (w->o.lz4_accel < 1)
		w->o.lz4_accel = 1;
	snprintf(w->path, sizeof(w->path), "%s", path);
	if (!w->o.wall_offset_ns && !tpp_clock_measure(&w->clock0)) {
		w->o.wall_offset_ns = w->clock0.offset_ns;
		w->clock_own = 1;
		w->clock_last = w->clock0.mono_ns;
	}
	int e = create(path, &w->o);
	if (e < 0) {
		free(w);
		return e;
	}
	w->fd = e;
	w->can_reserve = 1;
	/* A nearly full disk is a size cap nobody chose: chunks of 1/16 of the
	 * room left, so that it stops the writer after some chunks, not before
	 * the first (a chunk that does not fit is not written at all). */
	struct statvfs vfs;
	if (!fstatvfs(w->fd, &vfs) && vfs.f_frsize) {
		uint64_t room = (uint64_t)vfs.f_bavail * vfs.f_frsize;
		if (room / 16 < w->o.chunk_bytes)
			w->o.chunk_bytes = (uint32_t)(room / 16 < 16384 ? 16384 : room / 16);
	}
	/* argv is copied now: the caller's may not outlive the header write */
	w->argc = w->o.argc > 0 ? w->o.argc : 0;
	w->argv = calloc((size_t)w->argc + 1, sizeof(char *));
	for (int i = 0; w->argv && i < w->argc; i++)
		w->argv[i] = strdup(w->o.argv[i] ? w->o.argv[i] : "");
	w->o.argv = NULL;
	w->o.producer = w->o.producer ? strdup(w->o.producer) : NULL;
	w->o.producer_version = w->o.producer_version ? strdup(w->o.producer_version) : NULL;
	*wp = w;
	return 0;
}

/* ---------------------------------------------------------------- header */

static int keep_room(struct tpp_writer *w, uint64_t need);

static void enc_type(struct buf *b, const struct wtype *t)
{
	cbor_head(b, CB_MAP, t->print_fmt ? 5 : 4);
	cbor_text(b, "id");
	cbor_uint(b, t->id);
	cbor_text(b, "name");
	cbor_str(b, t->name);
	cbor_text(b, "system");
	cbor_str(b, t->system ? t->system : "");
	cbor_text(b, "fields");
	cbor_head(b, CB_ARRAY, t->nfields);
	static const char *const tn[] = {"u64", "s64", "str", "bytes"};
	for (unsigned i = 0; i < t->nfields; i++) {
		cbor_head(b, CB_ARRAY, 2);
		cbor_str(b, t->fnames[i]);
		cbor_text(b, tn[t->ftypes[i] & 3]);
	}
	if (t->print_fmt) {
		cbor_text(b, "print_fmt");
		cbor_str(b, t->print_fmt);
	}
}

static int write_all(struct tpp_writer *w, const void *p, size_t n)
{
	const uint8_t *c = p;
	while (n) {
		ssize_t k = write(w->fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			w->disk_full |= e == -ENOSPC || e == -EDQUOT;
			/* Keep the file a clean prefix of whole chunks, so what was
			 * written stays readable after ENOSPC. */
			if (ftruncate(w->fd, (off_t)w->off) == 0)
				lseek(w->fd, (off_t)w->off, SEEK_SET);
			return fail(w, e, "write at offset %llu: %s", (unsigned long long)w->off, strerror(-e));
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

static int write_header(struct tpp_writer *w)
{
	struct utsname u;
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	struct buf b = {0};
	unsigned nkeys = 11 + (w->nextra ? 1 : 0) + (w->clock_own ? 2 : 0);
	cbor_head(&b, CB_MAP, nkeys);
	cbor_text(&b, "producer");
	cbor_str(&b, w->o.producer ? w->o.producer : "tracepp");
	cbor_text(&b, "producer_version");
	cbor_str(&b, w->o.producer_version ? w->o.producer_version : TPP_VERSION);
	cbor_text(&b, "hostname");
	cbor_str(&b, host);
	cbor_text(&b, "kernel");
	cbor_str(&b, u.release);
	cbor_text(&b, "arch");
	cbor_str(&b, u.machine);
	cbor_text(&b, "ncpus");
	cbor_uint(&b, (uint64_t)sysconf(_SC_NPROCESSORS_CONF));
	cbor_text(&b, "clock");
	cbor_text(&b, "CLOCK_MONOTONIC");
	cbor_text(&b, "ts_unit");
	cbor_text(&b, "ns");
	cbor_text(&b, "wall_offset_ns");
	cbor_int(&b, w->o.wall_offset_ns);
	if (w->clock_own) {
		cbor_text(&b, "wall_offset_mono_ns");
		cbor_uint(&b, w->clock0.mono_ns);
		cbor_text(&b, "wall_offset_err_ns");
		cbor_int(&b, w->clock0.err_ns);
	}
	cbor_text(&b, "cmdline");
	cbor_head(&b, CB_ARRAY, (uint64_t)w->argc);
	for (int i = 0; i < w->argc; i++)
		cbor_str(&b, w->argv && w->argv[i] ? w->argv[i] : "");
	cbor_text(&b, "types");
	unsigned nt = 0;
	for (unsigned i = 0; i < TPP_MAX_TYPES; i++)
		nt += w->types[i].defined;
	cbor_head(&b, CB_ARRAY, nt);
	for (unsigned i = 0; i < TPP_MAX_TYPES; i++)
		if (w->types[i].defined) {
			enc_type(&b, &w->types[i]);
			w->types[i].in_header = 1;
		}
	if (w->nextra) {
		cbor_text(&b, "extra");
		cbor_head(&b, CB_MAP, w->nextra);
		for (unsigned i = 0; i < w->nextra; i++) {
			cbor_text(&b, w->extra_k[i]);
			cbor_str(&b, w->extra_v[i]);
		}
	}
	if (b.oom) {
		buf_free(&b);
		return fail(w, -ENOMEM, "out of memory");
	}
	if (keep_room(w, FILE_HDR_FIXED + b.len)) {
		buf_free(&b);
		return w->err;
	}
	uint8_t fixed[FILE_HDR_FIXED];
	memcpy(fixed, FILE_MAGIC, 8);
	put_le16(fixed + 8, TPP_MAJOR);
	put_le16(fixed + 10, TPP_MINOR);
	put_le32(fixed + 12, (uint32_t)b.len);
	put_le32(fixed + 16, tpp_crc32c(tpp_crc32c(0, fixed, 16), b.data, b.len));
	int e = write_all(w, fixed, sizeof(fixed));
	if (!e)
		e = write_all(w, b.data, b.len);
	if (!e)
		w->off += sizeof(fixed) + b.len;
	buf_free(&b);
	w->header_done = 1;
	return e;
}

/* ---------------------------------------------------------------- chunks */

/* Bytes the end of the file may need after the chunks so far: a short
 * metadata chunk saying why it ended, the index (at most 60 bytes an entry,
 * stored uncompressed if LZ4 does not pay) and the trailer. */
static uint64_t tail_bytes(size_t nidx)
{
	return 2 * CHUNK_HDR_SIZE + 512 + (nidx + 2) * 60 + TRAILER_SIZE;
}

/* Keeps disk space allocated (fallocate, the file size unchanged) for the
 * next `need` bytes and the tail after them, so that a full disk stops the
 * writer before a chunk, with room left to end the file cleanly and say
 * why (tpp_w_close). -ENOSPC when even that does not fit; 0 otherwise,
 * also where the file system cannot reserve (the write then finds out). */
static int keep_room(struct tpp_writer *w, uint64_t need)
{
	uint64_t want = w->off + need + tail_bytes(w->nidx + 1);
	if (w->ending || !w->can_reserve || want <= w->reserved)
		return 0;
	/* a megabyte ahead: one call per megabyte written, not per chunk */
	uint64_t ahead = want + (1u << 20);
	if (!fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)w->reserved, (off_t)(ahead - w->reserved))) {
		w->reserved = ahead;
		return 0;
	}
	if (errno == ENOSPC &&
	    !fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)w->reserved, (off_t)(want - w->reserved))) {
		w->reserved = want;
		return 0;
	}
	if (errno != ENOSPC && errno != EDQUOT) {
		w->can_reserve = 0; /* EOPNOTSUPP and the like */
		return 0;
	}
	w->disk_full = 1;
	return fail(w, -ENOSPC, "writing the chunk at offset %llu: %s (the file so far is kept, and ends cleanly)",
		    (unsigned long long)w->off, strerror(ENOSPC));
}

/* Writes one chunk whose raw payload is w->pay; compresses when it pays. */
static int write_chunk(struct tpp_writer *w, uint8_t kind, uint32_t stream, uint32_t count,
		       uint64_t min_ts, uint64_t max_ts, uint8_t extra_flags)
{
	if (w->err)
		return w->err;
	if (!w->header_done && write_header(w))
		return w->err;
	if (w->pay.oom)
		return fail(w, -ENOMEM, "out of memory");
	if (w->pay.len > TPP_CHUNK_RAW_MAX)
		return fail(w, -E2BIG, "chunk of %zu bytes exceeds the format's limit", w->pay.len);
	int bound = LZ4_compressBound((int)w->pay.len);
	if (buf_reserve(&w->comp, (size_t)bound))
		return fail(w, -ENOMEM, "out of memory");
	int clen = LZ4_compress_fast((const char *)w->pay.data, (char *)w->comp.data, (int)w->pay.len, bound,
				     w->o.lz4_accel);
	uint8_t flags = extra_flags;
	const uint8_t *stored = w->pay.data;
	size_t slen = w->pay.len;
	if (clen > 0 && (size_t)clen < w->pay.len) {
		flags |= CHUNK_F_LZ4;
		stored = w->comp.data;
		slen = (size_t)clen;
	}
	uint64_t need = CHUNK_HDR_SIZE + slen;
	if (w->o.max_file_bytes && kind != TPP_C_INDEX) {
		/* leave room for the index and trailer so the file can still end cleanly */
		uint64_t tail = (w->nidx + 2) * 48 + CHUNK_HDR_SIZE + TRAILER_SIZE + 64;
		if (w->off + need + tail > w->o.max_file_bytes)
			return fail(w, -EFBIG, "file size cap of %llu bytes reached",
				    (unsigned long long)w->o.max_file_bytes);
	}
	if (keep_room(w, need))
		return w->err;
	uint8_t h[CHUNK_HDR_SIZE];
	memcpy(h + CH_MAGIC, CHUNK_MAGIC, 4);
	h[CH_KIND] = kind;
	h[CH_FLAGS] = flags;
	put_le16(h + CH_HSIZE, CHUNK_HDR_SIZE);
	put_le32(h + CH_STREAM, stream);
	put_le32(h + CH_COUNT, count);
	put_le64(h + CH_MINTS, min_ts);
	put_le64(h + CH_MAXTS, max_ts);
	put_le32(h + CH_RAW, (uint32_t)w->pay.len);
	put_le32(h + CH_STORED, (uint32_t)slen);
	put_le32(h + CH_PCRC, tpp_crc32c(0, stored, slen));
	put_le32(h + CHUNK_HDR_SIZE - 4, tpp_crc32c(0, h, CHUNK_HDR_SIZE - 4));
	if (write_all(w, h, sizeof(h)) || write_all(w, stored, slen))
		return w->err;
	if (kind == TPP_C_EVENTS)
		w->st.events_written += count;
	if (kind != TPP_C_INDEX) {
		if (w->nidx == w->idx_cap) {
			size_t nc = w->idx_cap ? w->idx_cap * 2 : 64;
			struct tpp_chunk *ni = realloc(w->idx, nc * sizeof(*ni));
			if (!ni)
				return fail(w, -ENOMEM, "out of memory");
			w->idx = ni;
			w->idx_cap = nc;
		}
		struct tpp_chunk *c = &w->idx[w->nidx++];
		memset(c, 0, sizeof(*c));
		c->offset = w->off;
		c->kind = kind;
		c->stream = stream;
		c->count = count;
		c->first_ts = min_ts;
		c->last_ts = max_ts;
	}
	w->off += need;
	w->st.chunks++;
	w->st.raw_bytes += w->pay.len;
	w->st.file_bytes = w->off;
	return 0;
}

static int flush_meta(struct tpp_writer *w)
{
	if (!w->nmeta)
		return 0;
	w->pay.len = 0;
	cbor_head(&w->pay, CB_ARRAY, w->nmeta);
	buf_put(&w->pay, w->meta.data, w->meta.len);
	int e = write_chunk(w, TPP_C_META, STREAM_NONE, w->nmeta, w->meta_min, w->meta_max, 0);
	w->meta.len = 0;
	w->nmeta = 0;
	w->meta_min = UINT64_MAX;
	w->meta_max = 0;
	return e;
}

/* Called after each metadata record is appended to w->meta. */
static int meta_done(struct tpp_writer *w, uint64_t ts)
{
	w->nmeta++;
	if (ts && ts < w->meta_min)
		w->meta_min = ts;
	if (ts > w->meta_max)
		w->meta_max = ts;
	if (w->meta.oom)
		return fail(w, -ENOMEM, "out of memory");
	if (w->meta.len >= (256u << 10))
		return flush_meta(w);
	return w->err;
}

/* A `clock` record of the offset now, when the writer keeps the time base
 * and `every` ns have passed since the last (0: always). Taken with the
 * chunks, about every second, a killed writer's file keeps an offset near
 * its end, so recovery loses at most a second of the drift. */
static int clock_record(struct tpp_writer *w, uint64_t every)
{
	if (!w->clock_own || w->err)
		return w->err;
	struct tpp_clock_sample cs;
	if (every) {
		struct timespec m;
		if (clock_gettime(CLOCK_MONOTONIC, &m) ||
		    (uint64_t)m.tv_sec * 1000000000u + (uint64_t)m.tv_nsec - w->clock_last < every)
			return 0;
	}
	if (tpp_clock_measure(&cs))
		return 0;
	w->clock_last = cs.mono_ns;
	cbor_head(&w->meta, CB_MAP, 4);
	cbor_text(&w->meta, "k");
	cbor_text(&w->meta, "clock");
	cbor_text(&w->meta, "mono");
	cbor_uint(&w->meta, cs.mono_ns);
	cbor_text(&w->meta, "offset");
	cbor_int(&w->meta, cs.offset_ns);
	cbor_text(&w->meta, "err");
	cbor_int(&w->meta, cs.err_ns);
	return meta_done(w, 0);
}

static int flush_stream(struct tpp_writer *w, struct wstream *s)
{
	if (!s->count)
		return 0;
	if (!w->ending && clock_record(w, 1000000000u))
		return w->err;
	/* metadata first: a reader recovering a killed writer's file then knows
	 * every task and stream the events refer to */
	if (flush_meta(w))
		return w->err;
	struct buf *p = &w->pay;
	p->len = 0;
	cbor_head(p, CB_ARRAY, 6);
	cbor_uint(p, s->count);
	cbor_bytes(p, s->types.data, s->types.len);
	cbor_bytes(p, s->ts.data, s->ts.len);
	cbor_bytes(p, s->tids.data, s->tids.len);
	cbor_head(p, CB_ARRAY, s->strs.n);
	for (uint32_t i = 0; i < s->strs.n; i++) {
		/* kernel bytes: text when they are UTF-8 (specs/format.md "Strings") */
		const uint8_t *str = s->strs.pool.data + s->strs.off[i];
		cbor_head(p, utf8_valid(str, s->strs.len[i]) ? CB_TEXT : CB_BYTES, s->strs.len[i]);
		buf_put(p, str, s->strs.len[i]);
	}
	cbor_head(p, CB_MAP, s->npresent);
	for (uint32_t k = 0; k < s->npresent; k++) {
		uint16_t id = s->present[k];
		struct wcols *c = s->cols[id];
		cbor_uint(p, id);
		cbor_head(p, CB_ARRAY, c->n);
		for (unsigned f = 0; f < c->n; f++)
			cbor_bytes(p, c->f[f].data, c->f[f].len);
	}
	int e = write_chunk(w, TPP_C_EVENTS, s->id, s->count, s->min_ts, s->max_ts,
			    s->backwards ? 0 : CHUNK_F_TS_SORTED);
	/* reset, keeping capacity: each chunk decodes on its own */
	s->types.len = s->ts.len = s->tids.len = 0;
	for (uint32_t k = 0; k < s->npresent; k++) {
		struct wcols *c = s->cols[s->present[k]];
		for (unsigned f = 0; f < c->n; f++) {
			c->f[f].len = 0;
			c->last[f] = 0;
		}
		c->present = 0;
	}
	s->npresent = 0;
	strtab_reset(&s->strs);
	s->count = 0;
	s->backwards = 0;
	s->bytes = 0;
	s->prev_ts = 0;
	s->prev_tid = 0;
	return e;
}

/* ---------------------------------------------------------------- types */

int tpp_w_add_type(struct tpp_writer *w, const struct tpp_type_def *t)
{
	return tpp_w_add_type_fmt(w, t, NULL);
}

int tpp_w_add_type_fmt(struct tpp_writer *w, const struct tpp_type_def *t, const char *print_fmt)
{
	if (w->err)
		return w->err;
	if (!t || t->id >= TPP_MAX_TYPES || !t->name || t->nfields > TPP_MAX_FIELDS)
		return -EINVAL;
	struct wtype *d = &w->types[t->id];
	if (d->defined)
		return -EEXIST;
	d->id = t->id;
	d->name = strdup(t->name);
	d->system = t->system ? strdup(t->system) : NULL;
	d->print_fmt = print_fmt && *print_fmt ? strdup(print_fmt) : NULL;
	d->nfields = t->nfields;
	for (unsigned i = 0; i < t->nfields; i++) {
		d->fnames[i] = strdup(t->fields[i].name ? t->fields[i].name : "");
		d->ftypes[i] = (uint8_t)t->fields[i].type;
		if (t->fields[i].type > TPP_F_BYTES)
			return -EINVAL;
	}
	d->defined = 1;
	if (w->header_done) {
		/* late type: described by a metadata record instead of the header */
		cbor_head(&w->meta, CB_MAP, 2);
		cbor_text(&w->meta, "k");
		cbor_text(&w->meta, "type");
		cbor_text(&w->meta, "type");
		enc_type(&w->meta, d);
		return meta_done(w, 0);
	}
	return 0;
}

int tpp_w_set_header_str(struct tpp_writer *w, const char *key, const char *val)
{
	if (w->header_done)
		return -EBUSY;
	if (!key || !val || !utf8_valid(key, strlen(key)))
		return -EINVAL; /* keys are text */
	if (w->nextra >= sizeof(w->extra_k) / sizeof(w->extra_k[0]))
		return -ENOSPC;
	w->extra_k[w->nextra] = strdup(key);
	w->extra_v[w->nextra] = strdup(val);
	w->nextra++;
	return 0;
}

/* ---------------------------------------------------------------- streams */

static struct wstream *find_stream(struct tpp_writer *w, uint32_t id)
{
	if (w->last && w->last->id == id)
		return w->last;
	for (size_t i = (id * 2654435761u) & (w->hcap - 1); w->hcap; i = (i + 1) & (w->hcap - 1)) {
		struct wstream *s = w->hash[i];
		if (!s)
			return NULL;
		if (s->id == id)
			return w->last = s;
	}
	return NULL;
}

static int hash_insert(struct tpp_writer *w, struct wstream *s)
{
	if ((w->nstreams + 1) * 2 > w->hcap) {
		size_t nc = w->hcap ? w->hcap * 2 : 64;
		struct wstream **nh = calloc(nc, sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		for (size_t i = 0; i < w->hcap; i++)
			if (w->hash[i])
				for (size_t j = (w->hash[i]->id * 2654435761u) & (nc - 1);; j = (j + 1) & (nc - 1))
					if (!nh[j]) {
						nh[j] = w->hash[i];
						break;
					}
		free(w->hash);
		w->hash = nh;
		w->hcap = nc;
	}
	for (size_t j = (s->id * 2654435761u) & (w->hcap - 1);; j = (j + 1) & (w->hcap - 1))
		if (!w->hash[j]) {
			w->hash[j] = s;
			break;
		}
	w->nstreams++;
	return 0;
}

int tpp_w_stream(struct tpp_writer *w, uint32_t id, enum tpp_skind kind, int32_t cpu, int32_t pid,
		 int32_t tid)
{
	if (w->err)
		return w->err;
	if (id == STREAM_NONE || (kind != TPP_S_CPU && kind != TPP_S_THREAD))
		return -EINVAL;
	if (find_stream(w, id))
		return -EEXIST;
	struct wstream *s = calloc(1, sizeof(*s));
	if (s) {
		s->id = id;
		s->kind = kind;
	}
	if (!s || hash_insert(w, s)) {
		free(s);
		return fail(w, -ENOMEM, "out of memory");
	}
	s->next = w->streams;
	w->streams = s;
	cbor_head(&w->meta, CB_MAP, 6);
	cbor_text(&w->meta, "k");
	cbor_text(&w->meta, "stream");
	cbor_text(&w->meta, "id");
	cbor_uint(&w->meta, id);
	cbor_text(&w->meta, "kind");
	cbor_text(&w->meta, kind == TPP_S_CPU ? "cpu" : "thread");
	cbor_text(&w->meta, "cpu");
	cbor_int(&w->meta, cpu);
	cbor_text(&w->meta, "pid");
	cbor_int(&w->meta, pid);
	cbor_text(&w->meta, "tid");
	cbor_int(&w->meta, tid);
	return meta_done(w, 0);
}

/* ---------------------------------------------------------------- events */

static int grow_cols(struct wstream *s, uint16_t type)
{
	uint32_t n = s->ncols ? s->ncols : 8;
	while (n <= type)
		n *= 2;
	struct wcols **c = realloc(s->cols, n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	s->cols = c;
	memset(c + s->ncols, 0, (n - s->ncols) * sizeof(*c));
	uint16_t *p = realloc(s->present, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->present = p;
	s->ncols = n;
	return 0;
}

int tpp_w_event(struct tpp_writer *w, uint32_t stream, uint16_t type, uint64_t ts, int32_t tid,
		const union tpp_val *vals)
{
	if (__builtin_expect(w->err != 0, 0))
		return w->err;
	struct wstream *s = find_stream(w, stream);
	if (!s)
		return -ENOENT;
	if (type >= TPP_MAX_TYPES || !w->types[type].defined)
		return -EINVAL;
	const struct wtype *t = &w->types[type];
	if (__builtin_expect(type >= s->ncols, 0) && grow_cols(s, type) < 0)
		return fail(w, -ENOMEM, "out of memory");
	struct wcols *c = s->cols[type];
	if (__builtin_expect(!c, 0)) {
		c = s->cols[type] = calloc(1, sizeof(*c));
		if (!c)
			return fail(w, -ENOMEM, "out of memory");
		c->n = t->nfields;
	}
	if (!c->present) {
		c->present = 1;
		s->present[s->npresent++] = type;
	}
	size_t before = s->types.len + s->ts.len + s->tids.len;
	buf_varint(&s->types, type);
	if (!s->count) {
		s->min_ts = s->max_ts = ts;
	} else {
		if (ts < s->min_ts)
			s->min_ts = ts;
		if (ts > s->max_ts)
			s->max_ts = ts;
	}
	s->backwards |= s->count && ts < s->prev_ts;
	buf_varint(&s->ts, zigzag((int64_t)(ts - s->prev_ts)));
	s->prev_ts = ts;
	if (s->kind == TPP_S_CPU) {
		buf_varint(&s->tids, zigzag((int64_t)tid - s->prev_tid));
		s->prev_tid = tid;
	}
	size_t grew = s->types.len + s->ts.len + s->tids.len - before;
	for (unsigned f = 0; f < c->n; f++) {
		struct buf *fb = &c->f[f];
		size_t l0 = fb->len;
		switch (t->ftypes[f]) {
		case TPP_F_U64:
		case TPP_F_S64:
			buf_varint(fb, zigzag((int64_t)(vals[f].u - c->last[f])));
			c->last[f] = vals[f].u;
			break;
		case TPP_F_STR: {
			int64_t idx = strtab_intern(&s->strs, vals[f].s.p, vals[f].s.len);
			if (idx < 0)
				return fail(w, -ENOMEM, "out of memory");
			buf_varint(fb, (uint64_t)idx);
			break;
		}
		default:
			buf_varint(fb, vals[f].s.len);
			buf_put(fb, vals[f].s.p, vals[f].s.len);
			break;
		}
		if (fb->oom)
			return fail(w, -ENOMEM, "out of memory");
		grew += fb->len - l0;
	}
	if (s->types.oom || s->ts.oom || s->tids.oom)
		return fail(w, -ENOMEM, "out of memory");
	s->bytes += grew;
	s->count++;
	w->st.events++;
	if (s->count >= w->o.chunk_events || s->bytes + s->strs.pool.len >= w->o.chunk_bytes)
		return flush_stream(w, s);
	return 0;
}

/* The column of type t in s, ready for an event: grown, allocated, marked
 * present. NULL when out of memory. */
static struct wcols *type_cols(struct wstream *s, const struct wtype *t, uint16_t type)
{
	if (type >= s->ncols && grow_cols(s, type) < 0)
		return NULL;
	struct wcols *c = s->cols[type];
	if (!c) {
		c = s->cols[type] = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->n = t->nfields;
	}
	if (!c->present) {
		c->present = 1;
		s->present[s->npresent++] = type;
	}
	return c;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Bytes one event may take at most: type, time and value varints. */
#define EV1_MAX 23

int tpp_w_events1(struct tpp_writer *w, uint32_t stream, size_t n, const uint16_t *types, const uint64_t *ts,
		  const uint64_t *vals)
{
	if (__builtin_expect(w->err != 0, 0))
		return w->err;
	struct wstream *s = find_stream(w, stream);
	if (!s)
		return -ENOENT;
	if (s->kind != TPP_S_THREAD)
		return -EINVAL;
	while (n) {
		size_t m = w->o.chunk_events - s->count, room = w->o.chunk_bytes - s->bytes - s->strs.pool.len;
		if (w->o.chunk_bytes <= s->bytes + s->strs.pool.len)
			room = 0;
		if (m > room / EV1_MAX + 1)
			m = room / EV1_MAX + 1;
		if (m > n)
			m = n;
		/* every type of the batch checked once, its column room made */
		uint16_t chk[4];
		unsigned nchk = 0;
		for (size_t k = 0; k < m; k++) {
			uint16_t type = types[k];
			unsigned j = 0;
			while (j < nchk && chk[j] != type)
				j++;
			if (j < nchk)
				continue;
			if (nchk < 4)
				chk[nchk++] = type;
			const struct wtype *t = type < TPP_MAX_TYPES ? &w->types[type] : NULL;
			if (!t || !t->defined || t->nfields != 1 || (t->ftypes[0] != TPP_F_U64 && t->ftypes[0] != TPP_F_S64))
				return -EINVAL;
			struct wcols *c = type_cols(s, t, type);
			if (!c || buf_reserve(&c->f[0], m * 10))
				return fail(w, -ENOMEM, "out of memory");
		}
		if (buf_reserve(&s->types, m * 3) || buf_reserve(&s->ts, m * 10))
			return fail(w, -ENOMEM, "out of memory");
		uint8_t *pt = s->types.data + s->types.len, *pts = s->ts.data + s->ts.len;
		uint8_t *t0 = pt, *ts0 = pts;
		uint64_t prev = s->prev_ts, grew = 0;
		if (!s->count)
			s->min_ts = s->max_ts = ts[0];
		for (size_t k = 0; k < m; k++) {
			uint64_t t = ts[k];
			struct wcols *c = s->cols[types[k]];
			pt = put_varint(pt, types[k]);
			s->backwards |= (s->count || k) && t < prev;
			s->min_ts = t < s->min_ts ? t : s->min_ts;
			s->max_ts = t > s->max_ts ? t : s->max_ts;
			pts = put_varint(pts, zigzag((int64_t)(t - prev)));
			prev = t;
			struct buf *fb = &c->f[0];
			uint8_t *pv = fb->data + fb->len, *pe = put_varint(pv, zigzag((int64_t)(vals[k] - c->last[0])));
			c->last[0] = vals[k];
			fb->len += (size_t)(pe - pv);
			grew += (uint64_t)(pe - pv);
		}
		s->types.len += (size_t)(pt - t0);
		s->ts.len += (size_t)(pts - ts0);
		s->prev_ts = prev;
		s->bytes += grew + (size_t)(pt - t0) + (size_t)(pts - ts0);
		s->count += (uint32_t)m;
		w->st.events += m;
		if (s->count >= w->o.chunk_events || s->bytes + s->strs.pool.len >= w->o.chunk_bytes) {
			int e = flush_stream(w, s);
			if (e < 0)
				return e;
		}
		types += m;
		ts += m;
		vals += m;
		n -= m;
	}
	return 0;
}

/* ---------------------------------------------------------------- metadata */

int tpp_w_task(struct tpp_writer *w, uint64_t ts, int32_t pid, int32_t tid, const char *comm)
{
	if (w->err)
		return w->err;
	cbor_head(&w->meta, CB_MAP, 5);
	cbor_text(&w->meta, "k");
	cbor_text(&w->meta, "task");
	cbor_text(&w->meta, "ts");
	cbor_uint(&w->meta, ts);
	cbor_text(&w->meta, "pid");
	cbor_int(&w->meta, pid);
	cbor_text(&w->meta, "tid");
	cbor_int(&w->meta, tid);
	cbor_text(&w->meta, "comm");
	cbor_str(&w->meta, comm ? comm : "");
	return meta_done(w, ts);
}

int tpp_w_mmap(struct tpp_writer *w, uint64_t ts, int32_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
	       const char *path, const uint8_t *build_id, size_t bid_len)
{
	if (w->err)
		return w->err;
	if (bid_len > 64)
		return -EINVAL;
	cbor_head(&w->meta, CB_MAP, 8);
	cbor_text(&w->meta, "k");
	cbor_text(&w->meta, "mmap");
	cbor_text(&w->meta, "ts");
	cbor_uint(&w->meta, ts);
	cbor_text(&w->meta, "pid");
	cbor_int(&w->meta, pid);
	cbor_text(&w->meta, "start");
	cbor_uint(&w->meta, start);
	cbor_text(&w->meta, "end");
	cbor_uint(&w->meta, end);
	cbor_text(&w->meta, "pgoff");
	cbor_uint(&w->meta, pgoff);
	cbor_text(&w->meta, "path");
	cbor_str(&w->meta, path ? path : "");
	cbor_text(&w->meta, "build_id");
	cbor_bytes(&w->meta, build_id, build_id ? bid_len : 0);
	return meta_done(w, ts);
}

int tpp_w_symtab(struct tpp_writer *w, const uint8_t *build_id, size_t bid_len, const char *path, size_t nsyms,
		 const struct tpp_sym *syms)
{
	if (w->err)
		return w->err;
	if (bid_len > 64)
		return -EINVAL;
	/* large tables go out in several records so no chunk nears the limit */
	const size_t per = 16384;
	size_t i = 0;
	do {
		size_t n = nsyms - i < per ? nsyms - i : per;
		cbor_head(&w->meta, CB_MAP, 4);
		cbor_text(&w->meta, "k");
		cbor_text(&w->meta, "symtab");
		cbor_text(&w->meta, "build_id");
		cbor_bytes(&w->meta, build_id, build_id ? bid_len : 0);
		cbor_text(&w->meta, "path");
		cbor_str(&w->meta, path ? path : "");
		cbor_text(&w->meta, "syms");
		cbor_head(&w->meta, CB_ARRAY, n);
		for (size_t k = i; k < i + n; k++) {
			cbor_head(&w->meta, CB_ARRAY, 3);
			cbor_uint(&w->meta, syms[k].addr);
			cbor_uint(&w->meta, syms[k].size);
			cbor_str(&w->meta, syms[k].name ? syms[k].name : "");
		}
		i += n;
		if (meta_done(w, 0))
			return w->err;
	} while (i < nsyms);
	return 0;
}

int tpp_w_lost(struct tpp_writer *w, uint32_t stream, uint64_t count, uint64_t from_ts, uint64_t to_ts)
{
	if (w->err)
		return w->err;
	cbor_head(&w->meta, CB_MAP, 5);
	cbor_text(&w->meta, "k");
	cbor_text(&w->meta, "lost");
	cbor_text(&w->meta, "stream");
	cbor_uint(&w->meta, stream);
	cbor_text(&w->meta, "count");
	cbor_uint(&w->meta, count);
	cbor_text(&w->meta, "from");
	cbor_uint(&w->meta, from_ts);
	cbor_text(&w->meta, "to");
	cbor_uint(&w->meta, to_ts);
	w->st_lost += count;
	return meta_done(w, from_ts);
}

int tpp_w_note(struct tpp_writer *w, const char *kind, size_t n, const char *const *keys,
	       const char *const *vals)
{
	if (w->err)
		return w->err;
	cbor_head(&w->meta, CB_MAP, 3);
	cbor_text(&w->meta, "k");
	cbor_text(&w->meta, "note");
	cbor_text(&w->meta, "kind");
	cbor_str(&w->meta, kind);
	cbor_text(&w->meta, "kv");
	cbor_head(&w->meta, CB_MAP, n);
	for (size_t i = 0; i < n; i++) {
		cbor_str(&w->meta, keys[i]);
		cbor_str(&w->meta, vals[i]);
	}
	return meta_done(w, 0);
}

/* ---------------------------------------------------------------- ending */

int tpp_w_flush(struct tpp_writer *w)
{
	for (struct wstream *s = w->streams; s && !w->err; s = s->next)
		flush_stream(w, s);
	if (!w->err)
		flush_meta(w);
	if (!w->err && !w->header_done)
		write_header(w);
	return w->err;
}

static int write_trailer(struct tpp_writer *w)
{
	struct buf *p = &w->pay;
	p->len = 0;
	cbor_head(p, CB_ARRAY, w->nidx);
	for (size_t i = 0; i < w->nidx; i++) {
		const struct tpp_chunk *c = &w->idx[i];
		cbor_head(p, CB_ARRAY, 6);
		cbor_uint(p, c->offset);
		cbor_uint(p, c->kind);
		cbor_uint(p, c->stream);
		cbor_uint(p, c->count);
		cbor_uint(p, c->first_ts);
		cbor_uint(p, c->last_ts);
	}
	uint64_t idx_off = w->off;
	if (write_chunk(w, TPP_C_INDEX, STREAM_NONE, (uint32_t)w->nidx, 0, 0, 0))
		return w->err;
	uint8_t t[TRAILER_SIZE] = {0};
	put_le64(t + TR_INDEX, idx_off);
	put_le64(t + TR_EVENTS, w->st.events);
	put_le64(t + TR_NCHUNKS, w->nidx);
	memcpy(t + TR_MAGIC, TRAILER_MAGIC, 8);
	put_le32(t + TR_CRC, tpp_crc32c(0, t, TR_CRC));
	if (write_all(w, t, sizeof(t)))
		return w->err;
	w->off += sizeof(t);
	w->st.file_bytes = w->off;
	return 0;
}

static void w_free(struct tpp_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	for (struct wstream *s = w->streams, *n; s; s = n) {
		n = s->next;
		buf_free(&s->types);
		buf_free(&s->ts);
		buf_free(&s->tids);
		for (unsigned i = 0; i < s->ncols; i++)
			if (s->cols[i]) {
				for (unsigned f = 0; f < s->cols[i]->n; f++)
					buf_free(&s->cols[i]->f[f]);
				free(s->cols[i]);
			}
		free(s->cols);
		free(s->present);
		strtab_free(&s->strs);
		free(s);
	}
	for (unsigned i = 0; i < TPP_MAX_TYPES; i++)
		if (w->types[i].defined) {
			free(w->types[i].name);
			free(w->types[i].system);
			free(w->types[i].print_fmt);
			for (unsigned f = 0; f < w->types[i].nfields; f++)
				free(w->types[i].fnames[f]);
		}
	for (unsigned i = 0; i < w->nextra; i++) {
		free(w->extra_k[i]);
		free(w->extra_v[i]);
	}
	for (int i = 0; w->argv && i < w->argc; i++)
		free(w->argv[i]);
	free(w->argv);
	free((char *)w->o.producer);
	free((char *)w->o.producer_version);
	free(w->hash);
	free(w->idx);
	buf_free(&w->pay);
	buf_free(&w->comp);
	buf_free(&w->meta);
	free(w);
}

/* After a full disk: the events still buffered are lost, but the file
 * ends cleanly, in the space keep_room() kept, with a note that says so
 * (specs/format.md, "writer_end"), so no reader takes it for a killed
 * writer's. The error stays the one returned. */
static void end_disk_full(struct tpp_writer *w)
{
	int err = w->err;
	char at[32], msg[sizeof(w->msg)];
	snprintf(at, sizeof(at), "%llu", (unsigned long long)w->off);
	snprintf(msg, sizeof(msg), "%s", w->msg);
	w->err = 0;
	w->ending = 1;
	w->meta.len = 0;
	w->nmeta = 0;
	w->meta_min = UINT64_MAX;
	w->meta_max = 0;
	static const char *const keys[] = {"reason", "at"};
	const char *vals[] = {"ENOSPC", at};
	if (!tpp_w_note(w, "writer_end", 2, keys, vals) && !flush_meta(w))
		write_trailer(w);
	w->err = err;
	snprintf(w->msg, sizeof(w->msg), "%s", msg);
}

/* Gives back the space keep_room() kept past the end of the file. */
static void release_reserve(struct tpp_writer *w)
{
	if (w->reserved > w->off)
		fallocate(w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)w->off,
			  (off_t)(w->reserved - w->off));
	w->reserved = 0;
}

int tpp_w_close(struct tpp_writer *w)
{
	return tpp_w_close_stats(w, NULL);
}

int tpp_w_close_stats(struct tpp_writer *w, struct tpp_w_stats *st)
{
	if (!w)
		return -EINVAL;
	/* the offset at the end: with the header's, the drift between them */
	if (!w->err)
		clock_record(w, 0);
	int e = tpp_w_flush(w);
	/* a full disk or the size cap still gets an index when it fits: retry
	 * once without the cap so a capped file ends cleanly */
	if (e == -EFBIG) {
		w->err = 0;
		w->o.max_file_bytes = 0;
		e = 0;
	}
	if (!e)
		e = write_trailer(w);
	else if (w->disk_full && w->off)
		end_disk_full(w); /* (with a header written) */
	release_reserve(w);
	if (st)
		*st = w->st;
	w_free(w);
	return e;
}

void tpp_w_abandon(struct tpp_writer *w)
{
	if (w) {
		release_reserve(w);
		w_free(w);
	}
}

void tpp_w_stats(const struct tpp_writer *w, struct tpp_w_stats *st)
{
	*st = w->st;
}

const char *tpp_w_error(const struct tpp_writer *w)
{
	return w->msg;
}
