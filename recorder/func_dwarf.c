/* Function signatures from DWARF: each parameter's name, its value class
 * (what a probe may fetch and how a reader prints it) and the register the
 * SysV x86-64 ABI passes it in; the return value's class. One index of the
 * defined functions per object (by linkage name and by name), built on the
 * first lookup. libdw only; nothing prints. */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "func_int.h"

struct fd_ent {
	const char *name; /* points into libdw's string data */
	Dwarf_Off die;
};
struct func_dwarf {
	int fd;
	Dwarf *dw;
	struct fd_ent *e;
	size_t n, cap;
	int sorted;
};

static int add(struct func_dwarf *d, const char *name, Dwarf_Off off)
{
	if (d->n == d->cap) {
		size_t nc = d->cap ? 2 * d->cap : 256;
		struct fd_ent *ne = realloc(d->e, nc * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		d->e = ne;
		d->cap = nc;
	}
	d->e[d->n++] = (struct fd_ent){name, off};
	return 0;
}

/* Function definitions under die (namespaces and classes included), by
 * their linkage name (C++: what the symbol table holds) and plain name. */
static int index_children(struct func_dwarf *d, Dwarf_Die *parent)
{
	Dwarf_Die c;
	if (dwarf_child(parent, &c) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&c);
		if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type) {
			if (index_children(d, &c))
				return -ENOMEM;
			continue;
		}
		if (tag != DW_TAG_subprogram || !dwarf_hasattr(&c, DW_AT_low_pc))
			continue;
		Dwarf_Attribute a;
		const char *ln = NULL;
		if (dwarf_attr_integrate(&c, DW_AT_linkage_name, &a) ||
		    dwarf_attr_integrate(&c, DW_AT_MIPS_linkage_name, &a))
			ln = dwarf_formstring(&a);
		const char *n = dwarf_diename(&c);
		if (!n && dwarf_attr_integrate(&c, DW_AT_name, &a))
			n = dwarf_formstring(&a);
		if ((ln && add(d, ln, dwarf_dieoffset(&c))) || (n && (!ln || strcmp(ln, n)) && add(d, n, dwarf_dieoffset(&c))))
			return -ENOMEM;
	} while (dwarf_siblingof(&c, &c) == 0);
	return 0;
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct fd_ent *)a)->name, ((const struct fd_ent *)b)->name);
}

int func_dwarf_open(struct func_dwarf **dp, const char *path)
{
	struct func_dwarf *d = calloc(1, sizeof(*d));
	*dp = d;
	if (!d)
		return -ENOMEM;
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	d->dw = dwarf_begin(d->fd, DWARF_C_READ);
	if (!d->dw)
		return -ENOENT;
	Dwarf_Off off = 0, next;
	size_t hsz;
	while (dwarf_nextcu(d->dw, off, &next, &hsz, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(d->dw, off + hsz, &cu) && index_children(d, &cu))
			return -ENOMEM;
		off = next;
	}
	qsort(d->e, d->n, sizeof(*d->e), cmp_ent);
	return 0;
}

void func_dwarf_close(struct func_dwarf *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	if (d->fd >= 0)
		close(d->fd);
	free(d->e);
	free(d);
}

static Dwarf_Die *strip_cv(Dwarf_Die *t, Dwarf_Die *buf)
{
	Dwarf_Attribute a;
	while (t && (dwarf_tag(t) == DW_TAG_typedef || dwarf_tag(t) == DW_TAG_const_type ||
		     dwarf_tag(t) == DW_TAG_volatile_type || dwarf_tag(t) == DW_TAG_restrict_type ||
		     dwarf_tag(t) == DW_TAG_atomic_type)) {
		if (!dwarf_attr(t, DW_AT_type, &a) || !dwarf_formref_die(&a, buf))
			return NULL;
		t = buf;
	}
	return t;
}

/* The class of a value of the type die's DW_AT_type names (a parameter,
 * or a function for its return). */
