/* -A for compiled-in functions (func_args.h). The DWARF signature
 * (func_dwarf.c) says where each parameter is when the hook runs: -pg calls
 * mcount before the body touches the argument registers (the trampolines
 * keep rdi..r9, the runtime never touches xmm0-7), so there it is the
 * register the SysV ABI assigns; -finstrument-functions calls its hook
 * after the prologue has stored the parameters, so there it is the frame
 * slot an unoptimised build keeps them in (an optimised one keeps them
 * anywhere, and is refused). Return values are read at -pg's return
 * trampoline (rax, xmm0); -finstrument-functions' exit hook sees none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "func_args.h"
#include "func_int.h"

struct fa_val {
	char name[64];
	enum func_vclass vc;
	int size;
	struct tpp_rt_arg where;
};

struct fa_func {
	char name[128];
	uint64_t lo, hi;
	uint32_t nargs;
	struct fa_val arg[TPP_RT_ARGS];
	int has_ret;  /* ret is captured */
	int void_ret; /* the function returns nothing */
	struct fa_val ret;
	uint16_t t_entry, t_exit;
};

struct func_args {
	struct fa_func *f;
	uint32_t n;
};

struct func_args_pending {
	int spec; /* -1: nothing waits */
	uint32_t have, bad; /* slots seen, strings unreadable (bit per slot, TPP_RT_D_RET = 8) */
	uint64_t v[TPP_RT_ARGS + 1];
	char s[TPP_RT_ARGS + 1][TPP_RT_STR_MAX + 1];
	char badtext[TPP_RT_ARGS + 1][40];
};

static int want_index(const char *w)
{
	char *end;
	if (strncmp(w, "arg", 3) || !w[3])
		return -1;
	long v = strtol(w + 3, &end, 10);
	return *end || v < 1 || v > FUNC_SIG_MAX ? -1 : (int)v - 1;
}

/* Where value class vc of size bytes is fetched from (-pg register, or
 * -finstrument-functions frame slot); 0 when it cannot be. */
static int place(const struct func_param *p, int pg, struct tpp_rt_arg *w)
{
	*w = (struct tpp_rt_arg){TPP_RT_SRC_NONE, 0, (uint8_t)p->size, p->vc == FV_STR, 0};
	if (pg) {
		if (p->reg < 0)
			return 0;
		w->src = p->sse ? TPP_RT_SRC_XMM : TPP_RT_SRC_GPR;
		w->reg = (uint8_t)p->reg;
		return 1;
	}
	if (!p->in_frame || p->size > 8)
		return 0;
	w->src = TPP_RT_SRC_FRAME;
	w->off = p->fbreg;
	return 1;
}

static int plan_one(struct fa_func *f, const struct func_sig *sig, int pg, char **want, size_t nwant, char *err,
		    size_t errlen)
{
	for (size_t w = 0; w < nwant; w++) {
		int wi = want_index(want[w]);
		const struct func_param *p = NULL;
		for (size_t k = 0; k < sig->nparams && !p; k++)
			if (!strcmp(sig->p[k].name, want[w]) || (int)k == wi)
				p = &sig->p[k];
		if (!p) {
			func_fmt(err, errlen, "-A %s:%s: %s has no such parameter", f->name, want[w], f->name);
			return -ENOENT;
		}
		if (p->vc == FV_OTHER || p->vc == FV_VOID) {
			func_fmt(err, errlen, "-A %s:%s: a struct passed by value is not recorded (record a pointer to it)",
				 f->name, want[w]);
			return -EINVAL;
		}
		if (f->nargs == TPP_RT_ARGS) {
			func_fmt(err, errlen, "-A %s: at most %d arguments", f->name, TPP_RT_ARGS);
			return -E2BIG;
		}
		struct fa_val *a = &f->arg[f->nargs];
		if (!place(p, pg, &a->where)) {
			if (pg)
				func_fmt(err, errlen, "-A %s:%s: passed on the stack, not in a register: not recorded",
					 f->name, want[w]);
			else
				func_fmt(err, errlen,
					 "-A %s:%s: a -finstrument-functions build keeps it in no known place (built with "
					 "optimisation?): rebuild with -O0 or with -pg",
					 f->name, want[w]);
			return -EINVAL;
		}
		func_fmt(a->name, sizeof(a->name), "%s", p->name[0] ? p->name : want[w]);
		a->vc = p->vc;
		a->size = p->size;
		f->nargs++;
	}
	f->void_ret = sig->ret == FV_VOID;
	if (pg && sig->ret != FV_VOID && sig->ret != FV_OTHER) {
		f->has_ret = 1;
		func_fmt(f->ret.name, sizeof(f->ret.name), "ret");
		f->ret.vc = sig->ret;
		f->ret.size = sig->ret_size;
		int sse = sig->ret == FV_F32 || sig->ret == FV_F64;
		f->ret.where = (struct tpp_rt_arg){sse ? TPP_RT_SRC_XMM : TPP_RT_SRC_GPR, 0, (uint8_t)sig->ret_size,
						   sig->ret == FV_STR, 0};
	}
	return 0;
}

