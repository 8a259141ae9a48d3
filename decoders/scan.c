/* scan — a file's events in global time order as runs of column arrays.
 *
 * A producer decodes each stream's chunks, a slice at a time, into a small
 * ring per stream; the caller's thread merges the heads of the rings. With
 * more than one CPU the producer is a thread of its own, so decoding runs
 * beside the analysis instead of before it; the rings bound how far ahead it
 * gets, and the caller decodes too rather than wait. Handing over the
 * slices the decoder fills anyway, not copies of rows, is what makes the
 * second thread pay: a pipeline that copied rows across cores cost more
 * than it saved. The merge order is tpp_iter's: time, then stream index. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tpp_decode.h"
#include "dec_slice.h"
#include "hugemem.h"
#include "spawn_away.h"
#include "heap.h"

#define RING 8 /* slices decoded ahead per stream */

struct slot {
	struct tpp_cols c;   /* what the caller reads */
	struct tpp_slice v;  /* the same arrays, for the decoder and prep */
	int n;               /* events; 0: the stream has ended; <0: damage */
	char err[256];
};

struct sstream {
	/* the producer's */
	size_t *chunks, nchunks, next;
	uint8_t *buf;
	size_t cap;
	struct tpp_chunk_dec dec;
	int active;
	uint64_t nchunk_ok; /* chunks decoded */
	/* Who decodes the stream: the producer, or the caller when it finds
	 * the ring empty and the producer busy elsewhere (it helps rather than
	 * waits). The flag is taken around produce(); done is set inside. */
	_Atomic int busy, done;
	/* slots [tail, head) are ready; the producer moves head, the caller tail */
	struct slot ring[RING];
	void *mem; /* the arrays of all slots */
	_Atomic uint32_t head, tail;
	uint64_t state[TPP_SCAN_STATE / 8]; /* tpp_scan_opts.prep's */
	/* the caller's */
	uint32_t i;  /* next event of ring[tail % RING] */
	int holding; /* ring[tail % RING] is the current slice */
	uint32_t stream;
	int32_t cpu;
};

struct tpp_scan {
	struct tpp_reader *r;
	struct tpp_scan_opts o;
	int ranged;
	struct sstream *st;
	size_t n;
	uint32_t slice_max;
	unsigned ncols; /* the most fields any type wants */
	/* Every stream's ring and payload buffer and both threads' compressed
	 * bytes in one huge-page region (sized from the index), when that is
	 * small: faulting them in 4 KiB at a time cost a millisecond. NULL: each
	 * from malloc, and an ended stream's freed. */
	void *arena;
	size_t arena_bytes;
	/* per thread, the producer's then the caller's: decoding scratch and
	 * compressed bytes (tpp_r_payload_r: the reader's own buffer is not
	 * shared between threads) */
	struct dec_scratch *sc[2];
	struct zbuf {
		uint8_t *p;
		size_t cap;
	} z[2];
	/* the merge: streams keyed by (head time, index) */
	uint32_t *heap, nheap;
	uint64_t *hts; /* per stream: the time of its head */
	uint32_t *fill, nfill;
	int top_pending; /* the top stream's slice ran out in the last run */
	uint64_t last_out;
	struct tpp_iter_stats stats;
	/* the producer thread */
	int threaded;
	struct spawn thr;
	pthread_mutex_t m;
	pthread_cond_t pcv, ccv;
	_Atomic int stop, psleep, csleep;
	char err[768];
};

/* Bytes of one slot's arrays: 8-byte ones first, then tids, then types,
 * so that each stays aligned. */
static size_t slot_bytes(const struct tpp_scan *s)
{
	return s->slice_max * (sizeof(uint64_t) * (1 + TPP_SCAN_COLS) + sizeof(int32_t) + sizeof(uint16_t));
}

