/* Memory maps of traced processes and the symbol tables of the ELF objects
 * recorded addresses fall in: what lets tracepp name functions on a host
 * without the binaries. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "func_int.h"

struct fmap {
	uint64_t start, end, pgoff;
	char *path;
	int used;
	int written; /* its mmap record is in the file */
};
struct fproc {
	int32_t pid;
	int32_t parent; /* the forking process, 0 when not known */
	size_t n;
	struct fmap *m;
};
struct func_maps {
	size_t n, cap;
	struct fproc *p;
	size_t last;
	char **done; /* paths whose symbol table is in the file */
	size_t ndone, capdone;
};

struct func_maps *func_maps_new(void)
{
	return calloc(1, sizeof(struct func_maps));
}

static void proc_clear(struct fproc *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->m[i].path);
	free(p->m);
	p->m = NULL;
	p->n = 0;
}

void func_maps_free(struct func_maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		proc_clear(&m->p[i]);
	for (size_t i = 0; i < m->ndone; i++)
		free(m->done[i]);
	free(m->done);
	free(m->p);
	free(m);
}

static struct fproc *proc_get(struct func_maps *m, int32_t pid, int create)
{
	if (m->last < m->n && m->p[m->last].pid == pid)
		return &m->p[m->last];
	for (size_t i = 0; i < m->n; i++)
		if (m->p[i].pid == pid) {
			m->last = i;
			return &m->p[i];
		}
	if (!create)
		return NULL;
	if (m->n == m->cap) {
		size_t nc = m->cap ? 2 * m->cap : 16;
		struct fproc *np = realloc(m->p, nc * sizeof(*np));
		if (!np)
			return NULL;
		m->p = np;
		m->cap = nc;
	}
	m->p[m->n] = (struct fproc){.pid = pid};
	m->last = m->n;
	return &m->p[m->n++];
}

int func_maps_has(const struct func_maps *m, int32_t pid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->p[i].pid == pid && m->p[i].n)
			return 1;
	return 0;
}

/* c gets a copy of a's mappings; 0 or -ENOMEM. */
static int copy_maps(struct fproc *c, const struct fproc *a)
{
	struct fmap *m = calloc(a->n ? a->n : 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	size_t k = 0;
	for (; k < a->n; k++) {
		/* the child's own mmap records are still to be written */
		m[k] = (struct fmap){a->m[k].start, a->m[k].end, a->m[k].pgoff, strdup(a->m[k].path), 0, 0};
		if (!m[k].path)
			break;
	}
	proc_clear(c);
	c->m = m;
	c->n = k;
	return 0;
}

void func_maps_fork(struct func_maps *m, int32_t parent, int32_t child)
{
	if (parent == child || !proc_get(m, parent, 1))
		return;
	size_t pi = m->last;
	struct fproc *c = proc_get(m, child, 1);
	if (!c)
		return;
	/* now, while the parent's layout is what the child began with */
	if (!c->n && m->p[pi].n)
		copy_maps(c, &m->p[pi]);
	if (!c->parent)
		c->parent = parent;
}

void func_maps_inherit(struct func_maps *m)
{
	for (size_t i = 0; i < m->n; i++) {
		if (m->p[i].n || !m->p[i].parent)
			continue;
		/* nearest ancestor with maps: a fork of a fork */
		const struct fproc *a = NULL;
		int32_t anc = m->p[i].parent;
		for (int hops = 0; anc && hops < 64 && !a; hops++) {
			const struct fproc *q = proc_get(m, anc, 0);
			if (!q)
				break;
			if (q->n)
				a = q;
			anc = q->parent;
		}
		if (a)
			copy_maps(&m->p[i], a);
	}
}

void func_maps_add_text(struct func_maps *m, int32_t pid, const char *text, size_t len)
{
	struct fproc *p = proc_get(m, pid, 1);
	if (!p)
		return;
	/* Merged, not replaced: after an exec the pid has a second address
	 * space, and addresses recorded before the exec still need the first. */
	const char *s = text, *end = text + len;
	size_t cap = p->n;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t ll = nl ? (size_t)(nl - s) : (size_t)(end - s);
		char line[4352];
		if (ll >= sizeof(line))
			ll = sizeof(line) - 1;
		memcpy(line, s, ll);
		line[ll] = 0;
		s += ll + 1;
		uint64_t a, b, off;
		char perm[8];
		int pos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &a, &b, perm, &off,
			   &pos) < 4 || !pos)
			continue;
		const char *path = line + pos;
		if (perm[2] != 'x' || path[0] != '/')
			continue;
		size_t k;
		for (k = 0; k < p->n && !(p->m[k].start == a && p->m[k].end == b && p->m[k].pgoff == off &&
					  !strcmp(p->m[k].path, path));
		     k++)
			;
		if (k < p->n)
			continue;
		if (p->n >= cap) {
			cap = cap ? 2 * cap : 16;
			struct fmap *nm = realloc(p->m, cap * sizeof(*nm));
			if (!nm)
				return;
			p->m = nm;
		}
		p->m[p->n] = (struct fmap){.start = a, .end = b, .pgoff = off, .path = strdup(path)};
		if (p->m[p->n].path)
			p->n++;
	}
}

