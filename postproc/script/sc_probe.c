/* sc_probe — attach points matched to a file's event types: one site per
 * (probe, type). A recorded file answers tracepoints by type name, and
 * uprobe:BIN:FUNC from two sources alike: the uprobe events tracerec -u
 * recorded (a type per function, named after it) and the compiled-in
 * runtime's func_entry/func_exit (one type, the function in its address
 * field). Which function an event is, and in which binary, is settled per
 * event address by sc_resolve (sc_run.c). */
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc_int.h"

static int findf(const struct tpp_type *t, const char *name)
{
	for (int i = 0; t && i < t->nfields && i < TPP_MAX_FIELDS; i++)
		if (t->fields[i].name && !strcmp(t->fields[i].name, name))
			return i;
	return -1;
}

/* What a type is, for uprobes: 1 entry, 2 return (uprobe events recorded
 * by tracerec -u); 3 entry, 4 return (the compiled-in runtime); 0 other. */
static int ukind(const struct tpp_type *t)
{
	if (!t || !t->name)
		return 0;
	if (!strcmp(t->name, "func_entry") && findf(t, "addr") >= 0)
		return 3;
	if (!strcmp(t->name, "func_exit") && findf(t, "addr") >= 0)
		return 4;
	/* tracerec names its probe group tpp_PID: the probe's own fields,
	 * not the group, say that this is a uprobe */
	if (findf(t, "__probe_func") >= 0 && findf(t, "__probe_ret_ip") >= 0)
		return 2;
	if (findf(t, "__probe_ip") >= 0)
		return 1;
	return 0;
}

void sc_probe_fields(struct sc_prog *P, struct sc_site *s)
{
	(void)P;
	const struct tpp_type *t = s->t;
	int k = ukind(t);
	s->addr_f = s->ret_f = -1;
	s->narg = 0;
	if (!k)
		return;
	s->addr_f = findf(t, k == 1 ? "__probe_ip" : k == 2 ? "__probe_func" : "addr");
	if (k == 2 || k == 4) {
		static const char *const rn[] = {"ret", "retval", "arg_ret", "arg1"};
		for (size_t i = 0; i < 4 && s->ret_f < 0; i++)
			s->ret_f = findf(t, rn[i]);
		return;
	}
	/* arguments: the fields after the address that are not the probe's
	 * own, in order (tracerec's -A names them arg1.. or by parameter) */
	for (int i = 0; i < t->nfields && s->narg < 16; i++) {
		const char *n = t->fields[i].name;
		if (i == s->addr_f || !n || !strncmp(n, "__", 2) || !strcmp(n, "depth") || i < s->addr_f)
			continue;
		s->arg_f[s->narg++] = (int8_t)i;
	}
}

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

/* Whether BIN as written names the object at path (as recorded). */
int sc_bin_match(const char *bin, const char *path)
{
	if (!path || !*path)
		return 0;
	if (strpbrk(bin, "*?["))
		return !fnmatch(bin, path, 0) || !fnmatch(bin, base(path), 0);
	if (!strcmp(bin, path) || !strcmp(bin, "*"))
		return 1;
	char rp[PATH_MAX];
	if (realpath(bin, rp) && !strcmp(rp, path))
		return 1;
	if (strchr(bin, '/'))
		return !strcmp(base(bin), base(path));
	/* "libc", "libc.so.6", "s-args": a name without its directory */
	const char *b = base(path);
	size_t n = strlen(bin);
	if (!strcmp(b, bin))
		return 1;
	if (!strncmp(b, bin, n) && (b[n] == '.' || b[n] == '-'))
		return 1;
	return !strncmp(b, "lib", 3) && !strncmp(b + 3, bin, n) && (b[3 + n] == '.' || b[3 + n] == '-');
}

/* FUNC as tracerec names a probe event after it ([A-Za-z0-9_]), glob
 * characters kept. */
