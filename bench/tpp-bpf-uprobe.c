/* tpp-bpf-uprobe — a bench-only prototype of a BPF path for tracerec -u:
 * what recording every entry and return of one function costs the traced
 * thread when a BPF program, not a tracefs event, writes the record.
 *
 *   tpp-bpf-uprobe [-o FILE] [-c] [-p] BIN OFFSET -- CMD [ARG...]
 *
 * Runs CMD (held on a pipe until the probes are in, as tracerec holds its
 * command) with an entry and a return uprobe at file offset OFFSET of BIN,
 * attached as BPF_TRACE_UPROBE_MULTI links filtered to CMD's process (with
 * -p: perf_event_open of the uprobe PMU on CMD's process and
 * PERF_EVENT_IOC_SET_BPF, the path bpftrace 0.17 takes). The
 * programs are hand-assembled (no clang, no libbpf): each writes one record
 * per event into a BPF ring buffer with BPF_RB_NO_WAKEUP, so the traced CPU
 * never raises a wake-up; this process drains the ring every POLL_MS and
 * writes the records to FILE (or drops them). Records (little-endian u64s):
 *   entry:  kind (0), pid<<32|tid, CLOCK_MONOTONIC ns, sp, return address
 *   return: kind (1), pid<<32|tid, CLOCK_MONOTONIC ns, sp
 * the fields tracerec's probes carry (the kind stands for the event id).
 * A record the ring had no room for is counted by the program in an array
 * map. With -c the programs only count the calls (bpftrace's @=count()).
 * Prints "events N lost N" on stderr; exits with CMD's status. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Newer than the installed uapi headers (6.1): link_create's uprobe_multi
 * member (kernel 6.6) and its attach type, right after BPF_TCX_EGRESS. */
#define ATTACH_UPROBE_MULTI (BPF_LSM_CGROUP + 5)
#define UPROBE_MULTI_RETURN 1u
struct link_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, uflags, pid;
};

#define RING_BYTES (8u << 20)
#define POLL_MS 10
#define PT_REGS_SP 152 /* offsetof(struct pt_regs, sp), x86-64 */

static long sys_bpf(int cmd, void *attr, unsigned size)
{
	return syscall(__NR_bpf, cmd, attr, size);
}

static int map_create(uint32_t type, uint32_t key, uint32_t val, uint32_t n)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = key;
	a.value_size = val;
	a.max_entries = n;
	return (int)sys_bpf(BPF_MAP_CREATE, &a, sizeof(a));
}

#define INS(c, d, s, o, i) ((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})
#define MOV64_REG(d, s) INS(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, i) INS(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INS(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_DW(d, s, o) INS(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_DW(d, o, s) INS(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define ST_W(d, o, i) INS(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define ST_DW(d, o, i) INS(BPF_ST | BPF_MEM | BPF_DW, d, 0, o, i)
#define ATOMIC_ADD_DW(d, o, s) INS(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
#define CALL(f) INS(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define JEQ_IMM(d, i, o) INS(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define EXIT() INS(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
/* a map's fd as a 64-bit immediate: two instructions */
#define LD_MAP(d, fd) INS(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), INS(0, 0, 0, 0, 0)

/* map[key] += 1 (an array map; the key stored at r10+off), then return 0:
 * nine instructions, the last two the exit */
#define COUNT_IN(map, off, key)                                                                        \
	ST_W(BPF_REG_10, off, key), LD_MAP(BPF_REG_1, map), MOV64_REG(BPF_REG_2, BPF_REG_10),           \
		ADD64_IMM(BPF_REG_2, off), CALL(BPF_FUNC_map_lookup_elem), JEQ_IMM(BPF_REG_0, 0, 2),    \
		MOV64_IMM(BPF_REG_1, 1), ATOMIC_ADD_DW(BPF_REG_0, 0, BPF_REG_1), MOV64_IMM(BPF_REG_0, 0), EXIT()

/* One program per kind (0 entry, 1 return). The record is built on the
 * stack at r10-40 and copied into the ring by bpf_ringbuf_output. */
