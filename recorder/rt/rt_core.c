/* The runtime's life cycle: map the shared memory tracerec named in
 * $TPP_RT_SHM, copy this process's memory maps into it, claim a ring per
 * thread on its first event, follow fork, mark threads done at exit. */
#include <fcntl.h>
#include <link.h>
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
	if (i >= rt_hdr->nprocs) {
		rt_proc = NULL;
		return;
	}
	rt_proc = tpp_rt_proc_at(rt_hdr, i);
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
	struct tpp_rt_slot *s = t->slot;
	if (!s || __atomic_load_n(&s->state, __ATOMIC_RELAXED) == TPP_RT_SLOT_DONE)
		return;
	/* After every record of the thread: tracerec writes the exit at this time. */
	s->exit_ts = rt_now();
	__atomic_store_n(&s->state, TPP_RT_SLOT_DONE, __ATOMIC_RELEASE);
}

static void thread_done(void *v)
{
	(void)v;
	rt_thread_stop(&rt_self);
}

/* Faults the next stretch of the ring in with one call, ahead of the
 * producer, rather than one page fault per 256 records on the hot path (each
 * costs microseconds in a VM). Memory grows only as far as the ring is used. */
long rt_populate(void *v)
{
	struct rt_thread *t = v;
	uint64_t n = t->mask + 1, head = t->head;
	if (head + RT_POP_RECS < t->pop_upto || t->pop_upto >= n)
		return 0;
	uint64_t from = t->pop_upto, to = head + 2 * RT_POP_RECS;
	if (to > n)
		to = n;
	uintptr_t a = (uintptr_t)(t->recs + from) & ~(uintptr_t)4095;
	madvise((void *)a, (uintptr_t)(t->recs + to) - a, MADV_POPULATE_WRITE);
	t->pop_upto = to;
	return 0;
}

long rt_claim(void *v)
{
	struct rt_thread *t = v;
	struct tpp_rt_hdr *h = rt_hdr;
	if (t->dead)
		return 0;
	uint32_t i = __atomic_fetch_add(&h->next_slot, 1, __ATOMIC_RELAXED);
	if (i >= h->nslots) {
		t->dead = 1;
		return 0;
	}
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
	struct tpp_rt_slot *s = tpp_rt_slot_at(h, i);
	s->pid = getpid();
	s->tid = (int32_t)syscall(SYS_gettid);
	prctl(PR_GET_NAME, s->comm, 0, 0, 0);
	s->start_ts = rt_now();
	t->recs = tpp_rt_recs(s);
	t->mask = h->slot_recs - 1;
	t->head = 0;
	t->tail_cache = 0;
	t->pop_upto = 0;
	rt_populate(t);
	t->slot = s;
	rt_set_limit(t);
	__atomic_store_n(&s->state, TPP_RT_SLOT_LIVE, __ATOMIC_RELEASE);
	pthread_setspecific(rt_key, s);
	return 1;
}

/* The child keeps the parent's frames (their return addresses may be
 * hijacked, so they must stay) and returns from them: its stream starts by
 * announcing them as inherited (rt_announce_inherited, with its first
 * event), so that its returns pair. Entries still waiting for a minimum
 * duration are the parent's to write. */
static void after_fork_child(void)
{
	struct rt_thread *t = &rt_self;
	t->limit = 0;
	for (int i = 0; i < t->depth; i++)
		if (!(t->stack[i].flags & RT_F_EMITTED))
			t->stack[i].flags &= ~(uint32_t)RT_F_WANT;
	t->slot = NULL;
	t->dead = 0;
	t->inherit = t->depth > 0;
	t->fork_ts = rt_now();
	maps_lock = 0; /* the child has one thread: whoever held it is gone */
	if (rt_hdr)
		claim_proc();
}

__attribute__((constructor(101))) static void rt_init(void)
{
	const char *path = getenv(TPP_RT_ENV_SHM);
	if (!path)
		return;
	int fd = rt_open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	struct tpp_rt_hdr *h = MAP_FAILED;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(*h))
		h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	syscall(SYS_close, fd);
	if (h == MAP_FAILED)
		return;
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != TPP_RT_MAGIC || h->version != TPP_RT_VERSION ||
	    h->total_bytes > (uint64_t)st.st_size || (h->slot_recs & (h->slot_recs - 1))) {
		munmap(h, (size_t)st.st_size);
		return;
	}
	rt_clock_tsc = h->clock == TPP_RT_CLOCK_TSC;
	if (pthread_key_create(&rt_key, thread_done) != 0) {
		munmap(h, (size_t)st.st_size);
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
