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
	/* what each event probes, for the file's probe notes: the function, the
	 * object ("kernel" for kprobes) and the file offset, entry or return */
	char **func;
	char **types; /* "x=s32 s=str" of the fetched values, "ret=void" */
	const char **obj;
	uint64_t *off;
	uint8_t *is_ret;
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

/* The copy of path p keeps (one per binary), NULL on -ENOMEM. */
static const char *path_add(struct func_probes *p, const char *path)
{
	for (size_t i = 0; i < p->npaths; i++)
		if (!strcmp(p->paths[i], path))
			return p->paths[i];
	char **np = realloc(p->paths, (p->npaths + 1) * sizeof(*np));
	if (!np)
		return NULL;
	p->paths = np;
	if (!(np[p->npaths] = strdup(path)))
		return NULL;
	return np[p->npaths++];
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
		if (p->func)
			free(p->func[i]);
		if (p->types)
			free(p->types[i]);
	}
	free(p->func);
	free(p->types);
	free(p->obj);
	free(p->off);
	free(p->is_ret);
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

/* Records that group/event exists, so that removal finds it, and what it
 * probes: func at offset off of obj (a path owned by p, or "kernel"). */
static int probe_add(struct func_probes *p, const char *event, int is_k, const char *func, const char *obj,
		     uint64_t off, int is_ret, const char *types)
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
		char **nf = realloc(p->func, nc * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		p->func = nf;
		char **nt = realloc(p->types, nc * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		p->types = nt;
		int *nk = realloc(p->is_k, nc * sizeof(*nk));
		const char **no = realloc(p->obj, nc * sizeof(*no));
		uint64_t *nof = realloc(p->off, nc * sizeof(*nof));
		uint8_t *nrt = realloc(p->is_ret, nc);
		if (nk)
			p->is_k = nk;
		if (no)
			p->obj = no;
		if (nof)
			p->off = nof;
		if (nrt)
			p->is_ret = nrt;
		if (!nk || !no || !nof || !nrt)
			return -ENOMEM;
		for (size_t i = p->cap; i < nc; i++)
			p->names[i] = p->remove[i] = p->func[i] = p->types[i] = NULL;
		p->cap = nc;
	}
	if (asprintf(&p->names[p->n], "%s/%s", p->group, event) < 0)
		return -ENOMEM;
	if (asprintf(&p->remove[p->n], "-:%s/%s\n", p->group, event) < 0)
		return -ENOMEM;
	if (!(p->func[p->n] = strdup(func)) || !(p->types[p->n] = strdup(types)))
		return -ENOMEM;
	p->obj[p->n] = obj;
	p->off[p->n] = off;
	p->is_ret[p->n] = (uint8_t)is_ret;
	p->is_k[p->n++] = is_k;
	return 0;
}

