/* Dynamic probes: -u BIN:GLOB becomes an entry and a return uprobe per
 * matching function, -k GLOB the same as kprobes, with arguments from -A in
 * the probe-event fetch syntax or by DWARF parameter name. Definitions are
 * global in tracefs, so the group is named for this recorder (tpp_PID) and
 * removal deletes exactly what was created. */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "func_int.h"

struct func_probes {
	char group[32];
	char uprobe_events[PATH_MAX], kprobe_events[PATH_MAX], group_enable[PATH_MAX];
	char **names;  /* "group/event", given to the record command */
	char **remove; /* "-:group/event\n", precomputed for signal-safe removal */
	int *is_k;
	size_t n, cap;
	char **paths; /* the binaries probed, once each */
	size_t npaths;
	unsigned max;
};

static const char *const abi_regs[] = {"%di", "%si", "%dx", "%cx", "%r8", "%r9"};

void func_probes_names(struct func_probes *p, const char *const **names, size_t *n)
{
	*names = (const char *const *)p->names;
	*n = p->n;
}

void func_probes_paths(struct func_probes *p, const char *const **paths, size_t *n)
{
	*paths = (const char *const *)p->paths;
	*n = p->npaths;
}

static int path_add(struct func_probes *p, const char *path)
{
	for (size_t i = 0; i < p->npaths; i++)
		if (!strcmp(p->paths[i], path))
			return 0;
	char **np = realloc(p->paths, (p->npaths + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	p->paths = np;
	if (!(np[p->npaths] = strdup(path)))
		return -ENOMEM;
	p->npaths++;
	return 0;
}

void func_probes_remove(struct func_probes *p)
{
	if (!p)
		return;
	/* An enabled event cannot be deleted: switch the group off first. */
	int fd = open(p->group_enable, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "0", 1) < 0) {
			/* nothing more to do: deletion below reports nothing either */
		}
		close(fd);
	}
	for (size_t i = p->n; i-- > 0;) {
		fd = open(p->is_k[i] ? p->kprobe_events : p->uprobe_events, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (write(fd, p->remove[i], strlen(p->remove[i])) < 0) {
			/* already gone, or still enabled elsewhere: nothing safe to do */
		}
		close(fd);
	}
	p->n = 0;
}

void func_probes_free(struct func_probes *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->cap; i++) {
		if (p->names)
			free(p->names[i]);
		if (p->remove)
			free(p->remove[i]);
	}
	for (size_t i = 0; i < p->npaths; i++)
		free(p->paths[i]);
	free(p->paths);
	free(p->names);
	free(p->remove);
	free(p->is_k);
	free(p);
}

static int probe_write(const char *file, const char *line, char *err, size_t errlen)
{
	int fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		func_fmt(err, errlen, "%s: %s", file, strerror(e));
		return -e;
	}
	ssize_t w = write(fd, line, strlen(line));
	int e = errno;
	close(fd);
	if (w < 0) {
		func_fmt(err, errlen, "probe '%.*s' refused by the kernel: %s", (int)strcspn(line, "\n"), line,
			 strerror(e));
		return -e;
	}
	return 0;
}