/* Whether parameter w (a name or argN) of sig is already among f's. */
static int has_arg(const struct fa_func *f, const char *w, const struct func_sig *sig)
{
	int wi = want_index(w);
	const char *name = wi >= 0 && (size_t)wi < sig->nparams && sig->p[wi].name[0] ? sig->p[wi].name : w;
	for (uint32_t k = 0; k < f->nargs; k++)
		if (!strcmp(f->arg[k].name, name))
			return 1;
	return 0;
}

static int by_lo(const void *a, const void *b)
{
	const struct fa_func *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int func_args_plan(struct func_args **out, const char *exe, int pg, int strict, const char *const *specs,
		   size_t nspecs, char *err, size_t errlen)
{
	*out = NULL;
	if (!nspecs)
		return 0;
	struct func_elfsym *es = NULL;
	long nes = func_elf_syms(exe, &es, err, errlen);
	if (nes < 0)
		return (int)nes;
	struct func_dwarf *dw = NULL;
	int dwr = func_dwarf_open(&dw, exe);
	struct func_args *fa = calloc(1, sizeof(*fa));
	int rc = fa ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < nspecs; i++) {
		const char *c = strchr(specs[i], ':');
		if (!c || c == specs[i] || strpbrk(c, "%=+@$"))
			continue; /* fetch syntax: the uprobe path's, which says what is wrong with it */
		char fname[128], list[1024];
		func_fmt(fname, sizeof(fname), "%.*s", (int)(c - specs[i]), specs[i]);
		func_fmt(list, sizeof(list), "%s", c + 1);
		const struct func_elfsym *sym = NULL;
		for (long k = 0; k < nes && !sym; k++)
			if (!strcmp(es[k].name, fname))
				sym = &es[k];
		struct func_sig sig;
		if (!sym || dwr < 0 || func_dwarf_sig(dw, fname, &sig) < 0) {
			if (strict) {
				func_fmt(err, errlen, "-A %s: %s has no function %s%s", specs[i], exe, fname,
					 sym ? " with debug info (built with -g?)" : "");
				rc = -ENOENT;
			}
			continue;
		}
		/* -A f:a -A f:b is -A f:a,b: one table entry per function */
		struct fa_func *same = NULL;
		for (uint32_t k = 0; k < fa->n && !same; k++)
			if (!strcmp(fa->f[k].name, fname))
				same = &fa->f[k];
		char *want[64], *sv;
		size_t nw = 0;
		for (char *t = strtok_r(list, ",", &sv); t && nw < 64; t = strtok_r(NULL, ",", &sv))
			if (!same || !has_arg(same, t, &sig))
				want[nw++] = t;
		if (same) {
			rc = plan_one(same, &sig, pg, want, nw, err, errlen);
			continue;
		}
		if (fa->n == TPP_RT_ARGSPEC_MAX) {
			func_fmt(err, errlen, "-A %s: at most %d functions get their arguments recorded", fname,
				 TPP_RT_ARGSPEC_MAX);
			rc = -E2BIG;
			break;
		}
		struct fa_func *nf = realloc(fa->f, (fa->n + 1) * sizeof(*nf));
		if (!nf) {
			rc = -ENOMEM;
			break;
		}
		fa->f = nf;
		struct fa_func *f = &nf[fa->n++];
		memset(f, 0, sizeof(*f));
		func_fmt(f->name, sizeof(f->name), "%s", fname);
		f->lo = sym->addr;
		f->hi = sym->addr + (sym->size ? sym->size : 1);
		rc = plan_one(f, &sig, pg, want, nw, err, errlen);
	}
	func_dwarf_close(dw);
	func_elf_syms_free(es, (size_t)nes);
	if (rc || !fa || !fa->n) {
		func_args_free(fa);
		return rc;
	}
	qsort(fa->f, fa->n, sizeof(*fa->f), by_lo);
	*out = fa;
	return 0;
}

