/* sc_prog — script.h's programs: compiled from text against a file, run,
 * reported on, freed. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "losses.h"
#include "sc_int.h"

int sc_run(struct sc_prog *P, const struct tps_opts *o, struct tps_stats *st, char *err, size_t errlen);

struct tps_prog {
	struct sc_prog P;
	struct tps_opts o;
	char silent[8][300];
	int nsilent;
};

void sc_fail(struct sc_prog *P, struct sc_pos pos, const char *fmt, ...)
{
	if (P->failed)
		return;
	P->failed = 1;
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	P->err[0] = 0;
	sc_errat(P->err, sizeof(P->err), pos, "%s", msg);
}

void sc_warn(struct sc_prog *P, const char *fmt, ...)
{
	if (P->nwarn == (int)(sizeof(P->warn) / sizeof(P->warn[0])))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(P->warn[P->nwarn++], sizeof(P->warn[0]), fmt, ap);
	va_end(ap);
}

int sc_pool_add(struct sc_prog *P, uint64_t v)
{
	for (uint32_t i = 0; i < P->npool; i++)
		if (P->pool[i] == v)
			return (int)i;
	if (P->npool == P->poolcap) {
		uint32_t nc = P->poolcap ? P->poolcap * 2 : 64;
		uint64_t *np = realloc(P->pool, nc * sizeof(*np));
		if (!np) {
			P->failed = 1;
			snprintf(P->err, sizeof(P->err), "out of memory");
			return 0;
		}
		P->pool = np;
		P->poolcap = nc;
	}
	P->pool[P->npool] = v;
	return (int)P->npool++;
}

const struct sc_str *sc_pstr(struct sc_prog *P, const char *s, size_t len)
{
	const struct sc_str *x = sc_intern(P->strs, s, len);
	if (!x) {
		P->failed = 1;
		snprintf(P->err, sizeof(P->err), "out of memory");
	}
	return x;
}

static void free_prog(struct sc_prog *P)
{
	for (uint32_t i = 0; i < P->nsites; i++)
		free(P->sites[i]->code.ins);
	for (unsigned id = 0; P->ti && id < TPP_MAX_TYPES; id++)
		for (uint32_t k = 0; k < P->ti[id].nsites; k++)
			if (P->ti[id].sites[k]->kind == SK_FILTER)
				free(P->ti[id].sites[k]->code.ins);
	free(P->maps);
	free(P->selfs);
	free(P->pool);
	free(P->fmts);
	free(P->ti);
	sc_strtab_free(P->strs);
	sc_arena_free(&P->arena);
}

/* Each type's sites, in program order, and the names the VM hands out. */
static int index_sites(struct sc_prog *P)
{
	for (uint32_t i = 0; i < P->nsites; i++) {
		struct sc_site *s = P->sites[i];
		const struct sc_str *pn = sc_pstr(P, s->probe ? s->probe : "", s->probe ? strlen(s->probe) : 0);
		if (!pn)
			return -ENOMEM;
		s->probe_sv = sc_sv(pn);
		if (s->kind == SK_TP || s->kind == SK_UPROBE || s->kind == SK_URETPROBE)
			P->ti[s->type].nsites++;
	}
	for (unsigned id = 0; id < TPP_MAX_TYPES; id++) {
		struct sc_tinfo *ti = &P->ti[id];
		if (!ti->nsites)
			continue;
		if (ti->dyn && ti->nsites > 64) {
			struct sc_pos p = {1, 1};
			sc_fail(P, p, "more than 64 uprobe probes on the events of one type");
			return -EINVAL;
		}
		if (!(ti->sites = sc_alloc(&P->arena, ti->nsites * sizeof(*ti->sites))))
			return -ENOMEM;
		ti->nsites = 0;
	}
	for (uint32_t i = 0; i < P->nsites; i++) {
		struct sc_site *s = P->sites[i];
		if (s->kind == SK_TP || s->kind == SK_UPROBE || s->kind == SK_URETPROBE) {
			P->ti[s->type].sites[P->ti[s->type].nsites++] = s;
			P->ti[s->type].recorded |= s->recorded;
		}
	}
	return 0;
}

