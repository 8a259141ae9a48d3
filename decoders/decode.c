/* decode — one events chunk payload into typed events (specs/format.md,
 * "Events payload"). The envelope is parsed by hand, without allocation per
 * item, because this is the hot path; tests/unit/cbor_crosscheck.c checks it
 * against libcbor on every sample file. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "tpp_decode.h"
#include "dec_slice.h"

static int bad(struct tpp_chunk_dec *d, const char *what)
{
	snprintf(d->err, sizeof(d->err), "chunk at offset %llu: %s", (unsigned long long)d->c->offset, what);
	return -TPP_EBADFILE;
}

static int get_bstr(const uint8_t **p, const uint8_t *end, const uint8_t **s, const uint8_t **se)
{
	unsigned mj;
	uint64_t n;
	if (cbor_get_head(p, end, &mj, &n) || mj != CB_BYTES || n > (uint64_t)(end - *p))
		return -1;
	*s = *p;
	*se = *p + n;
	*p += n;
	return 0;
}

int tpp_dec_begin(struct tpp_chunk_dec *d, const struct tpp_reader *r, const struct tpp_chunk *c,
		  const uint8_t *raw, size_t len)
{
	struct tpp_dec_tcols *tc = d->tcols;
	const uint8_t **sp = d->str_ptr;
	uint32_t *sl = d->str_len;
	const uint32_t *want = d->want;
	uint64_t (*intern)(void *, const char *, uint32_t) = d->intern;
	void *intern_ctx = d->intern_ctx;
	memset(d, 0, sizeof(*d));
	d->tcols = tc;
	d->str_ptr = sp;
	d->str_len = sl;
	d->want = want;
	d->intern = intern;
	d->intern_ctx = intern_ctx;
	d->r = r;
	d->c = c;
	d->count = c->count;
	d->stream = c->stream;
	if (!d->tcols && !(d->tcols = calloc(1, sizeof(*d->tcols))))
		return -ENOMEM;
	tc = d->tcols;
	memset(tc->slot_of, 0, sizeof(tc->slot_of));
	d->si = tpp_r_stream_by_id(r, c->stream);
	d->thread_tid = d->si && d->si->kind == TPP_S_THREAD ? d->si->tid : -1;
	d->cpu = dec_stream_cpu(d->si, c->stream);
	const uint8_t *p = raw, *end = raw + len;
	unsigned mj;
	uint64_t v;
	if (cbor_get_head(&p, end, &mj, &v) || mj != CB_ARRAY || v < 6)
		return bad(d, "payload is not an events array");
	uint64_t nitems = v;
	if (cbor_get_head(&p, end, &mj, &v) || mj != CB_UINT || v != c->count)
		return bad(d, "event count disagrees with the chunk header");
	/* every event takes at least two bytes (type and timestamp) */
	if (v > len)
		return bad(d, "event count is absurd");
	if (get_bstr(&p, end, &d->col_type, &d->col_type_end) || get_bstr(&p, end, &d->col_ts, &d->col_ts_end) ||
	    get_bstr(&p, end, &d->col_tid, &d->col_tid_end))
		return bad(d, "missing type, timestamp or tid column");
	if (cbor_get_head(&p, end, &mj, &v) || mj != CB_ARRAY || v > len)
		return bad(d, "bad string table");
	d->nstr = (uint32_t)v;
	if (d->nstr > tc->scap) {
		free(d->str_ptr);
		free(d->str_len);
		d->str_ptr = malloc(d->nstr * sizeof(*d->str_ptr));
		d->str_len = malloc(d->nstr * sizeof(*d->str_len));
		if (!d->str_ptr || !d->str_len) {
			tc->scap = 0;
			return -ENOMEM;
		}
		tc->scap = d->nstr;
	}
	if (d->intern && d->nstr) {
		if (d->nstr > tc->idcap) {
			free(tc->str_id);
			if (!(tc->str_id = malloc(d->nstr * sizeof(*tc->str_id)))) {
				tc->idcap = 0;
				return -ENOMEM;
			}
			tc->idcap = d->nstr;
		}
		memset(tc->str_id, 0, d->nstr * sizeof(*tc->str_id));
	}
	for (uint32_t i = 0; i < d->nstr; i++) {
		/* text, or bytes when the kernel's were not UTF-8 (format 1.1) */
		if (cbor_get_head(&p, end, &mj, &v) || (mj != CB_TEXT && mj != CB_BYTES) || v > (uint64_t)(end - p))
			return bad(d, "bad string in string table");
		d->str_ptr[i] = p;
		d->str_len[i] = (uint32_t)v;
		p += v;
	}
	if (cbor_get_head(&p, end, &mj, &v) || mj != CB_MAP || v > TPP_MAX_TYPES)
		return bad(d, "bad column map");
	uint32_t np = (uint32_t)v;
	if (np > tc->cap) {
		struct tcols *n = realloc(tc->t, np * sizeof(*n));
		if (!n)
			return -ENOMEM;
		tc->t = n;
		tc->cap = np;
	}
	for (uint32_t k = 0; k < np; k++) {
		uint64_t id, nf;
		if (cbor_get_head(&p, end, &mj, &id) || mj != CB_UINT || id >= TPP_MAX_TYPES || tc->slot_of[id])
			return bad(d, "bad type id in column map");
		if (cbor_get_head(&p, end, &mj, &nf) || mj != CB_ARRAY || nf > TPP_MAX_FIELDS)
			return bad(d, "bad field column list");
		struct tcols *t = &tc->t[k];
		t->id = (uint16_t)id;
		t->n = (uint16_t)nf;
		/* the schema is looked up once per chunk, not per event */
		t->t = tpp_r_type(r, (uint16_t)id);
		if (t->t && t->t->nfields != nf)
			return bad(d, "field columns disagree with the schema");
		for (unsigned f = 0; t->t && f < nf; f++)
			t->ft[f] = (uint8_t)t->t->fields[f].type;
		uint32_t w = want ? want[id] : UINT32_MAX;
		t->nops = t->nzero = 0;
		for (unsigned f = 0; f < nf; f++) {
			if (w >> f & 1)
				t->ops[t->nops++] = (uint8_t)f;
			else
				t->zero[t->nzero++] = (uint8_t)f;
		}
		for (unsigned f = 0; f < nf; f++) {
			if (get_bstr(&p, end, &t->c[f].p, &t->c[f].end))
				return bad(d, "bad field column");
			t->c[f].last = 0;
		}
		tc->slot_of[id] = (uint16_t)(k + 1);
		t->nvals = t->t ? (uint16_t)nf : 0;
		if (t->t && nf > d->maxf)
			d->maxf = (uint32_t)nf;
	}
	d->ntcols = np;
	/* items after the sixth are a newer minor's additions: ignored */
	(void)nitems;
	d->p = p;
	d->end = end;
	d->last_ts = 0;
	d->last_tid = 0;
	return 0;
}

