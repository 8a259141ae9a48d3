/* tracepp callgraph: per-function totals, the call tree by path, callers and
 * callees of one function, folded stacks for flame graphs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_cli.h"
#include "an_merge.h"
#include "commands.h"
#include "cg_print.h"
#include "esc.h"
#include "an_syms.h"
#include "an_cg.h"

static const char usage_text[] =
	"usage: tracepp callgraph [OPTIONS] FILE...\n"
	"Per function: calls, total, self, average, min and max time (default).\n"
	"  --tree           the call tree aggregated by path\n"
	"  --callers=F      who calls F, and F's time under each caller\n"
	"  --callees=F      what F calls (\"downstack\"), time under F\n"
	"  --folded         folded stacks (path;to;func SELF_NS) for flame graphs\n"
	"  --root=thread    each thread's stacks under its process and thread, so threads do\n"
	"                   not merge: comm-pid;tid;main;... (--folded, --tree; default none)\n"
	"  --sort=total|self|calls|name   row order (default total)\n"
	"  --format=text|json|csv, --time-range=FROM,TO, --tid=TID[,TID], --comm=NAME[,NAME]\n"
	"Calls without a return (end of trace, longjmp) count up to where they\n"
	"were left; 'noret' and 'orphans' (returns without entry) say how many.\n"
	ACLI_MULTI_USAGE
	"                           (--folded: HOST;path;to;func SELF_NS)\n"
	"Merged (without --by-host): one row per function name across the files (its\n"
	"calls, times, noret and orphans added, min and max over all), as --callers and\n"
	"--callees; --tree: one tree of the files' paths (a path's calls and times added).\n";

enum mode { M_FUNCS, M_TREE, M_CALLERS, M_CALLEES, M_FOLDED };

static int sort_by;
static const struct an_func_stat *sort_fs;
static const struct an_syms *sort_syms;
static int cmp_funcs(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct an_func_stat *fx = &sort_fs[x], *fy = &sort_fs[y];
	uint64_t kx = fx->total_ns, ky = fy->total_ns;
	if (sort_by == 1)
		kx = fx->self_ns, ky = fy->self_ns;
	else if (sort_by == 2)
		kx = fx->calls, ky = fy->calls;
	else if (sort_by == 3)
		return strcmp(an_func_name(sort_syms, x), an_func_name(sort_syms, y));
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(an_func_name(sort_syms, x), an_func_name(sort_syms, y));
}

static const struct tbl_col fcols[] = {
	{"func", NULL, TBL_STR},
	{"calls", NULL, TBL_INT},
	{"total_ns", "total", TBL_NS},
	{"self_ns", "self", TBL_NS},
	{"avg_ns", "avg", TBL_NS},
	{"min_ns", "min", TBL_NS},
	{"max_ns", "max", TBL_NS},
	{"noret", NULL, TBL_INT},
	{"orphans", NULL, TBL_INT},
};

/* Several files merged: a function's numbers across them, by name. */
static void add_stat(struct an_func_stat *to, const struct an_func_stat *s)
{
	if (!to->calls && !to->orphans)
		to->min_ns = UINT64_MAX;
	to->calls += s->calls;
	to->total_ns += s->total_ns;
	to->self_ns += s->self_ns;
	to->noret += s->noret;
	to->orphans += s->orphans;
	if (s->min_ns < to->min_ns)
		to->min_ns = s->min_ns;
	if (s->max_ns > to->max_ns)
		to->max_ns = s->max_ns;
}

static int merge_funcs(struct amerge *m, struct an_cg *cg, const struct an_func_stat *fs, size_t nfs)
{
	for (size_t i = 0; i < nfs; i++) {
		if (!fs[i].calls && !fs[i].orphans)
			continue;
		const char *name = an_func_name(cg->syms, (uint32_t)i);
		int made;
		struct an_func_stat *e = amerge_get(m, name, strlen(name), &made);
		if (!e)
			return -ENOMEM;
		add_stat(e, &fs[i]);
	}
	return 0;
}

static void funcs_row(struct tbl_cell *v, const char *name, const struct an_func_stat *s)
{
	v[0] = (struct tbl_cell){.s = name};
	v[1] = (struct tbl_cell){.i = (int64_t)s->calls};
	v[2] = (struct tbl_cell){.i = (int64_t)s->total_ns};
	v[3] = (struct tbl_cell){.i = (int64_t)s->self_ns};
	v[4] = (struct tbl_cell){.i = (int64_t)(s->calls ? s->total_ns / s->calls : 0)};
	v[5] = (struct tbl_cell){.i = (int64_t)(s->min_ns != UINT64_MAX ? s->min_ns : 0)};
	v[6] = (struct tbl_cell){.i = (int64_t)s->max_ns};
	v[7] = (struct tbl_cell){.i = (int64_t)s->noret};
	v[8] = (struct tbl_cell){.i = (int64_t)s->orphans};
}