void func_args_free(struct func_args *a)
{
	if (!a)
		return;
	free(a->f);
	free(a);
}

uint32_t func_args_fill(const struct func_args *a, struct tpp_rt_argspec *tab)
{
	uint32_t n = a ? a->n : 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct fa_func *f = &a->f[i];
		memset(&tab[i], 0, sizeof(tab[i]));
		tab[i].lo = f->lo;
		tab[i].hi = f->hi;
		tab[i].nargs = f->nargs;
		for (uint32_t k = 0; k < f->nargs; k++)
			tab[i].arg[k] = f->arg[k].where;
		if (f->has_ret)
			tab[i].ret = f->ret.where;
	}
	return n;
}

/* As the uprobe path stores them: signed integers (and chars) signed,
 * strings as text, everything else (bits of floats included) unsigned. */
static enum tpp_ftype ftype(enum func_vclass vc)
{
	return vc == FV_SINT ? TPP_F_S64 : vc == FV_STR ? TPP_F_STR : TPP_F_U64;
}

static int declare_one(struct tpp_writer *w, uint16_t id, const char *name, const struct tpp_field_def *fd,
		       uint16_t nf, const char *types)
{
	struct tpp_type_def t = {id, name, "tracepp", nf, fd};
	int r = tpp_w_add_type(w, &t);
	if (r < 0 || !types[0])
		return r;
	char ev[64];
	func_fmt(ev, sizeof(ev), "tracepp/%s", name);
	const char *k[] = {"event", "types"}, *v[] = {ev, types};
	return tpp_w_note(w, "arg_types", 2, k, v);
}

int func_args_declare(struct func_args *a, struct tpp_writer *w, uint16_t *next)
{
	for (uint32_t i = 0; a && i < a->n; i++) {
		struct fa_func *f = &a->f[i];
		struct tpp_field_def fd[TPP_RT_ARGS + 1] = {{"addr", TPP_F_U64}};
		char types[TPP_RT_ARGS * 80 + 16] = "", name[32];
		size_t tl = 0;
		for (uint32_t k = 0; k < f->nargs; k++) {
			fd[k + 1] = (struct tpp_field_def){f->arg[k].name, ftype(f->arg[k].vc)};
			tl += (size_t)snprintf(types + tl, sizeof(types) - tl, "%s%s=%s", k ? " " : "", f->arg[k].name,
					       func_vclass_code(f->arg[k].vc, f->arg[k].size));
			if (tl >= sizeof(types))
				tl = sizeof(types) - 1;
		}
		func_fmt(name, sizeof(name), "a%u:func_entry", i);
		int r = declare_one(w, *next, name, fd, (uint16_t)(1 + f->nargs), types);
		if (r < 0)
			return r;
		f->t_entry = (*next)++;
		struct tpp_field_def xd[2] = {{"addr", TPP_F_U64}, {"ret", ftype(f->ret.vc)}};
		if (f->has_ret)
			func_fmt(types, sizeof(types), "ret=%s", func_vclass_code(f->ret.vc, f->ret.size));
		else
			func_fmt(types, sizeof(types), "%s", f->void_ret ? "ret=void" : "");
		func_fmt(name, sizeof(name), "a%u:func_exit", i);
		if ((r = declare_one(w, *next, name, xd, (uint16_t)(f->has_ret ? 2 : 1), types)) < 0)
			return r;
		f->t_exit = (*next)++;
	}
	return 0;
}