static void sanitize(const char *fn, char *out, size_t len)
{
	size_t j = 0;
	for (const char *c = fn; *c && j + 1 < len; c++)
		out[j++] = (char)((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
					  strchr("*?[]!", *c)
				  ? *c
				  : '_');
	out[j] = 0;
}

/* A uprobe event type's name matches FUNC: itself, or without the "_N"
 * tracerec adds to a name the group already has. */
static int uname_match(const char *pat, const char *name, int ret)
{
	char n[TPP_NAME_MAX + 1];
	snprintf(n, sizeof(n), "%s", name);
	if (ret) {
		size_t l = strlen(n);
		if (l < 8 || strcmp(n + l - 8, "__return"))
			return 0;
		n[l - 8] = 0;
	}
	if (!fnmatch(pat, n, 0))
		return 1;
	char *u = strrchr(n, '_');
	if (!u || !u[1] || u[strspn(u + 1, "0123456789") + 1])
		return 0;
	*u = 0;
	return !fnmatch(pat, n, 0);
}

static struct sc_site *add_site(struct sc_prog *P, struct sc_probe *p, uint32_t ap, int kind)
{
	if (P->nsites == P->scap) {
		uint32_t nc = P->scap ? P->scap * 2 : 32;
		struct sc_site **ns = sc_alloc(&P->arena, nc * sizeof(*ns));
		if (!ns)
			return NULL;
		if (P->scap)
			memcpy(ns, P->sites, P->scap * sizeof(*ns));
		P->sites = ns;
		P->scap = nc;
	}
	struct sc_site *s = sc_alloc(&P->arena, sizeof(*s));
	if (!s)
		return NULL;
	s->p = p;
	s->ap = ap;
	s->kind = (uint8_t)kind;
	s->addr_f = s->ret_f = -1;
	s->index = P->nsites;
	P->sites[P->nsites++] = s;
	return s;
}

static char *fmt_name(struct sc_prog *P, const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + (c ? strlen(c) + 1 : 0) + 2;
	char *s = sc_alloc(&P->arena, n);
	if (s)
		snprintf(s, n, c ? "%s:%s:%s" : "%s:%s", a, b, c ? c : "");
	return s;
}

/* The names a message lists: the file's tracepoints, or its functions. */
static void list_types(struct sc_prog *P, int uprobes, char *out, size_t len)
{
	const struct tpp_file_info *fi = tpp_r_info(P->r);
	size_t k = 0;
	int n = 0;
	out[0] = 0;
	for (uint32_t i = 0; i < fi->ntypes && k + 40 < len; i++) {
		const struct tpp_type *t = &fi->types[i];
		if (uprobes && ukind(t) != 1)
			continue;
		k += (size_t)snprintf(out + k, len - k, "%s%s%s%s", n++ ? ", " : "", uprobes ? "" : t->system ? t->system : "",
				      uprobes ? "" : ":", t->name);
	}
	if (!n)
		snprintf(out, len, "none");
	else if (k + 40 >= len)
		snprintf(out + (k < len - 6 ? k : len - 6), 6, ", ...");
}

/* The binaries whose compiled-in entries and returns the file holds
 * (the symbol tables it embeds), "" when it holds none. */
static void list_compiled_in(struct sc_prog *P, char *out, size_t len)
{
	const struct tpp_file_info *fi = tpp_r_info(P->r);
	const struct tpp_meta *m = tpp_r_meta(P->r);
	uint32_t i = 0;
	out[0] = 0;
	while (i < fi->ntypes && ukind(&fi->types[i]) != 3)
		i++;
	if (i == fi->ntypes || !m)
		return;
	size_t k = 0;
	for (size_t j = 0; j < m->nsymtabs && k + 40 < len; j++) {
		if (!m->symtabs[j].path)
			continue;
		/* a path is bytes from the recorded host: no control bytes to the terminal */
		char path[256];
		size_t n = 0;
		for (const char *c = m->symtabs[j].path; *c && n + 1 < sizeof(path); c++)
			path[n++] = (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
		path[n] = 0;
		k += (size_t)snprintf(out + k, len - k, "%s%s (%zu symbols)", k ? ", " : "", path, m->symtabs[j].nsyms);
	}
	if (k + 40 >= len)
		snprintf(out + (k < len - 6 ? k : len - 6), 6, ", ...");
}

static int resolve_tp(struct sc_prog *P, struct sc_probe *p, uint32_t ap, const char *sys, const char *name,
		      struct sc_pos pos, const char *as_written)
{
	const struct tpp_file_info *fi = tpp_r_info(P->r);
	int hits = 0;
	for (uint32_t i = 0; i < fi->ntypes; i++) {
		const struct tpp_type *t = &fi->types[i];
		if (!t->name || t->id >= TPP_MAX_TYPES)
			continue;
		if (fnmatch(sys, t->system ? t->system : "", 0) || fnmatch(name, t->name, 0))
			continue;
		struct sc_site *s = add_site(P, p, ap, SK_TP);
		if (!s)
			return -1;
		s->type = t->id;
		s->t = t;
		s->probe = fmt_name(P, "tracepoint", t->system ? t->system : "", t->name);
		hits++;
	}
	if (!hits) {
		char have[400];
		list_types(P, 0, have, sizeof(have));
		sc_fail(P, pos, "%s: %s has no such events (its event types: %s)", as_written, P->src_name, have);
		return -1;
	}
	return 0;
}

/* Whether the file holds symbols of a binary BIN names with a function
 * FUNC names: compiled-in function events of it can then exist. */
static int has_func(struct sc_prog *P, const char *bin, const char *fn)
{
	const struct tpp_meta *m = tpp_r_meta(P->r);
	for (size_t i = 0; i < m->nsymtabs; i++) {
		const struct tpp_symtab *st = &m->symtabs[i];
		int mapped = sc_bin_match(bin, st->path);
		for (size_t k = 0; !mapped && k < m->nmmaps; k++)
			mapped = (m->mmaps[k].bid_len && m->mmaps[k].bid_len == st->bid_len &&
				  !memcmp(m->mmaps[k].build_id, st->build_id, st->bid_len) && sc_bin_match(bin, m->mmaps[k].path));
		if (!mapped)
			continue;
		for (size_t k = 0; k < st->nsyms; k++)
			if (st->syms[k].name && !fnmatch(fn, st->syms[k].name, 0))
				return 1;
	}
	return 0;
}

static int resolve_u(struct sc_prog *P, struct sc_probe *p, uint32_t ap, const char *prov, const char *rest,
		     struct sc_pos pos, const char *as_written)
{
	int ret = !strcmp(prov, "uretprobe") || !strcmp(prov, "ur");
	const char *c = strrchr(rest, ':');
	if (!c || c == rest || !c[1]) {
		sc_fail(P, pos, "%s: expected %s:BINARY:FUNCTION", as_written, prov);
		return -1;
	}
	char *bin = sc_strndup(&P->arena, rest, (size_t)(c - rest)), *fn = sc_strndup(&P->arena, c + 1, strlen(c + 1));
	if (!bin || !fn)
		return -1;
	char pat[TPP_NAME_MAX + 1];
	sanitize(fn, pat, sizeof(pat));
	const struct tpp_file_info *fi = tpp_r_info(P->r);
	int hits = 0, funcs = has_func(P, bin, fn);
	for (uint32_t i = 0; i < fi->ntypes; i++) {
		const struct tpp_type *t = &fi->types[i];
		if (!t->name || t->id >= TPP_MAX_TYPES)
			continue;
		int k = ukind(t);
		if (k == (ret ? 2 : 1)) {
			if (!uname_match(pat, t->name, ret))
				continue;
		} else if (k != (ret ? 4 : 3) || !funcs) {
			continue;
		}
		struct sc_site *s = add_site(P, p, ap, ret ? SK_URETPROBE : SK_UPROBE);
		if (!s)
			return -1;
		s->type = t->id;
		s->t = t;
		s->dyn = 1;
		s->recorded = k == 1 || k == 2;
		s->bin = bin;
		s->fn = fn;
		s->probe = fmt_name(P, ret ? "uretprobe" : "uprobe", bin, fn);
		sc_probe_fields(P, s);
		hits++;
	}
	if (!hits) {
		char have[400], bins[400];
		list_types(P, 1, have, sizeof(have));
		list_compiled_in(P, bins, sizeof(bins));
		sc_fail(P, pos, "%s: %s has no events of this function (uprobes recorded: %s%s%s)", as_written,
			P->src_name, have, bins[0] ? "; compiled-in functions of: " : "", bins);
		return -1;
	}
	return 0;
}

static int resolve_interval(struct sc_prog *P, struct sc_probe *p, uint32_t ap, const char *rest, struct sc_pos pos,
			    const char *as_written)
{
	const char *c = strchr(rest, ':');
	char *end;
	unsigned long long n = c ? strtoull(c + 1, &end, 10) : 0;
	uint64_t unit = 0;
	if (c) {
		size_t ul = (size_t)(c - rest);
		unit = ul == 1 && rest[0] == 's' ? 1000000000ull : ul == 2 && !strncmp(rest, "ms", 2) ? 1000000ull
			: ul == 2 && !strncmp(rest, "us", 2) ? 1000ull : ul == 2 && !strncmp(rest, "hz", 2) ? 1 : 0;
	}
	if (!c || !unit || !n || *end || (unit == 1 && n > 1000000000ull) || (unit > 1 && n > UINT64_MAX / unit)) {
		sc_fail(P, pos, "%s: expected interval:s:N, interval:ms:N, interval:us:N or interval:hz:N", as_written);
		return -1;
	}
	struct sc_site *s = add_site(P, p, ap, SK_INTERVAL);
	if (!s)
		return -1;
	s->every = unit == 1 ? 1000000000ull / n : n * unit;
	s->probe = as_written;
	return 0;
}

int sc_probes_resolve(struct sc_prog *P)
{
	for (uint32_t pi = 0; pi < P->ast.nprobes; pi++) {
		struct sc_probe *p = &P->ast.probes[pi];
		for (uint32_t ai = 0; ai < p->naps; ai++) {
			const struct sc_tok *a = &p->aps[ai];
			char *text = sc_strndup(&P->arena, a->p, a->len);
			if (!text)
				return -1;
			char *c = strchr(text, ':');
			char prov[32];
			snprintf(prov, sizeof(prov), "%.*s", (int)(c ? (size_t)(c - text) : strlen(text)), text);
			const char *rest = c ? c + 1 : "";
			int rc = 0;
			if (!strcmp(text, "BEGIN") || !strcmp(text, "END")) {
				struct sc_site *s = add_site(P, p, ai, text[0] == 'B' ? SK_BEGIN : SK_END);
				if (!s)
					return -1;
				s->probe = text;
			} else if (!strcmp(prov, "tracepoint") || !strcmp(prov, "t")) {
				char *c2 = strchr(rest, ':');
				if (!c2 || strchr(c2 + 1, ':') || c2 == rest || !c2[1]) {
					sc_fail(P, a->pos, "%s: expected tracepoint:SUBSYSTEM:NAME", text);
					return -1;
				}
				char *sys = sc_strndup(&P->arena, rest, (size_t)(c2 - rest));
				rc = sys ? resolve_tp(P, p, ai, sys, c2 + 1, a->pos, text) : -1;
			} else if (!strcmp(prov, "uprobe") || !strcmp(prov, "u") || !strcmp(prov, "uretprobe") ||
				   !strcmp(prov, "ur")) {
				rc = resolve_u(P, p, ai, prov, rest, a->pos, text);
			} else if (!strcmp(prov, "interval") || !strcmp(prov, "i")) {
				rc = resolve_interval(P, p, ai, rest, a->pos, text);
			} else {
				static const char *const live[] = {"kprobe", "kretprobe", "k", "kr", "profile", "p", "software",
								   "s", "hardware", "h", "usdt", "U", "watchpoint", "w",
								   "kfunc", "f", "kretfunc", "fr", "rawtracepoint", "rt",
								   "iter", "asyncwatchpoint"};
				int known = 0;
				for (size_t k = 0; k < sizeof(live) / sizeof(live[0]); k++)
					known |= !strcmp(prov, live[k]);
				if (known)
					sc_fail(P, a->pos,
						"%s: %s probes need the live system; a recording answers tracepoint, uprobe, uretprobe, interval, BEGIN and END",
						text, prov);
				else
					sc_fail(P, a->pos, "%s: unknown probe type '%s'", text, prov);
				return -1;
			}
			if (rc)
				return -1;
		}
	}
	return 0;
}