static int cmp_merged(const void *a, const char *ka, const void *b, const char *kb)
{
	const struct an_func_stat *fx = a, *fy = b;
	uint64_t kx = fx->total_ns, ky = fy->total_ns;
	if (sort_by == 1)
		kx = fx->self_ns, ky = fy->self_ns;
	else if (sort_by == 2)
		kx = fx->calls, ky = fy->calls;
	if (sort_by != 3 && kx != ky)
		return kx > ky ? -1 : 1;
	return strcmp(ka, kb);
}

/* The merged functions, in --sort's order: 0 or 1 (output failed). */
static int print_merged_funcs(struct acli *c, const struct amerge *m)
{
	uint32_t *ids = amerge_sorted(m, cmp_merged);
	struct table *t = ids ? tbl_open(stdout, c->fmt, fcols, sizeof(fcols) / sizeof(fcols[0])) : NULL;
	if (!t) {
		free(ids);
		return acli_fail(c, -ENOMEM, NULL);
	}
	int rc = 0;
	for (size_t i = 0; !rc && i < m->n; i++) {
		struct tbl_cell v[9];
		funcs_row(v, m->keys[ids[i]], amerge_at(m, ids[i]));
		rc = tbl_row(t, v);
	}
	free(ids);
	return tbl_close(t) || rc ? 1 : 0;
}