static int prog_init(struct sc_prog *P, struct tpp_reader *r, const struct tpp_names *n, const char *name)
{
	memset(P, 0, sizeof(*P));
	P->r = r;
	P->names = n;
	P->src_name = name;
	if (!(P->ti = calloc(TPP_MAX_TYPES, sizeof(*P->ti))) || sc_strtab_new(&P->strs))
		return -ENOMEM;
	return 0;
}

int tps_prog_new(struct tps_prog **pp, const char *src, size_t len, struct tpp_reader *r,
		 const struct tpp_names *n, const struct tps_opts *o, char *err, size_t errlen)
{
	*pp = NULL;
	struct tps_prog *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (o)
		memcpy(&p->o, o, o->sz && o->sz < sizeof(*o) ? o->sz : sizeof(*o));
	struct sc_prog *P = &p->P;
	int rc = prog_init(P, r, n, p->o.file ? p->o.file : "the file");
	P->json = p->o.json;
	if (!rc)
		rc = sc_parse(&P->ast, src, len, &P->arena, P->err, sizeof(P->err));
	if (!rc && (sc_probes_resolve(P) || P->failed))
		rc = -EINVAL;
	if (!rc)
		rc = sc_compile_sites(P);
	if (!rc)
		rc = index_sites(P);
	if (rc) {
		snprintf(err, errlen, "%s", P->err[0] ? P->err : rc == -ENOMEM ? "out of memory" : "invalid program");
		free_prog(P);
		free(p);
		return rc;
	}
	*pp = p;
	return 0;
}

const char *tps_prog_warning(const struct tps_prog *p, int i)
{
	return i >= 0 && i < p->P.nwarn ? p->P.warn[i] : NULL;
}

/* What the recording did not keep of the events the program reads. */
static void losses(struct tps_prog *p)
{
	struct sc_prog *P = &p->P;
	const struct tpp_meta *m = tpp_r_meta(P->r);
	for (size_t i = 0; i < m->nnotes; i++) {
		const struct tpp_note *nt = &m->notes[i];
		if (strcmp(nt->kind, "kernel_unstored"))
			continue;
		for (size_t k = 0; k < nt->n; k++) {
			unsigned long long c = strtoull(nt->vals[k], NULL, 10);
			const char *colon = strchr(nt->keys[k], ':');
			if (!c || !colon)
				continue;
			for (unsigned id = 0; id < TPP_MAX_TYPES; id++) {
				const struct tpp_type *t = P->ti[id].nsites ? tpp_r_type(P->r, (uint16_t)id) : NULL;
				if (!t || !t->system || strncmp(t->system, nt->keys[k], (size_t)(colon - nt->keys[k])) ||
				    t->system[colon - nt->keys[k]] || strcmp(t->name, colon + 1))
					continue;
				sc_warn(P, "the kernel fired %llu %s event(s) it did not store: the probes on them saw fewer",
					c, nt->keys[k]);
			}
		}
	}
	/* lost, not unstored: the words and the split of tracepp info (losses.h) */
	struct tpp_losses l;
	tpp_losses(m, &l);
	if (l.lost)
		sc_warn(P, "the recorder lost %llu event(s); counts may be low", (unsigned long long)l.lost);
}

int tps_prog_run(struct tps_prog *p, struct tps_stats *st, char *err, size_t errlen)
{
	err[0] = 0;
	int rc = sc_run(&p->P, &p->o, st, err, errlen);
	losses(p);
	return rc;
}