static int prog_load(int kind, int ring, int lost, int count_only, int perf)
{
	struct bpf_insn rec[] = {
		MOV64_REG(BPF_REG_6, BPF_REG_1), /* ctx: struct pt_regs */
		ST_DW(BPF_REG_10, -40, kind),
		CALL(BPF_FUNC_get_current_pid_tgid),
		STX_DW(BPF_REG_10, -32, BPF_REG_0),
		CALL(BPF_FUNC_ktime_get_ns), /* the mono clock, as tracerec's trace_clock */
		STX_DW(BPF_REG_10, -24, BPF_REG_0),
		LDX_DW(BPF_REG_3, BPF_REG_6, PT_REGS_SP),
		STX_DW(BPF_REG_10, -16, BPF_REG_3),
		/* entry only: the return address at sp (user memory) */
		MOV64_REG(BPF_REG_1, BPF_REG_10),
		ADD64_IMM(BPF_REG_1, -8),
		MOV64_IMM(BPF_REG_2, 8),
		CALL(BPF_FUNC_probe_read_user),
		LD_MAP(BPF_REG_1, ring),
		MOV64_REG(BPF_REG_2, BPF_REG_10),
		ADD64_IMM(BPF_REG_2, -40),
		MOV64_IMM(BPF_REG_3, 40),
		MOV64_IMM(BPF_REG_4, BPF_RB_NO_WAKEUP),
		CALL(BPF_FUNC_ringbuf_output),
		JEQ_IMM(BPF_REG_0, 0, 9),
		/* no room: lost[0] += 1 */
		COUNT_IN(lost, -44, 0),
	};
	struct bpf_insn cnt[] = {COUNT_IN(lost, -4, kind)};
	if (kind == 1 && !count_only) {
		/* the return record has no return address: 32 bytes, no read */
		memmove(&rec[8], &rec[12], sizeof(rec) - 12 * sizeof(*rec));
		rec[12].imm = 32; /* r3 = size; rec[11]: r2 += -40 */
	}
	size_t n = count_only ? sizeof(cnt) / sizeof(*cnt) : sizeof(rec) / sizeof(*rec) - (kind == 1 ? 4 : 0);
	char log[8192] = "";
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.insns = (uint64_t)(uintptr_t)(count_only ? cnt : rec);
	a.insn_cnt = (uint32_t)n;
	a.license = (uint64_t)(uintptr_t)"Dual MIT/GPL"; /* probe_read_user is GPL-only */
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	a.expected_attach_type = perf ? 0 : ATTACH_UPROBE_MULTI;
	int fd = (int)sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd < 0)
		fprintf(stderr, "tpp-bpf-uprobe: BPF_PROG_LOAD: %s\n%s", strerror(errno), log);
	return fd;
}

static int link_create(int prog, const char *path, uint64_t off, int ret, int pid)
{
	union {
		union bpf_attr a;
		struct link_uprobe_multi u;
	} x;
	memset(&x, 0, sizeof(x));
	x.u.prog_fd = (uint32_t)prog;
	x.u.attach_type = ATTACH_UPROBE_MULTI;
	x.u.path = (uint64_t)(uintptr_t)path;
	x.u.offsets = (uint64_t)(uintptr_t)&off;
	x.u.cnt = 1;
	x.u.uflags = ret ? UPROBE_MULTI_RETURN : 0;
	x.u.pid = (uint32_t)pid;
	int fd = (int)sys_bpf(BPF_LINK_CREATE, &x, sizeof(x));
	if (fd < 0)
		fprintf(stderr, "tpp-bpf-uprobe: BPF_LINK_CREATE (uprobe_multi%s): %s\n", ret ? ", return" : "",
			strerror(errno));
	return fd;
}

/* The uprobe PMU's type and its retprobe bit, from sysfs. */
static int read_sysfs(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	return ok ? 0 : -1;
}

static int perf_attach(int prog, const char *path, uint64_t off, int ret, int pid)
{
	char buf[64];
	struct perf_event_attr pa;
	memset(&pa, 0, sizeof(pa));
	if (read_sysfs("/sys/bus/event_source/devices/uprobe/type", buf, sizeof(buf))) {
		fprintf(stderr, "tpp-bpf-uprobe: no uprobe PMU\n");
		return -1;
	}
	pa.type = (uint32_t)atoi(buf);
	pa.size = sizeof(pa);
	if (ret) {
		int bit = 0;
		if (!read_sysfs("/sys/bus/event_source/devices/uprobe/format/retprobe", buf, sizeof(buf)))
			sscanf(buf, "config:%d", &bit);
		pa.config = 1ull << bit;
	}
	pa.config1 = (uint64_t)(uintptr_t)path; /* uprobe_path */
	pa.config2 = off;                       /* probe_offset */
	pa.sample_period = 1;
	pa.wakeup_events = 1;
	int fd = (int)syscall(__NR_perf_event_open, &pa, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
		fprintf(stderr, "tpp-bpf-uprobe: perf_event_open uprobe%s: %s\n", ret ? " (return)" : "",
			strerror(errno));
		return -1;
	}
	return fd;
}

struct ring {
	volatile uint64_t *cons;
	volatile const uint64_t *prod;
	const uint8_t *data;
	uint64_t mask;
};

