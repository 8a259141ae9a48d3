/* -A for compiled-in functions: the arguments and return value of the
 * functions tracerec names (tpp_rt_argspec table), copied as DATA records
 * just before their ENTRY or EXIT record. Registers come from the -pg
 * trampolines' save area (the xmm ones are untouched: the runtime never uses
 * SSE); -finstrument-functions gives no registers, so its arguments are read
 * from the function's frame where DWARF says they are. Strings are read with
 * process_vm_readv: a bad pointer costs an error code, never a fault. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_int.h"

uint32_t rt_nargspec;
static const struct tpp_rt_argspec *specs;
static uint64_t bias;
/* -A reads memory (strings, frame slots) in this process. */
static int reads_memory;
/* Memory reads are off: a seccomp filter installed after start refuses
 * process_vm_readv (or one is being installed: rt_args_sandbox). */
static volatile int no_reads;

static long read_mem(void *buf, uintptr_t p, size_t n);

/* This process's seccomp mode (/proc/self/status): 0 none, 1 strict, 2 filter. */
static int seccomp_mode(void)
{
	char buf[4096];
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	long n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	buf[n > 0 ? n : 0] = 0;
	const char *l = strstr(buf, "\nSeccomp:");
	if (!l)
		return 0;
	for (l += 9; *l == ' ' || *l == '\t'; l++)
		;
	return *l - '0';
}

/* Whether process_vm_readv may be called here: under a seccomp filter that
 * kills on it, the first string or frame read would kill the program. The
 * filter is inherited, so a child tries it: raw clone with no exit signal
 * (nothing for the program's SIGCHLD handler, no atfork handlers), raw
 * system calls only in the child. */
static int vm_readv_allowed(void)
{
	int mode = seccomp_mode();
	if (mode == 0)
		return 1;
	if (mode != 2)
		return 0; /* strict: read, write, exit, sigreturn */
	long pid = syscall(SYS_clone, 0L, 0L, 0L, 0L, 0L);
	if (pid == 0) {
		uint64_t probe = 0x5450505f52454144ull, got = 0;
		long r = read_mem(&got, (uintptr_t)&probe, sizeof(got));
		syscall(SYS_exit_group, r == (long)sizeof(got) && got == probe ? 0 : 1);
	}
	if (pid < 0)
		return 0;
	int st = 0, e = errno;
	long w;
	do
		w = syscall(SYS_wait4, pid, &st, __WALL, NULL);
	while (w < 0 && errno == EINTR);
	errno = e;
	return w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* tracerec says so, naming the first such process. A process that put the
 * filter in itself and then exec'd (the sandboxing launcher) was counted
 * before the exec, under the same pid: when it is the first, not again. */
static void count_refused(void)
{
	int32_t zero = 0, pid = (int32_t)getpid();
	if (!__atomic_compare_exchange_n(&rt_hdr->args_refused_pid, &zero, pid, 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED) &&
	    zero == pid)
		return;
	__atomic_fetch_add(&rt_hdr->args_refused, 1, __ATOMIC_RELAXED);
}

/* Values read from memory, not registers: strings, and frame slots. */
static int needs_memory(const struct tpp_rt_argspec *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t k = 0; k < s[i].nargs && k < TPP_RT_ARGS; k++)
			if (s[i].arg[k].str || s[i].arg[k].src == TPP_RT_SRC_FRAME)
				return 1;
		if (s[i].ret.str)
			return 1;
	}
	return 0;
}

void rt_args_init(uint64_t load_bias)
{
	struct tpp_rt_hdr *h = rt_hdr;
	if (!h->nargspec || !h->args_off)
		return;
	const struct tpp_rt_argspec *tab = (const struct tpp_rt_argspec *)((const char *)h + h->args_off);
	uint32_t n = h->nargspec > TPP_RT_ARGSPEC_MAX ? TPP_RT_ARGSPEC_MAX : h->nargspec;
	if (needs_memory(tab, n) && !vm_readv_allowed()) {
		count_refused();
		return;
	}
	bias = load_bias;
	specs = tab;
	reads_memory = needs_memory(tab, n);
	rt_nargspec = n;
	rt_plain = 0; /* every entry goes through rt_push, which looks its function up */
}

void rt_args_sandbox(int phase)
{
	if (!reads_memory || !rt_nargspec)
		return; /* no -A here, or it reads registers only: nothing a filter can refuse */
	if (phase == 0) {
		/* before: a hook on another thread must not read while the filter
		 * goes in (SECCOMP_FILTER_FLAG_TSYNC puts it on every thread) */
		no_reads = 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		return;
	}
	if (phase == 2) {
		/* -A is off in this process from here on; tracerec says so */
		rt_nargspec = 0;
		count_refused();
		return;
	}
	no_reads = 0;
}

