/* dec_inline — the per-event step of the chunk decoder, inline so the
 * iterator's merge loop pays no call per event (decode.c holds the rest).
 * Private to decoders/: the structs here are the decoder's own state. */
#ifndef TPP_DEC_INLINE_H
#define TPP_DEC_INLINE_H
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
/* Per-decoder state kept across chunks to avoid reallocating. */
struct tpp_dec_tcols {
	uint16_t slot_of[TPP_MAX_TYPES]; /* 0 = absent, else index + 1 */
	struct tcols *t;
	uint32_t cap;
	uint32_t scap;
};


/* Batch decoding: a slice of a chunk's events, column by column, into rows
 * laid out as struct tpp_event cut after v[maxf - 1] (d->maxf: the most
 * fields of any type in the chunk). Decoding one column at a time keeps
 * each loop tight; the merge then hands out rows without copying them. */
#define DEC_SLICE 1024
struct dec_scratch {
	uint16_t slot[DEC_SLICE];  /* type slot of each event */
	uint32_t order[DEC_SLICE + 1]; /* events grouped by slot (+1: see dec_slice) */
	uint32_t *start;           /* per slot: first index in order, then end */
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

/* Sets the message and returns -TPP_EBADFILE (out of line: the cold path). */
int tpp_dec_bad(struct tpp_chunk_dec *d, const char *what);

static inline int dec_next_inline(struct tpp_chunk_dec *d, struct tpp_event *ev)
{
	if (d->done >= d->count)
		return 0;
	uint64_t type, dts;
	if (__builtin_expect(get_varint(&d->col_type, d->col_type_end, &type) || type >= TPP_MAX_TYPES, 0))
		return tpp_dec_bad(d, "type column ends early or holds a bad id");
	if (__builtin_expect(get_varint(&d->col_ts, d->col_ts_end, &dts), 0))
		return tpp_dec_bad(d, "timestamp column ends early");
	d->last_ts += (uint64_t)unzigzag(dts);
	ev->ts = d->last_ts;
	ev->stream = d->stream;
	ev->type = (uint16_t)type;
	if (d->thread_tid >= 0) {
		ev->cpu = -1;
		ev->tid = d->thread_tid;
	} else {
		uint64_t dt;
		if (__builtin_expect(get_varint(&d->col_tid, d->col_tid_end, &dt), 0))
			return tpp_dec_bad(d, "tid column ends early");
		d->last_tid += unzigzag(dt);
		ev->tid = (int32_t)d->last_tid;
		ev->cpu = d->cpu;
	}
	uint16_t slot = d->tcols->slot_of[type];
	if (__builtin_expect(!slot, 0))
		return tpp_dec_bad(d, "event of a type that has no columns");
	struct tcols *tc = &d->tcols->t[slot - 1];
	ev->t = tc->t;
	d->done++;
	if (__builtin_expect(!tc->t, 0)) {
		/* a type this reader does not know: its columns are skipped whole */
		ev->nvals = 0;
		return 1;
	}
	ev->nvals = tc->n;
	for (unsigned i = 0; i < tc->nops; i++) {
		unsigned f = tc->ops[i];
		struct col *c = &tc->c[f];
		uint64_t v;
		if (__builtin_expect(get_varint(&c->p, c->end, &v), 0))
			return tpp_dec_bad(d, "field column ends early");
		if (__builtin_expect(tc->ft[f] <= TPP_F_S64, 1)) {
			c->last += (uint64_t)unzigzag(v);
			ev->v[f].u = c->last;
		} else if (tc->ft[f] == TPP_F_STR) {
			if (v >= d->nstr)
				return tpp_dec_bad(d, "string index out of range");
			ev->v[f].s.p = (const char *)d->str_ptr[v];
			ev->v[f].s.len = d->str_len[v];
		} else {
			if (v > (uint64_t)(c->end - c->p))
				return tpp_dec_bad(d, "bytes field runs past its column");
			ev->v[f].s.p = (const char *)c->p;
			ev->v[f].s.len = (uint32_t)v;
			c->p += v;
		}
	}
	for (unsigned i = 0; i < tc->nzero; i++) {
		ev->v[tc->zero[i]].s.p = NULL;
		ev->v[tc->zero[i]].s.len = 0;
	}
	return 1;
}
#endif
