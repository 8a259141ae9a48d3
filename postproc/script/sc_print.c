/* sc_print — maps printed the way bpftrace 0.17 prints them, so that the
 * output of a program run live and offline can be compared line for line:
 * the same order (by value for counts, sums and integers; by average; by
 * a histogram's total; by key for text), the same histogram rows and bars,
 * the same blank lines; and the same JSON objects with -f json. Entries
 * that tie are ordered by key, which bpftrace leaves to chance. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc_int.h"

uint32_t sc_mk_words(const struct sc_mapdef *d)
{
	switch (d->kind) {
	case MK_AVG:
	case MK_STATS: return 2;
	case MK_HIST: return SC_HIST_BUCKETS;
	case MK_LHIST: return (uint32_t)((d->lmax - d->lmin) / d->lstep) + 2;
	default: return 1;
	}
}

struct sorter {
	const struct sc_mapdef *d;
	uint64_t *key; /* per entry: what it is sorted by */
};

static int cmp_keys(const uint64_t *a, const uint64_t *b, const struct sc_mapdef *d)
{
	for (uint32_t k = 0; k < d->nkeys; k++) {
		if (a[k] == b[k])
			continue;
		if (d->keys[k].t == TY_STR) {
			const struct sc_str *x = sc_vs(a[k]), *y = sc_vs(b[k]);
			size_t n = x->len < y->len ? x->len : y->len;
			int c = memcmp(x->s, y->s, n);
			if (c)
				return c;
			return x->len < y->len ? -1 : x->len > y->len;
		}
		if (d->keys[k].sign)
			return (int64_t)a[k] < (int64_t)b[k] ? -1 : 1;
		return a[k] < b[k] ? -1 : 1;
	}
	return 0;
}

static int by_sort_key(const void *pa, const void *pb, void *ctx)
{
	const struct sorter *S = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct sc_mapdef *d = S->d;
	if (S->key) {
		uint64_t x = S->key[a], y = S->key[b];
		int sign = d->kind == MK_AVG || d->kind == MK_STATS || ((d->kind == MK_INT || d->kind == MK_SUM ||
									  d->kind == MK_MIN || d->kind == MK_MAX) && d->vsign);
		if (x != y)
			return sign ? ((int64_t)x < (int64_t)y ? -1 : 1) : (x < y ? -1 : 1);
	}
	return cmp_keys(sc_map_ent(&d->m, a), sc_map_ent(&d->m, b), d);
}

static int64_t average(const uint64_t *v) { return v[0] ? (int64_t)v[1] / (int64_t)v[0] : 0; }

/* The entries of d in print order, with the scalar map's zero entry when
 * it has none. NULL when empty (and keyed) or out of memory. */
static uint32_t *ordered(struct sc_mapdef *d, uint32_t *n)
{
	struct sc_map *m = &d->m;
	if (!d->keyed && !m->n) {
		uint64_t nokey = 0;
		if (!sc_map_put(m, &nokey))
			return NULL;
	}
	*n = m->n;
	if (!m->n)
		return NULL;
	uint32_t *ix = malloc(m->n * sizeof(*ix));
	uint64_t *key = malloc(m->n * sizeof(*key));
	if (!ix || !key) {
		free(ix);
		free(key);
		return NULL;
	}
	int by_key = d->kind == MK_STR || d->kind == MK_TS;
	for (uint32_t i = 0; i < m->n; i++) {
		const uint64_t *v = sc_map_ent(m, i) + m->nkw;
		ix[i] = i;
		if (d->kind == MK_AVG || d->kind == MK_STATS) {
			key[i] = (uint64_t)average(v);
		} else if (d->kind == MK_HIST || d->kind == MK_LHIST) {
			uint64_t t = 0;
			for (uint32_t k = 0; k < m->vw; k++)
				t += v[k];
			key[i] = t;
		} else {
			key[i] = v[0];
		}
	}
	struct sorter s = {d, by_key ? NULL : key};
	qsort_r(ix, m->n, sizeof(*ix), by_sort_key, &s);
	free(key);
	return ix;
}

