/* dec_slice — the chunk decoder's own state and its one decoding routine,
 * shared by decode.c and the iterator. Private to decoders/. */
#ifndef TPP_DEC_SLICE_H
#define TPP_DEC_SLICE_H
#include <stddef.h>
#include "buf.h"
#include "tpp_decode.h"

struct col {
	const uint8_t *p, *end;
	uint64_t last;
};
struct tcols {
	uint16_t id, n;
	uint16_t nvals; /* n, or 0 for a type this reader does not know */
	/* The fields the caller wants (tpp_dec_want), in order, and the rest,
	 * which are cleared instead of decoded: a column nobody reads is never
	 * touched, which is the point of storing fields by column. */
	uint8_t nops, nzero;
	uint8_t ops[TPP_MAX_FIELDS], zero[TPP_MAX_FIELDS];
	const struct tpp_type *t; /* NULL: a type this reader does not know */
	uint8_t ft[TPP_MAX_FIELDS]; /* field kinds, copied out of the schema */
	struct col c[TPP_MAX_FIELDS];
};
struct dec_scratch;
/* Per-decoder state kept across chunks to avoid reallocating. */
struct tpp_dec_tcols {
	uint16_t slot_of[TPP_MAX_TYPES]; /* 0 = absent, else index + 1 */
	struct tcols *t;
	uint32_t cap;
	uint32_t scap;
	struct dec_scratch *one; /* tpp_dec_next's scratch, made on first use */
	/* with an intern: the handle of each string of the chunk, 0 until a
	 * wanted field first holds it */
	uint64_t *str_id;
	uint32_t idcap;
};

/* Batch decoding: a slice of a chunk's events, column by column, into rows
 * laid out as struct tpp_event cut after v[maxf - 1] (d->maxf: the most
 * fields of any type in the chunk). Decoding one column at a time keeps
 * each loop tight; the merge then hands out rows without copying them. */
#define DEC_SLICE 1024
/* The cpu of a stream's events (tpp_event.cpu): -1 for a thread's stream,
 * the stream id for one the metadata does not declare. */
static inline int32_t dec_stream_cpu(const struct tpp_stream_info *si, uint32_t stream)
{
	if (si && si->kind == TPP_S_THREAD && si->tid >= 0)
		return -1;
	return si ? si->cpu : (int32_t)stream;
}
struct dec_scratch {
	uint16_t slot[DEC_SLICE];  /* type slot of each event */
	uint32_t order[DEC_SLICE + 1]; /* events grouped by slot (+1: see dec_slice) */
	uint32_t *start;           /* per slot: count, first index, fill position, then
	                            * group()'s four partial counts */
	size_t nstart;
};
static inline size_t dec_stride(const struct tpp_chunk_dec *d)
{
	return offsetof(struct tpp_event, v) + (size_t)(d->maxf ? d->maxf : 1) * sizeof(union tpp_val);
}
/* Decodes the next min(max, events left) events into rows (room for that
 * many rows of dec_stride(d) bytes): their number, 0 at the end of the
 * chunk, <0 when the payload is corrupt (message in d->err). */
int dec_slice(struct tpp_chunk_dec *d, uint8_t *rows, uint32_t max, struct dec_scratch *sc);

/* Column decoding, for scans (tpp_scan): the same slice as the arrays of
 * out (tpp_slice, each with room for DEC_SLICE entries), each event's k-th
 * wanted numeric field in col[k] (0 when its type wants fewer fields), or a
 * string field's handle from d->intern. Only col[0..ncols) are written,
 * ncols being the most fields any type wants; n, stream and cpu are the
 * caller's. A wanted field that is neither is reported as damage: the scan
 * checks the schema first. */
int dec_cols(struct tpp_chunk_dec *d, struct tpp_slice *out, unsigned ncols, uint32_t max, struct dec_scratch *sc);
#endif
