/* Call graph: per-function totals and the call tree aggregated by path,
 * from paired calls. Recursion counts each activation in calls and self
 * time, but a function's total is the time spent inside it: a call nested
 * in an open call of the same function (fib inside fib, even inside odd
 * inside even) adds nothing to it, as in uftrace report. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze.h"

struct cg_run {
	struct an_cg *cg;
	struct an_pair *p;
	const struct an_types *ty;
	const struct an_filter *f;
	const struct tpp_names *names;
	int err;
};

static int grow_fs(struct an_cg *cg, uint32_t func)
{
	if (func < cg->nfs)
		return 0;
	size_t nn = cg->nfs ? cg->nfs : 64;
	while (nn <= func)
		nn *= 2;
	struct an_func_stat *n = realloc(cg->fs, nn * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + cg->nfs, 0, (nn - cg->nfs) * sizeof(*n));
	for (size_t i = cg->nfs; i < nn; i++)
		n[i].min_ns = UINT64_MAX;
	cg->fs = n;
	cg->nfs = nn;
	return 0;
}

static uint32_t child(struct an_cg *cg, uint32_t parent, uint32_t func)
{
	uint64_t k = (uint64_t)parent << 32 | func;
	uint32_t *v = hmap_get(&cg->child, k);
	if (v)
		return *v;
	if (cg->nnodes == cg->capnodes) {
		size_t nc = cg->capnodes * 2;
		struct an_cg_node *n = realloc(cg->nodes, nc * sizeof(*n));
		if (!n)
			return UINT32_MAX;
		cg->nodes = n;
		cg->capnodes = nc;
	}
	if (hmap_put(&cg->child, k, (uint32_t)cg->nnodes))
		return UINT32_MAX;
	struct an_cg_node *n = &cg->nodes[cg->nnodes];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->func = func;
	/* once per path: its calls are all nested or none is */
	for (uint32_t a = parent; a && !n->nested; a = cg->nodes[a].parent)
		n->nested = cg->nodes[a].func == func;
	return (uint32_t)cg->nnodes++;
}

static void on_entry(void *ctx, struct an_thread *th, const struct tpp_event *ev)
{
	(void)ev;
	struct cg_run *r = ctx;
	struct an_frame *f = &th->st[th->depth - 1];
	uint32_t parent = th->depth > 1 ? th->st[th->depth - 2].node : 0;
	f->node = parent == UINT32_MAX ? UINT32_MAX : child(r->cg, parent, f->func);
	if (f->node == UINT32_MAX || grow_fs(r->cg, f->func))
		r->err = -ENOMEM;
}

static void on_exit_(void *ctx, struct an_thread *th, const struct an_call *c,
		     const struct tpp_event *ev)
{
	(void)ev;
	struct cg_run *r = ctx;
	struct an_frame *f = &th->st[th->depth - 1];
	if (grow_fs(r->cg, f->func)) {
		r->err = -ENOMEM;
		return;
	}
	struct an_func_stat *s = &r->cg->fs[f->func];
	/* A frame this thread did not enter (inherited at fork, resumed
	 * after a context switch) is not a call; its time counts. */
	int call = !(c->flags & AN_CALL_RESUMED);
	s->calls += call;
	if (f->node == UINT32_MAX || !r->cg->nodes[f->node].nested)
		s->total_ns += c->dur;
	s->self_ns += c->self;
	/* A call without its return lasted until an unknown time: it counts
	 * in the totals up to where it was left, never in min and max. */
	if (!call) {
	} else if (c->flags & (AN_CALL_NORET | AN_CALL_UNWOUND)) {
		s->noret++;
	} else {
		if (c->dur > s->max_ns)
			s->max_ns = c->dur;
		if (c->dur < s->min_ns)
			s->min_ns = c->dur;
	}
	if (f->node != UINT32_MAX) {
		struct an_cg_node *n = &r->cg->nodes[f->node];
		n->calls += call;
		n->total_ns += c->dur;
		n->self_ns += c->self;
	}
}

static void on_orphan(void *ctx, struct an_thread *th, uint32_t func, const struct tpp_event *ev)
{
	(void)th;
	(void)ev;
	struct cg_run *r = ctx;
	if (func == UINT32_MAX || grow_fs(r->cg, func)) {
		r->err = -ENOMEM;
		return;
	}
	r->cg->fs[func].orphans++;
}

static int wanted(const struct cg_run *r, int32_t tid)
{
	const struct an_filter *f = r->f;
	if (!f)
		return 1;
	if (f->tids) {
		size_t i = 0;
		while (i < f->ntids && f->tids[i] != tid)
			i++;
		if (i == f->ntids)
			return 0;
	}
	if (f->comm) {
		const char *c = r->names ? tpp_names_comm(r->names, tid) : NULL;
		if (!c || strcmp(c, f->comm))
			return 0;
	}
	return 1;
}

static int feed(void *ctx, const struct tpp_event *ev)
{
	struct cg_run *r = ctx;
	uint8_t k = an_ti(r->ty, ev)->kind;
	if (k >= AN_FENTRY && k <= AN_URET && !wanted(r, ev->tid))
		return 0;
	int err;
	an_pair_feed(r->p, ev, &err);
	return err ? err : r->err;
}

static const struct an_pair_ops cg_ops = {on_entry, on_exit_, on_orphan};

int an_cg_build(struct an_cg *cg, struct tpp_reader *rd, const struct tpp_names *names,
		struct an_syms *syms, const struct an_filter *f)
{
	memset(cg, 0, sizeof(*cg));
	cg->syms = syms;
	cg->capnodes = 256;
	cg->nodes = calloc(cg->capnodes, sizeof(*cg->nodes));
	if (!cg->nodes)
		return -ENOMEM;
	cg->nnodes = 1; /* the root */
	struct an_types *ty = malloc(sizeof(*ty));
	if (!ty)
		return -ENOMEM;
	an_types_init(ty, rd);
	struct cg_run r = {.cg = cg, .ty = ty, .f = f, .names = names};
	int rc = an_pair_open(&r.p, ty, syms, names, &cg_ops, &r);
	if (rc == 0) {
		rc = an_run(rd, f, 1, feed, &r, &cg->run);
		an_pair_finish(r.p);
		an_pair_stats(r.p, &cg->ps);
		an_pair_close(r.p);
	}
	free(ty);
	return rc ? rc : r.err;
}

void an_cg_free(struct an_cg *cg)
{
	free(cg->fs);
	free(cg->nodes);
	hmap_free(&cg->child);
	memset(cg, 0, sizeof(*cg));
}
