/* tracerec's side of the runtime's pool (rt/tpp_rt_abi.h): creates it as an
 * anonymous memfd of exactly the budget, turns each thread's chunks into
 * that thread's events, gives chunks and descriptors back once read, and
 * notices threads that ended without saying so (killed, exec'd, exit_group).
 * Everything read back from the pool was written by the traced program and
 * is bounds-checked before use: the layout (where descriptors and chunks
 * are, how many, how big) comes from the private copy made with the pool,
 * never from the header the program can write; an index, count or state
 * out of range is skipped and counted as damage, reported at the end. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "func_args.h"
#include "func_int.h"
#include "rt/tpp_rt_abi.h"

/* Four pages, 1020 records (~500 calls): a busy thread takes a chunk (a
 * compare-and-swap on the free stack tracerec pushes to, and the chunk
 * header's cache line from the CPU that read it) every ~500 calls instead
 * of every ~125, which cut a 10 M-call run's CPU by ~12% against one page
 * per chunk. A thread's first chunk is a small one (one page): 1000 idle
 * threads hold 4 MiB, not 16 (SMALL_PART). A pool with fewer
 * than 1024 of them halves the size down to one page (a short thread needs
 * one). $TPP_FUNC_CHUNK (bytes, a multiple of 4096) overrides it, for
 * measurements. */
#define CHUNK_DEF 16384u
#define CHUNK_FEW 1024u
#define CHUNK_MIN 4096u
/* Of the chunks' room, the part in small chunks (a thread's first): 1/8 of
 * the default 64 MiB is 2048 threads at one page each. */
#define SMALL_PART 8u
#define POOL_MIN (1u << 20)
#define PROCS_MAX 64u
/* A live thread that made no call for this long is asked whether it still
 * exists: a killed process never marks its threads done. */
#define IDLE_CHECK_NS 250000000ull
/* How long a thread that finds no free chunk waits for tracerec to give one
 * back before it drops the record: long enough to ride out a drain pass on
 * a busy machine, short enough that a stopped recorder costs the program
 * one such wait. --blocking-timeout sets it (0: never wait). */
#define WAIT_DEF_MS 100u
/* Waiting writers are woken after this many chunks given back (or at the
 * end of a drain pass): a few ms of records, not one wake-up per chunk. */
#define WAKE_BATCH_MAX 256u
/* More records lost at once than a thread could write in days: a count
 * the program wrote over. */
#define LOST_MAX (1ull << 48)

struct tslot {
	uint32_t stream;    /* 0: not declared yet */
	uint32_t cur;       /* chunk being read + 1; 0: not started (a zeroed slot is idle) */
	uint64_t rd;        /* records of cur read */
	uint64_t lost_seen; /* losses reported from chunk headers */
	uint64_t last_ts;   /* the last record's raw time */
	uint64_t idle_since;
	int32_t pid, tid;
	int active; /* the descriptor is LIVE or DONE and ours to drain */
	int cur_lost_done;
	int broken;    /* its chunk chain was written over: no more is read */
	int bad_state; /* its state was written over (counted once) */
	struct func_args_pending *pend; /* -A values waiting for their ENTRY or EXIT */
};

/* The layout as layout() made it: sizes and offsets into the mapping. */
struct pool_layout {
	uint64_t chunks_off, chunk_bytes, threads_off, procs_off, small_off;
	uint32_t nchunks, chunk_recs, nthreads, nprocs, nsmall, small_recs;
	uint32_t nall; /* chunk indexes: nsmall small ones, then nchunks big ones */
};

struct func_pool {
	int fd;
	uint64_t ino;
	struct tpp_rt_hdr *h;
	uint64_t len;
	struct pool_layout l; /* the header's copy is the program's to scribble on */
	struct tslot *ts;     /* l.nthreads entries */
	uint64_t damaged;     /* values read back out of range (the program wrote over the pool) */
	uint32_t *proc_gen;
	uint64_t shm_peak;
	uint64_t events, lost, threads;
	uint32_t freed, wake_batch; /* chunks given back since waiters were last told */
	/* (pid, addr) pairs already passed to note(): the hot loop's functions */
	struct {
		uint64_t addr;
		int32_t pid, ok;
	} seen[256];
};

struct tpp_rt_hdr *func_pool_hdr(struct func_pool *p)
{
	return p->h;
}