static void key_text(struct sc_rt *rt, struct sc_buf *b, const struct sc_mapdef *d, const uint64_t *k, const char *sep)
{
	for (uint32_t i = 0; i < d->nkeys; i++) {
		if (i)
			sc_buf_put(b, sep, strlen(sep));
		sc_value_text(rt, b, d->keys[i], k[i]);
	}
}

static void num(struct sc_buf *b, int sign, uint64_t v)
{
	char t[24];
	int n = sign ? snprintf(t, sizeof(t), "%lld", (long long)v) : snprintf(t, sizeof(t), "%llu", (unsigned long long)v);
	sc_buf_put(b, t, (size_t)n);
}

/* A value of the "map" family (not a histogram or stats). */
static void value_text(struct sc_rt *rt, struct sc_buf *b, const struct sc_mapdef *d, const uint64_t *v, uint64_t div)
{
	switch (d->kind) {
	case MK_STR:
	case MK_TS:
		sc_value_text(rt, b, d->vty, v[0]);
		return;
	case MK_COUNT:
		num(b, 0, v[0] / div);
		return;
	default:
		if (d->vsign)
			num(b, 1, (uint64_t)((int64_t)v[0] / (int64_t)div));
		else
			num(b, 0, v[0] / div);
	}
}

static const char *hist_unit(int *p)
{
	static const char *const u[] = {"", "K", "M", "G", "T"};
	int k = *p >= 40 ? 4 : *p >= 30 ? 3 : *p >= 20 ? 2 : *p >= 10 ? 1 : 0;
	*p -= 10 * k;
	return u[k];
}

static void lhist_label(struct sc_buf *b, int64_t n)
{
	char t[32];
	int k;
	if (n == 0)
		k = snprintf(t, sizeof(t), "0");
	else if (n % 1048576 == 0)
		k = snprintf(t, sizeof(t), "%lldM", (long long)(n / 1048576));
	else if (n % 1024 == 0)
		k = snprintf(t, sizeof(t), "%lldK", (long long)(n / 1024));
	else
		k = snprintf(t, sizeof(t), "%lld", (long long)n);
	sc_buf_put(b, t, (size_t)k);
}

/* The rows of a histogram: bucket labels, counts and bars. */
static void hist_text(struct sc_buf *b, const struct sc_mapdef *d, const uint64_t *v, uint64_t div)
{
	uint32_t nb = sc_mk_words(d), lo = UINT32_MAX, hi = 0;
	uint64_t maxv = 0;
	for (uint32_t i = 0; i < nb; i++) {
		if (v[i]) {
			if (lo == UINT32_MAX)
				lo = i;
			hi = i;
		}
		if (v[i] > maxv)
			maxv = v[i];
	}
	if (lo == UINT32_MAX)
		return;
	for (uint32_t i = lo; i <= hi; i++) {
		struct sc_buf l = {0};
		char t[160];
		if (d->kind == MK_HIST) {
			if (i == 0) {
				sc_buf_put(&l, "(..., 0)", 8);
			} else if (i == 1) {
				sc_buf_put(&l, "[0]", 3);
			} else if (i == 2) {
				sc_buf_put(&l, "[1]", 3);
			} else {
				int p0 = (int)i - 2, p1 = (int)i - 1;
				const char *u0 = hist_unit(&p0), *u1 = hist_unit(&p1);
				int k = snprintf(t, sizeof(t), "[%llu%s, %llu%s)", 1ull << p0, u0, 1ull << p1, u1);
				sc_buf_put(&l, t, (size_t)k);
			}
		} else {
			uint32_t last = nb - 1;
			if (i == 0) {
				sc_buf_put(&l, "(..., ", 6);
				lhist_label(&l, d->lmin);
				sc_buf_put(&l, ")", 1);
			} else if (i == last) {
				sc_buf_put(&l, "[", 1);
				lhist_label(&l, d->lmax);
				sc_buf_put(&l, ", ...)", 6);
			} else {
				sc_buf_put(&l, "[", 1);
				lhist_label(&l, (int64_t)(i - 1) * d->lstep + d->lmin);
				sc_buf_put(&l, ", ", 2);
				lhist_label(&l, (int64_t)i * d->lstep + d->lmin);
				sc_buf_put(&l, ")", 1);
			}
		}
		/* as bpftrace draws it: in single precision, truncated */
		int bar = (int)((float)v[i] / (float)maxv * 52);
		char bars[53];
		memset(bars, '@', (size_t)bar);
		bars[bar] = 0;
		int k = snprintf(t, sizeof(t), "%-16.*s", (int)l.len, l.p ? l.p : "");
		sc_buf_put(b, t, (size_t)k);
		k = snprintf(t, sizeof(t), "%8llu |%-52s|\n", (unsigned long long)(v[i] / div), bars);
		sc_buf_put(b, t, (size_t)k);
		free(l.p);
	}
}

