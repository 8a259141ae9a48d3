/* Latency distributions: exact percentiles from the samples themselves
 * while they fit a global budget, a log-linear histogram past it. */
#include <errno.h>
#include <math.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "an_lat.h"
#include "hugemem.h"
#include "spawn_away.h"

/* Sample slots allocated by all distributions of the process together
 * (capacity, so that adding a sample needs no global count), and the most
 * ever allocated at once. Lowered only when the memory is given back. */
static size_t held, held_peak;

size_t an_lat_held(void)
{
	return held;
}

size_t an_lat_held_peak(void)
{
	return held_peak;
}

#define SUB_BITS 7
#define SUB (1u << SUB_BITS)
#define NFINE (64 * SUB)

void an_lat_init(struct an_lat *l)
{
	memset(l, 0, sizeof(*l));
	l->min = UINT64_MAX;
}

/* Past this size the exact samples move to a huge-page region as large as
 * the budget, where they grow without copies and fault 2 MiB at a time.
 * At most HUGE_REGS distributions do, so that rounding each up to 2 MiB
 * adds at most 16 MiB however many functions a file has. */
#define HUGE_FROM ((size_t)64 << 10)
#define HUGE_REGS 8
#define VREG ((size_t)AN_LAT_BUDGET * sizeof(uint32_t))
static int hugeregs;

static void drop_picks(struct an_lat *l);

static void free_v(struct an_lat *l)
{
	if (l->vreg) {
		hm_free(l->v, l->vreg);
		hugeregs--;
	} else {
		free(l->v);
	}
	l->v = NULL;
	l->vreg = 0;
}

void an_lat_free(struct an_lat *l)
{
	held -= l->cap + l->bigcap;
	free_v(l);
	free(l->big);
	free(l->srt);
	free(l->fine);
	free(l->sel);
	drop_picks(l);
	free(l->pick);
	an_lat_init(l);
}

/* Log-linear bucket: exact below 2*SUB, then SUB buckets per power of two. */
static unsigned fine_bucket(uint64_t v)
{
	if (v < 2 * SUB)
		return (unsigned)v;
	unsigned e = 63 - __builtin_clzll(v); /* >= SUB_BITS + 1 */
	unsigned sh = e - SUB_BITS;
	return (e - SUB_BITS) * SUB + (unsigned)(v >> sh);
}

/* Largest value that falls into bucket b. */
static uint64_t fine_upper(unsigned b)
{
	if (b < 2 * SUB)
		return b;
	/* b = sh * SUB + (v >> sh) with v >> sh in [SUB, 2 * SUB) */
	unsigned sh = b / SUB - 1;
	uint64_t top = b - (uint64_t)sh * SUB;
	return ((top + 1) << sh) - 1;
}


static void go_inexact(struct an_lat *l)
{
	l->fine = calloc(NFINE + 2 * SUB, sizeof(uint64_t));
	if (!l->fine)
		return; /* keep min/max/avg/log2; percentiles then come from log2 */
	for (size_t i = 0; i < l->n; i++)
		l->fine[fine_bucket(l->v[i])]++;
	for (size_t i = 0; i < l->nbig; i++)
		l->fine[fine_bucket(l->big[i])]++;
	held -= l->cap + l->bigcap;
	free_v(l);
	free(l->big);
	l->big = NULL;
	l->n = l->cap = l->nbig = l->bigcap = 0;
}


/* Room for one more sample in an array of elem-byte slots: 0, or -1 over
 * the budget or out of memory. *reg: the array's huge-page region size (0:
 * malloc'd), or NULL for an array that stays malloc'd. */