static int stream_setup(struct tpp_scan *s, struct sstream *t)
{
	size_t per = s->slice_max, bytes = slot_bytes(s);
	/* zeroed: columns past the most any type wants are never written, and
	 * so never touched either (the arena's memory is zeroed too) */
	if (!t->mem && !(t->mem = calloc(RING, bytes)))
		return -ENOMEM;
	uint8_t *m = t->mem;
	for (int k = 0; k < RING; k++) {
		struct slot *sl = &t->ring[k];
		uint8_t *p = m + bytes * (size_t)k;
		sl->v.ts = (uint64_t *)(void *)p;
		p += per * sizeof(uint64_t);
		for (int c = 0; c < TPP_SCAN_COLS; c++, p += per * sizeof(uint64_t))
			sl->v.col[c] = (uint64_t *)(void *)p;
		sl->v.tid = (int32_t *)(void *)p;
		p += per * sizeof(int32_t);
		sl->v.type = (uint16_t *)(void *)p;
		sl->v.stream = sl->c.stream = t->stream;
		sl->v.cpu = sl->c.cpu = t->cpu;
		sl->c.ts = sl->v.ts;
		sl->c.tid = sl->v.tid;
		sl->c.type = sl->v.type;
		for (int c = 0; c < TPP_SCAN_COLS; c++)
			sl->c.col[c] = sl->v.col[c];
	}
	return 0;
}

static void damage(struct slot *sl, int e, const char *msg)
{
	sl->n = e < 0 ? e : -TPP_EBADFILE;
	snprintf(sl->err, sizeof(sl->err), "%s", msg);
}

/* Keeps the events inside the time range, in place. */
static uint32_t trim(const struct tpp_scan *s, struct slot *sl, uint32_t n)
{
	struct tpp_slice *b = &sl->v;
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (b->ts[i] < s->o.from_ts || b->ts[i] > s->o.to_ts)
			continue;
		b->ts[m] = b->ts[i];
		b->tid[m] = b->tid[i];
		b->type[m] = b->type[i];
		for (unsigned c = 0; c < s->ncols; c++)
			b->col[c][m] = b->col[c][i];
		m++;
	}
	return m;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A wait shorter than this is spun rather than slept: being put to sleep
 * and woken cost more here than most waits last. Against the 0.1 ms spin
 * before, latency --sched went from 9.79 to 8.92 ms median (p25 8.32 to
 * 8.22) in 80 interleaved runs. Bounded in time, not in pauses, whose cost
 * differs tenfold between CPUs. */
#define SPIN_NS 500000u
#define SPINNING(until, i) ((i) & 63 || now_ns() < (until))

static void wake(struct tpp_scan *s, _Atomic int *sleeping, pthread_cond_t *cv)
{
	if (atomic_load(sleeping)) {
		pthread_mutex_lock(&s->m);
		pthread_cond_signal(cv);
		pthread_mutex_unlock(&s->m);
	}
}

/* Fills stream t's next slot (the ring has room; t is not done): a slice,
 * the damage met instead, or the end of the stream. The chunk handling is
 * tpp_iter's, so that damage costs the same events both ways. */