const char *tps_prog_silent(struct tps_prog *p, int i)
{
	struct sc_prog *P = &p->P;
	if (i == 0) {
		p->nsilent = 0;
		for (uint32_t pi = 0; pi < P->ast.nprobes; pi++) {
			struct sc_probe *pr = &P->ast.probes[pi];
			for (uint32_t a = 0; a < pr->naps && p->nsilent < 8; a++) {
				uint64_t fired = 0;
				int events = 0;
				for (uint32_t k = 0; k < P->nsites; k++) {
					struct sc_site *s = P->sites[k];
					if (s->p != pr || s->ap != a)
						continue;
					events |= s->kind == SK_TP || s->kind == SK_UPROBE || s->kind == SK_URETPROBE;
					fired += s->fired;
				}
				if (events && !fired)
					snprintf(p->silent[p->nsilent++], sizeof(p->silent[0]), "%u:%u: %.*s", pr->aps[a].pos.line,
						 pr->aps[a].pos.col, (int)pr->aps[a].len, pr->aps[a].p);
			}
		}
	}
	return i < p->nsilent ? p->silent[i] : NULL;
}

void tps_prog_free(struct tps_prog *p)
{
	if (!p)
		return;
	free_prog(&p->P);
	free(p);
}

/* ------------------------------------------------------------ filters */

struct tps_filter {
	struct sc_prog P;
	struct sc_rt rt;
	uint64_t vals[TPP_MAX_FIELDS];
	const uint64_t *colp[TPP_MAX_FIELDS];
};

int tps_filter_new(struct tps_filter **fp, const char *expr, struct tpp_reader *r, const struct tpp_names *n,
		   char *err, size_t errlen)
{
	*fp = NULL;
	struct tps_filter *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	struct sc_prog *P = &f->P;
	struct sc_node *e = NULL;
	int rc = prog_init(P, r, n, "the file");
	if (!rc)
		rc = sc_parse_filter(&e, expr, strlen(expr), &P->arena, P->err, sizeof(P->err));
	if (!rc)
		rc = sc_compile_filter(P, e);
	if (!rc)
		rc = sc_rt_init(&f->rt, P, -1);
	if (rc) {
		snprintf(err, errlen, "%s", P->err[0] ? P->err : "out of memory");
		sc_rt_free(&f->rt);
		free_prog(P);
		free(f);
		return rc;
	}
	for (int k = 0; k < TPP_MAX_FIELDS; k++)
		f->colp[k] = &f->vals[k];
	*fp = f;
	return 0;
}

void tps_filter_want(const struct tps_filter *f, uint32_t *want)
{
	for (unsigned id = 0; id < TPP_MAX_TYPES; id++)
		want[id] |= f->P.ti[id].want;
}

int tps_filter_match(struct tps_filter *f, const struct tpp_event *ev)
{
	const struct sc_tinfo *ti = &f->P.ti[ev->type < TPP_MAX_TYPES ? ev->type : 0];
	if (!ti->nsites || !ev->t)
		return 0;
	for (unsigned k = 0; k < ti->nslots; k++) {
		const union tpp_val *x = &ev->v[ti->field[k]];
		if (ti->conv[k] == 0) {
			f->vals[k] = x->u;
		} else {
			const struct sc_str *s = ti->conv[k] == 1 ? sc_intern_c(f->P.strs, x->s.p, x->s.len)
								  : sc_intern(f->P.strs, x->s.p ? x->s.p : "", x->s.len);
			if (!s)
				return 0;
			f->vals[k] = sc_sv(s);
		}
	}
	struct sc_ctx c = {.ts = ev->ts, .tid = ev->tid, .cpu = ev->cpu, .col = f->colp, .type = ev->type,
			   .site = ti->sites[0]};
	uint64_t v = 0;
	if (sc_exec(&f->rt, &ti->sites[0]->code, &c, &v) < 0)
		return 0;
	return v != 0;
}

void tps_filter_free(struct tps_filter *f)
{
	if (!f)
		return;
	sc_rt_free(&f->rt);
	free_prog(&f->P);
	free(f);
}
