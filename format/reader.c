/* reader — opens a trace file, validates its header, finds its chunks (from
 * the trailer's index, or by scanning when the writer died), and hands out
 * verified, decompressed chunk payloads. Every size read from the file is
 * checked against the file's own size before anything is allocated. */
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "layout.h"
#include "reader_internal.h"

int rfail(struct tpp_reader *r, int err, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(r->msg, sizeof(r->msg), "%s: offset %llu: ", r->path, (unsigned long long)off);
	if (n < 0 || (size_t)n >= sizeof(r->msg))
		n = 0;
	vsnprintf(r->msg + n, sizeof(r->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

static int pread_all(const struct tpp_reader *r, void *p, size_t n, uint64_t off)
{
	uint8_t *c = p;
	while (n) {
		ssize_t k = pread(r->fd, c, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -TPP_ETRUNC;
		c += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

/* Parses and checks a chunk header at off. 0 if intact and inside the file. */
static int read_chunk_hdr(struct tpp_reader *r, uint64_t off, struct tpp_chunk *c, const char **why)
{
	uint8_t h[CHUNK_HDR_MAX];
	*why = "truncated chunk header";
	if (off + CHUNK_HDR_SIZE > r->info.file_size)
		return -TPP_ETRUNC;
	if (pread_all(r, h, CHUNK_HDR_SIZE, off))
		return -TPP_ETRUNC;
	*why = "no chunk magic";
	if (memcmp(h + CH_MAGIC, CHUNK_MAGIC, 4))
		return -TPP_EBADFILE;
	uint32_t hs = get_le16(h + CH_HSIZE);
	*why = "bad chunk header size";
	if (hs < CHUNK_HDR_SIZE || hs > CHUNK_HDR_MAX)
		return -TPP_EBADFILE;
	if (hs > CHUNK_HDR_SIZE) {
		*why = "truncated chunk header";
		if (off + hs > r->info.file_size || pread_all(r, h + CHUNK_HDR_SIZE, hs - CHUNK_HDR_SIZE, off + CHUNK_HDR_SIZE))
			return -TPP_ETRUNC;
	}
	*why = "chunk header checksum mismatch";
	if (get_le32(h + hs - 4) != tpp_crc32c(0, h, hs - 4))
		return -TPP_ECHECKSUM;
	memset(c, 0, sizeof(*c));
	c->offset = off;
	c->kind = h[CH_KIND];
	c->flags = h[CH_FLAGS];
	c->hdr_size = hs;
	c->stream = get_le32(h + CH_STREAM);
	c->count = get_le32(h + CH_COUNT);
	c->first_ts = get_le64(h + CH_MINTS);
	c->last_ts = get_le64(h + CH_MAXTS);
	c->raw_size = get_le32(h + CH_RAW);
	c->comp_size = get_le32(h + CH_STORED);
	c->crc = get_le32(h + CH_PCRC);
	*why = "absurd chunk size";
	if (c->raw_size > TPP_CHUNK_RAW_MAX)
		return -TPP_EBADFILE;
	if (c->flags & CHUNK_F_LZ4) {
		if (c->comp_size > (uint32_t)LZ4_compressBound((int)c->raw_size))
			return -TPP_EBADFILE;
	} else if (c->comp_size != c->raw_size) {
		return -TPP_EBADFILE;
	}
	*why = "chunk runs past the end of the file";
	if (off + hs + c->comp_size > r->info.file_size)
		return -TPP_ETRUNC;
	return 0;
}

static int add_chunk(struct tpp_reader *r, const struct tpp_chunk *c)
{
	if (r->nchunks == r->cap) {
		size_t nc = r->cap ? r->cap * 2 : 256;
		struct tpp_chunk *n = realloc(r->chunks, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->chunks = n;
		r->cap = nc;
	}
	r->chunks[r->nchunks++] = *c;
	return 0;
}

/* Finds the next offset >= from where an intact chunk header starts. */
static uint64_t resync(struct tpp_reader *r, uint64_t from)
{
	uint8_t blk[1 << 16];
	for (uint64_t off = from; off + CHUNK_HDR_SIZE <= r->info.file_size;) {
		size_t n = sizeof(blk);
		if (off + n > r->info.file_size)
			n = (size_t)(r->info.file_size - off);
		if (pread_all(r, blk, n, off))
			break;
		for (size_t i = 0; i + 4 <= n; i++) {
			if (memcmp(blk + i, CHUNK_MAGIC, 4))
				continue;
			struct tpp_chunk c;
			const char *why;
			if (!read_chunk_hdr(r, off + i, &c, &why))
				return off + i;
		}
		if (n <= 3)
			break;
		off += n - 3;
	}
	return r->info.file_size;
}

/* Recovery: walk the file chunk by chunk, skipping damage. */
static int scan_chunks(struct tpp_reader *r)
{
	uint64_t off = r->data_start;
	while (off + CHUNK_HDR_SIZE <= r->info.file_size) {
		struct tpp_chunk c;
		const char *why;
		int e = read_chunk_hdr(r, off, &c, &why);
		if (e) {
			/* a torn write at the very end is the normal death of a
			 * writer, not damage */
			uint64_t next = resync(r, off + 1);
			if (next < r->info.file_size || e != -TPP_ETRUNC) {
				if (!r->first_damage_msg[0])
					snprintf(r->first_damage_msg, sizeof(r->first_damage_msg),
						 "%s: offset %llu: %s", r->path, (unsigned long long)off, why);
				r->info.damaged_chunks++;
			}
			off = next;
			continue;
		}
		if (c.kind != TPP_C_INDEX && add_chunk(r, &c))
			return -ENOMEM;
		off += c.hdr_size + c.comp_size;
		r->info.data_end = off;
	}
	return 0;
}

/* Reads the trailer and its index. Returns 0 if the file ended cleanly. */
static int load_index(struct tpp_reader *r)
{
	if (r->info.file_size < r->data_start + TRAILER_SIZE + CHUNK_HDR_SIZE)
		return -1;
	uint8_t t[TRAILER_SIZE];
	uint64_t toff = r->info.file_size - TRAILER_SIZE;
	if (pread_all(r, t, sizeof(t), toff) || memcmp(t + TR_MAGIC, TRAILER_MAGIC, 8) ||
	    get_le32(t + TR_CRC) != tpp_crc32c(0, t, TR_CRC))
		return -1;
	uint64_t ioff = get_le64(t + TR_INDEX), n = get_le64(t + TR_NCHUNKS);
	struct tpp_chunk ic;
	const char *why;
	if (ioff < r->data_start || ioff >= toff || read_chunk_hdr(r, ioff, &ic, &why) || ic.kind != TPP_C_INDEX ||
	    ic.count != n || ioff + ic.hdr_size + ic.comp_size != toff)
		return -1;
	uint8_t *raw = NULL;
	size_t cap = 0;
	long len = tpp_r_payload(r, &ic, &raw, &cap);
	int bad = len < 0;
	const uint8_t *p = raw, *end = raw + (len > 0 ? len : 0);
	unsigned mj;
	uint64_t cnt;
	if (!bad && (cbor_get_head(&p, end, &mj, &cnt) || mj != CB_ARRAY || cnt != n))
		bad = 1;
	uint64_t prev_end = r->data_start;
	for (uint64_t i = 0; !bad && i < n; i++) {
		uint64_t v[6];
		if (cbor_get_head(&p, end, &mj, &cnt) || mj != CB_ARRAY || cnt != 6) {
			bad = 1;
			break;
		}
		for (int k = 0; k < 6 && !bad; k++)
			if (cbor_get_head(&p, end, &mj, &v[k]) || mj != CB_UINT)
				bad = 1;
		struct tpp_chunk c;
		/* trust nothing: each listed chunk's own header must agree */
		if (bad || v[0] < prev_end || v[0] >= ioff || read_chunk_hdr(r, v[0], &c, &why) || c.kind != v[1] ||
		    c.stream != v[2] || c.count != v[3] || c.first_ts != v[4] || c.last_ts != v[5] ||
		    add_chunk(r, &c)) {
			bad = 1;
			break;
		}
		prev_end = v[0] + c.hdr_size + c.comp_size;
	}
	free(raw);
	if (bad) {
		r->nchunks = 0;
		return -1;
	}
	r->info.data_end = ioff;
	r->info.has_trailer = 1;
	return 0;
}

int tpp_r_open(struct tpp_reader **rp, const char *path, char *errmsg, size_t errmsg_len)
{
	*rp = NULL;
	struct tpp_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->fd = -1;
	snprintf(r->path, sizeof(r->path), "%s", path);
	int e = 0;
	/* O_NONBLOCK: opening a FIFO would wait for a writer for ever; the
	 * reader seeks, so only a regular file will do */
	r->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st = {0};
	if (r->fd < 0 && (e = -errno) && (stat(path, &st) || S_ISREG(st.st_mode))) {
		snprintf(r->msg, sizeof(r->msg), "%s: %s", path, strerror(-e));
		goto out;
	}
	if (r->fd < 0 || fstat(r->fd, &st) || !S_ISREG(st.st_mode)) { /* a socket fails to open */
		e = -EINVAL;
		snprintf(r->msg, sizeof(r->msg), "%s: not a regular file (%s): a trace is read from a file, not a stream",
			 path, S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
			 S_ISSOCK(st.st_mode) ? "a socket" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "?");
		goto out;
	}
	fcntl(r->fd, F_SETFL, 0);
	r->info.file_size = (uint64_t)st.st_size;
	uint8_t fixed[FILE_HDR_FIXED];
	if (r->info.file_size == 0) {
		e = -TPP_EBADFILE;
		snprintf(r->msg, sizeof(r->msg), "%s: empty file, not a tracepp trace", path);
		goto out;
	}
	if (r->info.file_size < FILE_HDR_FIXED || pread_all(r, fixed, sizeof(fixed), 0)) {
		e = rfail(r, -TPP_ETRUNC, r->info.file_size,
			  memcmp(fixed, FILE_MAGIC, r->info.file_size < 8 ? (size_t)r->info.file_size : 8)
				  ? "not a tracepp trace (too short, no magic)"
				  : "file header is truncated");
		goto out;
	}
	if (memcmp(fixed, FILE_MAGIC, 8)) {
		e = rfail(r, -TPP_EBADFILE, 0, "not a tracepp trace (bad magic)");
		goto out;
	}
	r->info.major = get_le16(fixed + 8);
	r->info.minor = get_le16(fixed + 10);
	if (r->info.major != TPP_MAJOR) {
		e = rfail(r, -TPP_EVERSION, 8, "format version %u.%u is not readable by this tracepp (reads %d.x)%s",
			  r->info.major, r->info.minor, TPP_MAJOR,
			  r->info.major > TPP_MAJOR ? "; a newer tracepp is needed" : "");
		goto out;
	}
	uint32_t hlen = get_le32(fixed + 12);
	if (hlen > FILE_HDR_CBOR_MAX || FILE_HDR_FIXED + (uint64_t)hlen > r->info.file_size) {
		if (hlen > FILE_HDR_CBOR_MAX)
			e = rfail(r, -TPP_EBADFILE, 12, "header length %u is absurd", hlen);
		else
			e = rfail(r, -TPP_ETRUNC, 12, "file is truncated inside its header (header length %u, file size %llu)",
				  hlen, (unsigned long long)r->info.file_size);
		goto out;
	}
	uint8_t *hb = malloc(hlen ? hlen : 1);
	if (!hb) {
		e = -ENOMEM;
		goto out;
	}
	if (pread_all(r, hb, hlen, FILE_HDR_FIXED)) {
		free(hb);
		e = rfail(r, -TPP_ETRUNC, FILE_HDR_FIXED, "header is truncated");
		goto out;
	}
	if (get_le32(fixed + 16) != tpp_crc32c(tpp_crc32c(0, fixed, 16), hb, hlen)) {
		free(hb);
		e = rfail(r, -TPP_ECHECKSUM, FILE_HDR_FIXED, "header checksum mismatch");
		goto out;
	}
	e = parse_header(r, hb, hlen);
	free(hb);
	if (e)
		goto out;
	r->data_start = FILE_HDR_FIXED + hlen;
	r->info.data_end = r->data_start;
	if (load_index(r)) {
		r->info.has_trailer = 0;
		if ((e = scan_chunks(r)))
			goto out;
	}
	e = load_meta(r);
out:
	if (e) {
		if (errmsg && errmsg_len)
			snprintf(errmsg, errmsg_len, "%s", r->msg[0] ? r->msg : tpp_strerror(e));
		tpp_r_close(r);
		return e;
	}
	*rp = r;
	return 0;
}

/* A payload failure's message, into the caller's buffer: readers on other
 * threads must not share r->msg. */
static long pfail(const struct tpp_reader *r, char *err, size_t len, int e, uint64_t off, const char *fmt, ...)
{
	if (!len)
		return e;
	int n = snprintf(err, len, "%s: offset %llu: ", r->path, (unsigned long long)off);
	if (n < 0 || (size_t)n >= len)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	return e;
}

long tpp_r_payload_r(const struct tpp_reader *r, const struct tpp_chunk *c, uint8_t **buf, size_t *cap,
		     uint8_t **zbuf, size_t *zcap, char *err, size_t errlen)
{
	if (c->raw_size > TPP_CHUNK_RAW_MAX)
		return pfail(r, err, errlen, -TPP_EBADFILE, c->offset, "absurd chunk size %u", c->raw_size);
	size_t need = c->raw_size ? c->raw_size : 1;
	if (*cap < need) {
		uint8_t *n = realloc(*buf, need);
		if (!n)
			return -ENOMEM;
		*buf = n;
		*cap = need;
	}
	uint8_t *dst = *buf;
	if (c->flags & CHUNK_F_LZ4) {
		if (*zcap < c->comp_size) {
			uint8_t *n = realloc(*zbuf, c->comp_size);
			if (!n)
				return -ENOMEM;
			*zbuf = n;
			*zcap = c->comp_size;
		}
		dst = *zbuf;
	}
	int e = pread_all(r, dst, c->comp_size, c->offset + c->hdr_size);
	if (e)
		return pfail(r, err, errlen, e, c->offset, "chunk payload is truncated");
	if (tpp_crc32c(0, dst, c->comp_size) != c->crc)
		return pfail(r, err, errlen, -TPP_ECHECKSUM, c->offset, "chunk payload checksum mismatch");
	if (c->flags & CHUNK_F_LZ4) {
		int n = LZ4_decompress_safe((const char *)dst, (char *)*buf, (int)c->comp_size, (int)c->raw_size);
		if (n != (int)c->raw_size)
			return pfail(r, err, errlen, -TPP_EBADFILE, c->offset, "chunk payload does not decompress");
	}
	return (long)c->raw_size;
}

long tpp_r_payload(struct tpp_reader *r, const struct tpp_chunk *c, uint8_t **buf, size_t *cap)
{
	return tpp_r_payload_r(r, c, buf, cap, &r->scratch, &r->scap, r->msg, sizeof(r->msg));
}

void tpp_r_close(struct tpp_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free_header(r);
	free_meta(r);
	free(r->chunks);
	free(r->streams);
	free(r->scratch);
	free(r);
}

const struct tpp_file_info *tpp_r_info(const struct tpp_reader *r) { return &r->info; }
const char *tpp_r_error(const struct tpp_reader *r) { return r->msg[0] ? r->msg : r->first_damage_msg; }
size_t tpp_r_nchunks(const struct tpp_reader *r) { return r->nchunks; }
const struct tpp_chunk *tpp_r_chunk(const struct tpp_reader *r, size_t i) { return i < r->nchunks ? &r->chunks[i] : NULL; }
size_t tpp_r_nstreams(const struct tpp_reader *r) { return r->nstreams; }
const struct tpp_stream_info *tpp_r_stream(const struct tpp_reader *r, size_t i) { return i < r->nstreams ? &r->streams[i] : NULL; }
const struct tpp_meta *tpp_r_meta(const struct tpp_reader *r) { return &r->meta; }
const struct tpp_clock *tpp_r_clock(const struct tpp_reader *r) { return &r->clock; }

const struct tpp_type *tpp_r_type(const struct tpp_reader *r, uint16_t id)
{
	return id < TPP_MAX_TYPES ? r->type_by_id[id] : NULL;
}

const struct tpp_stream_info *tpp_r_stream_by_id(const struct tpp_reader *r, uint32_t id)
{
	/* streams are sorted by id at load time */
	size_t lo = 0, hi = r->nstreams;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (r->streams[m].id < id)
			lo = m + 1;
		else if (r->streams[m].id > id)
			hi = m;
		else
			return &r->streams[m];
	}
	return NULL;
}