static int print_funcs(struct acli *c, struct an_cg *cg, const struct an_func_stat *fs,
		       size_t nfs)
{
	uint32_t *ids = malloc((nfs + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < nfs; i++)
		if (fs[i].calls || fs[i].orphans)
			ids[n++] = (uint32_t)i;
	sort_fs = fs;
	sort_syms = cg->syms;
	qsort(ids, n, sizeof(*ids), cmp_funcs);
	struct table *t = acli_tbl_open(c, fcols, sizeof(fcols) / sizeof(fcols[0]));
	for (size_t i = 0; t && i < n; i++) {
		const struct an_func_stat *s = &fs[ids[i]];
		struct tbl_cell v[9];
		funcs_row(v, an_func_name(cg->syms, ids[i]), s);
		/* several hosts' functions merged in the order --sort asks */
		int64_t key = sort_by == 1 ? (int64_t)s->self_ns : sort_by == 2 ? (int64_t)s->calls
			    : sort_by == 3 ? 0 : (int64_t)s->total_ns;
		if (acli_tbl_row(c, t, v, key))
			t = NULL;
	}
	free(ids);
	return t && acli_tbl_close(c, t) == 0 ? 0 : -EIO;
}

/* Children lists of the tree, built once from the parent links. */
struct kids {
	uint32_t *first, *next;
};

static int build_kids(const struct an_cg *cg, struct kids *k)
{
	k->first = malloc(cg->nnodes * sizeof(uint32_t));
	k->next = malloc(cg->nnodes * sizeof(uint32_t));
	if (!k->first || !k->next)
		return -ENOMEM;
	memset(k->first, 0xff, cg->nnodes * sizeof(uint32_t));
	/* reverse order so children come out in creation (first-call) order */
	for (size_t i = cg->nnodes; i-- > 1;) {
		uint32_t p = cg->nodes[i].parent;
		k->next[i] = k->first[p];
		k->first[p] = (uint32_t)i;
	}
	return 0;
}

static const struct tbl_col tcols[] = {
	{"path", NULL, TBL_RAWJSON},
	{"depth", NULL, TBL_INT},
	{"calls", NULL, TBL_INT},
	{"total_ns", "total", TBL_NS},
	{"self_ns", "self", TBL_NS},
	{"func", "function", TBL_STR},
};

static int print_tree(struct acli *c, struct an_cg *cg)
{
	struct kids k;
	if (build_kids(cg, &k))
		return -ENOMEM;
	struct table *t = acli_tbl_open(c, tcols, sizeof(tcols) / sizeof(tcols[0]));
	/* Depth-first walk with an explicit stack: trees get deep. */
	size_t cap = 64, sp = 0;
	uint32_t *st = malloc(cap * sizeof(*st)), *dp = malloc(cap * sizeof(*dp));
	char *path = malloc(1 << 16), *label = malloc(1024);
	int rc = 0;
	if (!st || !dp || !path || !label || !t) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t x = k.first[0]; x != UINT32_MAX; x = k.next[x])
		sp++;
	/* push roots in reverse so they pop in order */
	{
		size_t i = sp;
		if (sp > cap) {
			cap = sp * 2;
			st = realloc(st, cap * sizeof(*st));
			dp = realloc(dp, cap * sizeof(*dp));
			if (!st || !dp) {
				rc = -ENOMEM;
				goto out;
			}
		}
		for (uint32_t x = k.first[0]; x != UINT32_MAX; x = k.next[x]) {
			st[--i] = x;
			dp[i] = 0;
		}
	}
	while (sp) {
		uint32_t x = st[--sp], d = dp[sp];
		const struct an_cg_node *nd = &cg->nodes[x];
		const char *name = an_func_name(cg->syms, nd->func);
		if (c->fmt == TBL_TEXT)
			snprintf(label, 1024, "%*s%s", (int)(2 * (d < 200 ? d : 200)), "", name);
		else
			snprintf(label, 1024, "%s", name);
		if (c->fmt == TBL_JSON && cg_path(cg, x, path, 1 << 16, ';', 1))
			snprintf(path, 1 << 16, "null");
		struct tbl_cell v[] = {{.s = path},          {.i = d},
				       {.i = (int64_t)nd->calls}, {.i = (int64_t)nd->total_ns},
				       {.i = (int64_t)nd->self_ns}, {.s = label}};
		if (acli_tbl_row(c, t, v, 0)) {
			rc = -ENOMEM;
			goto out;
		}
		size_t nkids = 0;
		for (uint32_t y = k.first[x]; y != UINT32_MAX; y = k.next[y])
			nkids++;
		if (sp + nkids > cap) {
			cap = (sp + nkids) * 2;
			uint32_t *a = realloc(st, cap * sizeof(*st)), *b;
			if (!a) {
				rc = -ENOMEM;
				goto out;
			}
			st = a;
			if (!(b = realloc(dp, cap * sizeof(*dp)))) {
				rc = -ENOMEM;
				goto out;
			}
			dp = b;
		}
		size_t i = sp + nkids;
		for (uint32_t y = k.first[x]; y != UINT32_MAX; y = k.next[y]) {
			st[--i] = y;
			dp[i] = d + 1;
		}
		sp += nkids;
	}
out:
	if (t && acli_tbl_close(c, t) && !rc)
		rc = -EIO;
	free(st);
	free(dp);
	free(path);
	free(label);
	free(k.first);
	free(k.next);
	return rc;
}

/* Several files merged: a path of the tree, by its parent's path and its
 * function's name (the key: the parent's index, 4 bytes, then the name). */
struct mnode {
	uint32_t parent; /* index in the store, UINT32_MAX: a root */
	uint32_t depth;
	uint64_t calls, total_ns, self_ns;
};

static int merge_tree(struct amerge *m, const struct an_cg *cg)
{
	uint32_t *mid = malloc((cg->nnodes ? cg->nnodes : 1) * sizeof(*mid));
	char *key = malloc(4 + 4096);
	int rc = mid && key ? 0 : -ENOMEM;
	/* nodes come after their parents (a call is made inside its caller's) */
	for (size_t i = 1; !rc && i < cg->nnodes; i++) {
		const struct an_cg_node *nd = &cg->nodes[i];
		uint32_t p = nd->parent ? mid[nd->parent] : UINT32_MAX;
		const char *name = an_func_name(cg->syms, nd->func);
		size_t nl = strnlen(name, 4095);
		memcpy(key, &p, 4);
		memcpy(key + 4, name, nl);
		int made;
		struct mnode *e = amerge_get(m, key, 4 + nl, &made);
		if (!e) {
			rc = -ENOMEM;
			break;
		}
		if (made) {
			e->parent = p;
			e->depth = p == UINT32_MAX ? 0 : ((struct mnode *)amerge_at(m, p))->depth + 1;
		}
		e->calls += nd->calls;
		e->total_ns += nd->total_ns;
		e->self_ns += nd->self_ns;
		mid[i] = (uint32_t)(((unsigned char *)e - m->e) / m->size);
	}
	free(mid);
	free(key);
	return rc;
}