static void hist_json(struct sc_buf *b, const struct sc_mapdef *d, const uint64_t *v, uint64_t div)
{
	uint32_t nb = sc_mk_words(d), lo = UINT32_MAX, hi = 0;
	for (uint32_t i = 0; i < nb; i++)
		if (v[i]) {
			if (lo == UINT32_MAX)
				lo = i;
			hi = i;
		}
	sc_buf_put(b, "[", 1);
	for (uint32_t i = lo; lo != UINT32_MAX && i <= hi; i++) {
		char t[128];
		int k;
		if (d->kind == MK_HIST) {
			if (i == 0)
				k = snprintf(t, sizeof(t), "{\"max\": -1, ");
			else if (i == 1)
				k = snprintf(t, sizeof(t), "{\"min\": 0, \"max\": 0, ");
			else
				k = snprintf(t, sizeof(t), "{\"min\": %llu, \"max\": %llu, ", 1ull << (i - 2),
					     i - 1 >= 64 ? UINT64_MAX : (1ull << (i - 1)) - 1);
		} else if (i == 0) {
			k = snprintf(t, sizeof(t), "{\"max\": %lld, ", (long long)d->lmin - 1);
		} else if (i == nb - 1) {
			k = snprintf(t, sizeof(t), "{\"min\": %lld, ", (long long)d->lmax);
		} else {
			k = snprintf(t, sizeof(t), "{\"min\": %lld, \"max\": %lld, ", (long long)((int64_t)(i - 1) * d->lstep + d->lmin),
				     (long long)((int64_t)i * d->lstep + d->lmin - 1));
		}
		sc_buf_put(b, i > lo ? ", " : "", i > lo ? 2 : 0);
		sc_buf_put(b, t, (size_t)k);
		k = snprintf(t, sizeof(t), "\"count\": %llu}", (unsigned long long)(v[i] / div));
		sc_buf_put(b, t, (size_t)k);
	}
	sc_buf_put(b, "]", 1);
}

static void print_text(struct sc_rt *rt, struct sc_buf *b, struct sc_mapdef *d, const uint32_t *ix, uint32_t n,
		       uint32_t from, uint64_t div)
{
	int hist = d->kind == MK_HIST || d->kind == MK_LHIST, stats = d->kind == MK_AVG || d->kind == MK_STATS;
	for (uint32_t j = from; j < n; j++) {
		const uint64_t *e = sc_map_ent(&d->m, ix[j]), *v = e + d->m.nkw;
		if (j > from)
			sc_buf_put(b, "\n", 1);
		sc_buf_put(b, d->name, strlen(d->name));
		if (d->keyed) {
			sc_buf_put(b, "[", 1);
			key_text(rt, b, d, e, ", ");
			sc_buf_put(b, "]", 1);
		}
		sc_buf_put(b, ": ", 2);
		if (hist) {
			sc_buf_put(b, "\n", 1);
			hist_text(b, d, v, div);
		} else if (d->kind == MK_STATS) {
			char t[96];
			int k = snprintf(t, sizeof(t), "count %lld, average %lld, total %lld", (long long)v[0],
					 (long long)average(v), (long long)v[1]);
			sc_buf_put(b, t, (size_t)k);
		} else if (d->kind == MK_AVG) {
			num(b, 1, (uint64_t)(average(v) / (int64_t)div));
		} else {
			value_text(rt, b, d, v, div);
		}
	}
	sc_buf_put(b, stats ? "\n\n" : "\n", stats ? 2 : 1);
}

