/* Function identities: symbol lookups are the slow part of every function
 * analysis, so each (process, address) is resolved once and names are
 * interned to small ids. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hmap.h"
#include "an_syms.h"

struct an_syms {
	const struct tpp_names *n;
	struct hmap by_addr; /* (pid index << 48 | addr) -> id */
	struct hmap by_pid;  /* pid -> dense pid index */
	uint32_t npids;
	struct hmap by_name; /* hash(name) (+probe) -> id */
	char **names;
	size_t *lens;
	size_t nnames, cap;
	/* Recently resolved (pid, addr): a hot loop calls a handful of
	 * functions, and two hash lookups per call showed in profiles. */
	struct {
		uint64_t addr;
		int32_t pid;
		uint32_t id;
	} recent[256];
};

int an_syms_open(struct an_syms **s, const struct tpp_names *n)
{
	*s = calloc(1, sizeof(**s));
	if (!*s)
		return -ENOMEM;
	(*s)->n = n;
	for (size_t i = 0; i < 256; i++)
		(*s)->recent[i].id = UINT32_MAX;
	return 0;
}

void an_syms_close(struct an_syms *s)
{
	if (!s)
		return;
	hmap_free(&s->by_addr);
	hmap_free(&s->by_pid);
	hmap_free(&s->by_name);
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	free(s->lens);
	free(s);
}

static uint64_t fnv(const char *p)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h & ~1ULL; /* never HMAP_EMPTY */
}

static uint32_t intern(struct an_syms *s, const char *name)
{
	uint64_t h = fnv(name);
	for (;; h += 2) {
		uint32_t *v = hmap_get(&s->by_name, h);
		if (!v)
			break;
		if (!strcmp(s->names[*v], name))
			return *v;
	}
	if (s->nnames == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		char **nn = realloc(s->names, nc * sizeof(*nn));
		if (!nn)
			return UINT32_MAX;
		s->names = nn;
		size_t *nl = realloc(s->lens, nc * sizeof(*nl));
		if (!nl)
			return UINT32_MAX;
		s->lens = nl;
		s->cap = nc;
	}
	char *d = strdup(name);
	if (!d || hmap_put(&s->by_name, h, (uint32_t)s->nnames)) {
		free(d);
		return UINT32_MAX;
	}
	s->names[s->nnames] = d;
	s->lens[s->nnames] = strlen(d);
	return (uint32_t)s->nnames++;
}

/* The C++ ABI's demangler (libsupc++, linked statically): *status 0 and a
 * malloc'd name, else NULL. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Drops the balanced group that starts at s[i] (open is '(' or '<'):
 * returns the index just past it. */
static size_t skip_group(const char *s, size_t i)
{
	int depth = 0;
	for (; s[i]; i++) {
		if (s[i] == '(' || s[i] == '<')
			depth++;
		else if ((s[i] == ')' || s[i] == '>') && --depth == 0)
			return i + 1;
	}
	return i;
}