static void produce(struct tpp_scan *s, struct sstream *t, struct dec_scratch *sc)
{
	uint32_t h = atomic_load_explicit(&t->head, memory_order_relaxed);
	struct slot *sl = &t->ring[h % RING];
	if (!t->ring[0].c.ts && t->next < t->nchunks && stream_setup(s, t)) {
		/* the stream is given up: the next slot says it ended */
		damage(sl, -ENOMEM, "out of memory");
		t->next = t->nchunks;
		t->active = 0;
		goto publish;
	}
	while (!t->done) {
		if (!t->active) {
			if (t->next >= t->nchunks) {
				sl->n = 0;
				t->done = 1;
				if (!s->arena)
					free(t->buf);
				t->buf = NULL;
				tpp_dec_end(&t->dec);
				break;
			}
			const struct tpp_chunk *c = tpp_r_chunk(s->r, t->chunks[t->next++]);
			struct zbuf *z = &s->z[sc == s->sc[1]];
			long len = tpp_r_payload_r(s->r, c, &t->buf, &t->cap, &z->p, &z->cap, sl->err, sizeof(sl->err));
			if (len < 0) {
				/* the reader wrote the message, but for -ENOMEM */
				if (len == -ENOMEM)
					damage(sl, -ENOMEM, "out of memory");
				else
					sl->n = (int)len;
				break;
			}
			t->dec.want = s->o.want;
			t->dec.intern = s->o.intern;
			t->dec.intern_ctx = s->o.intern_ctx;
			int e = tpp_dec_begin(&t->dec, s->r, c, t->buf, (size_t)len);
			if (e) {
				damage(sl, e, t->dec.err[0] ? t->dec.err : tpp_strerror(e));
				break;
			}
			t->nchunk_ok++;
			t->active = 1;
		}
		int n = dec_cols(&t->dec, &sl->v, s->ncols, s->slice_max, sc);
		if (n < 0) {
			t->active = 0;
			damage(sl, n, n == -ENOMEM ? "out of memory" : t->dec.err);
			break;
		}
		if (n == 0) {
			t->active = 0;
			continue;
		}
		if (s->ranged && !(n = (int)trim(s, sl, (uint32_t)n)))
			continue;
		sl->n = n;
		sl->v.n = (uint32_t)n;
		if (s->o.prep)
			s->o.prep(s->o.prep_ctx, &sl->v, t->state);
		break;
	}
publish:
	atomic_store(&t->head, h + 1);
	if (s->threaded)
		wake(s, &s->csleep, &s->ccv);
}

/* Decodes a slice of stream t, if nobody else is at it and its ring has
 * room: 1 when it did. */
static int help(struct tpp_scan *s, struct sstream *t, struct dec_scratch *sc)
{
	int idle = 0;
	if (t->done || atomic_load(&t->head) - atomic_load(&t->tail) >= RING ||
	    !atomic_compare_exchange_strong(&t->busy, &idle, 1))
		return 0;
	int did = !t->done && atomic_load(&t->head) - atomic_load(&t->tail) < RING;
	if (did)
		produce(s, t, sc);
	atomic_store(&t->busy, 0);
	return did;
}

/* Whether a live stream's ring has fewer than fill slots ready. */
static int room(struct tpp_scan *s, uint32_t fill)
{
	for (size_t k = 0; k < s->n; k++)
		if (!s->st[k].done && atomic_load(&s->st[k].head) - atomic_load(&s->st[k].tail) < fill)
			return 1;
	return 0;
}

static void *producer(void *arg)
{
	struct tpp_scan *s = arg;
	/* named, so that top and perf tell the decoder from the analysis */
	pthread_setname_np(pthread_self(), "tracepp-decode");
	for (;;) {
		int did = 0, live = 0;
		for (size_t k = 0; k < s->n; k++) {
			struct sstream *t = &s->st[k];
			if (t->done)
				continue;
			live = 1;
			did |= help(s, t, s->sc[0]);
		}
		if (!live || atomic_load(&s->stop))
			return NULL;
		if (did)
			continue;
		/* Every ring is full, or the caller is decoding the one that is
		 * not: a spin, then sleep until the caller has emptied half a
		 * ring (it wakes us on that same condition). */
		uint64_t until = now_ns() + SPIN_NS;
		for (unsigned i = 1; SPINNING(until, i) && !room(s, RING); i++)
			relax();
		if (room(s, RING)) {
			relax();
			continue;
		}
		pthread_mutex_lock(&s->m);
		atomic_store(&s->psleep, 1);
		while (!atomic_load(&s->stop) && !room(s, RING / 2 + 1))
			pthread_cond_wait(&s->pcv, &s->m);
		atomic_store(&s->psleep, 0);
		pthread_mutex_unlock(&s->m);
	}
}

/* The caller's next slot of stream t. When it is not ready and the
 * producer is at another stream, the caller decodes it rather than wait. */