static inline struct tpp_event *row(uint8_t *rows, size_t stride, uint32_t i)
{
	return (struct tpp_event *)(void *)(rows + (size_t)i * stride);
}

/* The first half of every slice: the next n events' types, each event's
 * type slot in sc->slot, and the events grouped by slot in sc->order
 * (slot k's run starts at beg[k] and holds cnt[k]), so that each field
 * column is then read in one tight loop. */
static int group(struct tpp_chunk_dec *d, uint32_t n, struct dec_scratch *sc, uint32_t **begp, uint32_t **cntp)
{
	struct tpp_dec_tcols *tcs = d->tcols;
	size_t ns1 = d->ntcols + 1;
	if (sc->nstart < 7 * ns1) {
		uint32_t *ns = realloc(sc->start, 7 * ns1 * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		sc->start = ns;
		sc->nstart = 7 * ns1;
	}
	/* counted in four interleaved tallies, summed after: one tally's
	 * increments waited each on the one before, events of a type or two
	 * apart */
	uint32_t *cnt = sc->start, *beg = cnt + ns1, *pos = beg + ns1, *part = pos + ns1;
	memset(part, 0, 4 * ns1 * sizeof(*part));
	/* column cursors in locals, here and in every loop below: the
	 * stores could alias them, and the compiler kept them in memory, a
	 * store-to-load wait per value */
	const uint8_t *p = d->col_type, *end = d->col_type_end;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t type;
		if (get_varint(&p, end, &type) || type >= TPP_MAX_TYPES)
			return bad(d, "type column ends early or holds a bad id");
		uint16_t slot = tcs->slot_of[type];
		if (!slot)
			return bad(d, "event of a type that has no columns");
		sc->slot[i] = slot;
		part[(i & 3) * ns1 + slot]++;
	}
	d->col_type = p;
	for (size_t k = 0; k < ns1; k++)
		cnt[k] = part[k] + part[ns1 + k] + part[2 * ns1 + k] + part[3 * ns1 + k];
	/* A common type's events are found in one pass each, branch-free; a
	 * scatter through per-slot positions was bound by its store-to-load
	 * dependency. Rare types share one pass. */
	uint32_t acc = 0, rare = n / 16, nrare = 0;
	for (uint32_t k = 1; k <= d->ntcols; k++) {
		beg[k] = pos[k] = acc;
		acc += cnt[k];
		if (cnt[k] && cnt[k] <= rare) {
			nrare++;
		} else if (cnt[k]) {
			/* writes one past the run: into the next type's
			 * range, filled later, or order[n] (room kept) */
			uint32_t p = beg[k];
			for (uint32_t i = 0; i < n; i++) {
				sc->order[p] = i;
				p += sc->slot[i] == k;
			}
		}
	}
	for (uint32_t i = 0; nrare && i < n; i++)
		if (cnt[sc->slot[i]] <= rare)
			sc->order[pos[sc->slot[i]]++] = i;
	*begp = beg;
	*cntp = cnt;
	return 0;
}