static struct tpp_rt_thread *thread_at(const struct func_pool *p, uint32_t i)
{
	return (struct tpp_rt_thread *)((char *)p->h + p->l.threads_off + (uint64_t)i * sizeof(struct tpp_rt_thread));
}
static struct tpp_rt_chunk *chunk_at(const struct func_pool *p, uint32_t i)
{
	if (i < p->l.nsmall)
		return (struct tpp_rt_chunk *)((char *)p->h + p->l.small_off + (uint64_t)i * TPP_RT_SMALL_BYTES);
	i -= p->l.nsmall;
	return (struct tpp_rt_chunk *)((char *)p->h + p->l.chunks_off + (uint64_t)i * p->l.chunk_bytes);
}
static uint32_t chunk_recs(const struct func_pool *p, uint32_t i)
{
	return i < p->l.nsmall ? p->l.small_recs : p->l.chunk_recs;
}
static struct tpp_rt_proc *proc_at(const struct func_pool *p, uint32_t i)
{
	return (struct tpp_rt_proc *)((char *)p->h + p->l.procs_off + (uint64_t)i * sizeof(struct tpp_rt_proc));
}
/* Free-stack links (tpp_rt_push), found by the private layout: base is the pool. */
static uint32_t *small_link(void *base, uint32_t i)
{
	return &chunk_at(base, i)->free_next;
}
static uint32_t *big_link(void *base, uint32_t i)
{
	const struct func_pool *p = base;
	return &chunk_at(p, p->l.nsmall + i)->free_next;
}
static uint32_t *thread_link(void *base, uint32_t i)
{
	return &thread_at(base, i)->free_next;
}

static uint64_t mono_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Header, filters, -A table, descriptors, process maps, chunks: all inside budget. */
static int layout(struct tpp_rt_hdr *h, uint64_t budget)
{
	uint64_t chunk = CHUNK_DEF;
	const char *e = getenv("TPP_FUNC_CHUNK");
	if (e && atoi(e) >= (int)CHUNK_MIN && atoi(e) <= (16 << 20))
		chunk = (uint64_t)atoi(e) & ~4095ull;
	while (chunk > CHUNK_MIN && budget / chunk < CHUNK_FEW)
		chunk /= 2;
	uint64_t off = 4096;
	h->filter_off = off;
	off += ((uint64_t)TPP_RT_FILTER_MAX * sizeof(struct tpp_rt_filter) + 4095) & ~4095ull;
	h->args_off = off;
	off += ((uint64_t)TPP_RT_ARGSPEC_MAX * sizeof(struct tpp_rt_argspec) + 4095) & ~4095ull;
	uint64_t nprocs = budget / 16 / sizeof(struct tpp_rt_proc);
	h->nprocs = (uint32_t)(nprocs > PROCS_MAX ? PROCS_MAX : nprocs < 2 ? 2 : nprocs);
	h->procs_off = off;
	off += ((uint64_t)h->nprocs * sizeof(struct tpp_rt_proc) + 4095) & ~4095ull;
	/* Big chunks are for busy threads; a thread's first chunk is a small
	 * one (one page), so that idle threads hold 4 KiB each, not a big
	 * chunk: SMALL_PART of the room, when chunks are big. */
	uint64_t room = budget > off ? budget - off : 0;
	uint64_t small_room = chunk > TPP_RT_SMALL_BYTES ? room / SMALL_PART : 0;
	/* one descriptor per chunk, and some for threads that find the pool
	 * empty: their losses are then still counted per thread */
	uint64_t nthreads = small_room / TPP_RT_SMALL_BYTES + (room - small_room) / chunk + 256;
	h->threads_off = off;
	off += (nthreads * sizeof(struct tpp_rt_thread) + 4095) & ~4095ull;
	if (off + 8 * chunk > budget)
		return -ENOSPC;
	h->nthreads = (uint32_t)nthreads;
	h->small_off = off;
	h->nsmall = (uint32_t)(small_room / TPP_RT_SMALL_BYTES);
	h->small_recs = (TPP_RT_SMALL_BYTES - TPP_RT_CHUNK_HDR) / sizeof(struct tpp_rt_rec);
	off += (uint64_t)h->nsmall * TPP_RT_SMALL_BYTES;
	h->chunks_off = off;
	h->chunk_bytes = chunk;
	h->chunk_recs = (uint32_t)((chunk - TPP_RT_CHUNK_HDR) / sizeof(struct tpp_rt_rec));
	h->nchunks = (uint32_t)((budget - off) / chunk);
	h->total_bytes = budget;
	h->wait_ns = WAIT_DEF_MS * 1000000ull;
	h->hdr_size = sizeof(*h);
	h->version = TPP_RT_VERSION;
	return 0;
}

