/* decode — one events chunk payload into typed events (specs/format.md,
 * "Events payload"). The envelope is parsed by hand, without allocation per
 * item, because this is the hot path; tests/unit/cbor_crosscheck.c checks it
 * against libcbor on every sample file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "tpp_decode.h"

struct col {
	const uint8_t *p, *end;
	uint64_t last;
};
struct tcols {
	uint16_t id, n;
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
	memset(d, 0, sizeof(*d));
	d->tcols = tc;
	d->str_ptr = sp;
	d->str_len = sl;
	d->r = r;
	d->c = c;
	if (!d->tcols && !(d->tcols = calloc(1, sizeof(*d->tcols))))
		return -ENOMEM;
	tc = d->tcols;
	memset(tc->slot_of, 0, sizeof(tc->slot_of));
	d->si = tpp_r_stream_by_id(r, c->stream);
	d->thread_tid = d->si && d->si->kind == TPP_S_THREAD ? d->si->tid : -1;
	d->cpu = d->si ? d->si->cpu : (int32_t)c->stream;
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
	for (uint32_t i = 0; i < d->nstr; i++) {
		if (cbor_get_head(&p, end, &mj, &v) || mj != 3 || v > (uint64_t)(end - p))
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
		for (unsigned f = 0; f < nf; f++) {
			if (get_bstr(&p, end, &t->c[f].p, &t->c[f].end))
				return bad(d, "bad field column");
			t->c[f].last = 0;
		}
		tc->slot_of[id] = (uint16_t)(k + 1);
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

int tpp_dec_next(struct tpp_chunk_dec *d, struct tpp_event *ev)
{
	if (d->done >= d->c->count)
		return 0;
	uint64_t type, dts;
	if (get_varint(&d->col_type, d->col_type_end, &type) || type >= TPP_MAX_TYPES)
		return bad(d, "type column ends early or holds a bad id");
	if (get_varint(&d->col_ts, d->col_ts_end, &dts))
		return bad(d, "timestamp column ends early");
	d->last_ts += (uint64_t)unzigzag(dts);
	ev->ts = d->last_ts;
	ev->stream = d->c->stream;
	ev->type = (uint16_t)type;
	if (d->thread_tid >= 0) {
		ev->cpu = -1;
		ev->tid = d->thread_tid;
	} else {
		uint64_t dt;
		if (get_varint(&d->col_tid, d->col_tid_end, &dt))
			return bad(d, "tid column ends early");
		d->last_tid += unzigzag(dt);
		ev->tid = (int32_t)d->last_tid;
		ev->cpu = d->cpu;
	}
	uint16_t slot = d->tcols->slot_of[type];
	if (!slot)
		return bad(d, "event of a type that has no columns");
	struct tcols *tc = &d->tcols->t[slot - 1];
	ev->t = tc->t;
	d->done++;
	if (!tc->t) {
		/* a type this reader does not know: its columns are skipped whole */
		ev->nvals = 0;
		return 1;
	}
	ev->nvals = tc->n;
	for (unsigned f = 0; f < tc->n; f++) {
		struct col *c = &tc->c[f];
		uint64_t v;
		if (get_varint(&c->p, c->end, &v))
			return bad(d, "field column ends early");
		if (__builtin_expect(tc->ft[f] <= TPP_F_S64, 1)) {
			c->last += (uint64_t)unzigzag(v);
			ev->v[f].u = c->last;
		} else if (tc->ft[f] == TPP_F_STR) {
			if (v >= d->nstr)
				return bad(d, "string index out of range");
			ev->v[f].s.p = (const char *)d->str_ptr[v];
			ev->v[f].s.len = d->str_len[v];
		} else {
			if (v > (uint64_t)(c->end - c->p))
				return bad(d, "bytes field runs past its column");
			ev->v[f].s.p = (const char *)c->p;
			ev->v[f].s.len = (uint32_t)v;
			c->p += v;
		}
	}
	return 1;
}

void tpp_dec_end(struct tpp_chunk_dec *d)
{
	if (d->tcols) {
		free(d->tcols->t);
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