/* The next n tids, each stride bytes after the one before from dst on. */
static inline int tids(struct tpp_chunk_dec *d, uint32_t n, uint8_t *dst, size_t stride)
{
	int64_t tid = d->last_tid;
	const uint8_t *p = d->col_tid, *end = d->col_tid_end;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t dt;
		if (get_varint(&p, end, &dt))
			return bad(d, "tid column ends early");
		tid += unzigzag(dt);
		*(int32_t *)(void *)(dst + i * stride) = (int32_t)tid;
	}
	d->col_tid = p;
	d->last_tid = tid;
	return 0;
}

/* The next n values of a numeric column, for events order[0..n): event i's
 * value goes stride * i bytes after dst (a row's field, or an array). */
static inline int numbers(struct tpp_chunk_dec *d, struct col *c, const uint32_t *order, uint32_t n, uint8_t *dst,
			  size_t stride)
{
	uint64_t last = c->last;
	const uint8_t *p = c->p, *end = c->end;
	for (uint32_t j = 0; j < n; j++) {
		uint64_t v;
		if (get_varint(&p, end, &v))
			return bad(d, "field column ends early");
		last += (uint64_t)unzigzag(v);
		*(uint64_t *)(void *)(dst + order[j] * stride) = last;
	}
	c->p = p;
	c->last = last;
	return 0;
}

static uint32_t slice_len(const struct tpp_chunk_dec *d, uint32_t max)
{
	uint32_t n = d->count - d->done;
	if (n > max)
		n = max;
	return n > DEC_SLICE ? DEC_SLICE : n;
}

