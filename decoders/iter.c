/* iter — every event of a file, in file order or in global time order.
 *
 * Sorted order is a k-way merge over per-stream cursors: each stream is in
 * time order already (a CPU's ring buffer, a thread's buffer), so memory is
 * one decompressed chunk per stream, whatever the file size. A chunk whose
 * own timestamps go backwards is smoothed through a small reorder window. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "tpp_decode.h"
#include "dec_slice.h"
#include "heap.h"

/* A window entry remembers which of the two payload buffers its strings
 * point into, so a buffer is reused only once no entry refers to it. */
struct wentry {
	struct tpp_event ev;
	uint8_t par;
};

struct scur {
	uint32_t stream;
	size_t *chunks, nchunks, next;
	uint8_t *buf[2];
	size_t cap[2];
	struct tpp_chunk_dec dec[2];
	int cur, active, windowed;
	uint32_t ngen[2];
	struct tpp_event head;
	const struct tpp_event *hp; /* the head: a slice row, or &head */
	/* the decoded slice (dec_slice): rows [ri, rn) are still to come,
	 * into the merge, or into the window while windowed */
	uint8_t *rows;
	size_t rows_cap, stride;
	uint32_t ri, rn;
	/* the reorder window: events in slots, a min-heap of slot indices by
	 * ts (an event is copied in and out once, never moved by the heap) */
	struct wentry *win;
	uint32_t *wheap, *wfree;
	uint32_t nwin, nfree;
	uint64_t win_hi; /* the latest ts that went into the window */
	int overlap;     /* chunks overlap in time: windowed to the end */
	int draining;    /* the window empties before the next chunk loads */
};

struct tpp_iter {
	struct tpp_reader *r;
	struct tpp_iter_opts o;
	int ranged;
	struct scur *cur;
	size_t ncur;
	uint32_t *heap, nheap;
	size_t *fill, nfill; /* cursors to refill before the next pick */
	int top_pending;     /* the top cursor's head was handed out */
	/* The earliest head of the other cursors while the top one stays on
	 * top: a new head before it is emitted without a sift (a stream's
	 * events come in runs). UINT64_MAX with one cursor; 0 = unknown. */
	uint64_t bound;
	uint64_t last_out;
	struct tpp_iter_stats st;
	struct dec_scratch *sc;
	/* events per slice: fewer when many streams interleave, so that
	 * their rows together stay in cache */
	uint32_t slice_max;
	char err[768];
};

static inline void ev_copy(struct tpp_event *dst, const struct tpp_event *src)
{
	memcpy(dst, src, offsetof(struct tpp_event, v) + src->nvals * sizeof(src->v[0]));
}

static void win_free(struct scur *s)
{
	free(s->win);
	free(s->wheap);
	free(s->wfree);
	s->win = NULL;
	s->wheap = s->wfree = NULL;
	s->nfree = 0;
}

/* The window's slots and heap, while the stream needs them (a stream that
 * leaves its window gives them back: ~77 KB each, per thread in a -pg
 * recording with one clock step per thread); 0 or -ENOMEM. */