const char *an_demangle(const char *name, char *buf, size_t len)
{
	if (strncmp(name, "_Z", 2) || !len)
		return name;
	int st = -1;
	char *full = __cxa_demangle(name, NULL, NULL, &st);
	if (!full || st)
		return name;
	/* uftrace's "simple" form, which its users and our oracle compare
	 * with: qualified name without template arguments or parameters,
	 * "app::work" for app::work(std::vector<int>&, int) */
	size_t o = 0, cut = 0; /* cut: past the last space outside a name, */
	for (size_t i = 0; full[i] && o + 1 < len;) { /* which ends a template's return type */
		if (!strncmp(full + i, "operator", 8)) {
			/* an operator's own name may hold '<', '(' or a space
			 * (operator<<, operator(), operator new, operator bool) */
			static const char *const ops[] = {"()", "[]", "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=",
							  "==", "!=", "&&", "||", "++", "--", "+=", "-=", "*=", "/=",
							  "%=", "&=", "|=", "^=", "->", ",", "<", ">", "=", "!", "+",
							  "-", "*", "/", "%", "^", "&", "|", "~"};
			size_t k = i + 8;
			if (full[k] == ' ') {
				while (full[k] && full[k] != '(')
					k++;
			} else {
				for (size_t j = 0; j < sizeof(ops) / sizeof(*ops); j++)
					if (!strncmp(full + k, ops[j], strlen(ops[j]))) {
						k += strlen(ops[j]);
						break;
					}
			}
			while (i < k && o + 1 < len)
				buf[o++] = full[i++];
			continue;
		}
		if (!strncmp(full + i, "(anonymous namespace)", 21) || !strncmp(full + i, "{lambda(", 8)) {
			size_t k = full[i] == '{' ? strchr(full + i, '}') ? (size_t)(strchr(full + i, '}') - full) + 1 : i + 1
						  : i + 21;
			while (i < k && o + 1 < len)
				buf[o++] = full[i++];
			continue;
		}
		if (full[i] == '<') {
			i = skip_group(full, i);
			continue;
		}
		if (full[i] == '(') {
			/* the parameter list: what follows it (const, [clone .cold]) too,
			 * unless a scope goes on (a local name: f(int)::x) */
			size_t k = skip_group(full, i);
			if (!strncmp(full + k, "::", 2)) {
				i = k;
				continue;
			}
			break;
		}
		if (full[i] == ' ')
			cut = o + 1;
		buf[o++] = full[i++];
	}
	buf[o] = 0;
	free(full);
	if (cut < o)
		memmove(buf, buf + cut, o - cut + 1);
	return o > cut ? buf : name;
}

static uint32_t func_id(struct an_syms *s, int32_t pid, uint64_t addr);

uint32_t an_func_id(struct an_syms *s, int32_t pid, uint64_t addr)
{
	size_t h = (size_t)((addr ^ (addr >> 8) ^ (uint64_t)pid) & 255);
	if (s->recent[h].id != UINT32_MAX && s->recent[h].addr == addr && s->recent[h].pid == pid)
		return s->recent[h].id;
	uint32_t id = func_id(s, pid, addr);
	if (id != UINT32_MAX) {
		s->recent[h].addr = addr;
		s->recent[h].pid = pid;
		s->recent[h].id = id;
	}
	return id;
}

static uint32_t func_id(struct an_syms *s, int32_t pid, uint64_t addr)
{
	uint32_t *pi = hmap_get(&s->by_pid, (uint32_t)pid);
	uint32_t pidx;
	if (pi) {
		pidx = *pi;
	} else {
		pidx = s->npids++;
		if (hmap_put(&s->by_pid, (uint32_t)pid, pidx))
			return UINT32_MAX;
	}
	uint64_t key = ((uint64_t)pidx << 48) | (addr & 0xffffffffffffULL);
	uint32_t *v = hmap_get(&s->by_addr, key);
	if (v)
		return *v;
	uint64_t off = 0;
	const char *name = s->n ? tpp_names_sym(s->n, pid, addr, &off) : NULL;
	char buf[TPP_NAME_MAX + 32];
	if (!name) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
		name = buf;
	} else {
		name = an_demangle(name, buf, sizeof(buf));
	}
	/* An address inside a function is still that function: -pg reports
	 * the mcount call site a few bytes past the entry. */
	uint32_t id = intern(s, name);
	if (id != UINT32_MAX && hmap_put(&s->by_addr, key, id))
		return UINT32_MAX;
	return id;
}

uint32_t an_func_id_named(struct an_syms *s, const char *name)
{
	char buf[TPP_NAME_MAX + 32];
	return intern(s, an_demangle(name, buf, sizeof(buf)));
}

uint32_t an_func_id_ev(struct an_syms *s, int32_t pid, const struct tpp_event *ev, uint64_t addr)
{
	const char *probe = s->n ? tpp_names_probe(s->n, ev->type) : NULL;
	return probe ? an_func_id_named(s, probe) : an_func_id(s, pid, addr);
}

const char *an_func_name(const struct an_syms *s, uint32_t id)
{
	return id < s->nnames ? s->names[id] : "?";
}

size_t an_func_name_len(const struct an_syms *s, uint32_t id)
{
	return id < s->nnames ? s->lens[id] : 1;
}

size_t an_nfuncs(const struct an_syms *s)
{
	return s->nnames;
}