int dec_slice(struct tpp_chunk_dec *d, uint8_t *rows, uint32_t max, struct dec_scratch *sc)
{
	uint32_t n = slice_len(d, max), *beg, *cnt;
	if (!n)
		return 0;
	size_t stride = dec_stride(d);
	struct tpp_dec_tcols *tcs = d->tcols;
	int e = group(d, n, sc, &beg, &cnt);
	if (e)
		return e;
	/* timestamps, tids and the fixed part of every row */
	uint64_t ts = d->last_ts;
	const uint32_t stream = d->stream;
	const int32_t cpu = d->cpu, tid = d->thread_tid;
	const uint8_t *p = d->col_ts, *end = d->col_ts_end;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t dts;
		if (get_varint(&p, end, &dts))
			return bad(d, "timestamp column ends early");
		ts += (uint64_t)unzigzag(dts);
		struct tpp_event *ev = row(rows, stride, i);
		const struct tcols *tc = &tcs->t[sc->slot[i] - 1];
		ev->ts = ts;
		ev->stream = stream;
		ev->cpu = cpu;
		ev->tid = tid;
		ev->type = tc->id;
		ev->nvals = tc->nvals;
		ev->t = tc->t;
	}
	d->col_ts = p;
	d->last_ts = ts;
	if (d->thread_tid < 0 && tids(d, n, (uint8_t *)&row(rows, stride, 0)->tid, stride))
		return -TPP_EBADFILE;
	for (uint32_t k = 1; k <= d->ntcols; k++) {
		uint32_t b = beg[k], e = b + cnt[k];
		struct tcols *tc = &tcs->t[k - 1];
		if (e == b || !tc->t)
			continue;
		for (unsigned o = 0; o < tc->nops; o++) {
			unsigned f = tc->ops[o];
			struct col *c = &tc->c[f];
			if (tc->ft[f] <= TPP_F_S64) {
				if (numbers(d, c, sc->order + b, e - b, (uint8_t *)&row(rows, stride, 0)->v[f].u, stride))
					return -TPP_EBADFILE;
			} else if (tc->ft[f] == TPP_F_STR) {
				for (uint32_t j = b; j < e; j++) {
					uint64_t v;
					if (get_varint(&c->p, c->end, &v))
						return bad(d, "field column ends early");
					if (v >= d->nstr)
						return bad(d, "string index out of range");
					union tpp_val *x = &row(rows, stride, sc->order[j])->v[f];
					x->s.p = (const char *)d->str_ptr[v];
					x->s.len = d->str_len[v];
				}
			} else {
				for (uint32_t j = b; j < e; j++) {
					uint64_t v;
					if (get_varint(&c->p, c->end, &v))
						return bad(d, "field column ends early");
					if (v > (uint64_t)(c->end - c->p))
						return bad(d, "bytes field runs past its column");
					union tpp_val *x = &row(rows, stride, sc->order[j])->v[f];
					x->s.p = (const char *)c->p;
					x->s.len = (uint32_t)v;
					c->p += v;
				}
			}
		}
		for (unsigned z = 0; z < tc->nzero; z++)
			for (uint32_t j = b; j < e; j++) {
				union tpp_val *x = &row(rows, stride, sc->order[j])->v[tc->zero[z]];
				x->s.p = NULL;
				x->s.len = 0;
			}
	}
	d->done += n;
	return (int)n;
}

/* The next n values of a string column as the caller's handles, for events
 * order[0..n): a string is interned the first time the chunk uses it. */
static int handles(struct tpp_chunk_dec *d, struct col *c, const uint32_t *order, uint32_t n, uint64_t *dst)
{
	uint64_t *ids = d->tcols->str_id;
	const uint8_t *p = c->p, *end = c->end;
	for (uint32_t j = 0; j < n; j++) {
		uint64_t v;
		if (get_varint(&p, end, &v))
			return bad(d, "field column ends early");
		if (v >= d->nstr)
			return bad(d, "string index out of range");
		if (!ids[v] && !(ids[v] = d->intern(d->intern_ctx, (const char *)d->str_ptr[v], d->str_len[v])))
			return -ENOMEM;
		dst[order[j]] = ids[v];
	}
	c->p = p;
	return 0;
}

