/* sc_rt — what a running program keeps besides its maps: the output and
 * its speculations, the threads (names over time, pids, self->
 * variables), and the function each uprobe event's address is. */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sc_int.h"

#define OUT_FLUSH (64u << 10)

static int by_tid_ts(const void *a, const void *b)
{
	const struct sc_task *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

int sc_rt_init(struct sc_rt *rt, struct sc_prog *P, int fd)
{
	memset(rt, 0, sizeof(*rt));
	rt->P = P;
	rt->fd = fd;
	rt->sink = &rt->out;
	rt->wall_off = tpp_r_info(P->r)->wall_offset_ns;
	if (!(rt->json = malloc(sizeof(*rt->json))))
		return -ENOMEM;
	if (sc_map_init(&rt->threads, 1, 1, NULL) || sc_map_init(&rt->funcs, 3, 3, NULL))
		return -ENOMEM;
	for (uint32_t i = 0; i < P->nmaps; i++) {
		struct sc_mapdef *d = &P->maps[i];
		/* min and max start from the far end, so the first value wins */
		d->init[0] = d->kind == MK_MIN ? (uint64_t)INT64_MAX : d->kind == MK_MAX ? (uint64_t)INT64_MIN : 0;
		if (sc_map_init(&d->m, d->keyed ? d->nkeys : 0, sc_mk_words(d),
				d->kind == MK_MIN || d->kind == MK_MAX ? d->init : NULL))
			return -ENOMEM;
	}
	/* task names over time: every record of the file, by tid then time */
	const struct tpp_meta *m = tpp_r_meta(P->r);
	if (m->ntasks) {
		if (!(rt->recs = calloc(m->ntasks, sizeof(*rt->recs))))
			return -ENOMEM;
		for (size_t i = 0; i < m->ntasks; i++) {
			rt->recs[i].tid = m->tasks[i].tid;
			rt->recs[i].pid = m->tasks[i].pid;
			rt->recs[i].ts = m->tasks[i].ts;
			rt->recs[i].comm = m->tasks[i].comm;
		}
		rt->nrecs = m->ntasks;
		qsort(rt->recs, rt->nrecs, sizeof(*rt->recs), by_tid_ts);
	}
	return 0;
}

void sc_rt_free(struct sc_rt *rt)
{
	if (!rt->P)
		return;
	for (uint32_t i = 0; i < rt->threads.n; i++) {
		struct sc_thr *t = (struct sc_thr *)(uintptr_t)sc_map_ent(&rt->threads, i)[1];
		free(t->self);
		free(t);
	}
	sc_map_free(&rt->threads);
	sc_map_free(&rt->funcs);
	for (uint32_t i = 0; i < rt->P->nmaps; i++)
		sc_map_free(&rt->P->maps[i].m);
	for (uint32_t i = 0; rt->spec && i < rt->nspec; i++)
		free(rt->spec[i].b.p);
	free(rt->spec);
	free(rt->spec_free);
	free(rt->recs);
	free(rt->uid);
	free(rt->nobody.self);
	free(rt->out.p);
	free(rt->line.p);
	free(rt->msg.p);
	free(rt->json);
	memset(rt, 0, sizeof(*rt));
}

/* ------------------------------------------------------------ output */

void sc_out_flush(struct sc_rt *rt)
{
	size_t off = 0;
	while (off < rt->out.len && !rt->out_err) {
		ssize_t k = write(rt->fd, rt->out.p + off, rt->out.len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			rt->out_err = k < 0 ? -errno : -EIO;
		else
			off += (size_t)k;
	}
	rt->out.len = 0;
	/* nobody reads on: stop rather than work for nothing */
	if (rt->out_err)
		rt->stop = 1;
}

void sc_emit(struct sc_rt *rt, const char *s, size_t n)
{
	struct sc_buf *b = rt->sink;
	if (!b || !n)
		return;
	if (sc_buf_put(b, s, n)) {
		if (!rt->err) {
			rt->err = -ENOMEM;
			snprintf(rt->errmsg, sizeof(rt->errmsg), "out of memory for output");
		}
		return;
	}
	if (b == &rt->out && b->len >= OUT_FLUSH)
		sc_out_flush(rt);
}

void sc_emitf(struct sc_rt *rt, const char *fmt, ...)
{
	char t[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t, sizeof(t), fmt, ap);
	va_end(ap);
	if (n > 0)
		sc_emit(rt, t, (size_t)n < sizeof(t) ? (size_t)n : sizeof(t) - 1);
}

void sc_json_str(struct sc_rt *rt, struct sc_buf *b, const char *s, size_t n)
{
	/* the project's one JSON escaper writes into an ofast: pieces small
	 * enough never to fill it, cut between UTF-8 sequences, each one's
	 * quotes dropped */
	struct ofast *o = rt->json;
	sc_buf_put(b, "\"", 1);
	do {
		size_t k = n > 8192 ? 8192 : n;
		while (k < n && k > 1 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
		of_init(o, -1);
		of_json_str(o, s, k);
		if (o->len >= 2)
			sc_buf_put(b, o->buf + 1, o->len - 2);
		s += k;
		n -= k;
	} while (n);
	sc_buf_put(b, "\"", 1);
}

void sc_emit_json_msg(struct sc_rt *rt, const char *type, const char *s, size_t n)
{
	struct sc_buf *b = &rt->msg;
	b->len = 0;
	sc_buf_put(b, "{\"type\": \"", 10);
	sc_buf_put(b, type, strlen(type));
	sc_buf_put(b, "\", \"data\": ", 11);
	sc_json_str(rt, b, s, n);
	sc_buf_put(b, "}\n", 2);
	sc_emit(rt, b->p, b->len);
}

/* ----------------------------------------------------------- threads */

struct sc_thr *sc_thread(struct sc_rt *rt, int32_t tid)
{
	struct sc_thr *nobody = &rt->nobody;
	if (tid < 0) {
		/* BEGIN, END and intervals run in no task */
		if (!nobody->comm) {
			nobody->tid = -1;
			nobody->comm = sc_sv(sc_intern(rt->P->strs, "", 0));
			nobody->until = UINT64_MAX;
		}
		return nobody;
	}
	uint64_t key = (uint64_t)(uint32_t)tid;
	uint64_t *v = sc_map_get(&rt->threads, &key);
	if (v)
		return (struct sc_thr *)(uintptr_t)v[0];
	struct sc_thr *t = calloc(1, sizeof(*t));
	if (!t || !(v = sc_map_put(&rt->threads, &key))) {
		free(t);
		return sc_thread(rt, -1);
	}
	v[0] = (uint64_t)(uintptr_t)t;
	t->tid = tid;
	/* its records: a binary search for the first of tid */
	size_t lo = 0, hi = rt->nrecs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (rt->recs[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	t->rec = (uint32_t)lo;
	while (lo < rt->nrecs && rt->recs[lo].tid == tid)
		lo++;
	t->nrec = (uint32_t)(lo - t->rec);
	t->pid = rt->P->names ? tpp_names_pid(rt->P->names, tid) : -1;
	if (t->pid < 0 && t->nrec)
		t->pid = rt->recs[t->rec + t->nrec - 1].pid;
	if (t->pid < 0)
		t->pid = tid;
	t->until = 0; /* nothing cached */
	return t;
}

uint64_t sc_comm_at(struct sc_rt *rt, struct sc_thr *t, uint64_t ts)
{
	if (ts >= t->from && ts < t->until)
		return t->comm;
	if (!t->nrec) {
		const char *c = rt->P->names ? tpp_names_comm(rt->P->names, t->tid) : NULL;
		t->comm = sc_sv(sc_intern_c(rt->P->strs, c ? c : "", c ? strlen(c) : 0));
		t->from = 0;
		t->until = UINT64_MAX;
		return t->comm;
	}
	/* the last record at or before ts names the task; before the first,
	 * the first does (the task was named before the file knew it) */
	struct sc_task *r = rt->recs + t->rec;
	uint32_t lo = 0, hi = t->nrec;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (r[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint32_t k = lo ? lo - 1 : 0;
	t->cur = t->rec + k;
	t->from = lo ? r[k].ts : 0;
	t->until = k + 1 < t->nrec ? r[k + 1].ts : UINT64_MAX;
	if (!r[k].sv)
		r[k].sv = sc_sv(sc_intern_c(rt->P->strs, r[k].comm, strnlen(r[k].comm, sizeof(((struct tpp_task *)0)->comm))));
	t->comm = r[k].sv;
	return t->comm;
}

/* --------------------------------------------------------- functions */

/* The object mapped at addr in pid, from the file's memory maps. */
static const char *mapped_path(const struct tpp_meta *m, int32_t pid, uint64_t addr)
{
	const char *best = NULL;
	uint64_t best_ts = 0;
	for (size_t i = 0; i < m->nmmaps; i++) {
		const struct tpp_mmap *mm = &m->mmaps[i];
		if (mm->pid == pid && addr >= mm->start && addr < mm->end && (!best || mm->ts >= best_ts)) {
			best = mm->path;
			best_ts = mm->ts;
		}
	}
	return best;
}

/* A recorded uprobe type's function from its name: tracerec names the
 * event after it, "_N" added for a repeat, "__return" for the return. */
static size_t type_func(const char *name, char *out, size_t len)
{
	size_t n = strlen(name);
	if (n > 8 && !strcmp(name + n - 8, "__return"))
		n -= 8;
	const char *u = memrchr(name, '_', n);
	if (u && u + 1 < name + n && strspn(u + 1, "0123456789") == (size_t)(name + n - u - 1))
		n = (size_t)(u - name);
	n = n < len - 1 ? n : len - 1;
	memcpy(out, name, n);
	out[n] = 0;
	return n;
}

uint64_t sc_resolve(struct sc_rt *rt, struct sc_ctx *ctx, const struct sc_tinfo *ti)
{
	struct sc_prog *P = rt->P;
	if (ti->recorded && !rt->uid && !(rt->uid = calloc(TPP_MAX_TYPES, sizeof(*rt->uid))))
		return 0;
	struct sc_uid *u = ti->recorded ? &rt->uid[ctx->type] : NULL;
	if (u && u->placed) {
		ctx->func = u->func;
		return u->mask;
	}
	struct sc_thr *t = ctx->thr ? ctx->thr : (ctx->thr = sc_thread(rt, ctx->tid));
	uint64_t addr = ti->addr_slot >= 0 ? ctx->col[ti->addr_slot][ctx->i] : 0;
	uint64_t key[3] = {ctx->type, (uint64_t)(uint32_t)t->pid, addr};
	uint64_t *v = sc_map_get(&rt->funcs, key);
	if (!v) {
		uint64_t off = 0;
		const char *sym = P->names ? tpp_names_sym(P->names, t->pid, addr, &off) : NULL;
		const char *path = mapped_path(tpp_r_meta(P->r), t->pid, addr);
		char fallback[TPP_NAME_MAX + 1], hex[24];
		const char *fname = sym;
		/* a uprobe type is one function of one binary: when this
		 * address cannot be placed, the type's name still says which
		 * function, not which binary */
		if (!sym && ti->recorded)
			type_func(P->ti[ctx->type].sites[0]->t->name, fallback, sizeof(fallback)), fname = fallback;
		uint64_t mask = 0;
		uint32_t bins = 0;
		for (uint32_t k = 0; k < ti->nsites && k < 64; k++) {
			const struct sc_site *s = ti->sites[k];
			if (!s->dyn) {
				mask |= 1ull << k;
				continue;
			}
			if (!fname || fnmatch(s->fn, fname, 0) || (path ? !sc_bin_match(s->bin, path) : !s->recorded))
				continue;
			mask |= 1ull << k;
			bins += !path;
		}
		if (!fname) {
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
			fname = hex;
		}
		uint64_t func = sc_sv(sc_intern(P->strs, fname, strlen(fname)));
		if (u && path && sym) {
			u->placed = 1;
			u->mask = mask;
			u->func = func;
		} else if (u && bins > 1 && !u->warned) {
			u->warned = 1;
			const struct tpp_type *ty = tpp_r_type(P->r, ctx->type);
			sc_warn(P, "%s:%s: the file has no memory map of process %d to tell which binary these events come from: every probe on %s counts them",
				ty && ty->system ? ty->system : "", ty ? ty->name : "?", t->pid, fname);
		}
		if (!(v = sc_map_put(&rt->funcs, key)))
			return 0;
		v[0] = mask;
		v[1] = func;
	}
	ctx->func = v[1];
	return v[0];
}

uint64_t sc_site_probe(struct sc_rt *rt, struct sc_site *s, uint64_t func)
{
	if (!strpbrk(s->fn, "*?["))
		return s->probe_sv;
	if (func != s->last_func) {
		char buf[PATH_MAX + 300];
		snprintf(buf, sizeof(buf), "%s:%s:%s", s->kind == SK_URETPROBE ? "uretprobe" : "uprobe", s->bin,
			 sc_vs(func)->s);
		s->last_probe = sc_sv(sc_intern(rt->P->strs, buf, strlen(buf)));
		s->last_func = func;
	}
	return s->last_probe;
}