/* A merged path as JSON: the names from the root, as cg_path writes them. */
static char *mpath_json(const struct amerge *m, uint32_t x)
{
	uint32_t chain[512];
	int n = 0;
	for (; x != UINT32_MAX && n < 512; x = ((const struct mnode *)amerge_at(m, x))->parent)
		chain[n++] = x;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fputc('[', f);
	for (int i = n - 1; i >= 0; i--) {
		if (i != n - 1)
			fputc(',', f);
		json_str(f, m->keys[chain[i]] + 4);
	}
	fputc(']', f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The merged tree depth first, children in the order the files first gave
 * them: 0 or 1. */
static int print_merged_tree(struct acli *c, const struct amerge *m)
{
	size_t n = m->n;
	uint32_t *first = malloc((n + 1) * sizeof(*first)), *next = malloc((n + 1) * sizeof(*next));
	uint32_t *st = malloc((n + 1) * sizeof(*st));
	char *label = malloc(1024);
	struct table *t = first && next && st && label ? tbl_open(stdout, c->fmt, tcols, sizeof(tcols) / sizeof(tcols[0])) : NULL;
	int rc = t ? 0 : -ENOMEM;
	if (!rc) {
		memset(first, 0xff, (n + 1) * sizeof(*first));
		for (size_t i = n; i-- > 0;) {
			uint32_t p = ((const struct mnode *)amerge_at(m, i))->parent;
			p = p == UINT32_MAX ? (uint32_t)n : p;
			next[i] = first[p];
			first[p] = (uint32_t)i;
		}
	}
	/* every node is pushed once: the stack holds at most n */
	size_t sp = 0;
	for (uint32_t x = rc ? UINT32_MAX : first[n]; x != UINT32_MAX; x = next[x])
		sp++;
	if (!rc) {
		size_t i = sp;
		for (uint32_t x = first[n]; x != UINT32_MAX; x = next[x])
			st[--i] = x;
	}
	while (!rc && sp) {
		uint32_t x = st[--sp];
		const struct mnode *e = amerge_at(m, x);
		const char *name = m->keys[x] + 4;
		snprintf(label, 1024, "%*s%s", c->fmt == TBL_TEXT ? (int)(2 * (e->depth < 200 ? e->depth : 200)) : 0, "", name);
		char *path = c->fmt == TBL_JSON ? mpath_json(m, x) : NULL;
		struct tbl_cell v[] = {{.s = path},          {.i = e->depth},
				       {.i = (int64_t)e->calls}, {.i = (int64_t)e->total_ns},
				       {.i = (int64_t)e->self_ns}, {.s = label}};
		rc = tbl_row(t, v);
		free(path);
		for (uint32_t y = first[x]; y != UINT32_MAX; y = next[y])
			sp++;
		size_t i = sp; /* the first child on top */
		for (uint32_t y = first[x]; y != UINT32_MAX; y = next[y])
			st[--i] = y;
	}
	if (t && tbl_close(t) && !rc)
		rc = -EIO;
	free(first);
	free(next);
	free(st);
	free(label);
	return rc ? acli_fail(c, rc, NULL) : 0;
}

/* Callers (up) or callees (down) of function id, from the tree: each node
 * of F contributes its time to its parent's function (callers), or each
 * child of an F node contributes its own time (callees). */
static const struct tbl_col rcols[] = {
	{"func", NULL, TBL_STR},
	{"calls", NULL, TBL_INT},
	{"total_ns", "total", TBL_NS},
	{"self_ns", "self", TBL_NS},
};

static int print_related(struct acli *c, struct an_cg *cg, uint32_t fid, int down, struct amerge *merged)
{
	size_t nf = an_nfuncs(cg->syms);
	struct an_func_stat *agg = calloc(nf + 1, sizeof(*agg));
	if (!agg)
		return -ENOMEM;
	for (size_t i = 1; i < cg->nnodes; i++) {
		const struct an_cg_node *nd = &cg->nodes[i];
		uint32_t key;
		if (!down) {
			if (nd->func != fid)
				continue;
			/* a root call has no caller: shown as "<root>" (id nf) */
			key = nd->parent ? cg->nodes[nd->parent].func : (uint32_t)nf;
		} else {
			if (!nd->parent || cg->nodes[nd->parent].func != fid)
				continue;
			key = nd->func;
		}
		agg[key].calls += nd->calls;
		agg[key].total_ns += nd->total_ns;
		agg[key].self_ns += nd->self_ns;
	}
	if (merged) { /* several files: by caller's (callee's) name across them */
		int rc = 0;
		for (size_t i = 0; !rc && i <= nf; i++) {
			if (!agg[i].calls)
				continue;
			const char *name = i == nf ? "<root>" : an_func_name(cg->syms, (uint32_t)i);
			int made;
			struct an_func_stat *e = amerge_get(merged, name, strlen(name), &made);
			if (!e)
				rc = -ENOMEM;
			else
				add_stat(e, &agg[i]);
		}
		free(agg);
		return rc;
	}
	struct table *t = acli_tbl_open(c, rcols, 4);
	for (size_t i = 0; t && i <= nf; i++) {
		if (!agg[i].calls)
			continue;
		struct tbl_cell v[] = {{.s = i == nf ? "<root>" : an_func_name(cg->syms, (uint32_t)i)},
				       {.i = (int64_t)agg[i].calls},
				       {.i = (int64_t)agg[i].total_ns},
				       {.i = (int64_t)agg[i].self_ns}};
		if (acli_tbl_row(c, t, v, 0))
			t = NULL;
	}
	free(agg);
	return t && acli_tbl_close(c, t) == 0 ? 0 : -EIO;
}

struct cg_opts {
	enum mode mode;
	const char *fname;
	int thread_roots;
	int found; /* --callers/--callees: files that have the function */
	struct amerge merged; /* several files merged: an_func_stat by name */
	struct amerge tree;   /* ... --tree: struct mnode by path */
};

static int own_opt(struct acli *c, void *ctx, int opt, const char *arg)
{
	struct cg_opts *o = ctx;
	switch (opt) {
	case 'T':
		o->mode = M_TREE;
		break;
	case 'U':
		o->mode = M_CALLERS;
		o->fname = arg;
		break;
	case 'D':
		o->mode = M_CALLEES;
		o->fname = arg;
		break;
	case 'F':
		o->mode = M_FOLDED;
		break;
	case 'R':
		if ((o->thread_roots = cg_parse_root(arg)) < 0)
			return acli_usage_error(c, "--root: '%s' is not thread or none", arg);
		break;
	default: /* --sort */
		if (!strcmp(arg, "total"))
			sort_by = 0;
		else if (!strcmp(arg, "self"))
			sort_by = 1;
		else if (!strcmp(arg, "calls"))
			sort_by = 2;
		else if (!strcmp(arg, "name"))
			sort_by = 3;
		else
			return acli_usage_error(c, "--sort: unknown key '%s' (total, self, calls, name)",
						arg);
	}
	return 0;
}

/* --folded of several files: each stack under its host, "HOST;a;b N", as
 * flame graph tools take a fleet's stacks. */
static int folded_host(struct acli *c, const struct an_cg *cg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return -ENOMEM;
	int rc = cg_folded(m, cg, UINT32_MAX);
	if (fclose(m) && !rc)
		rc = -ENOMEM;
	/* the host as a frame: the file's bytes in their text form (no line
	 * break), and no ';' or space, which would split it in two frames */
	char *h = esc_text_dup(acli_host(c, c->fi), strlen(acli_host(c, c->fi)));
	if (!h)
		rc = -ENOMEM;
	for (char *q = h; q && *q; q++)
		if (*q == ';' || *q == ' ')
			*q = '_';
	for (char *p = buf, *nl; !rc && p && p < buf + len; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(buf + len - p))))
			nl = buf + len;
		printf("%s;%.*s\n", h, (int)(nl - p), p);
	}
	free(h);
	free(buf);
	return rc;
}