static struct slot *take(struct tpp_scan *s, struct sstream *t)
{
	uint32_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed);
	if (atomic_load(&t->head) != tail)
		return &t->ring[tail % RING];
	if (!s->threaded) {
		produce(s, t, s->sc[1]);
		return &t->ring[tail % RING];
	}
	if (help(s, t, s->sc[1]))
		return &t->ring[tail % RING];
	/* the producer is decoding this very stream, a slice away: meanwhile
	 * the next slice of another stream */
	for (size_t k = 0; k < s->n && atomic_load(&t->head) == tail; k++)
		if (&s->st[k] != t)
			help(s, &s->st[k], s->sc[1]);
	uint64_t until = now_ns() + SPIN_NS;
	for (unsigned i = 1; SPINNING(until, i) && atomic_load(&t->head) == tail; i++)
		relax();
	if (atomic_load(&t->head) == tail) {
		pthread_mutex_lock(&s->m);
		atomic_store(&s->csleep, 1);
		while (atomic_load(&t->head) == tail)
			pthread_cond_wait(&s->ccv, &s->m);
		atomic_store(&s->csleep, 0);
		pthread_mutex_unlock(&s->m);
	}
	return &t->ring[tail % RING];
}

static void drop(struct tpp_scan *s, struct sstream *t)
{
	uint32_t tail = atomic_load_explicit(&t->tail, memory_order_relaxed) + 1;
	atomic_store(&t->tail, tail);
	/* a sleeping producer is woken once it has half a ring to fill, not
	 * for every slot: each wake-up is a round trip through the kernel */
	if (s->threaded && atomic_load(&t->head) - tail <= RING / 2)
		wake(s, &s->psleep, &s->pcv);
}

/* Stream t's current slice is used up: 1 when the next is current, 0 at
 * the stream's end, <0 for damage (skipped; calling again goes on). */
static int advance(struct tpp_scan *s, size_t k)
{
	struct sstream *t = &s->st[k];
	if (t->holding) {
		drop(s, t);
		t->holding = 0;
	}
	struct slot *sl = take(s, t);
	if (sl->n > 0) {
		t->holding = 1;
		t->i = 0;
		s->hts[k] = sl->c.ts[0];
		return 1;
	}
	if (sl->n == 0) {
		/* the producer is done with this stream */
		if (!s->arena)
			free(t->mem);
		t->mem = NULL;
		return 0;
	}
	int e = sl->n;
	s->stats.damaged_chunks++;
	snprintf(s->err, sizeof(s->err), "%s", sl->err);
	drop(s, t);
	return e;
}

static inline int before(const void *ctx, uint32_t a, uint32_t b)
{
	const struct tpp_scan *s = ctx;
	return s->hts[a] < s->hts[b] || (s->hts[a] == s->hts[b] && a < b);
}

static void sift_down(struct tpp_scan *s, uint32_t i)
{
	heap_sift_down(s->heap, s->nheap, i, before, s);
}

static inline const struct slot *cur_slot(const struct sstream *t)
{
	return &t->ring[atomic_load_explicit(&t->tail, memory_order_relaxed) % RING];
}

/* The bound a run of stream k stays within while stream b's head, at
 * time bts, is the next of the others: ties go to the lower index. b's
 * head is never before k's, so bts - 1 cannot wrap. */
static inline uint64_t run_limit(uint32_t k, uint32_t b, uint64_t bts)
{
	return k < b ? bts : bts - 1;
}

/* Extends a run from ts[i] (always taken: its stream is on top) while the
 * events stay within lim; counts events before the last one out. Returns
 * the end of the run. */
static inline uint32_t run_end(const uint64_t *ts, uint32_t i, uint32_t n, uint64_t lim, uint64_t *last, uint64_t *ooo)
{
	uint64_t l = *last;
	do {
		if (ts[i] < l)
			++*ooo;
		else
			l = ts[i];
		i++;
	} while (i < n && ts[i] <= lim);
	*last = l;
	return i;
}