static int room_for(void *arr, size_t *cap, size_t n, size_t elem, size_t *reg)
{
	if (n < *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	if (held + nc - *cap > AN_LAT_BUDGET)
		nc = *cap + (AN_LAT_BUDGET > held ? AN_LAT_BUDGET - held : 0);
	if (nc <= *cap)
		return -1;
	void *nv = NULL;
	if (reg && *reg) {
		nv = nc * elem <= *reg ? *(void **)arr : NULL;
	} else if (reg && nc * elem >= HUGE_FROM && nc * elem <= VREG && hugeregs < HUGE_REGS && (nv = hm_alloc(VREG))) {
		memcpy(nv, *(void **)arr, n * elem);
		free(*(void **)arr);
		*reg = VREG;
		hugeregs++;
	} else {
		nv = realloc(*(void **)arr, nc * elem);
	}
	if (!nv)
		return -1;
	held += nc - *cap;
	if (held > held_peak)
		held_peak = held;
	*(void **)arr = nv;
	*cap = nc;
	return 0;
}

/* Gives back an array's slots past its n samples: a malloc'd one shrinks,
 * a huge-page region drops its whole 2 MiB pages past them. */
static void shrink(void *arr, size_t *cap, size_t n, size_t elem, size_t reg)
{
	size_t nc = n;
	if (reg) {
		size_t keep = (n * elem + HM_HUGE - 1) / HM_HUGE * HM_HUGE;
		size_t had = (*cap * elem + HM_HUGE - 1) / HM_HUGE * HM_HUGE;
		if (keep >= had || madvise((char *)*(void **)arr + keep, had - keep, MADV_DONTNEED))
			return;
		nc = keep / elem;
	} else if (!n) {
		free(*(void **)arr);
		*(void **)arr = NULL;
	} else {
		void *nv = realloc(*(void **)arr, n * elem);
		if (!nv)
			return; /* kept as it was, still counted */
		*(void **)arr = nv;
	}
	if (nc < *cap) {
		held -= *cap - nc;
		*cap = nc;
	}
}


void an_lat_add_slow(struct an_lat *l, uint64_t v)
{
	an_lat_tally(l, v);
	if (l->fine) {
		l->fine[fine_bucket(v)]++;
		return;
	}
	if (l->count != l->n + l->nbig + 1) /* already inexact without fine buckets */
		return;
	int big = v >> 32 != 0;
	if (big ? room_for(&l->big, &l->bigcap, l->nbig, sizeof(*l->big), NULL)
		: room_for(&l->v, &l->cap, l->n, sizeof(*l->v), &l->vreg)) {
		/* over the budget, or out of memory */
		go_inexact(l);
		if (l->fine)
			l->fine[fine_bucket(v)]++;
		return;
	}
	if (big)
		l->big[l->nbig++] = v;
	else
		l->v[l->n++] = (uint32_t)v;
}

int an_lat_exact(const struct an_lat *l)
{
	return l->count == l->n + l->nbig;
}

/* Room for more samples in an exact array, as room_for grows it. */
static int room_more(void *arr, size_t *cap, size_t n, size_t more, size_t elem, size_t *reg)
{
	while (*cap < n + more)
		if (room_for(arr, cap, *cap, elem, reg))
			return -1;
	return 0;
}

/* Moves the samples of one array of src onto the end of dst's, a 2 MiB
 * step at a time, src giving back each step's memory before dst takes the
 * next: the two never hold more than the budget between them (a union that
 * fits the budget moves whole, one step of slack aside). 0, or -1 when dst
 * cannot take the rest (what moved stays in dst, the rest in src). */
static int move_samples(void *darr, size_t *dcap, size_t *dn, size_t *dreg, void *sarr, size_t *scap,
			size_t *sn, size_t sreg, size_t elem)
{
	shrink(sarr, scap, *sn, elem, sreg);
	while (*sn) {
		size_t k = HM_HUGE / elem < *sn ? HM_HUGE / elem : *sn;
		if (room_more(darr, dcap, *dn, k, elem, dreg))
			return -1;
		memcpy((char *)*(void **)darr + *dn * elem, (char *)*(void **)sarr + (*sn - k) * elem, k * elem);
		*dn += k;
		*sn -= k;
		shrink(sarr, scap, *sn, elem, sreg);
	}
	return 0;
}

void an_lat_merge(struct an_lat *dst, struct an_lat *src)
{
	if (!src->count) {
		an_lat_free(src);
		return;
	}
	if (!dst->count) { /* the first file's: moved, not copied */
		an_lat_free(dst);
		*dst = *src;
		an_lat_init(src);
		return;
	}
	int dx = an_lat_exact(dst), sx = an_lat_exact(src);
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (int b = 0; b < 65; b++)
		dst->log2[b] += src->log2[b];
	dst->sorted = 0;
	/* src's samples leave the budget only as their memory does: the union
	 * may fit where both, each with its slack, would not, and the budget
	 * holds at every instant */
	if (dx && sx && !move_samples(&dst->v, &dst->cap, &dst->n, &dst->vreg, &src->v, &src->cap, &src->n,
				      src->vreg, sizeof(*dst->v)) &&
	    !move_samples(&dst->big, &dst->bigcap, &dst->nbig, NULL, &src->big, &src->bigcap, &src->nbig, 0,
			  sizeof(*dst->big))) {
		an_lat_free(src);
		return;
	}
	if (dx)
		go_inexact(dst); /* its own samples (and what moved) into buckets */
	if (dst->fine && sx) { /* what did not move */
		for (size_t i = 0; i < src->n; i++)
			dst->fine[fine_bucket(src->v[i])]++;
		for (size_t i = 0; i < src->nbig; i++)
			dst->fine[fine_bucket(src->big[i])]++;
	} else if (dst->fine && src->fine) {
		for (unsigned b = 0; b < NFINE + 2 * SUB; b++)
			dst->fine[b] += src->fine[b];
	} else if (dst->fine) { /* src kept only log2 buckets: so does the union */
		free(dst->fine);
		dst->fine = NULL;
	}
	an_lat_free(src);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* LSD radix sort, 11 bits a pass (the counts stay in L1; 16-bit counts
 * cost a 512 KiB memset a pass), skipping passes where every key agrees:
 * latencies rarely use more than 33 bits, so this is 2-3 passes. */
#define RADIX_BITS 11
#define RADIX (1u << RADIX_BITS)
static void radix_sort(uint64_t *v, size_t n)
{
	if (n < 64) {
		for (size_t i = 1; i < n; i++) {
			uint64_t x = v[i];
			size_t j = i;
			for (; j && v[j - 1] > x; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	uint64_t *tmp = malloc(n * sizeof(*tmp));
	if (!tmp) {
		qsort(v, n, sizeof(*v), cmp_u64);
		return;
	}
	/* one read for every pass's counts: the passes then only scatter */
	enum { NPASS = (64 + RADIX_BITS - 1) / RADIX_BITS };
	size_t (*cnt)[RADIX] = calloc(NPASS, sizeof(*cnt));
	if (!cnt) {
		free(tmp);
		qsort(v, n, sizeof(*v), cmp_u64);
		return;
	}
	uint64_t or = 0, and = ~0ULL;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];
		or |= x;
		and &= x;
		for (unsigned k = 0; k < 3; k++)
			cnt[k][(x >> (k * RADIX_BITS)) & (RADIX - 1)]++;
	}
	uint64_t *src = v, *dst = tmp;
	for (unsigned k = 0; k < NPASS; k++) {
		unsigned sh = k * RADIX_BITS;
		if (!(((or ^ and) >> sh) & (RADIX - 1)))
			continue;
		size_t *c = cnt[k];
		if (k >= 3) /* rare: values of 2^33 ns and more */
			for (size_t i = 0; i < n; i++)
				c[(src[i] >> sh) & (RADIX - 1)]++;
		size_t sum = 0;
		for (size_t i = 0; i < RADIX; i++) {
			size_t x = c[i];
			c[i] = sum;
			sum += x;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i] >> sh) & (RADIX - 1)]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	free(cnt);
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}

/* The rank-th of every sample, widened and sorted once (kept in srt). */
static uint64_t sorted_rank(struct an_lat *l, uint64_t rank)
{
	if (!l->sorted) {
		size_t total = l->n + l->nbig;
		free(l->srt);
		if (!(l->srt = malloc((total ? total : 1) * sizeof(*l->srt))))
			return l->max; /* out of memory: an upper bound */
		for (size_t i = 0; i < l->n; i++)
			l->srt[i] = l->v[i];
		if (l->nbig)
			memcpy(l->srt + l->n, l->big, l->nbig * sizeof(*l->big));
		radix_sort(l->srt, total);
		l->sorted = 1;
	}
	return l->srt[rank - 1];
}

#define NPICK 8
static void drop_picks(struct an_lat *l)
{
	for (unsigned i = 0; i < l->npick; i++)
		free(l->pick[i].v);
	l->npick = 0;
}

/* The bucket holding the rank-th sample, and the samples below it. */
static unsigned bucket_of(const struct an_lat *l, uint64_t rank, uint64_t *below)
{
	unsigned b = 0;
	*below = 0;
	while (*below + l->sel[b] < rank)
		*below += l->sel[b++];
	return b;
}

/* Gathers and sorts the buckets of rank and of the percentiles commands
 * print, in one pass over the samples. 0 or -ENOMEM. */
static int gather(struct an_lat *l, uint64_t rank)
{
	static const double std[] = {50, 90, 99, 99.9};
	uint64_t total = l->n + l->nbig, ranks[1 + sizeof(std) / sizeof(std[0])];
	unsigned nr = 0, first = l->npick;
	ranks[nr++] = rank;
	for (size_t i = 0; i < sizeof(std) / sizeof(std[0]); i++) {
		uint64_t r = (uint64_t)ceil(std[i] / 100.0 * (double)total);
		ranks[nr++] = r < 1 ? 1 : r > total ? total : r;
	}
	if (!l->pick && !(l->pick = calloc(NPICK, sizeof(*l->pick))))
		return -ENOMEM;
	/* slot + 1 of each bucket to gather, 0 for the others */
	uint8_t *slot = calloc(NFINE + 2 * SUB, 1);
	if (!slot)
		return -ENOMEM;
	for (unsigned i = 0; i < l->npick; i++)
		slot[l->pick[i].b] = 0xff; /* already there */
	for (unsigned i = 0; i < nr && l->npick < NPICK; i++) {
		uint64_t below;
		unsigned b = bucket_of(l, ranks[i], &below);
		if (slot[b])
			continue;
		struct an_lat_pick *k = &l->pick[l->npick];
		if (!(k->v = malloc(((size_t)l->sel[b] ? l->sel[b] : 1) * sizeof(*k->v)))) {
			free(slot);
			return -ENOMEM;
		}
		k->b = b;
		k->below = below;
		k->n = 0;
		slot[b] = (uint8_t)(++l->npick);
	}
	for (size_t i = 0; i < total; i++) {
		uint64_t x = i < l->n ? l->v[i] : l->big[i - l->n];
		uint8_t k = slot[fine_bucket(x)];
		if (__builtin_expect(k && k != 0xff, 0))
			l->pick[k - 1].v[l->pick[k - 1].n++] = x;
	}
	for (unsigned i = first; i < l->npick; i++)
		radix_sort(l->pick[i].v, l->pick[i].n);
	free(slot);
	return 0;
}

static const struct an_lat_pick *find_pick(const struct an_lat *l, unsigned b)
{
	for (unsigned i = 0; i < l->npick; i++)
		if (l->pick[i].b == b)
			return &l->pick[i];
	return NULL;
}

/* The rank-th smallest sample (1-based). Sorting every sample cost more
 * than the analysis that gathered them: one pass counts them per bucket
 * (1/128 of a power of two wide), one more gathers the buckets of the
 * ranks asked for, and only those are sorted. */
static uint64_t exact_rank(struct an_lat *l, uint64_t rank)
{
	size_t total = l->n + l->nbig;
	if (l->sorted || total < 4096)
		return sorted_rank(l, rank);
	if (!l->sel || l->sel_n != total) {
		if (!l->sel && !(l->sel = malloc((NFINE + 2 * SUB) * sizeof(*l->sel))))
			return sorted_rank(l, rank);
		drop_picks(l);
		memset(l->sel, 0, (NFINE + 2 * SUB) * sizeof(*l->sel));
		for (size_t i = 0; i < l->n; i++)
			l->sel[fine_bucket(l->v[i])]++;
		for (size_t i = 0; i < l->nbig; i++)
			l->sel[fine_bucket(l->big[i])]++;
		l->sel_n = total;
	}
	uint64_t below;
	unsigned b = bucket_of(l, rank, &below);
	const struct an_lat_pick *k = find_pick(l, b);
	if (!k) {
		/* a full cache starts over: gather() always keeps rank's bucket */
		if (l->npick == NPICK)
			drop_picks(l);
		if (gather(l, rank) || !(k = find_pick(l, b)))
			return sorted_rank(l, rank);
	}
	return k->v[rank - below - 1];
}

uint64_t an_lat_pct(struct an_lat *l, double p)
{
	if (!l->count)
		return 0;
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)l->count);
	if (rank < 1)
		rank = 1;
	if (rank > l->count)
		rank = l->count;
	if (an_lat_exact(l))
		return exact_rank(l, rank);
	uint64_t seen = 0;
	if (l->fine) {
		for (unsigned b = 0; b < NFINE + 2 * SUB; b++) {
			seen += l->fine[b];
			if (seen >= rank) {
				uint64_t u = fine_upper(b);
				return u > l->max ? l->max : u < l->min ? l->min : u;
			}
		}
	}
	for (unsigned b = 0; b < 65; b++) {
		seen += l->log2[b];
		if (seen >= rank) {
			uint64_t u = b ? (b == 64 ? UINT64_MAX : (1ULL << b) - 1) : 0;
			return u > l->max ? l->max : u;
		}
	}
	return l->max;
}