static int win_alloc(struct tpp_iter *it, struct scur *s)
{
	uint32_t n = it->o.window + 1;
	if (s->win)
		return 0;
	s->win = malloc(n * sizeof(*s->win));
	s->wheap = malloc(n * sizeof(*s->wheap));
	s->wfree = malloc(n * sizeof(*s->wfree));
	if (!s->win || !s->wheap || !s->wfree) {
		win_free(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		s->wfree[i] = n - 1 - i;
	s->nfree = n;
	return 0;
}

int tpp_iter_open(struct tpp_iter **itp, struct tpp_reader *r, const struct tpp_iter_opts *o)
{
	*itp = NULL;
	struct tpp_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->r = r;
	if (o)
		memcpy(&it->o, o, o->sz && o->sz < sizeof(*o) ? o->sz : sizeof(*o));
	if (!it->o.window)
		it->o.window = 256;
	it->ranged = it->o.from_ts || it->o.to_ts;
	if (it->ranged && !it->o.to_ts)
		it->o.to_ts = UINT64_MAX;
	size_t n = tpp_r_nchunks(r);
	/* file order: one cursor over all chunks; sorted: one per stream */
	for (size_t i = 0; i < n; i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		if (c->kind != TPP_C_EVENTS)
			continue;
		if (it->ranged && (c->last_ts < it->o.from_ts || c->first_ts > it->o.to_ts))
			continue; /* the index lets a time range skip whole chunks */
		size_t k = 0;
		if (it->o.sorted)
			for (k = 0; k < it->ncur && it->cur[k].stream != c->stream; k++)
				;
		if (k == it->ncur) {
			struct scur *nc = realloc(it->cur, (it->ncur + 1) * sizeof(*nc));
			if (!nc)
				goto oom;
			it->cur = nc;
			memset(&it->cur[it->ncur], 0, sizeof(*nc));
			it->cur[it->ncur++].stream = c->stream;
		}
		struct scur *s = &it->cur[k];
		size_t *nch = realloc(s->chunks, (s->nchunks + 1) * sizeof(*nch));
		if (!nch)
			goto oom;
		s->chunks = nch;
		s->chunks[s->nchunks++] = i;
	}
	/* a stream whose chunks overlap in time needs the reorder window */
	for (size_t k = 0; it->o.sorted && k < it->ncur; k++) {
		struct scur *s = &it->cur[k];
		for (size_t i = 1; i < s->nchunks; i++)
			if (tpp_r_chunk(r, s->chunks[i])->first_ts < tpp_r_chunk(r, s->chunks[i - 1])->last_ts)
				s->windowed = s->overlap = 1; /* its slots come with its first chunk (load_next) */
	}
	if (!(it->sc = calloc(1, sizeof(*it->sc))))
		goto oom;
	it->slice_max = it->ncur ? (uint32_t)(16384 / it->ncur) : DEC_SLICE;
	it->slice_max = it->slice_max < 32 ? 32 : it->slice_max > DEC_SLICE ? DEC_SLICE : it->slice_max;
	it->heap = calloc(it->ncur + 1, sizeof(*it->heap));
	it->fill = calloc(it->ncur + 1, sizeof(size_t));
	if (!it->heap || !it->fill)
		goto oom;
	for (size_t k = 0; k < it->ncur; k++)
		it->fill[it->nfill++] = it->ncur - 1 - k;
	*itp = it;
	return 0;
oom:
	tpp_iter_close(it);
	return -ENOMEM;
}

/* Whether a chunk's timestamp column never goes backwards. */
static int ts_sorted(const struct tpp_chunk_dec *d)
{
	const uint8_t *p = d->col_ts;
	for (uint32_t i = 0; i < d->c->count; i++) {
		uint64_t v;
		if (get_varint(&p, d->col_ts_end, &v))
			return 1; /* damage is reported by the decoder itself */
		if (i && (v & 1))
			return 0; /* a negative delta */
	}
	return 1;
}

static inline int win_before(const void *ctx, uint32_t a, uint32_t b)
{
	const struct wentry *w = ctx;
	return w[a].ev.ts < w[b].ev.ts;
}

static void win_push(struct scur *s, const struct tpp_event *e, int par)
{
	uint32_t k = s->wfree[--s->nfree];
	ev_copy(&s->win[k].ev, e);
	s->win[k].par = (uint8_t)par;
	s->ngen[par]++;
	if (e->ts > s->win_hi)
		s->win_hi = e->ts;
	heap_push(s->wheap, &s->nwin, k, win_before, s->win);
}

static void win_pop(struct scur *s, struct tpp_event *out)
{
	uint32_t k = s->wheap[0];
	ev_copy(out, &s->win[k].ev);
	s->ngen[s->win[k].par]--;
	s->wheap[0] = s->wheap[--s->nwin];
	heap_sift_down(s->wheap, s->nwin, 0, win_before, s->win);
	s->wfree[s->nfree++] = k;
}

static int damaged(struct tpp_iter *it, struct scur *s, const char *msg)
{
	it->st.damaged_chunks++;
	snprintf(it->err, sizeof(it->err), "%s", msg);
	s->active = 0;
	return -TPP_EBADFILE;
}

/* Loads the stream's next chunk into the free payload buffer: 1, 0 at the
 * end of the stream, <0 when the chunk is damaged (it is then skipped). */
static int load_next(struct tpp_iter *it, struct scur *s)
{
	if (s->next >= s->nchunks)
		return 0;
	int p = !s->cur;
	const struct tpp_chunk *c = tpp_r_chunk(it->r, s->chunks[s->next++]);
	long n = tpp_r_payload(it->r, c, &s->buf[p], &s->cap[p]);
	if (n < 0)
		return damaged(it, s, tpp_r_error(it->r));
	s->dec[p].want = it->o.want;
	int e = tpp_dec_begin(&s->dec[p], it->r, c, s->buf[p], (size_t)n);
	if (e)
		return damaged(it, s, s->dec[p].err[0] ? s->dec[p].err : tpp_strerror(e));
	it->st.chunks++;
	s->cur = p;
	s->active = 1;
	/* the writer's flag spares a scan; a false flag in a damaged file only
	 * costs order (counted in out_of_order), never memory safety */
	if (it->o.sorted && !s->windowed && !(c->flags & TPP_CHUNK_TS_SORTED) && !ts_sorted(&s->dec[p]))
		s->windowed = 1;
	if (s->windowed && win_alloc(it, s))
		return -ENOMEM;
	return 1;
}

/* A stream that has ended gives its buffers back: the event handed out
 * last was consumed before this call. */
static void release(struct scur *s)
{
	for (int p = 0; p < 2; p++) {
		free(s->buf[p]);
		s->buf[p] = NULL;
		s->cap[p] = 0;
		tpp_dec_end(&s->dec[p]);
	}
	free(s->rows);
	s->rows = NULL;
	s->rows_cap = 0;
	s->ri = s->rn = 0;
	win_free(s);
}

/* Decodes the next slice of the stream's current chunk: its number of
 * events, 0 at the end of the chunk, <0 when damaged. */
static int slice(struct tpp_iter *it, struct scur *s)
{
	struct tpp_chunk_dec *d = &s->dec[s->cur];
	/* rows for what is left of the chunk, up to a slice: a file of many
	 * short threads keeps small buffers per stream */
	uint32_t left = d->count - d->done, max = it->slice_max;
	size_t stride = dec_stride(d), need = stride * (left < max ? left : max);
	if (need > s->rows_cap) {
		uint8_t *n = realloc(s->rows, need);
		if (!n)
			return -ENOMEM;
		s->rows = n;
		s->rows_cap = need;
	}
	int n = dec_slice(d, s->rows, max, it->sc);
	if (n < 0)
		return n == -ENOMEM ? n : damaged(it, s, d->err);
	s->stride = stride;
	s->ri = 0;
	s->rn = (uint32_t)n;
	return n;
}

static inline const struct tpp_event *row_at(const struct scur *s, uint32_t i)
{
	return (const struct tpp_event *)(const void *)(s->rows + i * s->stride);
}

static inline const struct tpp_event *next_row(struct scur *s)
{
	return row_at(s, s->ri++);
}

/* Puts the stream's next event in s->hp: 1, or 0 at its end, or <0. */
static int cur_fill(struct tpp_iter *it, struct scur *s)
{
	for (;;) {
		if (!s->windowed) {
			if (s->ri == s->rn) {
				if (!s->active) {
					int e = load_next(it, s);
					if (e == 0)
						release(s);
					if (e <= 0)
						return e;
					if (s->windowed)
						continue;
				}
				int e = slice(it, s);
				if (e < 0)
					return e;
				if (e == 0) {
					s->active = 0;
					continue;
				}
			}
			s->hp = next_row(s);
		} else {
			while (s->nwin < it->o.window) {
				if (s->ri == s->rn) {
					if (!s->active) {
						if (s->next >= s->nchunks)
							break;
						/* a sorted chunk after everything in the window
						 * needs no window: drain it, then go on without
						 * (one clock step back in a long recording then
						 * costs its own chunk, not the rest) */
						const struct tpp_chunk *c = tpp_r_chunk(it->r, s->chunks[s->next]);
						if (!s->overlap && (c->flags & TPP_CHUNK_TS_SORTED) && c->first_ts >= s->win_hi) {
							s->draining = 1;
							break;
						}
						/* the other buffer is free once no window entry uses it */
						if (s->ngen[!s->cur])
							break;
						int e = load_next(it, s);
						if (e < 0)
							return e;
						continue;
					}
					int e = slice(it, s);
					if (e < 0)
						return e;
					if (e == 0) {
						s->active = 0;
						continue;
					}
				}
				win_push(s, next_row(s), s->cur);
			}
			if (!s->nwin) {
				if (!s->draining) {
					release(s); /* the stream's end, in its window */
					return 0;
				}
				s->draining = s->windowed = 0;
				win_free(s);
				continue;
			}
			win_pop(s, &s->head);
			s->hp = &s->head;
		}
		if (it->ranged && (s->hp->ts < it->o.from_ts || s->hp->ts > it->o.to_ts))
			continue;
		return 1;
	}
}

static inline int before(const void *ctx, uint32_t a, uint32_t b)
{
	const struct tpp_iter *it = ctx;
	const struct tpp_event *x = it->cur[a].hp, *y = it->cur[b].hp;
	return x->ts < y->ts || (x->ts == y->ts && a < b);
}

static void sift_down(struct tpp_iter *it, uint32_t i)
{
	heap_sift_down(it->heap, it->nheap, i, before, it);
}

static void set_bound(struct tpp_iter *it)
{
	uint64_t b = UINT64_MAX;
	for (size_t i = 1; i < 3 && i < it->nheap; i++)
		if (it->cur[it->heap[i]].hp->ts < b)
			b = it->cur[it->heap[i]].hp->ts;
	it->bound = b;
}

static __attribute__((noinline)) int next_slow(struct tpp_iter *it, const struct tpp_event **ev)
{
	/* The event returned last time is the head of the cursor on top of the
	 * heap and points into its buffers: it is refilled only now, and then
	 * sifted down, which is half the work of a pop and a push. */
	if (it->top_pending) {
		size_t k = it->heap[0];
		struct scur *s = &it->cur[k];
		/* fast path: the top stream's slice goes on, unfiltered */
		if (s->ri < s->rn && !s->windowed && !it->ranged) {
			s->hp = next_row(s);
			if (s->hp->ts < it->bound)
				goto emit;
			if (it->nheap > 1)
				sift_down(it, 0);
			set_bound(it);
			goto emit;
		}
		int e = cur_fill(it, s);
		if (e < 0)
			return e; /* stays pending: the next call resumes after the damage */
		it->top_pending = 0;
		it->bound = 0;
		if (e == 1) {
			sift_down(it, 0);
		} else {
			it->heap[0] = it->heap[--it->nheap];
			sift_down(it, 0);
		}
	}
	while (it->nfill) {
		size_t k = it->fill[it->nfill - 1];
		int e = cur_fill(it, &it->cur[k]);
		if (e < 0)
			return e;
		it->nfill--;
		if (e == 1)
			heap_push(it->heap, &it->nheap, (uint32_t)k, before, it);
		it->bound = 0;
	}
	if (!it->nheap)
		return 0;
	if (!it->bound)
		set_bound(it);
emit:;
	const struct tpp_event *out = it->cur[it->heap[0]].hp;
	it->top_pending = 1;
	if (out->ts < it->last_out)
		it->st.out_of_order++;
	else
		it->last_out = out->ts;
	it->st.events++;
	*ev = out;
	return 1;
}

/* Most events: the top stream's next row, when it is still before every
 * other stream's head (and not before the last event out), goes out with
 * no heap work. Kept apart from next_slow so this costs no register
 * spills. NULL when the merge has to decide. */
static inline const struct tpp_event *ahead(struct tpp_iter *it)
{
	if (!it->top_pending || it->ranged)
		return NULL;
	struct scur *s = &it->cur[it->heap[0]];
	if (s->ri == s->rn || s->windowed)
		return NULL;
	const struct tpp_event *e = row_at(s, s->ri);
	if (e->ts >= it->bound || e->ts < it->last_out)
		return NULL;
	s->ri++;
	s->hp = e;
	it->last_out = e->ts;
	it->st.events++;
	return e;
}

int tpp_iter_next(struct tpp_iter *it, const struct tpp_event **ev)
{
	const struct tpp_event *e = ahead(it);
	if (e) {
		*ev = e;
		return 1;
	}
	return next_slow(it, ev);
}

/* Extends a run of the top cursor's rows that starts at row ri - 1 (the
 * event just handed out) while they stay ahead of every other head. */
static int extend_run(struct tpp_iter *it, struct scur *s, const struct tpp_event **first, size_t *stride)
{
	uint32_t i = s->ri;
	uint64_t last = it->last_out, bound = it->bound;
	while (i < s->rn) {
		uint64_t ts = row_at(s, i)->ts;
		if (ts >= bound || ts < last)
			break;
		last = ts;
		i++;
	}
	int n = (int)(i - s->ri) + 1;
	*first = row_at(s, s->ri - 1);
	*stride = s->stride;
	s->ri = i;
	s->hp = row_at(s, i - 1);
	it->last_out = last;
	it->st.events += (uint64_t)n - 1;
	return n;
}

int tpp_iter_run(struct tpp_iter *it, const struct tpp_event **first, size_t *stride)
{
	*stride = 0;
	if (it->ranged)
		return tpp_iter_next(it, first);
	if (ahead(it))
		return extend_run(it, &it->cur[it->heap[0]], first, stride);
	int rc = next_slow(it, first);
	if (rc != 1)
		return rc;
	/* the merge moved to another stream: its run goes out whole too */
	struct scur *s = &it->cur[it->heap[0]];
	if (s->windowed || !s->ri || s->hp != row_at(s, s->ri - 1))
		return 1;
	return extend_run(it, s, first, stride);
}

const char *tpp_iter_error(const struct tpp_iter *it) { return it->err; }

void tpp_iter_stats(const struct tpp_iter *it, struct tpp_iter_stats *st) { *st = it->st; }

void tpp_iter_close(struct tpp_iter *it)
{
	if (!it)
		return;
	for (size_t k = 0; k < it->ncur; k++) {
		release(&it->cur[k]); /* what an ended stream gave back already is NULL */
		free(it->cur[k].chunks);
	}
	if (it->sc)
		free(it->sc->start);
	free(it->sc);
	free(it->cur);
	free(it->heap);
	free(it->fill);
	free(it);
}