int func_pool_new(struct func_pool **pp, uint64_t budget, char *err, size_t errlen)
{
	struct func_pool *p = calloc(1, sizeof(*p));
	*pp = p;
	if (!p)
		return -ENOMEM;
	p->fd = -1;
	if (budget < POOL_MIN)
		budget = POOL_MIN;
	budget &= ~4095ull;
	/* Anonymous: no name another user could plant or open, nothing left
	 * behind whatever kills us; the command inherits it by number. */
	int fd = memfd_create("tpp-rt", MFD_CLOEXEC);
	if (fd < 0) {
		func_fmt(err, errlen, "memfd_create: %s", strerror(errno));
		return -errno;
	}
	/* out of the way of the low numbers programs and shells use themselves */
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, 200);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	p->fd = fd;
	struct stat st;
	if (fchmod(fd, 0600) < 0 || ftruncate(fd, (off_t)budget) < 0 || fstat(fd, &st) < 0) {
		func_fmt(err, errlen, "function-tracing pool of %" PRIu64 " bytes: %s", budget, strerror(errno));
		return -errno;
	}
	p->ino = (uint64_t)st.st_ino;
	void *m = mmap(NULL, budget, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		func_fmt(err, errlen, "mapping the function-tracing pool: %s", strerror(errno));
		return -errno;
	}
	p->h = m;
	p->len = budget;
	if (layout(p->h, budget) < 0) {
		func_fmt(err, errlen, "function-tracing pool of %" PRIu64 " bytes is too small", budget);
		return -ENOSPC;
	}
	struct tpp_rt_hdr *h = p->h;
	p->l = (struct pool_layout){h->chunks_off, h->chunk_bytes, h->threads_off, h->procs_off, h->small_off,
				    h->nchunks,    h->chunk_recs,  h->nthreads,    h->nprocs,    h->nsmall,
				    h->small_recs, h->nsmall + h->nchunks};
	p->wake_batch = p->l.nall / 16;
	p->wake_batch = p->wake_batch > WAKE_BATCH_MAX ? WAKE_BATCH_MAX : p->wake_batch ? p->wake_batch : 1;
	p->ts = calloc(p->l.nthreads, sizeof(*p->ts));
	p->proc_gen = calloc(p->l.nprocs, sizeof(*p->proc_gen));
	if (!p->ts || !p->proc_gen)
		return -ENOMEM;
	return 0;
}

/* Called last, when every other header field is set. */
void func_pool_publish(struct func_pool *p)
{
	__atomic_store_n(&p->h->magic, TPP_RT_MAGIC, __ATOMIC_RELEASE);
}

int func_pool_env(const struct func_pool *p, char **out)
{
	return asprintf(out, "%s=%d:%" PRIu64, TPP_RT_ENV_FD, p->fd, p->ino) < 0 ? -ENOMEM : 0;
}

void func_pool_child(const struct func_pool *p)
{
	if (p && p->fd >= 0)
		fcntl(p->fd, F_SETFD, 0);
}