/* The merge of two streams (a machine's two CPUs, a process's two threads)
 * without the heap: the streams take turns, each run ending where the
 * other's head comes first. Returns the runs handed out so far; stops when
 * a slice runs out (top_pending) or runs[] is full. */
static int two_way(struct tpp_scan *s, struct tpp_run *runs, int nr, int max)
{
	uint32_t a = s->heap[0], b = s->heap[1];
	struct sstream *ta = &s->st[a], *tb = &s->st[b];
	const struct slot *sa = cur_slot(ta), *sb = cur_slot(tb);
	const uint64_t *xa = sa->c.ts, *xb = sb->c.ts;
	uint32_t ia = ta->i, ib = tb->i, na = (uint32_t)sa->n, nb = (uint32_t)sb->n;
	uint64_t last = s->last_out, ooo = 0, ev = 0;
	while (nr < max) {
		/* a is on top: its head comes before b's */
		uint32_t j = run_end(xa, ia, na, run_limit(a, b, xb[ib]), &last, &ooo);
		runs[nr].c = &sa->c;
		runs[nr].from = ia;
		runs[nr].to = j;
		nr++;
		ev += j - ia;
		ia = j;
		if (j == na) {
			s->top_pending = 1;
			break;
		}
		/* b's head is first now: the two change places */
		uint32_t u = a;
		a = b, b = u;
		struct sstream *tt = ta;
		ta = tb, tb = tt;
		const struct slot *st = sa;
		sa = sb, sb = st;
		const uint64_t *x = xa;
		xa = xb, xb = x;
		u = ia, ia = ib, ib = u;
		u = na, na = nb, nb = u;
	}
	ta->i = ia;
	tb->i = ib;
	s->heap[0] = a;
	s->heap[1] = b;
	s->hts[b] = xb[ib];
	if (ia < na)
		s->hts[a] = xa[ia];
	s->last_out = last;
	s->stats.out_of_order += ooo;
	s->stats.events += ev;
	return nr;
}

int tpp_scan_runs(struct tpp_scan *s, struct tpp_run *runs, int max)
{
	int nr = 0;
	while (nr < max) {
		if (s->top_pending) {
			/* the runs handed out use that slice: it goes back to
			 * the producer only on the next call */
			if (nr)
				break;
			int e = advance(s, s->heap[0]);
			if (e < 0)
				return e; /* still pending: the next call goes on after the damage */
			s->top_pending = 0;
			if (!e)
				s->heap[0] = s->heap[--s->nheap];
			sift_down(s, 0);
		}
		while (s->nfill) {
			if (nr)
				return nr;
			uint32_t k = s->fill[s->nfill - 1];
			int e = advance(s, k);
			if (e < 0)
				return e;
			s->nfill--;
			if (e)
				heap_push(s->heap, &s->nheap, k, before, s);
		}
		if (!s->nheap)
			break;
		if (s->nheap == 2) {
			nr = two_way(s, runs, nr, max);
			continue;
		}
		uint32_t k = s->heap[0];
		struct sstream *t = &s->st[k];
		const struct slot *sl = cur_slot(t);
		/* the run goes on while its events stay before every other
		 * head: the smaller child of the top is the earliest of them */
		uint64_t lim = UINT64_MAX;
		if (s->nheap > 1) {
			uint32_t b = s->heap[1];
			if (s->nheap > 2 && before(s, s->heap[2], b))
				b = s->heap[2];
			lim = run_limit(k, b, s->hts[b]);
		}
		const uint64_t *ts = sl->c.ts;
		uint32_t i = t->i, n = (uint32_t)sl->n;
		uint32_t j = run_end(ts, i, n, lim, &s->last_out, &s->stats.out_of_order);
		s->stats.events += j - i;
		t->i = j;
		runs[nr].c = &sl->c;
		runs[nr].from = i;
		runs[nr].to = j;
		nr++;
		if (j == n) {
			s->top_pending = 1;
		} else {
			s->hts[k] = ts[j];
			sift_down(s, 0);
		}
	}
	return nr;
}

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