int rt_args_find(uint64_t addr)
{
	return (int)rt_range_find(specs, sizeof(*specs), rt_nargspec, addr - bias);
}

/* xmm0-7 as they are: the hooks and everything they call before this are
 * compiled without SSE. */
static void read_xmm(uint64_t out[8])
{
	__asm__ volatile("movq %%xmm0, 0(%0)\n\tmovq %%xmm1, 8(%0)\n\tmovq %%xmm2, 16(%0)\n\t"
			 "movq %%xmm3, 24(%0)\n\tmovq %%xmm4, 32(%0)\n\tmovq %%xmm5, 40(%0)\n\t"
			 "movq %%xmm6, 48(%0)\n\tmovq %%xmm7, 56(%0)"
			 :
			 : "r"(out)
			 : "memory");
}

/* Bytes at p (up to n), into buf; how many could be read (<= 0: none). */
static long read_mem(void *buf, uintptr_t p, size_t n)
{
	if (no_reads)
		return -1;
	long pid = rt_sys6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	struct iovec l = {buf, n}, r = {(void *)p, n};
	long got = rt_sys6(SYS_process_vm_readv, pid, (long)&l, 1, (long)&r, 1, 0);
	if (got < 0 && p) {
		/* the string ends before the next page, which is not mapped */
		size_t in_page = 4096 - (p & 4095);
		if (in_page < n) {
			l.iov_len = r.iov_len = in_page;
			got = rt_sys6(SYS_process_vm_readv, pid, (long)&l, 1, (long)&r, 1, 0);
		}
	}
	return got;
}

static unsigned word(unsigned spec, unsigned slot)
{
	return spec << 24 | slot;
}

static void emit_data(struct rt_thread *t, uint64_t v, uint64_t w)
{
	rt_emit(t, v, w, TPP_RT_DATA);
}

static void emit_string(struct rt_thread *t, unsigned spec, unsigned slot, uintptr_t p)
{
	char buf[TPP_RT_STR_MAX];
	long got = p ? read_mem(buf, p, sizeof(buf)) : -1;
	if (got <= 0) {
		emit_data(t, p, word(spec, slot) | TPP_RT_D_LAST | TPP_RT_D_BAD);
		return;
	}
	size_t len = 0;
	while (len < (size_t)got && buf[len])
		len++;
	for (size_t c = 0; c * 8 < len || c == 0; c++) {
		uint64_t v = 0;
		size_t k = len - c * 8 < 8 ? len - c * 8 : 8;
		for (size_t i = 0; i < k; i++)
			v |= (uint64_t)(unsigned char)buf[c * 8 + i] << (8 * i);
		emit_data(t, v,
			  word(spec, slot) | (uint64_t)c << 8 | (uint64_t)k << 16 | ((c + 1) * 8 >= len ? TPP_RT_D_LAST : 0));
	}
}

static void emit_arg(struct rt_thread *t, unsigned spec, unsigned slot, const struct tpp_rt_arg *a,
		     const uint64_t *gpr, const uint64_t *xmm, uintptr_t cfa)
{
	uint64_t v = 0;
	switch (a->src) {
	case TPP_RT_SRC_GPR:
		if (!gpr)
			return;
		v = gpr[a->reg];
		break;
	case TPP_RT_SRC_XMM:
		v = xmm[a->reg & 7];
		break;
	case TPP_RT_SRC_FRAME:
		/* cfa comes from a frame pointer the function may not keep */
		if (!cfa || a->size > 8 || read_mem(&v, cfa + (uintptr_t)(intptr_t)a->off, a->size) != a->size)
			return;
		break;
	default:
		return;
	}
	if (a->str)
		emit_string(t, spec, slot, (uintptr_t)v);
	else
		emit_data(t, v, word(spec, slot));
}

void rt_args_entry(struct rt_thread *t, int spec, const uint64_t *gpr, uintptr_t cfa)
{
	const struct tpp_rt_argspec *s = &specs[spec];
	uint64_t xmm[8];
	read_xmm(xmm);
	uint32_t n = s->nargs < TPP_RT_ARGS ? s->nargs : TPP_RT_ARGS;
	for (uint32_t i = 0; i < n; i++)
		emit_arg(t, (unsigned)spec, i, &s->arg[i], gpr, xmm, cfa);
}

void rt_args_exit(struct rt_thread *t, int spec, uint64_t rax)
{
	if (!rt_nargspec)
		return; /* turned off since the entry: its values stay unpaired, not wrong */
	const struct tpp_rt_argspec *s = &specs[spec];
	uint64_t xmm[8];
	read_xmm(xmm);
	emit_arg(t, (unsigned)spec, TPP_RT_D_RET, &s->ret, &rax, xmm, 0);
}
