/* A program sandboxed before it starts (as by systemd's SystemCallFilter or
 * a container), by a seccomp filter that kills it on process_vm_readv:
 * w-seccomp arm N installs the filter and execs itself as w-seccomp run N,
 * which calls greet("world", i) N times and prints "greeted N". -A on greet
 * under tracerec must not kill it (the runtime reads strings with
 * process_vm_readv). Without "arm", no filter. w-seccomp late N calls greet
 * N times, then installs the filter itself (prctl, as a program that
 * sandboxes itself once set up) and calls it N times more; late-sys does
 * the same through syscall(SYS_seccomp), as libseccomp does; late-ok installs
 * one that kills on ptrace only (process_vm_readv stays allowed). */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile long sink;

int greet(const char *who, int n)
{
	sink += who[0] + n;
	return n * 2;
}

static int arm(int how)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, how == 'o' ? __NR_ptrace : __NR_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (how == 's')
		return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	const char *n = argc > 2 ? argv[2] : "3";
	int calls = atoi(n);
	if (argc > 1 && !strncmp(argv[1], "late", 4)) {
		for (int i = 0; i < calls; i++)
			greet("early", i);
		if (arm(!strcmp(argv[1], "late-sys") ? 's' : !strcmp(argv[1], "late-ok") ? 'o' : 'p')) {
			perror("w-seccomp: seccomp");
			return 2;
		}
		for (int i = 0; i < calls; i++)
			greet("late", i);
		printf("greeted %d\n", 2 * calls);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "arm")) {
		if (arm('p')) {
			perror("w-seccomp: seccomp");
			return 2;
		}
		execl("/proc/self/exe", argv[0], "run", n, (char *)NULL);
		perror("w-seccomp: exec");
		return 2;
	}
	for (int i = 0; i < calls; i++)
		greet("world", i);
	printf("greeted %d\n", calls);
	return 0;
}
