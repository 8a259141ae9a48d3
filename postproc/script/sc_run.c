/* sc_run — a program over a file in time order: BEGIN, then every event
 * to the sites of its type (interval probes fired on trace time as it
 * passes), then END and the maps. Events come as column runs from a scan
 * (tpp_scan: decoded ahead on a second thread, strings interned once per
 * chunk), or, when the file or the program needs it, as rows (tpp_iter)
 * copied into the same column form, so that one compiled code serves both. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc_int.h"

struct ivl {
	struct sc_site *s;
	uint64_t next;
};
struct runner {
	struct sc_prog *P;
	struct sc_rt rt;
	struct ivl *iv;
	uint32_t niv;
	uint64_t next_iv; /* the earliest interval firing, UINT64_MAX: none */
	struct tps_stats *st;
};

static int run_site(struct runner *R, struct sc_site *s, struct sc_ctx *c)
{
	c->site = s;
	if (!s->dyn) {
		c->probe = s->probe_sv;
		c->func = s->func_sv;
	}
	s->fired++;
	R->st->fired++;
	int rc = sc_exec(&R->rt, &s->code, c, NULL);
	return rc < 0 ? rc : 0;
}

/* BEGIN, END and intervals: no event, no task. */
static int run_kind(struct runner *R, int kind, uint64_t ts)
{
	struct sc_ctx c = {.ts = ts, .tid = -1, .cpu = 0};
	for (uint32_t i = 0; i < R->P->nsites; i++) {
		struct sc_site *s = R->P->sites[i];
		c.thr = NULL;
		if (s->kind == kind && run_site(R, s, &c))
			return -1;
	}
	return 0;
}

static void next_iv(struct runner *R)
{
	R->next_iv = UINT64_MAX;
	for (uint32_t i = 0; i < R->niv; i++)
		if (R->iv[i].next < R->next_iv)
			R->next_iv = R->iv[i].next;
}

/* Fires the intervals due at or before ts, in time order. */
static int fire_due(struct runner *R, uint64_t ts)
{
	while (R->next_iv <= ts && !R->rt.stop) {
		struct ivl *v = NULL;
		for (uint32_t i = 0; i < R->niv; i++)
			if (R->iv[i].next == R->next_iv) {
				v = &R->iv[i];
				break;
			}
		struct sc_ctx c = {.ts = v->next, .tid = -1, .cpu = 0};
		v->next += v->s->every;
		next_iv(R);
		if (run_site(R, v->s, &c))
			return -1;
		if (R->rt.stop)
			R->rt.t_end = c.ts;
	}
	return 0;
}

/* A site's one aggregation, without the VM (sc_site.fast). */
static inline int fast(struct runner *R, struct sc_site *s, const struct sc_ctx *c)
{
	struct sc_mapdef *d = &R->P->maps[s->fast.map];
	uint64_t key = s->fast.key >= 0 ? c->col[s->fast.key][c->i] : 0;
	uint64_t *v = sc_map_put_fast(&d->m, &key);
	if (!v) {
		R->rt.err = -ENOMEM;
		snprintf(R->rt.errmsg, sizeof(R->rt.errmsg), "out of memory for map entries");
		return -1;
	}
	s->fired++;
	R->st->fired++;
	if (s->fast.op == OP_COUNT) {
		v[0]++;
	} else {
		uint64_t x = c->col[s->fast.val][c->i];
		if (s->fast.op == OP_SUM)
			v[0] += x;
		else
			v[(int64_t)x < 0 ? 0 : !x ? 1 : 2 + 63 - __builtin_clzll(x)]++;
	}
	return 0;
}

static inline int dispatch(struct runner *R, const struct sc_tinfo *ti, struct sc_ctx *c)
{
	if (ti->nsites == 1 && ti->sites[0]->fast.op)
		return fast(R, ti->sites[0], c);
	if (!ti->dyn) {
		for (uint32_t k = 0; k < ti->nsites; k++)
			if (run_site(R, ti->sites[k], c))
				return -1;
		return 0;
	}
	uint64_t mask = sc_resolve(&R->rt, c, ti);
	for (uint32_t k = 0; k < ti->nsites && mask; k++) {
		struct sc_site *s = ti->sites[k];
		if (!(mask >> k & 1))
			continue;
		if (s->dyn)
			c->probe = sc_site_probe(&R->rt, s, c->func);
		if (run_site(R, s, c))
			return -1;
	}
	return 0;
}

