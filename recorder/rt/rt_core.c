/* The runtime's life cycle: map the pool tracerec handed down in
 * $TPP_RT_FD, copy this process's memory maps into it, claim a descriptor
 * per thread on its first event and chunks as it fills them, follow fork,
 * mark threads done at exit. */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rt_int.h"

struct tpp_rt_hdr *rt_hdr;
struct rt_layout rt_lay;
__thread struct rt_thread rt_self __attribute__((tls_model("initial-exec")));
int rt_clock_tsc;
static pthread_key_t rt_key;
static struct tpp_rt_proc *rt_proc;

long rt_now_mono(void *unused)
{
	(void)unused;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec);
}

/* Keeps executable file mappings only: they are what addresses resolve in. */
static int keep_line(const char *l, size_t len)
{
	const char *sp = memchr(l, ' ', len);
	if (!sp || (size_t)(sp - l) + 4 > len || sp[3] != 'x')
		return 0;
	return memchr(l, '/', len) != NULL;
}

/* The runtime's own files are opened with raw system calls: a user who
 * probes libc's open or read (-u libc:open) must see only the program's. */
static int rt_open(const char *path, int flags)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags);
}

/* A line already in the copy (whole lines only). */
static int have_line(const char *maps, size_t len, const char *l, size_t ll)
{
	for (const char *m = maps; m + ll <= maps + len; m++) {
		m = memmem(m, (size_t)(maps + len - m), l, ll);
		if (!m)
			return 0;
		if (m == maps || m[-1] == '\n')
			return 1;
	}
	return 0;
}

/* Adds the lines not in the copy yet: mappings are never removed from it,
 * so a library dlclose'd before tracerec read the copy keeps its names. */
static void copy_maps(struct tpp_rt_proc *p)
{
	int fd = rt_open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	__atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELEASE); /* odd: being rewritten */
	char buf[4096];
	size_t have = 0, out = p->maps_len, old = out;
	for (;;) {
		ssize_t n = syscall(SYS_read, fd, buf + have, sizeof(buf) - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		size_t start = 0;
		for (;;) {
			char *nl = memchr(buf + start, '\n', have - start);
			if (!nl)
				break;
			size_t len = (size_t)(nl - (buf + start)) + 1;
			if (keep_line(buf + start, len) && out + len <= TPP_RT_MAPS_MAX &&
			    !have_line(p->maps, old, buf + start, len)) {
				memcpy(p->maps + out, buf + start, len);
				out += len;
			}
			start += len;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == sizeof(buf))
			have = 0; /* a line longer than any path: drop it */
	}
	syscall(SYS_close, fd);
	p->maps_len = (uint32_t)out;
	__atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELEASE);
}

/* i: small chunks first, then big ones (tpp_rt_abi.h) */
static struct tpp_rt_chunk *chunk_at(uint32_t i)
{
	if (i < rt_lay.nsmall)
		return (struct tpp_rt_chunk *)((char *)rt_hdr + rt_lay.small_off + (uint64_t)i * TPP_RT_SMALL_BYTES);
	i -= rt_lay.nsmall;
	return (struct tpp_rt_chunk *)((char *)rt_hdr + rt_lay.chunks_off + (uint64_t)i * rt_lay.chunk_bytes);
}
static struct tpp_rt_thread *thread_at(uint32_t i)
{
	return (struct tpp_rt_thread *)((char *)rt_hdr + rt_lay.threads_off + (uint64_t)i * sizeof(struct tpp_rt_thread));
}
static uint32_t *small_link(void *unused, uint32_t i)
{
	(void)unused;
	return &chunk_at(i)->free_next;
}
static uint32_t *big_link(void *unused, uint32_t i)
{
	(void)unused;
	return &chunk_at(rt_lay.nsmall + i)->free_next;
}
static uint32_t *thread_link(void *unused, uint32_t i)
{
	(void)unused;
	return &thread_at(i)->free_next;
}
static uint32_t pop_small(void)
{
	return tpp_rt_pop(&rt_hdr->free_small, rt_lay.nsmall, small_link, NULL);
}
static uint32_t pop_big(void)
{
	uint32_t i = tpp_rt_pop(&rt_hdr->free_chunks, rt_lay.nchunks, big_link, NULL);
	return i == TPP_RT_NONE ? i : rt_lay.nsmall + i;
}
/* A thread's first chunk is a small one: most threads of a big server are
 * idle, and hold one page each. Its next ones are big. Either size will do
 * when the other has run out. */