/* One file: its call graph and rows. 0 or the exit status. */
static int cg_file(struct acli *c, void *ctx)
{
	struct cg_opts *o = ctx;
	struct an_syms *syms = NULL;
	struct an_cg cg;
	memset(&cg, 0, sizeof(cg));
	int rc;
	if ((rc = an_syms_open(&syms, c->names))) {
		rc = acli_fail(c, rc, NULL);
		goto out;
	}
	/* roots only where paths are printed: callers of main stay "<root>" */
	rc = an_cg_build_roots(&cg, c->r, c->names, syms, &c->f,
			       o->thread_roots && (o->mode == M_FOLDED || o->mode == M_TREE));
	if (rc < 0) {
		rc = acli_fail(c, rc, &cg.run);
		goto out;
	}
	/* the call graph applies --tid/--comm itself, to function events */
	c->task_asks = 1;
	c->task_hits = cg.ps.entries + cg.ps.returns;
	acli_need(c, cg.ps.entries || cg.ps.returns || c->f.tids || c->f.comm, "function entry/exit");
	switch (o->mode) {
	case M_FUNCS:
		if (acli_merged(c))
			rc = merge_funcs(&o->merged, &cg, cg.fs, cg.nfs < an_nfuncs(syms) ? cg.nfs : an_nfuncs(syms));
		else
			rc = print_funcs(c, &cg, cg.fs, cg.nfs < an_nfuncs(syms) ? cg.nfs : an_nfuncs(syms));
		break;
	case M_TREE:
		rc = acli_merged(c) ? merge_tree(&o->tree, &cg) : print_tree(c, &cg);
		break;
	case M_FOLDED:
		rc = c->m ? folded_host(c, &cg) : cg_folded(stdout, &cg, UINT32_MAX);
		break;
	case M_CALLERS:
	case M_CALLEES: {
		size_t i = 0, n = an_nfuncs(syms);
		while (i < n && strcmp(an_func_name(syms, (uint32_t)i), o->fname))
			i++;
		if (i == n) {
			fprintf(stderr, "tracepp callgraph: no function named '%s' in %s\n", o->fname, c->path);
			/* several files: a host without it is a host that did not call it */
			rc = c->m ? 0 : 1;
			goto out;
		}
		o->found++;
		rc = print_related(c, &cg, (uint32_t)i, o->mode == M_CALLEES, acli_merged(c) ? &o->merged : NULL);
		break;
	}
	}
	rc = rc ? acli_fail(c, rc, NULL) : 0;
	acli_report_pairs(c, &cg.ps);
	acli_report_run(c, &cg.run);
out:
	an_cg_free(&cg);
	an_syms_close(syms);
	return rc;
}