/* Records that group/event exists, so that removal finds it. */
static int probe_add(struct func_probes *p, const char *event, int is_k)
{
	if (p->n == p->cap) {
		size_t nc = p->cap ? 2 * p->cap : 64;
		char **nn = realloc(p->names, nc * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		p->names = nn;
		char **nr = realloc(p->remove, nc * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		p->remove = nr;
		int *nk = realloc(p->is_k, nc * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		p->is_k = nk;
		for (size_t i = p->cap; i < nc; i++)
			p->names[i] = p->remove[i] = NULL;
		p->cap = nc;
	}
	if (asprintf(&p->names[p->n], "%s/%s", p->group, event) < 0)
		return -ENOMEM;
	if (asprintf(&p->remove[p->n], "-:%s/%s\n", p->group, event) < 0)
		return -ENOMEM;
	p->is_k[p->n++] = is_k;
	return 0;
}

/* Event names allow [A-Za-z0-9_] and must be unique in the group. */
static void event_name(struct func_probes *p, const char *sym, char *out, size_t len)
{
	char base[48];
	size_t j = 0;
	for (const char *c = sym; *c && j < sizeof(base) - 1; c++)
		base[j++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ? *c : '_');
	base[j] = 0;
	if (!j || (base[0] >= '0' && base[0] <= '9'))
		func_fmt(base, sizeof(base), "f_%.40s", sym);
	func_fmt(out, len, "%s", base);
	for (int k = 2;; k++) {
		size_t i;
		size_t gl = strlen(p->group) + 1;
		for (i = 0; i < p->n && strcmp(p->names[i] + gl, out); i++)
			;
		if (i == p->n)
			return;
		func_fmt(out, len, "%s_%d", base, k);
	}
}

/* BIN as given, or found on $PATH, or a library name ("libc") found in the
 * usual library directories. */
static int resolve_bin(const char *bin, char *out, size_t len)
{
	(void)len; /* realpath writes at most PATH_MAX */
	if (strchr(bin, '/')) {
		if (!realpath(bin, out))
			return -errno;
		return 0;
	}
	const char *path = getenv("PATH");
	for (const char *d = path ? path : ""; *d;) {
		const char *c = strchr(d, ':');
		size_t dl = c ? (size_t)(c - d) : strlen(d);
		char cand[PATH_MAX];
		func_fmt(cand, sizeof(cand), "%.*s/%s", (int)dl, d, bin);
		if (!access(cand, X_OK) && realpath(cand, out))
			return 0;
		d += dl + (c ? 1 : 0);
	}
	static const char *const dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
					   "/usr/lib", "/lib"};
	static const char *const pats[] = {"%s/%s", "%s/%s.so", "%s/%s.so.*", "%s/lib%s.so", "%s/lib%s.so.*"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		for (size_t k = 0; k < sizeof(pats) / sizeof(*pats); k++) {
			char pat[PATH_MAX];
			func_fmt(pat, sizeof(pat), pats[k], dirs[i], bin);
			glob_t g;
			int ok = 0;
			/* libc.so itself is often a linker script: take the first real ELF. */
			if (glob(pat, 0, NULL, &g) == 0)
				for (size_t j = 0; !ok && j < g.gl_pathc; j++)
					ok = func_elf_is_elf(g.gl_pathv[j]) && realpath(g.gl_pathv[j], out);
			globfree(&g);
			if (ok)
				return 0;
		}
	return -ENOENT;
}

static Dwarf_Die *strip_cv(Dwarf_Die *t, Dwarf_Die *buf)
{
	Dwarf_Attribute a;
	while (t && (dwarf_tag(t) == DW_TAG_typedef || dwarf_tag(t) == DW_TAG_const_type ||
		     dwarf_tag(t) == DW_TAG_volatile_type || dwarf_tag(t) == DW_TAG_restrict_type)) {
		if (!dwarf_attr(t, DW_AT_type, &a) || !dwarf_formref_die(&a, buf))
			return NULL;
		t = buf;
	}
	return t;
}

/* The fetch type for a parameter of DWARF type die t: "u32", "s64", "x64",
 * "string" (a char pointer) or NULL when it cannot live in one register. */
static const char *fetch_type(Dwarf_Die *param)
{
	Dwarf_Attribute a;
	Dwarf_Die b1, b2, *t;
	if (!dwarf_attr(param, DW_AT_type, &a) || !(t = dwarf_formref_die(&a, &b1)))
		return NULL;
	t = strip_cv(t, &b1);
	if (!t)
		return NULL;
	int tag = dwarf_tag(t);
	if (tag == DW_TAG_pointer_type) {
		Dwarf_Die *pt;
		if (dwarf_attr(t, DW_AT_type, &a) && (pt = dwarf_formref_die(&a, &b2)) && (pt = strip_cv(pt, &b2)) &&
		    dwarf_tag(pt) == DW_TAG_base_type && dwarf_bytesize(pt) == 1)
			return "string";
		return "x64";
	}
	if (tag == DW_TAG_enumeration_type)
		return "s32";
	if (tag != DW_TAG_base_type)
		return NULL;
	Dwarf_Word enc = 0;
	if (dwarf_attr(t, DW_AT_encoding, &a))
		dwarf_formudata(&a, &enc);
	int sz = dwarf_bytesize(t);
	int sgn = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
	if (enc == DW_ATE_float || (sz != 1 && sz != 2 && sz != 4 && sz != 8))
		return NULL;
	static const char *const st[] = {"s8", "s16", "s32", "s64"}, *const ut[] = {"u8", "u16", "u32", "u64"};
	int k = sz == 1 ? 0 : sz == 2 ? 1 : sz == 4 ? 2 : 3;
	return sgn ? st[k] : ut[k];
}

/* Fetch args for DWARF parameter names of func in path, appended to out.
 * Parameters of the SysV x86_64 ABI are in registers at the entry point,
 * whatever the optimisation level, so the index decides the register.
 * *ret gets the return value's fetch text: typed from DWARF so that an int
 * -1 prints as -1, empty for a void function. */
static int dwarf_args(const char *path, const char *func, const char *const *want, size_t nwant, char *out,
		      size_t len, char *ret, size_t retlen, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		close(fd);
		func_fmt(err, errlen, "-A %s: %s has no DWARF debug info to find parameter '%s' (use %%di-style fetch args)",
			 func, path, want[0]);
		return -ENOENT;
	}
	Dwarf_Off off = 0, next;
	size_t hsz;
	int found = 0, rc = 0;
	size_t got = 0;
	while (!found && dwarf_nextcu(dw, off, &next, &hsz, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;
		if (dwarf_offdie(dw, off + hsz, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				if (dwarf_tag(&die) != DW_TAG_subprogram || !dwarf_diename(&die) ||
				    strcmp(dwarf_diename(&die), func) || !dwarf_hasattr(&die, DW_AT_low_pc))
					continue;
				found = 1;
				const char *rt = fetch_type(&die);
				if (!dwarf_hasattr(&die, DW_AT_type))
					ret[0] = 0;
				else if (rt && strcmp(rt, "string"))
					func_fmt(ret, retlen, " ret=$retval:%s", rt);
				Dwarf_Die p;
				int idx = 0;
				if (dwarf_child(&die, &p) != 0)
					break;
				do {
					if (dwarf_tag(&p) != DW_TAG_formal_parameter)
						continue;
					const char *pn = dwarf_diename(&p);
					for (size_t w = 0; pn && w < nwant; w++) {
						if (strcmp(pn, want[w]))
							continue;
						const char *ft = fetch_type(&p);
						if (idx >= 6 || !ft) {
							func_fmt(err, errlen, "-A %s:%s: parameter is not in an integer register", func, pn);
							rc = -EINVAL;
							break;
						}
						size_t l = strlen(out);
						if (!strcmp(ft, "string"))
							func_fmt(out + l, len - l, " %s=+0(%s):string", pn, abi_regs[idx]);
						else
							func_fmt(out + l, len - l, " %s=%s:%s", pn, abi_regs[idx], ft);
						got++;
					}
					idx++;
				} while (!rc && dwarf_siblingof(&p, &p) == 0);
				break;
			} while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	if (!rc && !found) {
		func_fmt(err, errlen, "-A %s: no debug info for function %s in %s", func, func, path);
		rc = -ENOENT;
	} else if (!rc && got != nwant) {
		func_fmt(err, errlen, "-A %s: some of the named parameters are not parameters of %s", func, func);
		rc = -ENOENT;
	}
	return rc;
}

static int is_fetch(const char *a)
{
	return strchr("%+-$@", a[0]) || (a[0] >= '0' && a[0] <= '9') || strchr(a, '=');
}

/* The argument text for function name (from every -A that names it). */
static int args_for(const struct func_opts *o, const char *path, const char *name, char *out, size_t len,
		    char *ret, size_t retlen, char *err, size_t errlen)
{
	out[0] = 0;
	func_fmt(ret, retlen, " ret=$retval");
	for (size_t i = 0; i < o->nargs; i++) {
		const char *c = strchr(o->args[i], ':');
		if (!c || (size_t)(c - o->args[i]) != strlen(name) || strncmp(o->args[i], name, strlen(name)))
			continue;
		char *list = strdup(c + 1);
		if (!list)
			return -ENOMEM;
		const char *names[32];
		size_t nn = 0;
		int ai = 0;
		for (char *sv, *t = strtok_r(list, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
			size_t l = strlen(out);
			if (is_fetch(t)) {
				if (strchr(t, '='))
					func_fmt(out + l, len - l, " %s", t);
				else
					func_fmt(out + l, len - l, " arg%d=%s", ++ai, t);
			} else if (nn < 32) {
				names[nn++] = t;
			}
		}
		int r = nn ? dwarf_args(path, name, names, nn, out, len, ret, retlen, err, errlen) : 0;
		free(list);
		if (r < 0)
			return r;
	}
	return 0;
}

static int check_cap(struct func_probes *p, size_t more, const char *what, char *err, size_t errlen)
{
	if (p->n + more > p->max) {
		func_fmt(err, errlen, "%s: would create %zu probes, over the cap of %u per run (raise it with --max-probes)",
			 what, p->n + more, p->max);
		return -E2BIG;
	}
	return 0;
}

static int add_uprobes(struct func_probes *p, const struct func_opts *o, const char *spec, char *err, size_t errlen)
{
	const char *c = strrchr(spec, ':');
	if (!c || c == spec || !c[1]) {
		func_fmt(err, errlen, "-u %s: expected BIN:GLOB", spec);
		return -EINVAL;
	}
	char bin[PATH_MAX], path[PATH_MAX];
	func_fmt(bin, sizeof(bin), "%.*s", (int)(c - spec), spec);
	const char *glob_ = c + 1;
	if (resolve_bin(bin, path, sizeof(path)) < 0) {
		func_fmt(err, errlen, "-u %s: %s: no such file, program or library", spec, bin);
		return -ENOENT;
	}
	if (!func_elf_is_elf(path)) {
		func_fmt(err, errlen, "-u %s: %s: not an ELF file", spec, path);
		return -ENOEXEC;
	}
	struct func_elfsym *es;
	char e2[256];
	long n = func_elf_syms(path, &es, e2, sizeof(e2));
	if (n < 0) {
		func_fmt(err, errlen, "-u %s: %s", spec, e2);
		return (int)n;
	}
	size_t nm = 0;
	for (long i = 0; i < n; i++)
		nm += !fnmatch(glob_, es[i].name, 0);
	int rc = nm ? path_add(p, path) : 0;
	if (!nm) {
		func_fmt(err, errlen, "-u %s: no function of %s matches '%s'", spec, path, glob_);
		rc = -ENOENT;
	} else if (!rc) {
		rc = check_cap(p, 2 * nm, spec, err, errlen);
	}
	for (long i = 0; !rc && i < n; i++) {
		if (fnmatch(glob_, es[i].name, 0))
			continue;
		int64_t off = func_elf_file_offset(path, es[i].addr);
		if (off < 0)
			continue;
		char ev[64], args[1024], ret[32], line[PATH_MAX + 1200];
		event_name(p, es[i].name, ev, sizeof(ev));
		rc = args_for(o, path, es[i].name, args, sizeof(args), ret, sizeof(ret), err, errlen);
		if (rc < 0)
			break;
		func_fmt(line, sizeof(line), "p:%s/%s %s:0x%llx%s\n", p->group, ev, path, (unsigned long long)off, args);
		if ((rc = probe_write(p->uprobe_events, line, err, errlen)) < 0 || (rc = probe_add(p, ev, 0)) < 0)
			break;
		char rev[80];
		func_fmt(rev, sizeof(rev), "%s__return", ev);
		func_fmt(line, sizeof(line), "r:%s/%s %s:0x%llx%s\n", p->group, rev, path, (unsigned long long)off, ret);
		if ((rc = probe_write(p->uprobe_events, line, err, errlen)) < 0 || (rc = probe_add(p, rev, 0)) < 0)
			break;
	}
	func_elf_syms_free(es, (size_t)n);
	return rc;
}

static int add_kprobes(struct func_probes *p, const struct func_opts *o, const char *glob_, char *err, size_t errlen)
{
	if (access(p->kprobe_events, W_OK)) {
		func_fmt(err, errlen,
			 "-k %s: this kernel has no kprobe events (%s missing: CONFIG_KPROBE_EVENTS is off), so kernel functions cannot be traced here",
			 glob_, p->kprobe_events);
		return -ENOTSUP;
	}
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f) {
		func_fmt(err, errlen, "/proc/kallsyms: %s", strerror(errno));
		return -errno;
	}
	char line[512], sym[256], type;
	unsigned long long addr;
	int rc = 0;
	size_t nm = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3 || (type != 't' && type != 'T') ||
		    fnmatch(glob_, sym, 0))
			continue;
		nm++;
		if ((rc = check_cap(p, 2, glob_, err, errlen)) < 0)
			break;
		char ev[64], args[1024], ret[32], def[1400];
		event_name(p, sym, ev, sizeof(ev));
		if ((rc = args_for(o, "/sys/kernel/btf/vmlinux", sym, args, sizeof(args), ret, sizeof(ret), err, errlen)) < 0)
			break;
		func_fmt(def, sizeof(def), "p:%s/%s %s%s\n", p->group, ev, sym, args);
		if ((rc = probe_write(p->kprobe_events, def, err, errlen)) < 0 || (rc = probe_add(p, ev, 1)) < 0)
			break;
		func_fmt(def, sizeof(def), "r:%s/%s__return %s%s\n", p->group, ev, sym, ret);
		char rev[80];
		func_fmt(rev, sizeof(rev), "%s__return", ev);
		if ((rc = probe_write(p->kprobe_events, def, err, errlen)) < 0 || (rc = probe_add(p, rev, 1)) < 0)
			break;
	}
	fclose(f);
	if (!rc && !nm) {
		func_fmt(err, errlen, "-k %s: no kernel function matches", glob_);
		rc = -ENOENT;
	}
	return rc;
}

int func_probes_create(struct func_probes **pp, const struct func_opts *o, char *err, size_t errlen)
{
	struct func_probes *p = calloc(1, sizeof(*p));
	*pp = p;
	if (!p)
		return -ENOMEM;
	const char *tfs = o->tracefs_dir ? o->tracefs_dir : "/sys/kernel/tracing";
	func_fmt(p->group, sizeof(p->group), "tpp_%d", (int)getpid());
	func_fmt(p->uprobe_events, sizeof(p->uprobe_events), "%s/uprobe_events", tfs);
	func_fmt(p->kprobe_events, sizeof(p->kprobe_events), "%s/kprobe_events", tfs);
	func_fmt(p->group_enable, sizeof(p->group_enable), "%s/events/%s/enable",
		 o->instance_dir ? o->instance_dir : tfs, p->group);
	p->max = o->max_probes ? o->max_probes : 1000;
	int rc = 0;
	for (size_t i = 0; !rc && i < o->nkprobes; i++)
		rc = add_kprobes(p, o, o->kprobes[i], err, errlen);
	for (size_t i = 0; !rc && i < o->nuprobes; i++)
		rc = add_uprobes(p, o, o->uprobes[i], err, errlen);
	if (rc < 0)
		func_probes_remove(p); /* all or nothing */
	return rc;
}
