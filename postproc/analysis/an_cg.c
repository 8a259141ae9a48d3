/* Call graph: per-function totals and the call tree aggregated by path,
 * from paired calls. Recursion counts each activation in calls and self
 * time, but a function's total is the time spent inside it: a call nested
 * in an open call of the same function (fib inside fib, even inside odd
 * inside even) adds nothing to it, as in uftrace report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "an_cg.h"
#include "an_types.h"
#include "an_syms.h"
#include "an_run.h"
#include "an_pair.h"

struct cg_run {
	struct an_cg *cg;
	struct an_pair *p;
	const struct an_types *ty;
	const struct an_filter *f;
	const struct tpp_names *names;
	int thread_roots;
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

/* The two nodes a thread's stacks hang from with thread roots: "comm-pid"
 * (the process's name) and "tid", interned as names so that paths, folded
 * stacks and the tree print them as frames. th->user caches the tid node
 * (0: not made yet). UINT32_MAX on -ENOMEM. */
static uint32_t thread_root(struct cg_run *r, struct an_thread *th)
{
	if (th->user)
		return th->user;
	int32_t pid = th->pid > 0 ? th->pid : r->names ? tpp_names_pid(r->names, th->tid) : -1;
	if (pid <= 0)
		pid = th->tid;
	const char *comm = r->names ? tpp_names_comm(r->names, pid) : NULL;
	if (!comm && r->names)
		comm = tpp_names_comm(r->names, th->tid);
	char name[64];
	int n = snprintf(name, sizeof(name), "%.32s-%d", comm ? comm : "?", (int)pid);
	/* ';' separates the frames of a folded stack: not in a name */
	for (int i = 0; i < n && i < (int)sizeof(name); i++)
		if (name[i] == ';')
			name[i] = '_';
	uint32_t proc = an_func_id_named(r->cg->syms, name);
	snprintf(name, sizeof(name), "%d", (int)th->tid);
	uint32_t tid = an_func_id_named(r->cg->syms, name);
	if (proc == UINT32_MAX || tid == UINT32_MAX)
		return UINT32_MAX;
	uint32_t pn = child(r->cg, 0, proc);
	uint32_t tn = pn == UINT32_MAX ? UINT32_MAX : child(r->cg, pn, tid);
	if (tn != UINT32_MAX)
		th->user = tn;
	return tn;
}

static void on_entry(void *ctx, struct an_thread *th, const struct tpp_event *ev)
{
	(void)ev;
	struct cg_run *r = ctx;
	struct an_frame *f = &th->st[th->depth - 1];
	uint32_t parent = th->depth > 1 ? th->st[th->depth - 2].node : r->thread_roots ? thread_root(r, th) : 0;
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
		if (!c || !an_comm_match(f->comm, c))
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
	return an_cg_build_roots(cg, rd, names, syms, f, 0);
}

int an_cg_build_roots(struct an_cg *cg, struct tpp_reader *rd, const struct tpp_names *names,
		      struct an_syms *syms, const struct an_filter *f, int thread_roots)
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
	struct cg_run r = {.cg = cg, .ty = ty, .f = f, .names = names, .thread_roots = thread_roots};
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
