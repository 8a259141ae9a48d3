/* names — task names and symbols from a file's metadata, so a trace names
 * its functions on a host that has none of the traced binaries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tpp_decode.h"

struct tslot {
	int32_t tid, pid;
	uint64_t ts;
	const char *comm;
};
struct map {
	int32_t pid;
	uint64_t start, end, pgoff;
	const struct tpp_symtab *st;
};
struct tpp_names {
	struct tslot *slots;
	size_t nslots;
	char **probe; /* per type id: the function it probes (owned), or NULL */
	size_t nprobe;
	uint8_t **vcode; /* per type id: TPP_V_* per field (owned), or NULL */
	struct tpp_pfmt **pfmt; /* per type id: its print format's tables (owned), or NULL */
	struct map *maps; /* sorted by pid, start */
	size_t nmaps;
};

static size_t slot_of(const struct tpp_names *n, int32_t tid)
{
	size_t m = n->nslots - 1;
	for (size_t i = ((uint32_t)tid * 2654435761u) & m;; i = (i + 1) & m)
		if (n->slots[i].tid == tid || !n->slots[i].comm)
			return i;
}

static int cmp_map(const void *a, const void *b)
{
	const struct map *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static const struct tpp_symtab *find_symtab(const struct tpp_meta *m, const struct tpp_mmap *mm)
{
	/* the build-id identifies the object; the path is a fallback for objects without one */
	for (size_t i = 0; i < m->nsymtabs; i++)
		if (mm->bid_len && m->symtabs[i].bid_len == mm->bid_len &&
		    !memcmp(m->symtabs[i].build_id, mm->build_id, mm->bid_len))
			return &m->symtabs[i];
	for (size_t i = 0; i < m->nsymtabs; i++)
		if (!strcmp(m->symtabs[i].path, mm->path))
			return &m->symtabs[i];
	return NULL;
}

static int has_field(const struct tpp_type *t, const char *name)
{
	for (uint16_t i = 0; i < t->nfields; i++)
		if (t->fields[i].name && !strcmp(t->fields[i].name, name))
			return 1;
	return 0;
}

/* Probe types by their fields: __probe_ip (uprobe, kprobe entries),
 * __probe_func (returns); the note of the recorder that made them, if any. */
static int probes_open(struct tpp_names *n, const struct tpp_reader *r, const struct tpp_meta *m)
{
	const struct tpp_file_info *fi = tpp_r_info(r);
	for (uint32_t i = 0; i < fi->ntypes; i++) {
		const struct tpp_type *t = &fi->types[i];
		if (!t->name || t->id >= TPP_MAX_TYPES ||
		    !(has_field(t, "__probe_ip") || has_field(t, "__probe_func")))
			continue;
		if (!n->probe) {
			n->nprobe = TPP_MAX_TYPES;
			if (!(n->probe = calloc(n->nprobe, sizeof(*n->probe))))
				return -ENOMEM;
		}
		const char *func = NULL;
		size_t sl = t->system ? strlen(t->system) : 0;
		for (size_t k = 0; k < m->nnotes && !func; k++) {
			const struct tpp_note *no = &m->notes[k];
			const char *ev = NULL, *fn = NULL;
			if (strcmp(no->kind, "probe"))
				continue;
			for (size_t j = 0; j < no->n; j++) {
				if (!strcmp(no->keys[j], "event"))
					ev = no->vals[j];
				else if (!strcmp(no->keys[j], "func"))
					fn = no->vals[j];
			}
			if (ev && fn && sl && !strncmp(ev, t->system, sl) && ev[sl] == '/' && !strcmp(ev + sl + 1, t->name))
				func = fn;
		}
		size_t len = func ? strlen(func) : strlen(t->name);
		if (!func) {
			func = t->name;
			if (len > 8 && !strcmp(func + len - 8, "__return"))
				len -= 8;
		}
		if (!(n->probe[t->id] = strndup(func, len)))
			return -ENOMEM;
	}
	return 0;
}

static uint8_t vcode_of(const char *c, size_t len)
{
	static const struct {
		const char *code;
		uint8_t v;
	} tab[] = {{"s8", TPP_V_SINT},  {"s16", TPP_V_SINT}, {"s32", TPP_V_SINT}, {"s64", TPP_V_SINT},
		   {"u8", TPP_V_UINT},  {"u16", TPP_V_UINT}, {"u32", TPP_V_UINT}, {"u64", TPP_V_UINT},
		   {"char", TPP_V_CHAR}, {"bool", TPP_V_BOOL}, {"ptr", TPP_V_PTR}, {"str", TPP_V_STR},
		   {"f32", TPP_V_F32},  {"f64", TPP_V_F64}};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (strlen(tab[i].code) == len && !memcmp(tab[i].code, c, len))
			return tab[i].v;
	return TPP_V_NONE;
}

/* The "types" of the note whose "event" is SYSTEM/NAME of t, as codes
 * per field ("x=s32 s=str": FIELD=CODE, space-separated). */
static int vcodes_open(struct tpp_names *n, const struct tpp_reader *r, const struct tpp_meta *m)
{
	const struct tpp_file_info *fi = tpp_r_info(r);
	for (size_t k = 0; k < m->nnotes; k++) {
		const struct tpp_note *no = &m->notes[k];
		const char *ev = NULL, *types = NULL;
		if (strcmp(no->kind, "probe") && strcmp(no->kind, "arg_types"))
			continue;
		for (size_t j = 0; j < no->n; j++) {
			if (!strcmp(no->keys[j], "event"))
				ev = no->vals[j];
			else if (!strcmp(no->keys[j], "types"))
				types = no->vals[j];
		}
		const char *sl = ev ? strchr(ev, '/') : NULL;
		if (!sl || !types)
			continue;
		for (uint32_t i = 0; i < fi->ntypes; i++) {
			const struct tpp_type *t = &fi->types[i];
			if (!t->name || !t->system || t->id >= TPP_MAX_TYPES || !t->nfields ||
			    strlen(t->system) != (size_t)(sl - ev) || strncmp(ev, t->system, (size_t)(sl - ev)) ||
			    strcmp(sl + 1, t->name))
				continue;
			if (!n->vcode && !(n->vcode = calloc(TPP_MAX_TYPES, sizeof(*n->vcode))))
				return -ENOMEM;
			if (!n->vcode[t->id] && !(n->vcode[t->id] = calloc(t->nfields, 1)))
				return -ENOMEM;
			for (const char *p = types; *p;) {
				size_t l = strcspn(p, " ");
				const char *eq = memchr(p, '=', l);
				for (uint16_t f = 0; eq && f < t->nfields; f++)
					if (t->fields[f].name && strlen(t->fields[f].name) == (size_t)(eq - p) &&
					    !memcmp(t->fields[f].name, p, (size_t)(eq - p)))
						n->vcode[t->id][f] = vcode_of(eq + 1, l - (size_t)(eq + 1 - p));
				p += l;
				p += *p == ' ';
			}
		}
	}
	return 0;
}

const uint8_t *tpp_names_vcodes(const struct tpp_names *n, uint16_t type)
{
	return n->vcode && type < TPP_MAX_TYPES ? n->vcode[type] : NULL;
}

/* The print formats' flag and symbol tables, of the types that have any. */
static int pfmt_open(struct tpp_names *n, const struct tpp_reader *r)
{
	const struct tpp_file_info *fi = tpp_r_info(r);
	for (uint32_t i = 0; i < fi->ntypes; i++) {
		const struct tpp_type *t = &fi->types[i];
		if (!t->print_fmt || t->id >= TPP_MAX_TYPES || !strstr(t->print_fmt, "__print_"))
			continue;
		if (!n->pfmt && !(n->pfmt = calloc(TPP_MAX_TYPES, sizeof(*n->pfmt))))
			return -ENOMEM;
		if (!n->pfmt[t->id] && tpp_pfmt_parse(t, t->print_fmt, strlen(t->print_fmt), &n->pfmt[t->id]))
			return -ENOMEM;
	}
	return 0;
}

const struct tpp_pfield *tpp_names_pfield(const struct tpp_names *n, uint16_t type, unsigned field)
{
	return n && n->pfmt && type < TPP_MAX_TYPES && n->pfmt[type] && field < TPP_MAX_FIELDS
		       ? n->pfmt[type]->f[field] : NULL;
}

int tpp_names_open(struct tpp_names **np, const struct tpp_reader *r)
{
	const struct tpp_meta *m = tpp_r_meta(r);
	struct tpp_names *n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->nslots = 64;
	while (n->nslots < (m->ntasks + tpp_r_nstreams(r)) * 2 + 2)
		n->nslots *= 2;
	n->slots = calloc(n->nslots, sizeof(*n->slots));
	n->maps = calloc(m->nmmaps + 1, sizeof(*n->maps));
	if (!n->slots || !n->maps) {
		tpp_names_close(n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->ntasks; i++) {
		const struct tpp_task *t = &m->tasks[i];
		struct tslot *s = &n->slots[slot_of(n, t->tid)];
		/* the latest record of a tid wins (names after exec); records
		 * arrive in file order, which is not always time order */
		if (s->comm && t->ts < s->ts) {
			if (s->pid < 0)
				s->pid = t->pid;
			continue;
		}
		/* an unknown process (-1) does not forget a known one */
		if (!s->comm || t->pid >= 0)
			s->pid = t->pid;
		s->tid = t->tid;
		s->ts = t->ts;
		s->comm = t->comm;
	}
	/* A thread's own stream knows its process better than any task record:
	 * the runtime asked the kernel from inside the thread, while a recorder
	 * that first saw the thread after its exit could not (and wrote the tid
	 * there, as for a process). It also names a thread no task record
	 * mentions. */
	for (size_t i = 0; i < tpp_r_nstreams(r); i++) {
		const struct tpp_stream_info *si = tpp_r_stream(r, i);
		if (si->kind != TPP_S_THREAD || si->tid < 0 || si->pid < 0)
			continue;
		struct tslot *s = &n->slots[slot_of(n, si->tid)];
		s->pid = si->pid;
		if (s->comm)
			continue;
		/* threads start with their process's name */
		const struct tslot *ps = &n->slots[slot_of(n, si->pid)];
		s->tid = si->tid;
		s->comm = ps->comm && ps->tid == si->pid ? ps->comm : "";
	}
	for (size_t i = 0; i < m->nmmaps; i++) {
		const struct tpp_mmap *mm = &m->mmaps[i];
		struct map *p = &n->maps[n->nmaps++];
		p->pid = mm->pid;
		p->start = mm->start;
		p->end = mm->end;
		p->pgoff = mm->pgoff;
		p->st = find_symtab(m, mm);
	}
	qsort(n->maps, n->nmaps, sizeof(*n->maps), cmp_map);
	if (probes_open(n, r, m) || vcodes_open(n, r, m) || pfmt_open(n, r)) {
		tpp_names_close(n);
		return -ENOMEM;
	}
	*np = n;
	return 0;
}

void tpp_names_close(struct tpp_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nprobe; i++)
		free(n->probe[i]);
	free(n->probe);
	for (size_t i = 0; n->vcode && i < TPP_MAX_TYPES; i++)
		free(n->vcode[i]);
	free(n->vcode);
	for (size_t i = 0; n->pfmt && i < TPP_MAX_TYPES; i++)
		tpp_pfmt_free(n->pfmt[i]);
	free(n->pfmt);
	free(n->slots);
	free(n->maps);
	free(n);
}

int tpp_names_mapped(const struct tpp_names *n, int32_t pid, uint64_t addr)
{
	size_t lo = 0, hi = n->nmaps;
	while (lo < hi) { /* the first mapping of pid */
		size_t m = (lo + hi) / 2;
		if (n->maps[m].pid < pid)
			lo = m + 1;
		else
			hi = m;
	}
	int any = 0;
	for (size_t i = lo; i < n->nmaps && n->maps[i].pid == pid; i++) {
		any = 1;
		if (addr >= n->maps[i].start && addr < n->maps[i].end)
			return 1;
	}
	return any ? 0 : -1;
}

const char *tpp_names_probe(const struct tpp_names *n, uint16_t type)
{
	return type < n->nprobe ? n->probe[type] : NULL;
}

const char *tpp_names_comm(const struct tpp_names *n, int32_t tid)
{
	const struct tslot *s = &n->slots[slot_of(n, tid)];
	return s->comm && s->comm[0] && s->tid == tid ? s->comm : NULL;
}

int32_t tpp_names_pid(const struct tpp_names *n, int32_t tid)
{
	const struct tslot *s = &n->slots[slot_of(n, tid)];
	return s->comm && s->tid == tid ? s->pid : -1;
}

static const struct tpp_sym *sym_at(const struct tpp_symtab *st, uint64_t a)
{
	size_t lo = 0, hi = st->nsyms;
	while (lo < hi) { /* last symbol starting at or before a */
		size_t m = (lo + hi) / 2;
		if (st->syms[m].addr <= a)
			lo = m + 1;
		else
			hi = m;
	}
	if (!lo)
		return NULL;
	const struct tpp_sym *s = &st->syms[lo - 1];
	if (a < s->addr + (s->size ? s->size : 1))
		return s;
	return NULL;
}

const char *tpp_names_sym(const struct tpp_names *n, int32_t pid, uint64_t addr, uint64_t *off)
{
	/* last mapping of pid starting at or before addr */
	size_t lo = 0, hi = n->nmaps;
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		const struct map *p = &n->maps[m];
		if (p->pid < pid || (p->pid == pid && p->start <= addr))
			lo = m + 1;
		else
			hi = m;
	}
	for (size_t i = lo; i-- > 0;) {
		const struct map *p = &n->maps[i];
		if (p->pid != pid)
			break;
		if (addr >= p->end || !p->st)
			continue;
		/* Shared objects and PIE executables: symbol values are file-relative
		 * (start - pgoff is the load base). Non-PIE executables: symbol
		 * values are the absolute addresses themselves. */
		const struct tpp_sym *s = sym_at(p->st, addr - p->start + p->pgoff);
		uint64_t base = p->start - p->pgoff;
		if (!s) {
			s = sym_at(p->st, addr);
			base = 0;
		}
		if (s) {
			if (off)
				*off = addr - base - s->addr;
			return s->name;
		}
		break;
	}
	if (off)
		*off = 0;
	return NULL;
}