/* After the last file: the merged rows (callers and callees in the order
 * they came, as one file's come in the order of its functions). */
static int cg_done(struct acli *c, void *ctx)
{
	struct cg_opts *o = ctx;
	if (o->mode == M_FUNCS)
		return print_merged_funcs(c, &o->merged);
	if (o->mode == M_TREE)
		return print_merged_tree(c, &o->tree);
	if ((o->mode != M_CALLERS && o->mode != M_CALLEES) || !o->found)
		return 0; /* (no file has the function: said by the caller) */
	struct table *t = tbl_open(stdout, c->fmt, rcols, 4);
	if (!t)
		return acli_fail(c, -ENOMEM, NULL);
	int rc = 0;
	for (size_t i = 0; !rc && i < o->merged.n; i++) {
		const struct an_func_stat *s = amerge_at(&o->merged, i);
		struct tbl_cell v[] = {{.s = o->merged.keys[i]}, {.i = (int64_t)s->calls},
				       {.i = (int64_t)s->total_ns}, {.i = (int64_t)s->self_ns}};
		rc = tbl_row(t, v);
	}
	return tbl_close(t) || rc ? 1 : 0;
}

int cmd_callgraph(int argc, char **argv)
{
	static const struct option lo[] = {{"tree", no_argument, 0, 'T'},
					   {"callers", required_argument, 0, 'U'},
					   {"callees", required_argument, 0, 'D'},
					   {"folded", no_argument, 0, 'F'},
					   {"sort", required_argument, 0, 's'},
					   {"root", required_argument, 0, 'R'},
					   {0, 0, 0, 0}};
	struct cg_opts o = {.mode = M_FUNCS};
	amerge_init(&o.merged, sizeof(struct an_func_stat));
	amerge_init(&o.tree, sizeof(struct mnode));
	const struct acli_spec spec = {.cmd = "callgraph", .usage = usage_text, .opts = lo,
				       .opt = own_opt, .ctx = &o, .multi_file = 1};
	struct acli c;
	sort_by = 0;
	int rc = acli_start(&c, &spec, argc, argv);
	if (rc != ACLI_GO)
		return rc;
	/* folded lines carry their host as their first frame: a heading
	 * would be a line no flame graph tool reads */
	c.text_stream = o.mode == M_FOLDED;
	rc = acli_each(&c, cg_file, cg_done, &o);
	if (!rc && c.m && (o.mode == M_CALLERS || o.mode == M_CALLEES) && !o.found) {
		/* no file has it: as for one file, a failure, said once */
		fprintf(stderr, "tracepp callgraph: no function named '%s' in any of the %d files\n", o.fname,
			c.nfiles);
		rc = 1;
	}
	amerge_free(&o.merged);
	amerge_free(&o.tree);
	acli_close(&c);
	return rc;
}