static int damaged(struct runner *R, const char *msg)
{
	if (!R->st->damaged++)
		snprintf(R->st->damage, sizeof(R->st->damage), "%s", msg);
	/* damage that keeps coming without progress ends the run */
	return R->st->damaged > tpp_r_nchunks(R->P->r) + 16;
}

static uint64_t intern_cb(void *ctx, const char *s, uint32_t len)
{
	return sc_sv(sc_intern_c(ctx, s, len));
}

/* 0 at the end or after exit(), -ENOTSUP when the file does not suit a
 * scan (nothing has run yet), <0 for a run-time error. */
static int by_columns(struct runner *R, const uint32_t *want, const struct tps_opts *o)
{
	struct sc_prog *P = R->P;
	struct tpp_scan_opts so = {.sz = sizeof(so), .from_ts = o->from_ts, .to_ts = o->to_ts, .want = want,
				   .intern = intern_cb, .intern_ctx = P->strs};
	struct tpp_scan *s;
	int rc = tpp_scan_open(&s, P->r, &so);
	if (rc)
		return rc;
	R->st->columns = 1;
	struct tpp_run runs[256];
	struct sc_ctx c;
	memset(&c, 0, sizeof(c));
	rc = 0;
	for (;;) {
		int n = tpp_scan_runs(s, runs, 256);
		if (!n)
			break;
		if (n < 0) {
			if (damaged(R, tpp_scan_error(s)))
				break;
			continue;
		}
		for (int k = 0; k < n; k++) {
			const struct tpp_cols *cols = runs[k].c;
			const uint16_t *type = cols->type;
			c.col = cols->col;
			c.cpu = cols->cpu;
			R->st->events += runs[k].to - runs[k].from;
			for (uint32_t i = runs[k].from; i < runs[k].to; i++) {
				const struct sc_tinfo *ti = &P->ti[type[i]];
				if (!ti->nsites)
					continue;
				uint64_t ts = cols->ts[i];
				if (ts >= R->next_iv && (fire_due(R, ts) || R->rt.stop))
					goto out;
				c.ts = ts;
				c.tid = cols->tid[i];
				c.i = i;
				c.type = type[i];
				c.thr = NULL;
				if (dispatch(R, ti, &c))
					goto out;
				if (R->rt.stop) {
					R->rt.t_end = ts;
					goto out;
				}
			}
			R->rt.t_end = cols->ts[runs[k].to - 1];
		}
		if (o->progress)
			o->progress(o->progress_ctx, R->st->events, 0);
	}
out:
	if (R->rt.err)
		rc = R->rt.err;
	tpp_scan_close(s);
	return rc;
}

static int by_rows(struct runner *R, const uint32_t *want, const struct tps_opts *o)
{
	struct sc_prog *P = R->P;
	struct tpp_iter_opts io = {.sz = sizeof(io), .sorted = 1, .from_ts = o->from_ts, .to_ts = o->to_ts, .want = want};
	struct tpp_iter *it;
	int rc = tpp_iter_open(&it, P->r, &io);
	if (rc)
		return rc;
	uint64_t vals[TPP_MAX_FIELDS];
	const uint64_t *colp[TPP_MAX_FIELDS];
	for (int k = 0; k < TPP_MAX_FIELDS; k++)
		colp[k] = &vals[k];
	struct sc_ctx c;
	memset(&c, 0, sizeof(c));
	c.col = colp;
	for (;;) {
		const struct tpp_event *ev;
		size_t stride;
		int n = tpp_iter_run(it, &ev, &stride);
		if (!n)
			break;
		if (n < 0) {
			if (damaged(R, tpp_iter_error(it)))
				break;
			continue;
		}
		for (int j = 0; j < n; j++, ev = (const struct tpp_event *)(const void *)((const char *)ev + stride)) {
			R->st->events++;
			const struct sc_tinfo *ti = &P->ti[ev->type];
			if (!ti->nsites || !ev->t)
				continue;
			if (ev->ts >= R->next_iv && (fire_due(R, ev->ts) || R->rt.stop))
				goto out;
			for (unsigned k = 0; k < ti->nslots; k++) {
				const union tpp_val *x = &ev->v[ti->field[k]];
				if (ti->conv[k] == 0) {
					vals[k] = x->u;
					continue;
				}
				const struct sc_str *s = ti->conv[k] == 1 ? sc_intern_c(P->strs, x->s.p, x->s.len)
									  : sc_intern(P->strs, x->s.p ? x->s.p : "", x->s.len);
				if (!s) {
					rc = -ENOMEM;
					goto out;
				}
				vals[k] = sc_sv(s);
			}
			c.ts = ev->ts;
			c.tid = ev->tid;
			c.cpu = ev->cpu;
			c.type = ev->type;
			c.thr = NULL;
			R->rt.t_end = ev->ts;
			if (dispatch(R, ti, &c) || R->rt.stop)
				goto out;
		}
		if (o->progress)
			o->progress(o->progress_ctx, R->st->events, 0);
	}
out:
	if (R->rt.err)
		rc = R->rt.err;
	tpp_iter_close(it);
	return rc;
}