/* Consumes every committed record; returns how many, writing them to out. */
static long drain(struct ring *r, int out, uint8_t *buf, size_t cap)
{
	long n = 0;
	size_t used = 0;
	uint64_t c = *r->cons;
	for (;;) {
		uint64_t p = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
		if (c >= p)
			break;
		uint32_t len = __atomic_load_n((const uint32_t *)(r->data + (c & r->mask)), __ATOMIC_ACQUIRE);
		if (len & BPF_RINGBUF_BUSY_BIT)
			break;
		uint32_t body = len & ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			if (out >= 0 && used + body > cap) {
				if (write(out, buf, used) < 0)
					out = -1;
				used = 0;
			}
			/* the data pages are mapped twice in a row: a record that
			 * wraps is still contiguous */
			if (out >= 0)
				memcpy(buf + used, r->data + ((c + BPF_RINGBUF_HDR_SZ) & r->mask), body);
			used += out >= 0 ? body : 0;
			n++;
		}
		c += (BPF_RINGBUF_HDR_SZ + body + 7) & ~7ull;
		__atomic_store_n(r->cons, c, __ATOMIC_RELEASE);
	}
	if (out >= 0 && used && write(out, buf, used) < 0)
		return n;
	return n;
}

int main(int argc, char **argv)
{
	const char *outp = NULL;
	int count_only = 0, perf = 0, o;
	while ((o = getopt(argc, argv, "+o:cp")) != -1) {
		if (o == 'o')
			outp = optarg;
		else if (o == 'c')
			count_only = 1;
		else if (o == 'p')
			perf = 1;
		else
			return 2;
	}
	if (argc - optind < 4 || strcmp(argv[optind + 2], "--")) {
		fprintf(stderr, "usage: tpp-bpf-uprobe [-o FILE] [-c] [-p] BIN OFFSET -- CMD [ARG...]\n");
		return 2;
	}
	const char *bin = argv[optind];
	uint64_t off = strtoull(argv[optind + 1], NULL, 0);
	char **cmd = argv + optind + 3;
	int go[2];
	if (pipe2(go, O_CLOEXEC))
		return 1;
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(cmd[0], cmd);
		_exit(127);
	}
	close(go[0]);
	int ring = map_create(BPF_MAP_TYPE_RINGBUF, 0, 0, RING_BYTES);
	int lost = map_create(BPF_MAP_TYPE_ARRAY, 4, 8, 2);
	int pe = ring < 0 || lost < 0 ? -1 : prog_load(0, ring, lost, count_only, perf);
	int pr = pe < 0 ? -1 : prog_load(1, ring, lost, count_only, perf);
	int (*attach)(int, const char *, uint64_t, int, int) = perf ? perf_attach : link_create;
	int le = pr < 0 ? -1 : attach(pe, bin, off, 0, child);
	int lr = le < 0 ? -1 : attach(pr, bin, off, 1, child);
	long ps = sysconf(_SC_PAGESIZE);
	void *cons = lr < 0 ? MAP_FAILED : mmap(NULL, (size_t)ps, PROT_READ | PROT_WRITE, MAP_SHARED, ring, 0);
	void *prod = cons == MAP_FAILED ? MAP_FAILED
					: mmap(NULL, (size_t)ps + 2 * RING_BYTES, PROT_READ, MAP_SHARED, ring, ps);
	if (prod == MAP_FAILED) {
		if (ring < 0 || lost < 0)
			fprintf(stderr, "tpp-bpf-uprobe: BPF_MAP_CREATE: %s\n", strerror(errno));
		else if (lr >= 0)
			fprintf(stderr, "tpp-bpf-uprobe: mmap of the ring: %s\n", strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return 1;
	}
	struct ring r = {cons, prod, (const uint8_t *)prod + ps, RING_BYTES - 1};
	int out = -1;
	if (outp && (out = open(outp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		fprintf(stderr, "tpp-bpf-uprobe: %s: %s\n", outp, strerror(errno));
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return 1;
	}
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	if (write(go[1], "g", 1) != 1)
		return 1;
	close(go[1]);
	long events = 0;
	int st = 0;
	for (;;) {
		events += drain(&r, out, buf, cap);
		pid_t w = waitpid(child, &st, WNOHANG);
		if (w == child)
			break;
		struct timespec ts = {0, POLL_MS * 1000000L};
		nanosleep(&ts, NULL);
	}
	events += drain(&r, out, buf, cap);
	uint64_t nlost = 0, v = 0;
	for (uint32_t k = 0; k < 2; k++) {
		union bpf_attr a;
		memset(&a, 0, sizeof(a));
		a.map_fd = (uint32_t)lost;
		a.key = (uint64_t)(uintptr_t)&k;
		a.value = (uint64_t)(uintptr_t)&v;
		if (!sys_bpf(BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)))
			nlost += v;
	}
	if (count_only)
		fprintf(stderr, "counted %llu\n", (unsigned long long)nlost);
	else
		fprintf(stderr, "events %ld lost %llu\n", events, (unsigned long long)nlost);
	if (out >= 0)
		close(out);
	free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