int func_maps_read_proc(struct func_maps *m, int32_t pid)
{
	char fn[64];
	func_fmt(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(fn, "re");
	if (!f)
		return -errno;
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t r = fread(buf + len, 1, cap - len, f);
		len += r;
		if (len < cap)
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (!buf)
		return -ENOMEM;
	func_maps_add_text(m, pid, buf, len);
	free(buf);
	return 0;
}

int func_maps_mark(struct func_maps *m, int32_t pid, uint64_t addr)
{
	struct fproc *p = proc_get(m, pid, 0);
	if (!p)
		return 0;
	for (size_t i = 0; i < p->n; i++)
		if (addr >= p->m[i].start && addr < p->m[i].end) {
			p->m[i].used = 1;
			return 1;
		}
	return 0;
}

void func_maps_mark_path(struct func_maps *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		for (size_t j = 0; j < m->p[i].n; j++)
			if (!strcmp(m->p[i].m[j].path, path))
				m->p[i].m[j].used = 1;
}

int func_maps_write(struct func_maps *m, struct tpp_writer *w, uint64_t ts)
{
	/* Build-ids and symbols are per file: each path is looked up once,
	 * and what an earlier call wrote is not written again. */
	int rc = 0;
	for (size_t i = 0; i < m->n; i++) {
		struct fproc *p = &m->p[i];
		for (size_t j = 0; j < p->n; j++) {
			struct fmap *f = &p->m[j];
			uint8_t bid[64];
			int bl = -1;
			if (!f->written) {
				bl = func_elf_build_id(f->path, bid);
				int r = tpp_w_mmap(w, ts, p->pid, f->start, f->end, f->pgoff, f->path, bid, (size_t)bl);
				if (r < 0 && !rc)
					rc = r;
				f->written = 1;
			}
			if (!f->used)
				continue;
			size_t k;
			for (k = 0; k < m->ndone && strcmp(m->done[k], f->path); k++)
				;
			if (k < m->ndone)
				continue;
			if (m->ndone == m->capdone) {
				size_t nc = m->capdone ? 2 * m->capdone : 16;
				char **nd = realloc(m->done, nc * sizeof(*nd));
				if (!nd)
					return rc ? rc : -ENOMEM;
				m->done = nd;
				m->capdone = nc;
			}
			if (!(m->done[m->ndone] = strdup(f->path)))
				return rc ? rc : -ENOMEM;
			m->ndone++;
			if (bl < 0)
				bl = func_elf_build_id(f->path, bid);
			struct func_elfsym *es;
			char err[256];
			long ns = func_elf_syms(f->path, &es, err, sizeof(err));
			if (ns <= 0)
				continue;
			struct tpp_sym *ts_ = malloc((size_t)ns * sizeof(*ts_));
			if (ts_) {
				for (long s = 0; s < ns; s++)
					ts_[s] = (struct tpp_sym){es[s].addr, es[s].size, es[s].name};
				int r = tpp_w_symtab(w, bid, (size_t)bl, f->path, (size_t)ns, ts_);
				if (r < 0 && !rc)
					rc = r;
				free(ts_);
			}
			func_elf_syms_free(es, (size_t)ns);
		}
	}
	return rc;
}