/* The trace's first and last event times, from the chunk index. */
static void span(const struct sc_prog *P, const struct tps_opts *o, uint64_t *t0, uint64_t *t1)
{
	*t0 = UINT64_MAX;
	*t1 = 0;
	for (size_t i = 0; i < tpp_r_nchunks(P->r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(P->r, i);
		if (c->kind != TPP_C_EVENTS || !c->count)
			continue;
		if (c->first_ts < *t0)
			*t0 = c->first_ts;
		if (c->last_ts > *t1)
			*t1 = c->last_ts;
	}
	if (*t0 == UINT64_MAX)
		*t0 = 0;
	if (o->from_ts > *t0)
		*t0 = o->from_ts;
	if (o->to_ts && o->to_ts < *t1)
		*t1 = o->to_ts;
}

int sc_run(struct sc_prog *P, const struct tps_opts *o, struct tps_stats *st, char *err, size_t errlen)
{
	struct runner *R = calloc(1, sizeof(*R));
	uint32_t *want = calloc(TPP_MAX_TYPES, sizeof(*want));
	int rc = -ENOMEM;
	memset(st, 0, sizeof(*st));
	if (!R || !want || (R->P = P, R->st = st, sc_rt_init(&R->rt, P, o->fd)))
		goto done;
	uint64_t t0, t1;
	span(P, o, &t0, &t1);
	R->rt.t0 = t0;
	R->rt.t_end = t0;
	int rows = o->rows;
	for (unsigned id = 0; id < TPP_MAX_TYPES; id++) {
		want[id] = P->ti[id].nsites ? P->ti[id].want : 0;
		rows |= P->ti[id].nsites && P->ti[id].rows_only;
	}
	for (uint32_t i = 0; i < P->nsites; i++)
		if (P->sites[i]->kind == SK_INTERVAL)
			R->niv++;
	if (R->niv && !(R->iv = calloc(R->niv, sizeof(*R->iv))))
		goto done;
	R->niv = 0;
	for (uint32_t i = 0; i < P->nsites; i++)
		if (P->sites[i]->kind == SK_INTERVAL) {
			R->iv[R->niv].s = P->sites[i];
			R->iv[R->niv++].next = t0 + P->sites[i]->every;
		}
	next_iv(R);
	rc = run_kind(R, SK_BEGIN, t0);
	if (!rc && !R->rt.stop) {
		rc = rows ? -ENOTSUP : by_columns(R, want, o);
		if (rc == -ENOTSUP)
			rc = by_rows(R, want, o);
	}
	if (o->progress)
		o->progress(o->progress_ctx, st->events, 1);
	/* the intervals that fall before the recording's end */
	if (!rc && !R->rt.stop)
		rc = fire_due(R, t1);
	st->exited = R->rt.stop && !R->rt.out_err;
	if (!R->rt.err && !R->rt.out_err) {
		R->rt.stop = 0;
		/* END comes at the end of the recording, or where exit() was */
		if (!rc)
			rc = run_kind(R, SK_END, st->exited || R->rt.t_end > t1 ? R->rt.t_end : t1);
		sc_print_all(&R->rt);
	}
	for (uint32_t i = 0; R->rt.spec && i < R->rt.nspec; i++)
		st->spec_dropped += R->rt.spec[i].live;
	st->spec_full = R->rt.spec_full;
	sc_out_flush(&R->rt);
	if (R->rt.err) {
		rc = R->rt.err;
		snprintf(err, errlen, "%s", R->rt.errmsg);
	} else if (R->rt.out_err) {
		rc = R->rt.out_err;
		snprintf(err, errlen, "writing output: %s", strerror(-rc));
	} else if (rc < 0) {
		snprintf(err, errlen, "%s", rc == -ENOMEM ? "out of memory" : tpp_strerror(rc));
	}
done:
	if (R && R->P)
		sc_rt_free(&R->rt);
	if (R)
		free(R->iv);
	free(R);
	free(want);
	return rc < 0 ? rc : 0;
}