char *an_lat_hist_json(const struct an_lat *l)
{
	size_t cap = 64 * 64 + 4, n = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	s[n++] = '[';
	for (unsigned b = 0; b < 65; b++) {
		if (!l->log2[b])
			continue;
		uint64_t lo = b ? 1ULL << (b - 1) : 0;
		uint64_t hi = b ? (b == 64 ? UINT64_MAX : (1ULL << b) - 1) : 0;
		n += snprintf(s + n, cap - n, "%s[%llu, %llu, %llu]", n > 1 ? ", " : "",
			      (unsigned long long)lo, (unsigned long long)hi,
			      (unsigned long long)l->log2[b]);
	}
	snprintf(s + n, cap - n, "]");
	return s;
}

/* Percentiles of several distributions ahead, on two threads. */
struct warm_job {
	struct an_lat *const *ls;
	const uint8_t *mine; /* 1: the helper thread's distribution */
	size_t n;
	uint8_t who;
};

static void *warm(void *p)
{
	const struct warm_job *j = p;
	for (size_t i = 0; i < j->n; i++)
		if (j->mine[i] == j->who && j->ls[i]->count && an_lat_exact(j->ls[i]))
			an_lat_pct(j->ls[i], 50); /* counts, and the printed percentiles' buckets */
	return NULL;
}

void an_lat_prepare(struct an_lat *const *ls, size_t n)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += ls[i]->n + ls[i]->nbig;
	uint8_t *mine = n > 1 && total >= 65536 ? calloc(n, 1) : NULL;
	if (!mine)
		return; /* too little to share: an_lat_pct does it when asked */
	/* the helper takes distributions until it holds about half the samples */
	size_t half = 0;
	for (size_t i = 0; i < n; i++)
		if (half + ls[i]->n + ls[i]->nbig <= total / 2) {
			half += ls[i]->n + ls[i]->nbig;
			mine[i] = 1;
		}
	struct warm_job helper = {ls, mine, n, 1}, self = {ls, mine, n, 0};
	struct spawn sp;
	if (spawn_elsewhere(&sp, warm, &helper))
		helper.who = 0; /* no thread: all of it here */
	warm(&self);
	if (helper.who)
		spawn_join(&sp);
	else
		warm(&(struct warm_job){ls, mine, n, 1});
	free(mine);
}