/* Places every stream's buffers in one region when they fit ARENA_MAX:
 * a payload buffer as large as the stream's largest chunk (so it never
 * grows), the ring, and the compressed bytes of the largest chunk per
 * thread. Without it, each comes from malloc as needed. */
#define ARENA_MAX ((size_t)64 << 20)
static void arena(struct tpp_scan *s)
{
	size_t total = 0, zmax = 1, ring = RING * slot_bytes(s);
	for (size_t k = 0; k < s->n; k++) {
		struct sstream *t = &s->st[k];
		t->cap = 1;
		for (size_t i = 0; i < t->nchunks; i++) {
			const struct tpp_chunk *c = tpp_r_chunk(s->r, t->chunks[i]);
			/* the reader checked every chunk header against these:
			 * raw_size at most TPP_CHUNK_RAW_MAX, comp_size at most
			 * LZ4's bound for it, so the buffers never have to grow */
			if (c->raw_size > t->cap)
				t->cap = c->raw_size;
			if (c->comp_size > zmax)
				zmax = c->comp_size;
		}
		total += align64(ring) + align64(t->cap);
		if (total > ARENA_MAX)
			break;
	}
	total += 2 * align64(zmax);
	uint8_t *p = total <= ARENA_MAX ? hm_alloc(total) : NULL;
	if (!p) {
		for (size_t k = 0; k < s->n; k++)
			s->st[k].cap = 0;
		return;
	}
	s->arena = p;
	s->arena_bytes = total;
	for (size_t k = 0; k < s->n; k++) {
		struct sstream *t = &s->st[k];
		t->mem = p;
		p += align64(ring);
		t->buf = p;
		p += align64(t->cap);
	}
	for (int i = 0; i < 2; i++) {
		s->z[i].p = p;
		s->z[i].cap = zmax;
		p += align64(zmax);
	}
}