static enum func_vclass vclass(Dwarf_Die *die, int *size)
{
	Dwarf_Attribute a;
	Dwarf_Die b1, b2, *t;
	*size = 8;
	if (!dwarf_attr_integrate(die, DW_AT_type, &a))
		return FV_VOID;
	if (!(t = dwarf_formref_die(&a, &b1)) || !(t = strip_cv(t, &b1)))
		return FV_OTHER;
	int tag = dwarf_tag(t);
	if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type) {
		Dwarf_Die *pt;
		if (tag == DW_TAG_pointer_type && dwarf_attr(t, DW_AT_type, &a) && (pt = dwarf_formref_die(&a, &b2)) &&
		    (pt = strip_cv(pt, &b2)) && dwarf_tag(pt) == DW_TAG_base_type && dwarf_bytesize(pt) == 1) {
			Dwarf_Word enc = 0;
			if (dwarf_attr(pt, DW_AT_encoding, &a))
				dwarf_formudata(&a, &enc);
			if (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char)
				return FV_STR;
		}
		return FV_PTR;
	}
	if (tag == DW_TAG_enumeration_type) {
		*size = dwarf_bytesize(t) > 0 ? dwarf_bytesize(t) : 4;
		return FV_SINT;
	}
	if (tag != DW_TAG_base_type)
		return FV_OTHER; /* structs, unions, arrays: not one register */
	Dwarf_Word enc = 0;
	if (dwarf_attr(t, DW_AT_encoding, &a))
		dwarf_formudata(&a, &enc);
	*size = dwarf_bytesize(t);
	if (*size != 1 && *size != 2 && *size != 4 && *size != 8 && !(enc == DW_ATE_float && *size == 16))
		return FV_OTHER;
	switch (enc) {
	case DW_ATE_float: return *size == 4 ? FV_F32 : *size == 8 ? FV_F64 : FV_OTHER;
	case DW_ATE_boolean: return FV_BOOL;
	case DW_ATE_signed_char:
	case DW_ATE_unsigned_char: return *size == 1 ? FV_CHAR : FV_UINT;
	case DW_ATE_signed: return FV_SINT;
	default: return FV_UINT;
	}
}

/* Where an unoptimised build keeps param during the call: DW_OP_fbreg
 * from a frame base that is the CFA. */
static int frame_slot(int cfa_base, Dwarf_Die *param, int32_t *off)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t n;
	if (!cfa_base || !dwarf_attr(param, DW_AT_location, &a) || dwarf_getlocation(&a, &ops, &n) != 0 || n != 1 ||
	    ops[0].atom != DW_OP_fbreg)
		return 0;
	*off = (int32_t)(int64_t)ops[0].number;
	return 1;
}

int func_dwarf_sig(struct func_dwarf *d, const char *func, struct func_sig *sig)
{
	memset(sig, 0, sizeof(*sig));
	if (!d || !d->dw)
		return -ENOENT;
	size_t lo = 0, hi = d->n;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		if (strcmp(d->e[m].name, func) < 0)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo == d->n || strcmp(d->e[lo].name, func))
		return -ENOENT;
	Dwarf_Die die, p;
	if (!dwarf_offdie(d->dw, d->e[lo].die, &die))
		return -ENOENT;
	sig->ret = vclass(&die, &sig->ret_size);
	Dwarf_Attribute fb;
	Dwarf_Op *fbops;
	size_t nfb;
	int cfa_base = dwarf_attr(&die, DW_AT_frame_base, &fb) && dwarf_getlocation(&fb, &fbops, &nfb) == 0 &&
		       nfb == 1 && fbops[0].atom == DW_OP_call_frame_cfa;
	/* the ABI's classes: integers and pointers take rdi, rsi, rdx, rcx,
	 * r8, r9 in turn, floating point xmm0-7; anything else (a struct)
	 * makes the places of later ones unknowable here */
	int nint = 0, nsse = 0, lost = 0;
	if (sig->ret == FV_OTHER)
		lost = 1; /* a struct returned in memory takes rdi */
	if (dwarf_child(&die, &p) != 0)
		return 0;
	do {
		if (dwarf_tag(&p) != DW_TAG_formal_parameter || sig->nparams == FUNC_SIG_MAX)
			continue;
		struct func_param *fp = &sig->p[sig->nparams++];
		Dwarf_Attribute a;
		const char *pn = dwarf_diename(&p);
		if (!pn && dwarf_attr_integrate(&p, DW_AT_name, &a))
			pn = dwarf_formstring(&a);
		func_fmt(fp->name, sizeof(fp->name), "%s", pn ? pn : "");
		fp->artificial = dwarf_hasattr(&p, DW_AT_artificial);
		fp->vc = vclass(&p, &fp->size);
		fp->reg = -1;
		fp->in_frame = frame_slot(cfa_base, &p, &fp->fbreg);
		if (lost || fp->vc == FV_OTHER || fp->vc == FV_VOID) {
			lost = 1;
		} else if (fp->vc == FV_F32 || fp->vc == FV_F64) {
			fp->sse = 1;
			if (nsse < 8)
				fp->reg = nsse++;
		} else if (nint < 6) {
			fp->reg = nint++;
		}
	} while (dwarf_siblingof(&p, &p) == 0);
	return 0;
}

const char *func_vclass_code(enum func_vclass vc, int size)
{
	switch (vc) {
	case FV_VOID: return "void";
	case FV_SINT: return size == 1 ? "s8" : size == 2 ? "s16" : size == 4 ? "s32" : "s64";
	case FV_UINT: return size == 1 ? "u8" : size == 2 ? "u16" : size == 4 ? "u32" : "u64";
	case FV_CHAR: return "char";
	case FV_BOOL: return "bool";
	case FV_PTR: return "ptr";
	case FV_STR: return "str";
	case FV_F32: return "f32";
	case FV_F64: return "f64";
	default: return "other";
	}
}