/* Tells writers waiting for room that some came back. */
static void wake_writers(struct func_pool *p)
{
	struct tpp_rt_hdr *h = p->h;
	p->freed = 0;
	__atomic_fetch_add(&h->free_seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&h->waiters, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &h->free_seq, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static void put_chunk(struct func_pool *p, uint32_t i)
{
	int r = i < p->l.nsmall ? tpp_rt_push(&p->h->free_small, i, small_link, p)
				: tpp_rt_push(&p->h->free_chunks, i - p->l.nsmall, big_link, p);
	if (r < 0)
		p->damaged++;
	if (++p->freed >= p->wake_batch)
		wake_writers(p);
}

/* Writes the thread's end and hands its descriptor and last chunk back. */
static int retire(struct func_pool *p, const struct func_sink *k, uint32_t i, int done)
{
	struct tpp_rt_hdr *h = p->h;
	struct tpp_rt_thread *d = thread_at(p, i);
	struct tslot *st = &p->ts[i];
	int r = 0;
	if (!st->stream)
		goto give_back; /* never declared: a descriptor written over */
	uint64_t lost = __atomic_load_n(&d->lost, __ATOMIC_ACQUIRE);
	if (lost < st->lost_seen || lost - st->lost_seen > LOST_MAX) {
		p->damaged++;
		lost = st->lost_seen;
	}
	if (lost > st->lost_seen) {
		r = tpp_w_lost(k->w, st->stream, lost - st->lost_seen, func_to_mono(k->clk, d->lost_from),
			       func_to_mono(k->clk, d->lost_to));
		p->lost += lost - st->lost_seen;
	}
	/* A thread that ended without a word ends at its last record. */
	uint64_t end = done ? d->exit_ts : st->last_ts ? st->last_ts : d->start_ts;
	union tpp_val v = {.i = st->pid};
	if (r >= 0)
		r = tpp_w_event(k->w, st->stream, k->t_thread_exit, func_to_mono(k->clk, end), st->tid, &v);
give_back:
	if (st->cur)
		put_chunk(p, st->cur - 1);
	free(st->pend);
	*st = (struct tslot){0};
	d->first = TPP_RT_NONE;
	__atomic_store_n(&d->state, TPP_RT_THREAD_FREE, __ATOMIC_RELEASE);
	if (tpp_rt_push(&h->free_threads, i, thread_link, p) < 0)
		p->damaged++;
	return r;
}

static int drain_thread(struct func_pool *p, const struct func_sink *k, uint32_t i, int *progress);

/* The descriptor's first sight: a stream and a name. A thread id already
 * live in another descriptor belongs to a runtime that exec replaced: that
 * one is finished. */
static int activate(struct func_pool *p, const struct func_sink *k, uint32_t i, uint32_t n)
{
	struct tpp_rt_thread *d = thread_at(p, i);
	struct tslot *st = &p->ts[i];
	st->pid = d->pid;
	st->tid = d->tid;
	if (st->pid <= 0 || st->tid <= 0) {
		/* not a thread (a thread stream needs a tid > 0): nothing of
		 * it is read, the descriptor goes back once it is done */
		p->damaged++;
		st->active = st->broken = 1;
		return 0;
	}
	for (uint32_t j = 0; j < n; j++)
		if (j != i && p->ts[j].active && p->ts[j].tid == st->tid && p->ts[j].pid == st->pid) {
			int progress = 0, r = drain_thread(p, k, j, &progress);
			if (r >= 0)
				r = retire(p, k, j, 0);
			if (r < 0)
				return r;
		}
	uint32_t id = (*k->next_stream)++;
	int r = tpp_w_stream(k->w, id, TPP_S_THREAD, -1, st->pid, st->tid);
	if (r < 0)
		return r;
	char comm[17];
	memcpy(comm, d->comm, 16);
	comm[16] = 0;
	r = tpp_w_task(k->w, func_to_mono(k->clk, d->start_ts), st->pid, st->tid, comm);
	st->stream = id;
	st->active = 1;
	p->threads++;
	if (k->new_pid)
		k->new_pid(k->arg, st->pid);
	return r;
}

static void note_entry(struct func_pool *p, const struct func_sink *k, int32_t pid, uint64_t a)
{
	unsigned j = (unsigned)((a * 0x9E3779B97F4A7C15ull) >> 56);
	if (p->seen[j].ok && p->seen[j].addr == a && p->seen[j].pid == pid)
		return;
	p->seen[j].addr = a;
	p->seen[j].pid = pid;
	p->seen[j].ok = 1;
	k->note(k->arg, pid, a);
}

/* An ENTRY or EXIT that -A values precede: an event of the function's own
 * type, its arguments or return value after the address. */
static int emit_args(struct func_pool *p, const struct func_sink *k, struct tslot *st, const struct tpp_rt_rec *r)
{
	unsigned kind = (unsigned)(r->word >> TPP_RT_KIND_SHIFT);
	uint64_t a = r->word & TPP_RT_ADDR_MASK;
	uint16_t type = kind == TPP_RT_ENTRY ? k->t_entry : k->t_exit;
	union tpp_val v[TPP_RT_ARGS + 1] = {{.u = a}};
	func_args_event(k->args, st->pend, kind == TPP_RT_EXIT, a, &type, v);
	if (kind == TPP_RT_ENTRY)
		note_entry(p, k, st->pid, a);
	return tpp_w_event(k->w, st->stream, type, func_to_mono(k->clk, r->ts), st->tid, v);
}

/* Events of records [from, to) of chunk c, in batches for the writer. */
static int emit(struct func_pool *p, const struct func_sink *k, struct tslot *st, struct tpp_rt_chunk *c,
		uint64_t from, uint64_t to)
{
	enum { BATCH = 512 };
	const struct tpp_rt_rec *rec = tpp_rt_chunk_recs(c);
	uint16_t ty[BATCH];
	uint64_t ts[BATCH], va[BATCH];
	uint64_t data = 0, noted = UINT64_MAX;
	int waiting = func_args_waiting(st->pend);
	for (uint64_t i = from; i < to;) {
		size_t n = 0;
		const struct tpp_rt_rec *slow = NULL;
		for (; i < to && n < BATCH; i++) {
			/* the program wrote them on another CPU: ask for the
			 * lines ahead while this one is decoded */
			__builtin_prefetch(&rec[i + 32]);
			struct tpp_rt_rec r = rec[i];
			unsigned kind = (unsigned)(r.word >> TPP_RT_KIND_SHIFT);
			if (kind == TPP_RT_DATA) {
				/* -A values, for the ENTRY or EXIT that follows */
				data++;
				if (k->args && (st->pend || (st->pend = func_args_pending_new())))
					func_args_data(st->pend, r.word, r.ts);
				waiting = func_args_waiting(st->pend);
				continue;
			}
			uint64_t a = r.word & TPP_RT_ADDR_MASK;
			if (kind == TPP_RT_UNWIND || (r.word >> TPP_RT_WHY_SHIFT) & TPP_RT_WHY_MASK || waiting) {
				/* func_unwind and func_resume carry why, -A events
				 * their values: more than one field */
				slow = &rec[i++];
				break;
			}
			/* a loop calls the same function over and over */
			if (kind == TPP_RT_ENTRY && a != noted) {
				note_entry(p, k, st->pid, a);
				noted = a;
			}
			ty[n] = kind == TPP_RT_ENTRY ? k->t_entry : k->t_exit;
			ts[n] = func_to_mono(k->clk, r.ts);
			va[n++] = a;
		}
		int e = tpp_w_events1(k->w, st->stream, n, ty, ts, va);
		if (e < 0)
			return e;
		if (slow) {
			unsigned kind = (unsigned)(slow->word >> TPP_RT_KIND_SHIFT);
			unsigned why = (unsigned)(slow->word >> TPP_RT_WHY_SHIFT) & TPP_RT_WHY_MASK;
			union tpp_val v[2] = {{.u = slow->word & TPP_RT_ADDR_MASK}, {.u = why}};
			if (kind != TPP_RT_UNWIND && !why && waiting) {
				e = emit_args(p, k, st, slow);
				waiting = func_args_waiting(st->pend);
			}
			else
				e = tpp_w_event(k->w, st->stream, kind == TPP_RT_ENTRY ? k->t_resume : k->t_unwind,
						func_to_mono(k->clk, slow->ts), st->tid, v);
			if (e < 0)
				return e;
		}
	}
	if (to > from) {
		/* a DATA record's ts field holds an argument value, not a time */
		for (uint64_t i = to; i > from; i--)
			if ((unsigned)(rec[i - 1].word >> TPP_RT_KIND_SHIFT) != TPP_RT_DATA) {
				st->last_ts = rec[i - 1].ts;
				break;
			}
		p->events += to - from - data;
	}
	return 0;
}

/* The chunk chain of thread i is broken (an index or count the program
 * wrote over): counted once, and nothing more is read from it. */
static int broken(struct func_pool *p, struct tslot *st)
{
	p->damaged++;
	st->broken = 1;
	return 0;
}

/* Everything thread i has published; *progress when there was any. */
static int drain_thread(struct func_pool *p, const struct func_sink *k, uint32_t i, int *progress)
{
	struct tpp_rt_thread *d = thread_at(p, i);
	struct tslot *st = &p->ts[i];
	if (st->broken)
		return 0;
	if (!st->cur) {
		uint32_t f = __atomic_load_n(&d->first, __ATOMIC_ACQUIRE);
		if (f == TPP_RT_NONE)
			return 0;
		if (f >= p->l.nall)
			return broken(p, st);
		st->cur = f + 1;
		st->rd = 0;
		st->cur_lost_done = 0;
	}
	for (uint32_t steps = 0; steps <= p->l.nall; steps++) {
		struct tpp_rt_chunk *c = chunk_at(p, st->cur - 1);
		/* next before used: a chunk with a successor has published its last record */
		uint32_t nx = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
		uint64_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);
		if (used > chunk_recs(p, st->cur - 1) || used < st->rd || __atomic_load_n(&c->owner, __ATOMIC_RELAXED) != i)
			return broken(p, st);
		if (!st->cur_lost_done) {
			st->cur_lost_done = 1;
			uint64_t lost = __atomic_load_n(&c->lost, __ATOMIC_RELAXED);
			if (lost > LOST_MAX)
				return broken(p, st);
			if (lost) {
				/* where it happened: before this chunk's first record */
				int r = tpp_w_lost(k->w, st->stream, lost, func_to_mono(k->clk, c->lost_from),
						   func_to_mono(k->clk, c->lost_to));
				if (r < 0)
					return r;
				st->lost_seen += lost;
				p->lost += lost;
			}
			/* values whose ENTRY or EXIT was dropped: the runtime
			 * says so when a record found no room */
			if (__atomic_load_n(&c->cut, __ATOMIC_RELAXED))
				func_args_pending_clear(st->pend);
		}
		if (used > st->rd) {
			int r = emit(p, k, st, c, st->rd, used);
			if (r < 0)
				return r;
			st->rd = used;
			*progress = 1;
		}
		if (nx == TPP_RT_NONE)
			return 0;
		if (nx >= p->l.nall || nx == st->cur - 1)
			return broken(p, st);
		put_chunk(p, st->cur - 1);
		st->cur = nx + 1;
		st->rd = 0;
		st->cur_lost_done = 0;
	}
	return 0;
}

static void drain_procs(struct func_pool *p, const struct func_sink *k)
{
	struct tpp_rt_hdr *h = p->h;
	uint32_t np = __atomic_load_n(&h->next_proc, __ATOMIC_ACQUIRE);
	if (np > p->l.nprocs)
		np = p->l.nprocs;
	for (uint32_t i = 0; i < np; i++) {
		struct tpp_rt_proc *pr = proc_at(p, i);
		uint32_t g = __atomic_load_n(&pr->gen, __ATOMIC_ACQUIRE);
		if (!__atomic_load_n(&pr->state, __ATOMIC_ACQUIRE) || (g & 1) || g == p->proc_gen[i])
			continue;
		uint32_t len = pr->maps_len;
		int32_t pid = pr->pid;
		if (len > TPP_RT_MAPS_MAX) {
			p->damaged++;
			p->proc_gen[i] = g;
			continue;
		}
		char *copy = malloc(len ? len : 1);
		if (!copy)
			continue;
		memcpy(copy, pr->maps, len);
		if (__atomic_load_n(&pr->gen, __ATOMIC_ACQUIRE) == g) {
			k->maps(k->arg, pid, copy, len);
			p->proc_gen[i] = g;
		}
		free(copy);
	}
}

int func_pool_drain(struct func_pool *p, const struct func_sink *k, int final)
{
	struct tpp_rt_hdr *h = p->h;
	drain_procs(p, k);
	/* fresh may pass nthreads: every popper adds one while it looks */
	uint64_t fresh = __atomic_load_n(&h->free_threads.fresh, __ATOMIC_ACQUIRE);
	uint32_t n = fresh > p->l.nthreads ? p->l.nthreads : (uint32_t)fresh;
	uint64_t now = mono_now();
	for (uint32_t i = 0; i < n; i++) {
		struct tpp_rt_thread *d = thread_at(p, i);
		struct tslot *st = &p->ts[i];
		/* Read before the records: a done thread has published its last one. */
		uint32_t state = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
		if (state > TPP_RT_THREAD_DONE) {
			/* counted once per descriptor; one of ours is still drained */
			if (!st->bad_state)
				p->damaged++;
			st->bad_state = 1;
			if (!st->active)
				continue;
			state = TPP_RT_THREAD_LIVE;
		}
		if (state == TPP_RT_THREAD_FREE)
			continue;
		int r = 0, progress = 0;
		if (!st->active && (r = activate(p, k, i, n)) < 0)
			return r;
		if ((r = drain_thread(p, k, i, &progress)) < 0)
			return r;
		if (state == TPP_RT_THREAD_DONE) {
			if ((r = retire(p, k, i, 1)) < 0)
				return r;
			continue;
		}
		if (progress) {
			st->idle_since = 0;
			continue;
		}
		if (!st->idle_since)
			st->idle_since = now;
		if (final || now - st->idle_since > IDLE_CHECK_NS) {
			if (st->pid <= 0 || (syscall(SYS_tgkill, st->pid, st->tid, 0) < 0 && errno == ESRCH)) {
				if ((r = retire(p, k, i, 0)) < 0)
					return r;
			} else {
				st->idle_since = now;
			}
		}
	}
	if (p->freed)
		wake_writers(p);
	struct stat fs;
	if (fstat(p->fd, &fs) == 0 && (uint64_t)fs.st_blocks * 512 > p->shm_peak)
		p->shm_peak = (uint64_t)fs.st_blocks * 512;
	return 0;
}

int func_pool_finish(struct func_pool *p, const struct func_sink *k)
{
	int r = func_pool_drain(p, k, 1);
	struct tpp_rt_hdr *h = p->h;
	/* Never read after the start, but a layout that changed says the
	 * command wrote over the pool: the user hears of it. */
	const uint64_t now[] = {h->chunks_off, h->chunk_bytes, h->threads_off, h->procs_off, h->small_off,
				h->nchunks,    h->chunk_recs,  h->nthreads,    h->nprocs,    h->nsmall,
				h->small_recs};
	const uint64_t was[] = {p->l.chunks_off, p->l.chunk_bytes, p->l.threads_off, p->l.procs_off, p->l.small_off,
				p->l.nchunks,    p->l.chunk_recs,  p->l.nthreads,    p->l.nprocs,    p->l.nsmall,
				p->l.small_recs};
	for (size_t i = 0; i < sizeof(now) / sizeof(now[0]); i++)
		p->damaged += now[i] != was[i];
	/* Nobody reads the pool any more: writers drop at once from now on. */
	__atomic_store_n(&h->closing, 1, __ATOMIC_SEQ_CST);
	wake_writers(p);
	if (r < 0)
		return r;
	uint64_t nolost = __atomic_load_n(&h->no_slot_lost, __ATOMIC_RELAXED);
	if (nolost > LOST_MAX) {
		p->damaged++;
		nolost = 0;
	}
	if (nolost) {
		p->lost += nolost;
		r = tpp_w_lost(k->w, UINT32_MAX, nolost, func_to_mono(k->clk, h->no_slot_from),
			       func_to_mono(k->clk, h->no_slot_to));
	}
	return r;
}

void func_pool_stats(const struct func_pool *p, struct func_pool_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (!p || !p->h)
		return;
	s->budget = p->len;
	s->shm_peak = p->shm_peak;
	s->chunk_bytes = p->l.chunk_bytes;
	s->damaged = p->damaged;
	s->threads = p->threads;
	s->events = p->events;
	s->lost = p->lost;
	s->lost_no_slot = __atomic_load_n(&p->h->no_slot_lost, __ATOMIC_RELAXED);
	if (s->lost_no_slot > LOST_MAX)
		s->lost_no_slot = 0;
	s->waits = __atomic_load_n(&p->h->waits, __ATOMIC_RELAXED);
	s->waited_ns = __atomic_load_n(&p->h->waited_ns, __ATOMIC_RELAXED);
	s->wait_capped = __atomic_load_n(&p->h->wait_capped, __ATOMIC_RELAXED);
	s->data_lost = __atomic_load_n(&p->h->data_lost, __ATOMIC_RELAXED);
	s->args_refused = __atomic_load_n(&p->h->args_refused, __ATOMIC_RELAXED);
	s->args_refused_pid = __atomic_load_n(&p->h->args_refused_pid, __ATOMIC_RELAXED);
}

void func_pool_free(struct func_pool *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; p->ts && i < p->l.nthreads; i++)
		free(p->ts[i].pend);
	if (p->h) {
		__atomic_store_n(&p->h->closing, 1, __ATOMIC_SEQ_CST);
		wake_writers(p);
		munmap(p->h, p->len);
	}
	if (p->fd >= 0)
		close(p->fd);
	free(p->ts);
	free(p->proc_gen);
	free(p);
}
