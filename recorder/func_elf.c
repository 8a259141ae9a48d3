/* ELF facts the function tracer needs: function symbols, build-ids, whether a
 * program was compiled with -pg / -finstrument-functions, file offsets of
 * addresses for uprobes. libelf only; nothing prints. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "func_int.h"

static Elf *elf_open_fd(const char *path, int *fd)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	Elf *e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return e;
}

static void elf_close_fd(Elf *e, int fd)
{
	elf_end(e);
	close(fd);
}

int func_elf_is_elf(const char *path)
{
	int fd;
	Elf *e = elf_open_fd(path, &fd);
	if (!e)
		return 0;
	elf_close_fd(e, fd);
	return 1;
}

static Elf_Scn *find_section(Elf *e, Elf64_Word type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct func_elfsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Prefer a public-looking name for an address with aliases. */
	int ux = x->name[0] == '_', uy = y->name[0] == '_';
	if (ux != uy)
		return ux - uy;
	return strcmp(x->name, y->name);
}

void func_elf_syms_free(struct func_elfsym *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].name);
	free(s);
}

long func_elf_syms(const char *path, struct func_elfsym **out, char *err, size_t errlen)
{
	int fd;
	*out = NULL;
	Elf *e = elf_open_fd(path, &fd);
	if (!e) {
		func_fmt(err, errlen, "%s: %s", path,
			 access(path, R_OK) ? strerror(errno) : "not an ELF file");
		return access(path, R_OK) ? -errno : -ENOEXEC;
	}
	Elf_Scn *scn = find_section(e, SHT_SYMTAB);
	if (!scn)
		scn = find_section(e, SHT_DYNSYM);
	if (!scn) {
		func_fmt(err, errlen, "%s: no symbol table (stripped?)", path);
		elf_close_fd(e, fd);
		return -ENOENT;
	}
	GElf_Shdr sh;
	gelf_getshdr(scn, &sh);
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0, k = 0;
	struct func_elfsym *v = calloc(n ? n : 1, sizeof(*v));
	if (!v) {
		elf_close_fd(e, fd);
		return -ENOMEM;
	}
	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			continue;
		int t = GELF_ST_TYPE(s.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
		if (!nm || !*nm)
			continue;
		v[k].addr = s.st_value;
		v[k].size = s.st_size;
		v[k].name = strdup(nm);
		if (!v[k].name)
			break;
		k++;
	}
	elf_close_fd(e, fd);
	qsort(v, k, sizeof(*v), cmp_sym);
	size_t j = 0;
	for (size_t i = 0; i < k; i++) {
		if (j && v[j - 1].addr == v[i].addr) {
			if (v[i].size > v[j - 1].size)
				v[j - 1].size = v[i].size;
			free(v[i].name);
			continue;
		}
		v[j++] = v[i];
	}
	if (!j) {
		func_fmt(err, errlen, "%s: no function symbols (stripped?)", path);
		free(v);
		return -ENOENT;
	}
	*out = v;
	return (long)j;
}

int func_elf_build_id(const char *path, uint8_t id[64])
{
	int fd, len = 0;
	Elf *e = elf_open_fd(path, &fd);
	if (!e)
		return 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while (!len && (scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz <= 64) {
				memcpy(id, (char *)d->d_buf + doff, nh.n_descsz);
				len = (int)nh.n_descsz;
				break;
			}
		}
	}
	elf_close_fd(e, fd);
	return len;
}

static int has_sym(Elf *e, Elf_Scn *scn, const char *const *names, size_t nn)
{
	if (!scn)
		return 0;
	GElf_Shdr sh;
	gelf_getshdr(scn, &sh);
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			continue;
		const char *nm = elf_strptr(e, sh.sh_link, s.st_name);
		for (size_t j = 0; nm && j < nn; j++)
			if (!strcmp(nm, names[j]))
				return 1;
	}
	return 0;
}

int func_elf_instrumented(const char *path)
{
	static const char *const pg[] = {"mcount", "__fentry__", "_mcount"};
	static const char *const fi[] = {"__cyg_profile_func_enter"};
	int fd, r = 0;
	Elf *e = elf_open_fd(path, &fd);
	if (!e)
		return 0;
	Elf_Scn *dyn = find_section(e, SHT_DYNSYM), *sym = find_section(e, SHT_SYMTAB);
	if (has_sym(e, dyn, pg, 3) || has_sym(e, sym, pg, 3))
		r |= 1;
	if (has_sym(e, dyn, fi, 1) || has_sym(e, sym, fi, 1))
		r |= 2;
	elf_close_fd(e, fd);
	return r;
}

int64_t func_elf_file_offset(const char *path, uint64_t addr)
{
	int fd;
	Elf *e = elf_open_fd(path, &fd);
	if (!e)
		return -ENOEXEC;
	size_t n;
	int64_t r = -ERANGE;
	if (elf_getphdrnum(e, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_filesz) {
				r = (int64_t)(addr - ph.p_vaddr + ph.p_offset);
				break;
			}
		}
	}
	elf_close_fd(e, fd);
	return r;
}

int func_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return r;
}