struct func_args_pending *func_args_pending_new(void)
{
	struct func_args_pending *p = malloc(sizeof(*p));
	if (p)
		func_args_pending_clear(p);
	return p;
}

void func_args_pending_clear(struct func_args_pending *p)
{
	if (!p)
		return;
	p->spec = -1;
	p->have = p->bad = 0;
}

int func_args_waiting(const struct func_args_pending *p)
{
	return p && p->spec >= 0;
}

void func_args_data(struct func_args_pending *p, uint64_t w, uint64_t v)
{
	unsigned spec = TPP_RT_D_SPEC(w), slot = TPP_RT_D_SLOT(w);
	if (slot > TPP_RT_D_RET)
		return;
	if (p->spec != (int)spec) {
		func_args_pending_clear(p);
		p->spec = (int)spec;
	}
	unsigned piece = TPP_RT_D_CHUNK(w), len = TPP_RT_D_LEN(w);
	if (!(p->have & 1u << slot) || !piece)
		p->s[slot][0] = 0;
	p->have |= 1u << slot;
	p->v[slot] = v;
	if (w & TPP_RT_D_BAD) {
		p->bad |= 1u << slot;
		return;
	}
	p->bad &= ~(1u << slot);
	if (len <= 8 && piece * 8 + len <= TPP_RT_STR_MAX) {
		for (unsigned i = 0; i < len; i++)
			p->s[slot][piece * 8 + i] = (char)(v >> (8 * i));
		p->s[slot][piece * 8 + len] = 0;
	}
}

/* A register's value as its declared type has it: the bits above the
 * type's size are undefined in a register. */
static union tpp_val value(const struct fa_val *a, struct func_args_pending *p, unsigned slot)
{
	union tpp_val v;
	uint64_t x = p->v[slot];
	if (!(p->have & 1u << slot)) {
		if (a->vc == FV_STR)
			return (union tpp_val){.s = {"", 0}};
		return (union tpp_val){.u = 0};
	}
	if (a->vc == FV_STR) {
		const char *s = p->s[slot];
		if (p->bad & 1u << slot) {
			/* no string behind it: say what the pointer was */
			func_fmt(p->badtext[slot], sizeof(p->badtext[slot]), x ? "(bad address 0x%llx)" : "(null)",
				 (unsigned long long)x);
			s = p->badtext[slot];
		}
		v.s.p = s;
		v.s.len = (uint32_t)strlen(s);
		return v;
	}
	unsigned bits = (unsigned)a->size * 8;
	if (bits && bits < 64) {
		uint64_t m = (1ULL << bits) - 1;
		x &= m;
		if (a->vc == FV_SINT && (x >> (bits - 1)) & 1)
			x |= ~m;
	}
	v.u = x;
	return v;
}

void func_args_event(const struct func_args *a, struct func_args_pending *p, int exit, uint64_t addr,
		     uint16_t *type, union tpp_val *vals)
{
	if (!func_args_waiting(p) || !a || (uint32_t)p->spec >= a->n)
		return func_args_pending_clear(p);
	const struct fa_func *f = &a->f[p->spec];
	vals[0].u = addr;
	if (exit) {
		*type = f->t_exit;
		if (f->has_ret)
			vals[1] = value(&f->ret, p, TPP_RT_D_RET);
	} else {
		*type = f->t_entry;
		for (uint32_t k = 0; k < f->nargs; k++)
			vals[k + 1] = value(&f->arg[k], p, k);
	}
	p->spec = -1;
	p->have = 0;
}