static uint32_t pop_chunk(int first)
{
	uint32_t i = first ? pop_small() : pop_big();
	if (i == TPP_RT_NONE)
		i = first ? pop_big() : pop_small();
	return i;
}

static int maps_lock;

void rt_maps_refresh(void)
{
	if (!rt_proc)
		return;
	while (__atomic_exchange_n(&maps_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	copy_maps(rt_proc);
	__atomic_store_n(&maps_lock, 0, __ATOMIC_RELEASE);
}

static void claim_proc(void)
{
	uint32_t i = __atomic_fetch_add(&rt_hdr->next_proc, 1, __ATOMIC_RELAXED);
	if (i >= rt_lay.nprocs) {
		rt_proc = NULL;
		return;
	}
	rt_proc = (struct tpp_rt_proc *)((char *)rt_hdr + rt_lay.procs_off + (uint64_t)i * sizeof(struct tpp_rt_proc));
	rt_proc->pid = getpid();
	rt_proc->ppid = getppid();
	copy_maps(rt_proc);
	__atomic_store_n(&rt_proc->state, 1, __ATOMIC_RELEASE);
}

void rt_thread_stop(struct rt_thread *t)
{
	t->limit = 0; /* every later record takes the slow path, which sees dead */
	t->dead = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	struct tpp_rt_thread *d = t->slot;
	if (!d)
		return;
	/* After every record of the thread: tracerec writes the exit at this
	 * time, then may give the descriptor and chunks to another thread, so
	 * this thread lets go of them for good. */
	d->exit_ts = rt_now();
	t->slot = NULL;
	t->chunk = NULL;
	t->recs = NULL;
	t->used = NULL;
	__atomic_store_n(&d->state, TPP_RT_THREAD_DONE, __ATOMIC_RELEASE);
}

static void thread_done(void *v)
{
	(void)v;
	rt_thread_stop(&rt_self);
}

static uint64_t now_in_libc(void)
{
	return rt_clock_tsc ? __builtin_ia32_rdtsc() : (uint64_t)rt_now_mono(0);
}

/* No chunk is free: the thread outruns tracerec. Sleeping until it gives
 * chunks back (it wakes us) trades the program's speed for a whole trace
 * within the budget. Bounded: a wait ends after wait_ns in which nothing
 * came back (and then no thread waits again until something does: the
 * recorder is stopped or gone), or after RT_WAIT_CAP wait_ns in all (other
 * threads kept taking what came back); and a thread that has waited
 * RT_WAIT_TOTAL wait_ns over its life waits no more (counted once in
 * wait_capped): a recorder too slow for the program slows each thread by
 * that much at most, and the rest of its records are counted lost. */
#define RT_WAIT_CAP 10
#define RT_WAIT_TOTAL 100
static uint32_t wait_chunk(struct rt_thread *t, struct tpp_rt_hdr *h)
{
	uint64_t budget = h->wait_ns;
	uint32_t seq = __atomic_load_n(&h->free_seq, __ATOMIC_ACQUIRE);
	if (!budget || t->waited >= RT_WAIT_TOTAL * budget || __atomic_load_n(&h->closing, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&h->stall_seq, __ATOMIC_RELAXED) == seq + 1)
		return TPP_RT_NONE;
	uint64_t t0 = (uint64_t)rt_now_mono(0), now = t0, moved = t0;
	uint64_t cap = RT_WAIT_TOTAL * budget - t->waited;
	if (cap > RT_WAIT_CAP * budget)
		cap = RT_WAIT_CAP * budget;
	uint32_t i = TPP_RT_NONE;
	for (;;) {
		/* announced before the last look: tracerec bumps free_seq after
		 * giving back and then looks at waiters (both seq_cst) */
		__atomic_fetch_add(&h->waiters, 1, __ATOMIC_SEQ_CST);
		i = pop_chunk(!t->chunk);
		if (i == TPP_RT_NONE && !__atomic_load_n(&h->closing, __ATOMIC_RELAXED)) {
			uint64_t left = moved + budget - now;
			if (left > t0 + cap - now)
				left = t0 + cap - now;
			struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
			syscall(SYS_futex, &h->free_seq, FUTEX_WAIT, seq, &ts, NULL, 0);
		}
		__atomic_fetch_sub(&h->waiters, 1, __ATOMIC_RELAXED);
		now = (uint64_t)rt_now_mono(0);
		if (i != TPP_RT_NONE || (i = pop_chunk(!t->chunk)) != TPP_RT_NONE)
			break;
		uint32_t s2 = __atomic_load_n(&h->free_seq, __ATOMIC_ACQUIRE);
		if (s2 != seq)
			moved = now, seq = s2;
		if (__atomic_load_n(&h->closing, __ATOMIC_RELAXED) || now - t0 >= cap)
			break;
		if (now - moved >= budget) {
			/* nothing came back in all that time */
			__atomic_store_n(&h->stall_seq, seq + 1, __ATOMIC_RELAXED);
			break;
		}
	}
	t->waited += now - t0;
	if (t->waited >= RT_WAIT_TOTAL * budget)
		__atomic_fetch_add(&h->wait_capped, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->waits, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->waited_ns, now - t0, __ATOMIC_RELAXED);
	return i;
}

long rt_next_chunk(void *v)
{
	struct rt_thread *t = v;
	struct tpp_rt_hdr *h = rt_hdr;
	/* The hooks run between the program's own statements: the futex wait's
	 * ETIMEDOUT/EAGAIN (and madvise's EINVAL on old kernels) must not reach
	 * the errno a traced function is about to return to its caller. */
	int saved_errno = errno;
	uint32_t i = pop_chunk(!t->chunk);
	if (i == TPP_RT_NONE)
		i = wait_chunk(t, h);
	if (i == TPP_RT_NONE) {
		errno = saved_errno;
		return 0;
	}
	struct tpp_rt_chunk *c = chunk_at(i);
	int big = i >= rt_lay.nsmall;
	if (!c->pad[0] && big && rt_lay.chunk_bytes > 4096) {
		/* A chunk of several pages never used before: they come in with
		 * one call, not one page fault per 256 records of the hot path
		 * (each costs microseconds in a VM). Reused chunks have them. */
		madvise(c, rt_lay.chunk_bytes, MADV_POPULATE_WRITE);
	}
	c->pad[0] = 1;
	c->used = 0;
	c->next = TPP_RT_NONE;
	c->owner = t->slot_idx;
	c->lost = t->pend_lost;
	c->lost_from = t->pend_lost ? t->pend_from : 0;
	c->lost_to = t->pend_lost ? t->slot->lost_to : 0;
	c->cut = t->pend_cut;
	t->pend_lost = 0;
	t->pend_cut = 0;
	/* The chunk is complete before the consumer can reach it. */
	if (t->chunk)
		__atomic_store_n(&t->chunk->next, i, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&t->slot->first, i, __ATOMIC_RELEASE);
	t->chunk = c;
	t->recs = tpp_rt_chunk_recs(c);
	t->used = &c->used;
	t->head = 0;
	t->cap = big ? rt_lay.chunk_recs : rt_lay.small_recs;
	rt_set_limit(t);
	errno = saved_errno;
	return 1;
}

long rt_claim(void *v)
{
	struct rt_thread *t = v;
	struct tpp_rt_hdr *h = rt_hdr;
	if (t->dead)
		return 0;
	if (!t->stack) {
		size_t sb = RT_STACK_MAX * sizeof(struct rt_frame);
		void *st = mmap(NULL, sb + RT_GRAVE * sizeof(struct rt_grave), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (st == MAP_FAILED) {
			t->dead = 1;
			return 0;
		}
		t->stack = st;
		t->grave = (struct rt_grave *)((char *)st + sb);
	}
	uint32_t i = tpp_rt_pop(&h->free_threads, rt_lay.nthreads, thread_link, NULL);
	if (i == TPP_RT_NONE) {
		/* More threads at once than descriptors: counted, tried again
		 * at the thread's next call. */
		uint64_t ts = now_in_libc(), zero = 0;
		__atomic_compare_exchange_n(&h->no_slot_from, &zero, ts, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		__atomic_store_n(&h->no_slot_to, ts, __ATOMIC_RELAXED);
		__atomic_fetch_add(&h->no_slot_lost, 1, __ATOMIC_RELAXED);
		return 0;
	}
	struct tpp_rt_thread *d = thread_at(i);
	d->pid = getpid();
	d->tid = (int32_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, d->comm, 0, 0, 0);
	d->first = TPP_RT_NONE;
	d->lost = d->lost_from = d->lost_to = d->exit_ts = 0;
	d->start_ts = now_in_libc();
	t->slot = d;
	t->slot_idx = i;
	t->chunk = NULL;
	t->recs = NULL;
	t->used = NULL;
	t->head = 0;
	t->pend_lost = 0;
	t->pend_cut = 0;
	rt_set_limit(t);
	__atomic_store_n(&d->state, TPP_RT_THREAD_LIVE, __ATOMIC_RELEASE);
	pthread_setspecific(rt_key, d);
	return 1;
}

/* The child keeps the parent's frames (their return addresses may be
 * hijacked, so they must stay) and returns from them: its stream starts by
 * announcing them as inherited (rt_announce_inherited, with its first
 * event), so that its returns pair. Entries still waiting for a minimum
 * duration are the parent's to write. Nor may it write into the parent's
 * descriptor or chunk: it claims its own. */
static void after_fork_child(void)
{
	struct rt_thread *t = &rt_self;
	t->limit = 0;
	for (int i = 0; i < t->depth; i++)
		if (!(t->stack[i].flags & RT_F_EMITTED))
			t->stack[i].flags &= ~(uint32_t)RT_F_WANT;
	t->slot = NULL;
	t->chunk = NULL;
	t->recs = NULL;
	t->used = NULL;
	t->head = 0;
	t->pend_lost = 0;
	t->pend_cut = 0;
	t->waited = 0;
	t->dead = 0;
	t->inherit = t->depth > 0;
	t->fork_ts = rt_now();
	maps_lock = 0; /* the child has one thread: whoever held it is gone */
	if (rt_hdr)
		claim_proc();
}

/* $TPP_RT_FD is "FD:INODE": the memfd tracerec made, inherited from it (and
 * by every process the command starts, so it stays open here). The inode
 * tells it from whatever a program may have put at that number since. */
static struct tpp_rt_hdr *map_pool(size_t *len)
{
	const char *e = getenv(TPP_RT_ENV_FD);
	if (!e)
		return NULL;
	char *end;
	long fd = strtol(e, &end, 10);
	if (end == e || *end != ':' || fd < 0 || fd > 1 << 20)
		return NULL;
	unsigned long long ino = strtoull(end + 1, &end, 10);
	struct stat st;
	if (*end || fstat((int)fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != ino ||
	    (size_t)st.st_size < sizeof(struct tpp_rt_hdr))
		return NULL;
	struct tpp_rt_hdr *h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (h == MAP_FAILED)
		return NULL;
	uint64_t n = (uint64_t)st.st_size;
	/* validated as copied: another process of the command may write the header */
	struct tpp_rt_hdr c;
	memcpy(&c, h, sizeof(c));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (c.magic != TPP_RT_MAGIC || c.version != TPP_RT_VERSION || c.total_bytes != n || !c.nchunks ||
	    !c.nthreads || c.chunk_bytes != TPP_RT_CHUNK_HDR + (uint64_t)c.chunk_recs * 16 ||
	    c.chunks_off + (uint64_t)c.nchunks * c.chunk_bytes > n ||
	    (c.nsmall && (c.small_recs != (TPP_RT_SMALL_BYTES - TPP_RT_CHUNK_HDR) / 16 ||
			  c.small_off + (uint64_t)c.nsmall * TPP_RT_SMALL_BYTES > n)) ||
	    c.threads_off + (uint64_t)c.nthreads * sizeof(struct tpp_rt_thread) > n ||
	    c.procs_off + (uint64_t)c.nprocs * sizeof(struct tpp_rt_proc) > n ||
	    c.filter_off + (uint64_t)TPP_RT_FILTER_MAX * sizeof(struct tpp_rt_filter) > n ||
	    c.args_off + (uint64_t)TPP_RT_ARGSPEC_MAX * sizeof(struct tpp_rt_argspec) > n) {
		munmap(h, (size_t)n);
		return NULL;
	}
	rt_lay = (struct rt_layout){c.chunks_off, c.chunk_bytes, c.threads_off, c.procs_off, c.small_off,
				    c.nchunks,    c.chunk_recs,  c.nthreads,    c.nprocs,    c.nsmall, c.small_recs};
	*len = (size_t)n;
	return h;
}

__attribute__((constructor(101))) static void rt_init(void)
{
	size_t len;
	struct tpp_rt_hdr *h = map_pool(&len);
	if (!h)
		return;
	rt_clock_tsc = h->clock == TPP_RT_CLOCK_TSC;
	if (pthread_key_create(&rt_key, thread_done) != 0) {
		munmap(h, len);
		return;
	}
	pthread_atfork(NULL, NULL, after_fork_child);
	rt_hdr = h;
	rt_filters_init();
	claim_proc();
}

__attribute__((destructor)) static void rt_fini(void)
{
	if (!rt_hdr)
		return;
	/* Libraries dlopen'ed since start are mapped now: refresh the copy. */
	rt_maps_refresh();
	rt_thread_stop(&rt_self);
}