int tpp_scan_open(struct tpp_scan **sp, struct tpp_reader *r, const struct tpp_scan_opts *o)
{
	*sp = NULL;
	struct tpp_scan *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->r = r;
	if (o)
		memcpy(&s->o, o, o->sz && o->sz < sizeof(*o) ? o->sz : sizeof(*o));
	s->ranged = s->o.from_ts || s->o.to_ts;
	if (s->ranged && !s->o.to_ts)
		s->o.to_ts = UINT64_MAX;
	int rc = -ENOMEM;
	/* only numbers (and strings as the caller's handles), and few of
	 * them, fit the columns */
	for (unsigned id = 0; s->o.want && id < TPP_MAX_TYPES; id++) {
		const struct tpp_type *ty = s->o.want[id] ? tpp_r_type(r, (uint16_t)id) : NULL;
		unsigned nw = 0;
		for (unsigned f = 0; ty && f < ty->nfields && f < 32; f++)
			if (s->o.want[id] >> f & 1) {
				int ok = ty->fields[f].type <= TPP_F_S64 ||
					 (ty->fields[f].type == TPP_F_STR && s->o.intern);
				if (!ok || ++nw > TPP_SCAN_COLS) {
					rc = -ENOTSUP;
					goto fail;
				}
			}
		if (nw > s->ncols)
			s->ncols = nw;
	}
	/* streams in the order of their first chunk, as tpp_iter's cursors */
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		if (c->kind != TPP_C_EVENTS)
			continue;
		if (s->ranged && (c->last_ts < s->o.from_ts || c->first_ts > s->o.to_ts))
			continue;
		size_t k;
		for (k = 0; k < s->n && s->st[k].stream != c->stream; k++)
			;
		if (k == s->n) {
			struct sstream *ns = realloc(s->st, (s->n + 1) * sizeof(*ns));
			if (!ns)
				goto fail;
			s->st = ns;
			memset(&s->st[k], 0, sizeof(*ns));
			s->st[k].stream = c->stream;
			s->st[k].cpu = dec_stream_cpu(tpp_r_stream_by_id(r, c->stream), c->stream);
			s->n++;
		}
		struct sstream *t = &s->st[k];
		/* the reorder window is tpp_iter's alone */
		if (!(c->flags & TPP_CHUNK_TS_SORTED) ||
		    (t->nchunks && c->first_ts < tpp_r_chunk(r, t->chunks[t->nchunks - 1])->last_ts)) {
			rc = -ENOTSUP;
			goto fail;
		}
		size_t *nc = realloc(t->chunks, (t->nchunks + 1) * sizeof(*nc));
		if (!nc)
			goto fail;
		t->chunks = nc;
		t->chunks[t->nchunks++] = i;
	}
	s->slice_max = s->n ? (uint32_t)(16384 / s->n) : DEC_SLICE;
	s->slice_max = s->slice_max < 32 ? 32 : s->slice_max > DEC_SLICE ? DEC_SLICE : s->slice_max;
	s->sc[0] = calloc(1, sizeof(*s->sc[0]));
	s->sc[1] = calloc(1, sizeof(*s->sc[1]));
	s->heap = calloc(s->n + 1, sizeof(*s->heap));
	s->fill = calloc(s->n + 1, sizeof(*s->fill));
	s->hts = calloc(s->n + 1, sizeof(*s->hts));
	if (!s->sc[0] || !s->sc[1] || !s->heap || !s->fill || !s->hts)
		goto fail;
	for (size_t k = 0; k < s->n; k++)
		s->fill[s->nfill++] = (uint32_t)(s->n - 1 - k);
	arena(s);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (s->o.threads != 1 && ncpu > 1 && s->n) {
		pthread_mutex_init(&s->m, NULL);
		pthread_cond_init(&s->pcv, NULL);
		pthread_cond_init(&s->ccv, NULL);
		s->threaded = 1;
		if (spawn_elsewhere(&s->thr, producer, s)) {
			/* no thread: the caller decodes, as on one CPU */
			s->threaded = 0;
			pthread_mutex_destroy(&s->m);
			pthread_cond_destroy(&s->pcv);
			pthread_cond_destroy(&s->ccv);
		}
	}
	*sp = s;
	return 0;
fail:
	tpp_scan_close(s);
	return rc;
}

const char *tpp_scan_error(const struct tpp_scan *s) { return s->err; }

void tpp_scan_stats(const struct tpp_scan *s, struct tpp_iter_stats *st)
{
	*st = s->stats;
	st->chunks = 0;
	for (size_t k = 0; k < s->n; k++)
		st->chunks += s->st[k].nchunk_ok;
}

void tpp_scan_close(struct tpp_scan *s)
{
	if (!s)
		return;
	if (s->threaded) {
		pthread_mutex_lock(&s->m);
		atomic_store(&s->stop, 1);
		pthread_cond_signal(&s->pcv);
		pthread_mutex_unlock(&s->m);
		spawn_join(&s->thr);
		pthread_mutex_destroy(&s->m);
		pthread_cond_destroy(&s->pcv);
		pthread_cond_destroy(&s->ccv);
	}
	for (size_t k = 0; k < s->n; k++) {
		struct sstream *t = &s->st[k];
		free(t->chunks);
		if (!s->arena) {
			free(t->buf);
			free(t->mem);
		}
		tpp_dec_end(&t->dec);
	}
	for (int i = 0; i < 2; i++) {
		if (s->sc[i])
			free(s->sc[i]->start);
		free(s->sc[i]);
	}
	if (!s->arena) {
		free(s->z[0].p);
		free(s->z[1].p);
	}
	hm_free(s->arena, s->arena_bytes);
	free(s->st);
	free(s->heap);
	free(s->fill);
	free(s->hts);
	free(s);
}
