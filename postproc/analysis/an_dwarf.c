/* Source lines through libdw. A build-id mismatch must never produce a
 * line: a rebuilt binary at the recorded path would name the wrong source,
 * which is worse than naming none. So an object is used only when its
 * build-id equals the recorded one (and not at all when none was recorded). */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "an_dwarf.h"
#include "hmap.h"

struct dobj {
	const uint8_t *bid; /* points into the reader's mmap record */
	uint32_t bid_len;
	int state;          /* 0 untried, 1 usable, -1 not available here */
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

struct an_dwarf {
	const struct tpp_meta *meta;
	char debug_dir[256];
	struct dobj *o; /* one per distinct build-id */
	size_t no;
	uint32_t *map_obj; /* per mmap record: index into o, UINT32_MAX none */
	struct hmap cache; /* hash(pid, addr) -> index into lines (NULL: none) */
	struct dkey {
		uint64_t addr;
		int32_t pid;
	} *ckey;           /* the exact key of each cached line */
	char **lines;
	size_t nlines, caplines;
};

int an_dwarf_open(struct an_dwarf **dp, const struct tpp_reader *r, const char *debug_dir)
{
	struct an_dwarf *d = calloc(1, sizeof(*d));
	*dp = d;
	if (!d)
		return -ENOMEM;
	d->meta = tpp_r_meta(r);
	snprintf(d->debug_dir, sizeof(d->debug_dir), "%s", debug_dir ? debug_dir : "/usr/lib/debug");
	hmap_init(&d->cache);
	size_t nm = d->meta->nmmaps;
	d->map_obj = malloc((nm ? nm : 1) * sizeof(*d->map_obj));
	d->o = calloc(nm ? nm : 1, sizeof(*d->o));
	if (!d->map_obj || !d->o)
		return -ENOMEM;
	for (size_t i = 0; i < nm; i++) {
		const struct tpp_mmap *m = &d->meta->mmaps[i];
		d->map_obj[i] = UINT32_MAX;
		if (!m->bid_len)
			continue;
		size_t k;
		for (k = 0; k < d->no; k++)
			if (d->o[k].bid_len == m->bid_len && !memcmp(d->o[k].bid, m->build_id, m->bid_len))
				break;
		if (k == d->no) {
			d->o[k].bid = m->build_id;
			d->o[k].bid_len = m->bid_len;
			d->no++;
		}
		d->map_obj[i] = (uint32_t)k;
	}
	return 0;
}

void an_dwarf_close(struct an_dwarf *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->no; i++)
		if (d->o[i].dwfl)
			dwfl_end(d->o[i].dwfl);
	for (size_t i = 0; i < d->nlines; i++)
		free(d->lines[i]);
	free(d->lines);
	free(d->ckey);
	free(d->o);
	free(d->map_obj);
	hmap_free(&d->cache);
	free(d);
}

static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* Reports path as the object's module if its build-id is the recorded one. */
static int try_path(struct dobj *o, const char *path)
{
	if (access(path, R_OK))
		return 0;
	Dwfl *dw = dwfl_begin(&offline_cb);
	if (!dw)
		return 0;
	/* Base 0: the module's addresses are then its link-time addresses. */
	Dwfl_Module *mod = dwfl_report_elf(dw, "obj", path, -1, 0, false);
	dwfl_report_end(dw, NULL, NULL);
	const unsigned char *bits;
	GElf_Addr vaddr;
	int bl = mod ? dwfl_module_build_id(mod, &bits, &vaddr) : -1;
	if (bl <= 0 || (uint32_t)bl != o->bid_len || memcmp(bits, o->bid, (size_t)bl)) {
		dwfl_end(dw);
		return 0;
	}
	o->dwfl = dw;
	o->mod = mod;
	return 1;
}

static int obj_ready(struct an_dwarf *d, struct dobj *o, const char *path)
{
	if (o->state)
		return o->state > 0;
	o->state = -1;
	char dbg[512];
	int n = snprintf(dbg, sizeof(dbg), "%s/.build-id/%02x/", d->debug_dir, o->bid[0]);
	for (uint32_t i = 1; i < o->bid_len && n > 0 && (size_t)n + 3 < sizeof(dbg); i++)
		n += snprintf(dbg + n, sizeof(dbg) - (size_t)n, "%02x", o->bid[i]);
	if (n > 0 && (size_t)n + 7 < sizeof(dbg))
		memcpy(dbg + n, ".debug", 7);
	if ((path && try_path(o, path)) || try_path(o, dbg))
		o->state = 1;
	return o->state > 0;
}

/* Link-time address of file offset off, through the PT_LOAD that holds it. */
static int off_to_vaddr(Dwfl_Module *mod, uint64_t off, uint64_t *vaddr)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t nph;
	if (!elf || elf_getphdrnum(elf, &nph))
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_memsz) {
			*vaddr = off - ph.p_offset + ph.p_vaddr + bias;
			return 0;
		}
	}
	return -1;
}

static char *lookup(struct an_dwarf *d, int32_t pid, uint64_t addr)
{
	const struct tpp_meta *m = d->meta;
	const struct tpp_mmap *best = NULL;
	size_t bi = 0;
	/* The latest record wins: after an exec the same range holds another object. */
	for (size_t i = 0; i < m->nmmaps; i++) {
		const struct tpp_mmap *mm = &m->mmaps[i];
		if (mm->pid == pid && addr >= mm->start && addr < mm->end && (!best || mm->ts >= best->ts)) {
			best = mm;
			bi = i;
		}
	}
	if (!best || d->map_obj[bi] == UINT32_MAX)
		return NULL;
	struct dobj *o = &d->o[d->map_obj[bi]];
	uint64_t va;
	if (!obj_ready(d, o, best->path) || off_to_vaddr(o->mod, addr - best->start + best->pgoff, &va))
		return NULL;
	Dwfl_Line *ln = dwfl_module_getsrc(o->mod, va);
	int line = 0;
	const char *file = ln ? dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;
	if (!file || line <= 0)
		return NULL;
	char *s;
	return asprintf(&s, "%s:%d", file, line) < 0 ? NULL : s;
}

const char *an_dwarf_srcline(struct an_dwarf *d, int32_t pid, uint64_t addr)
{
	uint64_t h = hmap_hash(addr ^ hmap_hash((uint32_t)pid)) & ~1ULL; /* never HMAP_EMPTY */
	for (;; h += 2) { /* collisions probe on, as an_syms does */
		uint32_t *v = hmap_get(&d->cache, h);
		if (!v)
			break;
		if (d->ckey[*v].addr == addr && d->ckey[*v].pid == pid)
			return d->lines[*v];
	}
	if (d->nlines == d->caplines) {
		size_t nc = d->caplines ? 2 * d->caplines : 64;
		char **nl = realloc(d->lines, nc * sizeof(*nl));
		if (!nl)
			return NULL;
		d->lines = nl;
		struct dkey *nk = realloc(d->ckey, nc * sizeof(*nk));
		if (!nk)
			return NULL;
		d->ckey = nk;
		d->caplines = nc;
	}
	char *s = lookup(d, pid, addr);
	if (hmap_put(&d->cache, h, (uint32_t)d->nlines)) {
		free(s);
		return NULL;
	}
	d->lines[d->nlines] = s;
	d->ckey[d->nlines++] = (struct dkey){addr, pid};
	return s;
}