int func_probes_note(struct func_probes *p, struct tpp_writer *w)
{
	static const char *const keys[] = {"event", "func", "object", "offset", "kind", "types"};
	for (size_t i = 0; p && i < p->n; i++) {
		char off[24];
		func_fmt(off, sizeof(off), "0x%llx", (unsigned long long)p->off[i]);
		const char *vals[] = {p->names[i], p->func[i], p->obj[i], off, p->is_ret[i] ? "return" : "entry",
				      p->types[i]};
		int r = tpp_w_note(w, "probe", p->types[i][0] ? 6 : 5, keys, vals);
		if (r < 0)
			return r;
	}
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

/* The probe fetch type of a value of class vc, size bytes. */
static const char *fetch_of(enum func_vclass vc, int size)
{
	switch (vc) {
	case FV_PTR: return "x64";
	case FV_STR: return "string";
	case FV_CHAR: return size == 1 ? "s8" : "u32";
	case FV_BOOL: return "u8";
	default: return func_vclass_code(vc, size); /* s8..s64, u8..u64 */
	}
}

/* Fetch args for the DWARF parameter names want[] of func (signature sig),
 * appended to out, their type codes to types. Parameters are in the
 * registers the SysV x86-64 ABI gives them at the entry point, whatever the
 * optimisation level. */
static int named_args(const char *func, const struct func_sig *sig, const char *const *want, size_t nwant,
		      char *out, size_t len, char *types, size_t tlen, char *err, size_t errlen)
{
	for (size_t w = 0; w < nwant; w++) {
		const struct func_param *fp = NULL;
		for (size_t i = 0; i < sig->nparams && !fp; i++)
			if (!strcmp(sig->p[i].name, want[w]))
				fp = &sig->p[i];
		if (!fp) {
			func_fmt(err, errlen, "-A %s:%s: %s has no parameter named '%s'", func, want[w], func, want[w]);
			return -ENOENT;
		}
		if (fp->sse) {
			func_fmt(err, errlen,
				 "-A %s:%s: a floating-point parameter is passed in an SSE register, which a uprobe cannot read "
				 "(record a -pg or -finstrument-functions build to see it)", func, want[w]);
			return -EINVAL;
		}
		if (fp->vc == FV_OTHER || fp->reg < 0) {
			func_fmt(err, errlen, "-A %s:%s: the parameter is not passed in a register (a struct, or after one)",
				 func, want[w]);
			return -EINVAL;
		}
		size_t l = strlen(out), tl = strlen(types);
		if (fp->vc == FV_STR)
			func_fmt(out + l, len - l, " %s=+0(%s):string", fp->name, abi_regs[fp->reg]);
		else
			func_fmt(out + l, len - l, " %s=%s:%s", fp->name, abi_regs[fp->reg], fetch_of(fp->vc, fp->size));
		func_fmt(types + tl, tlen - tl, "%s%s=%s", tl ? " " : "", fp->name, func_vclass_code(fp->vc, fp->size));
	}
	return 0;
}

static int is_fetch(const char *a)
{
	return strchr("%+-$@", a[0]) || (a[0] >= '0' && a[0] <= '9') || strchr(a, '=');
}

/* The return probe's fetch text and type code, from func's signature when
 * DWARF has it: typed (an int -1 prints -1), a string for char *, nothing
 * for void, nor for a floating-point value (in xmm0, out of a uprobe's
 * reach); the raw register otherwise. */
static void ret_for(const struct func_sig *sig, char *ret, size_t retlen, char *rtype, size_t rtlen)
{
	rtype[0] = 0;
	if (!sig) {
		func_fmt(ret, retlen, " ret=$retval");
		return;
	}
	func_fmt(rtype, rtlen, "ret=%s", func_vclass_code(sig->ret, sig->ret_size));
	if (sig->ret == FV_VOID || sig->ret == FV_F32 || sig->ret == FV_F64 || sig->ret == FV_OTHER)
		ret[0] = 0;
	else if (sig->ret == FV_STR)
		func_fmt(ret, retlen, " ret=+0($retval):string");
	else
		func_fmt(ret, retlen, " ret=$retval:%s", fetch_of(sig->ret, sig->ret_size));
}

/* The argument text for function name (from every -A that names it), and
 * the type codes of the named ones. sig: name's signature, NULL if unknown. */
static int args_for(const struct func_opts *o, const char *path, const char *name, const struct func_sig *sig,
		    char *out, size_t len, char *types, size_t tlen, char *err, size_t errlen)
{
	out[0] = types[0] = 0;
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
		int r = 0;
		if (nn && !sig) {
			func_fmt(err, errlen, "-A %s:%s: no debug info for %s in %s (use %%di-style fetch args)", name,
				 names[0], name, path);
			r = -ENOENT;
		} else if (nn) {
			r = named_args(name, sig, names, nn, out, len, types, tlen, err, errlen);
		}
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
	const char *obj = nm ? path_add(p, path) : NULL;
	int rc = nm && !obj ? -ENOMEM : 0;
	if (!nm) {
		func_fmt(err, errlen, "-u %s: no function of %s matches '%s'", spec, path, glob_);
		rc = -ENOENT;
	} else if (!rc) {
		rc = check_cap(p, 2 * nm, spec, err, errlen);
	}
	/* signatures: typed return values (none for void) of every probed
	 * function whose object has debug info; -A parameters by name */
	struct func_dwarf *dw = NULL;
	if (!rc)
		func_dwarf_open(&dw, path);
	for (long i = 0; !rc && i < n; i++) {
		if (fnmatch(glob_, es[i].name, 0))
			continue;
		int64_t off = func_elf_file_offset(path, es[i].addr);
		if (off < 0)
			continue;
		char ev[64], args[1024], ret[48], types[512], rtype[32], line[PATH_MAX + 1200];
		struct func_sig sig;
		int has_sig = func_dwarf_sig(dw, es[i].name, &sig) == 0;
		event_name(p, es[i].name, ev, sizeof(ev));
		rc = args_for(o, path, es[i].name, has_sig ? &sig : NULL, args, sizeof(args), types, sizeof(types), err,
			      errlen);
		if (rc < 0)
			break;
		ret_for(has_sig ? &sig : NULL, ret, sizeof(ret), rtype, sizeof(rtype));
		/* The stack pointer at entry and at return (entry's + 8), and the
		 * return address at entry: what lets the pairing close frames a
		 * longjmp or an exception left, and see a tail call (a callee
		 * entered at its caller's stack pointer, returning through the
		 * uretprobe trampoline) as one. $stack0 is the same word as
		 * +0(%sp), read by a constant-size copy that skips the hardened-
		 * usercopy object check a dereference's variable-size one makes
		 * (0 should the read fault). */
		func_fmt(line, sizeof(line), "p:%s/%s %s:0x%llx%s __sp=%%sp:x64 __ra=$stack0:x64\n", p->group, ev,
			 path, (unsigned long long)off, args);
		if ((rc = probe_write(p->uprobe_events, line, err, errlen)) < 0 ||
		    (rc = probe_add(p, ev, 0, es[i].name, obj, (uint64_t)off, 0, types)) < 0)
			break;
		char rev[80];
		func_fmt(rev, sizeof(rev), "%s__return", ev);
		func_fmt(line, sizeof(line), "r:%s/%s %s:0x%llx%s __sp=%%sp:x64\n", p->group, rev, path,
			 (unsigned long long)off, ret);
		if ((rc = probe_write(p->uprobe_events, line, err, errlen)) < 0 ||
		    (rc = probe_add(p, rev, 0, es[i].name, obj, (uint64_t)off, 1, rtype)) < 0)
			break;
	}
	func_dwarf_close(dw);
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
		char ev[64], args[1024], ret[32], types[512], def[1400];
		event_name(p, sym, ev, sizeof(ev));
		if ((rc = args_for(o, "the kernel", sym, NULL, args, sizeof(args), types, sizeof(types), err, errlen)) < 0)
			break;
		func_fmt(ret, sizeof(ret), " ret=$retval");
		func_fmt(def, sizeof(def), "p:%s/%s %s%s\n", p->group, ev, sym, args);
		if ((rc = probe_write(p->kprobe_events, def, err, errlen)) < 0 ||
		    (rc = probe_add(p, ev, 1, sym, "kernel", 0, 0, types)) < 0)
			break;
		func_fmt(def, sizeof(def), "r:%s/%s__return %s%s\n", p->group, ev, sym, ret);
		char rev[80];
		func_fmt(rev, sizeof(rev), "%s__return", ev);
		if ((rc = probe_write(p->kprobe_events, def, err, errlen)) < 0 ||
		    (rc = probe_add(p, rev, 1, sym, "kernel", 0, 1, "")) < 0)
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

/* Deletes every definition of group tpp_PID in one probe_events file:
 * parsing by hand, without allocating (the guard runs it in a forked
 * child). Adds to *removed, or sets *busy when the kernel refused one
 * (still enabled in an instance not yet gone). */
static void remove_group_in(const char *file, int32_t pid, int *removed, int *busy)
{
	char grp[32], buf[8192];
	int gl = func_fmt(grp, sizeof(grp), "tpp_%d/", (int)pid);
	for (int pass = 0; pass < 64; pass++) {
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return;
		/* one event per pass: the file changes under each deletion */
		char line[256];
		size_t ll = 0;
		int found = 0;
		ssize_t n;
		while (!found && (n = read(fd, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < n && !found; i++) {
				if (buf[i] != '\n') {
					if (ll < sizeof(line) - 1)
						line[ll++] = buf[i];
					continue;
				}
				line[ll] = 0;
				/* "p:tpp_PID/EVENT ..." or "r:..." */
				char *sp = strchr(line, ' ');
				if (sp && line[1] == ':' && !strncmp(line + 2, grp, (size_t)gl)) {
					*sp = 0;
					found = 1;
				}
				if (!found)
					ll = 0;
			}
		}
		close(fd);
		if (!found)
			return;
		char del[300];
		func_fmt(del, sizeof(del), "-:%s\n", line + 2);
		fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0)
			return;
		ssize_t w = write(fd, del, strlen(del));
		close(fd);
		if (w < 0) {
			*busy = 1;
			return; /* the next ones are as busy as this one */
		}
		(*removed)++;
	}
}

int func_probes_remove_group(const char *tracefs, int32_t pid)
{
	char file[PATH_MAX];
	int removed = 0, busy = 0;
	func_fmt(file, sizeof(file), "%s/uprobe_events", tracefs);
	remove_group_in(file, pid, &removed, &busy);
	func_fmt(file, sizeof(file), "%s/kprobe_events", tracefs);
	remove_group_in(file, pid, &removed, &busy);
	return busy ? -EBUSY : removed;
}

/* Whether pid is a running tracerec (the owner of tpp_PID probes). */
static int is_recorder(int32_t pid)
{
	char path[64], comm[32] = "";
	func_fmt(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	return !strcmp(comm, "tracerec\n");
}

int func_probes_reap_stale(const char *tracefs, char *msg, size_t len)
{
	int32_t dead[64];
	int ndead = 0, total = 0;
	const char *const files[] = {"uprobe_events", "kprobe_events"};
	for (int k = 0; k < 2; k++) {
		char path[PATH_MAX], line[512];
		func_fmt(path, sizeof(path), "%s/%s", tracefs, files[k]);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			int pid;
			if (sscanf(line, "%*c:tpp_%d/", &pid) != 1 || pid <= 0 || pid == getpid() || is_recorder(pid))
				continue;
			int i = 0;
			while (i < ndead && dead[i] != pid)
				i++;
			if (i == ndead && ndead < 64)
				dead[ndead++] = pid;
		}
		fclose(f);
	}
	char pids[160] = "";
	size_t pl = 0;
	for (int i = 0; i < ndead; i++) {
		/* its instance goes first: an enabled probe cannot be deleted */
		char inst[PATH_MAX];
		func_fmt(inst, sizeof(inst), "%s/instances/tracepp-%d/tracing_on", tracefs, (int)dead[i]);
		int fd = open(inst, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (write(fd, "0", 1) < 0) {
				/* rmdir below removes it anyway */
			}
			close(fd);
			func_fmt(inst, sizeof(inst), "%s/instances/tracepp-%d", tracefs, (int)dead[i]);
			rmdir(inst);
		}
		int n = func_probes_remove_group(tracefs, dead[i]);
		if (n > 0) {
			total += n;
			if (pl < sizeof(pids) - 16)
				pl += (size_t)func_fmt(pids + pl, sizeof(pids) - pl, "%s%d", pl ? ", " : "", (int)dead[i]);
		}
	}
	if (total)
		func_fmt(msg, len, "removed %d probe(s) left behind by tracerec process(es) no longer running: %s",
			 total, pids);
	return total;
}
