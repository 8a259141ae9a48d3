/* A seccomp filter the program installs after start: the probe at load
 * (rt_args.c) saw none, and the next -A string or frame read would be
 * refused or kill the program. Both ways a program reaches the kernel
 * through libc are wrapped: prctl(PR_SET_SECCOMP) and syscall(SYS_seccomp)
 * (glibc has no seccomp() wrapper; libseccomp calls syscall()). -A memory
 * reads stop before the call; once the filter is in, no system call is made
 * to find out what it allows (it may kill on any of them): the runtime runs
 * the filter's own program, as the kernel will, on the two calls a read
 * makes (getpid, process_vm_readv), and reads resume only if both are
 * allowed. Not seen: a program issuing the system call instruction itself
 * (inline assembly, a static or Go binary). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "rt_int.h"

#define RT_STR_(x) #x
#define RT_STR(x) RT_STR_(x)

/* The action a classic BPF seccomp program returns for d: the kernel's
 * instruction set for seccomp (seccomp_check_filter), jumps forward only.
 * Anything it does not know, or a program that runs off its end, is not
 * ALLOW. */
static uint32_t run_filter(const struct sock_filter *f, unsigned n, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	for (unsigned pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t k = i->k, src = BPF_SRC(i->code) == BPF_X ? x : k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t v;
			if (BPF_MODE(i->code) == BPF_ABS && BPF_SIZE(i->code) == BPF_W && k % 4 == 0 &&
			    k + 4 <= sizeof(*d))
				__builtin_memcpy(&v, (const char *)d + k, 4);
			else if (BPF_MODE(i->code) == BPF_LEN)
				v = sizeof(*d);
			else if (BPF_MODE(i->code) == BPF_IMM)
				v = k;
			else if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS)
				v = mem[k];
			else
				return 0;
			if (BPF_CLASS(i->code) == BPF_LD)
				a = v;
			else
				x = v;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return 0;
			mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: if (!src) return 0; a /= src; break;
			case BPF_MOD: if (!src) return 0; a %= src; break;
			case BPF_OR: a |= src; break;
			case BPF_AND: a &= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return 0;
			}
			break;
		case BPF_JMP: {
			int t;
			switch (BPF_OP(i->code)) {
			case BPF_JA: pc += k; continue;
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: return 0;
			}
			pc += t ? i->jt : i->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? a : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return 0;
		}
	}
	return 0;
}

/* Whether the filter lets -A's reads through (read_mem in rt_args.c). */
static int lets_reads_through(const struct sock_fprog *prog, long pid)
{
	if (!prog || !prog->filter || !prog->len || prog->len > BPF_MAXINSNS)
		return 0;
	struct seccomp_data d = {.nr = SYS_getpid, .arch = AUDIT_ARCH_X86_64, .instruction_pointer = (uintptr_t)&rt_args_sandbox};
	if ((run_filter(prog->filter, prog->len, &d) & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ALLOW)
		return 0;
	d.nr = SYS_process_vm_readv;
	d.args[0] = (uint64_t)pid;
	d.args[2] = d.args[4] = 1;
	return (run_filter(prog->filter, prog->len, &d) & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ALLOW;
}

/* The filter program a call installs; NULL for strict mode (nothing but
 * read, write, exit) or a call that installs none. *strict: it is strict mode. */
static const struct sock_fprog *installs(long n, long a, long b, long c, int *strict)
{
	*strict = 0;
	if (n == SYS_seccomp && a == SECCOMP_SET_MODE_FILTER)
		return (const struct sock_fprog *)c;
	if (n == SYS_seccomp && a == SECCOMP_SET_MODE_STRICT)
		*strict = 1;
	if (n == SYS_prctl && a == PR_SET_SECCOMP) {
		if (b == SECCOMP_MODE_FILTER)
			return (const struct sock_fprog *)c;
		*strict = b == SECCOMP_MODE_STRICT;
	}
	return NULL;
}

/* libc's convention: -1 and errno for -4095..-1. */
RT_HIDDEN long rt_syscall_err(long r)
{
	errno = (int)-r;
	return -1;
}

static long call(long n, long a, long b, long c, long d, long e, long f)
{
	int strict = 0;
	const struct sock_fprog *prog = rt_hdr ? installs(n, a, b, c, &strict) : NULL;
	long r;
	if (!prog && !strict) {
		r = rt_sys6(n, a, b, c, d, e, f);
	} else {
		long pid = rt_sys6(SYS_getpid, 0, 0, 0, 0, 0, 0);
		rt_args_sandbox(0);
		r = rt_sys6(n, a, b, c, d, e, f);
		rt_args_sandbox(r < 0 || (!strict && lets_reads_through(prog, pid)) ? 1 : 2);
	}
	return (unsigned long)r > -4096UL ? rt_syscall_err(r) : r;
}

/* syscall(n, a..f): the arguments as a 7-argument call would have them. */
RT_HIDDEN long rt_syscall_slow(long n, long a, long b, long c, long d, long e, long f)
{
	return call(n, a, b, c, d, e, f);
}

/* Every other system call goes straight through, with no frame on the
 * stack, as glibc's own syscall(): syscall(SYS_vfork) returns twice on one
 * stack. */
__asm__(".text\n"
	".globl syscall\n"
	".type syscall, @function\n"
	"syscall:\n"
	"	cmpq $" RT_STR(SYS_seccomp) ", %rdi\n"
	"	je rt_syscall_slow\n"
	"	cmpq $" RT_STR(SYS_prctl) ", %rdi\n"
	"	je rt_syscall_slow\n"
	"	movq %rdi, %rax\n"
	"	movq %rsi, %rdi\n"
	"	movq %rdx, %rsi\n"
	"	movq %rcx, %rdx\n"
	"	movq %r8, %r10\n"
	"	movq %r9, %r8\n"
	"	movq 8(%rsp), %r9\n"
	"	syscall\n"
	"	cmpq $-4095, %rax\n"
	"	jae 1f\n"
	"	ret\n"
	"1:	movq %rax, %rdi\n"
	"	jmp rt_syscall_err\n"
	".size syscall, .-syscall\n");

RT_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a = va_arg(ap, unsigned long), b = va_arg(ap, unsigned long);
	unsigned long c = va_arg(ap, unsigned long), d = va_arg(ap, unsigned long);
	va_end(ap);
	return (int)call(SYS_prctl, option, (long)a, (long)b, (long)c, (long)d, 0);
}