int dec_cols(struct tpp_chunk_dec *d, struct tpp_slice *out, unsigned ncols, uint32_t max, struct dec_scratch *sc)
{
	uint32_t n = slice_len(d, max), *beg, *cnt;
	if (!n)
		return 0;
	struct tpp_dec_tcols *tcs = d->tcols;
	int e = group(d, n, sc, &beg, &cnt);
	if (e)
		return e;
	uint64_t ts = d->last_ts;
	const uint8_t *p = d->col_ts, *end = d->col_ts_end;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t dts;
		if (get_varint(&p, end, &dts))
			return bad(d, "timestamp column ends early");
		ts += (uint64_t)unzigzag(dts);
		out->ts[i] = ts;
		out->type[i] = tcs->t[sc->slot[i] - 1].id;
	}
	d->col_ts = p;
	d->last_ts = ts;
	if (d->thread_tid < 0) {
		if (tids(d, n, (uint8_t *)out->tid, sizeof(*out->tid)))
			return -TPP_EBADFILE;
	} else {
		for (uint32_t i = 0; i < n; i++)
			out->tid[i] = d->thread_tid;
	}
	for (uint32_t k = 1; k <= d->ntcols; k++) {
		uint32_t b = beg[k], e = b + cnt[k];
		struct tcols *tc = &tcs->t[k - 1];
		if (e == b)
			continue;
		unsigned nops = tc->t ? tc->nops : 0;
		if (nops > ncols)
			return bad(d, "a column scan got more fields than columns");
		/* the k-th wanted field of a type goes to column k */
		for (unsigned o = 0; o < nops; o++) {
			unsigned ft = tc->ft[tc->ops[o]];
			if (ft == TPP_F_STR && d->intern) {
				int he = handles(d, &tc->c[tc->ops[o]], sc->order + b, e - b, out->col[o]);
				if (he)
					return he;
				continue;
			}
			if (ft > TPP_F_S64)
				return bad(d, "a column scan asked for a field that is not a number");
			if (numbers(d, &tc->c[tc->ops[o]], sc->order + b, e - b, (uint8_t *)out->col[o],
				    sizeof(*out->col[o])))
				return -TPP_EBADFILE;
		}
		/* and a type with fewer wanted fields leaves its events' other
		 * columns 0 */
		for (unsigned o = nops; o < ncols; o++)
			for (uint32_t j = b; j < e; j++)
				out->col[o][sc->order[j]] = 0;
	}
	d->done += n;
	return (int)n;
}

int tpp_dec_next(struct tpp_chunk_dec *d, struct tpp_event *ev)
{
	/* a slice of one event: the decoder has a single routine, and this
	 * entry serves tests and tools, not the merge */
	if (!d->tcols)
		return 0;
	if (!d->tcols->one && !(d->tcols->one = calloc(1, sizeof(*d->tcols->one))))
		return -ENOMEM;
	return dec_slice(d, (uint8_t *)ev, 1, d->tcols->one);
}

void tpp_dec_want(struct tpp_chunk_dec *d, const uint32_t *want)
{
	d->want = want;
}

void tpp_dec_end(struct tpp_chunk_dec *d)
{
	if (d->tcols) {
		free(d->tcols->t);
		free(d->tcols->str_id);
		if (d->tcols->one)
			free(d->tcols->one->start);
		free(d->tcols->one);
		free(d->tcols);
	}
	free(d->str_ptr);
	free(d->str_len);
	d->tcols = NULL;
	d->str_ptr = NULL;
	d->str_len = NULL;
}

int tpp_field_index(const struct tpp_type *t, const char *name)
{
	if (!t)
		return -1;
	for (unsigned i = 0; i < t->nfields; i++)
		if (!strcmp(t->fields[i].name, name))
			return (int)i;
	return -1;
}