static void print_json(struct sc_rt *rt, struct sc_buf *b, struct sc_mapdef *d, const uint32_t *ix, uint32_t n,
		       uint32_t from, uint64_t div)
{
	int hist = d->kind == MK_HIST || d->kind == MK_LHIST, stats = d->kind == MK_AVG || d->kind == MK_STATS;
	const char *type = hist ? "hist" : stats ? "stats" : "map";
	sc_buf_put(b, "{\"type\": \"", 10);
	sc_buf_put(b, type, strlen(type));
	sc_buf_put(b, "\", \"data\": {", 12);
	sc_json_str(rt, b, d->name, strlen(d->name));
	sc_buf_put(b, ": ", 2);
	if (d->keyed)
		sc_buf_put(b, "{", 1);
	for (uint32_t j = from; j < n; j++) {
		const uint64_t *e = sc_map_ent(&d->m, ix[j]), *v = e + d->m.nkw;
		if (j > from)
			sc_buf_put(b, ", ", 2);
		if (d->keyed) {
			struct sc_buf k = {0};
			key_text(rt, &k, d, e, ",");
			sc_json_str(rt, b, k.p ? k.p : "", k.len);
			free(k.p);
			sc_buf_put(b, ": ", 2);
		}
		if (hist) {
			hist_json(b, d, v, div);
		} else if (d->kind == MK_STATS) {
			char t[128];
			int k = snprintf(t, sizeof(t), "{\"count\": %lld, \"average\": %lld, \"total\": %lld}", (long long)v[0],
					 (long long)average(v), (long long)v[1]);
			sc_buf_put(b, t, (size_t)k);
		} else if (d->kind == MK_AVG) {
			num(b, 1, (uint64_t)(average(v) / (int64_t)div));
		} else if (d->kind == MK_STR || d->kind == MK_TS) {
			struct sc_buf s = {0};
			value_text(rt, &s, d, v, div);
			sc_json_str(rt, b, s.p ? s.p : "", s.len);
			free(s.p);
		} else {
			value_text(rt, b, d, v, div);
		}
	}
	if (d->keyed)
		sc_buf_put(b, "}", 1);
	sc_buf_put(b, "}}\n", 3);
}

void sc_print_map(struct sc_rt *rt, struct sc_mapdef *d, uint64_t top, uint64_t div)
{
	if (!div)
		div = 1;
	uint32_t n = 0;
	uint32_t *ix = ordered(d, &n);
	if (!ix && n) {
		rt->err = -ENOMEM;
		return;
	}
	uint32_t from = top && n > top ? n - (uint32_t)top : 0;
	struct sc_buf b = {0};
	if (rt->P->json) {
		if (n)
			print_json(rt, &b, d, ix, n, from, div);
	} else {
		print_text(rt, &b, d, ix, n, from, div);
	}
	if (b.len)
		sc_emit(rt, b.p, b.len);
	free(b.p);
	free(ix);
}

static int by_name(const void *a, const void *b)
{
	const struct sc_mapdef *x = *(const struct sc_mapdef *const *)a, *y = *(const struct sc_mapdef *const *)b;
	return strcmp(x->name, y->name);
}

void sc_print_all(struct sc_rt *rt)
{
	struct sc_prog *P = rt->P;
	/* bpftrace ends its run with two newlines, maps or none */
	if (!P->json)
		sc_emit(rt, "\n\n", 2);
	struct sc_mapdef **v = malloc((P->nmaps + 1) * sizeof(*v));
	if (!v) {
		rt->err = -ENOMEM;
		return;
	}
	for (uint32_t i = 0; i < P->nmaps; i++)
		v[i] = &P->maps[i];
	qsort(v, P->nmaps, sizeof(*v), by_name);
	for (uint32_t i = 0; i < P->nmaps; i++)
		sc_print_map(rt, v[i], 0, 1);
	free(v);
}
