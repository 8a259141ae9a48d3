/* The function-tracing session as tracerec's record loop sees it (func.h):
 * decides whether the command gets the preloaded runtime, creates the shared
 * memory the runtime writes into, drains it into per-thread streams, and at
 * the end writes memory maps, build-ids and symbol tables. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "func_int.h"
#include "rt/tpp_rt_abi.h"

#define DEF_SLOTS 128
/* 128 MiB per thread (touched pages only): ~110 ms of the busiest loop, the
 * runtime writing 2 records per call every ~28 ns, before tracerec must have
 * drained anything (it writes ~20 M records/s). */
#define DEF_SLOT_RECS (1u << 23)
#define DEF_PROCS 64

struct addrkey {
	uint64_t addr;
	int32_t pid;
	int32_t used;
};

struct func_session {
	struct func_opts o;
	char err[FUNC_ERR_MAX];
	int use_rt;
	char shm_path[64];
	char rt_lib[PATH_MAX];
	struct tpp_rt_hdr *h;
	size_t h_len;
	char *env[4];
	struct func_probes *probes;
	uint16_t t_entry, t_exit, t_unwind, t_thread_exit, t_resume;
	int types_done;
	/* per slot: our stream id (0 = not yet declared), lost already reported */
	uint32_t *slot_stream;
	uint64_t *slot_lost;
	uint8_t *slot_exited; /* the thread's exit event is written */
	uint32_t *proc_gen;
	struct func_maps *maps;
	int32_t *pids;
	size_t npids, cappids;
	struct addrkey *addrs; /* open-addressing set of (pid, addr) */
	size_t naddrs, capaddrs;
	/* TSC -> CLOCK_MONOTONIC: ns = mono0 + (tsc - tsc0) * mult >> 32 */
	uint64_t tsc0, mono0, tsc1, mono1, mult;
	uint64_t events;
	int shm_fd;
	uint32_t prealloc; /* slots whose ring pages exist already */
};

const char *func_error(const struct func_session *s)
{
	return s ? s->err : "out of memory";
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A (tsc, mono) pair read as close together as this machine allows. */
static void clock_pair(uint64_t *tsc, uint64_t *mono)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t a = __rdtsc(), m = mono_ns(), b = __rdtsc();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*mono = m;
		}
	}
}

static void calibrate(struct func_session *s, uint64_t tsc, uint64_t mono)
{
	if (tsc <= s->tsc0 || mono <= s->mono0)
		return;
	s->tsc1 = tsc;
	s->mono1 = mono;
	s->mult = (uint64_t)(((unsigned __int128)(mono - s->mono0) << 32) / (tsc - s->tsc0));
}

static uint64_t to_mono(const struct func_session *s, uint64_t ts)
{
	if (!s->h || s->h->clock != TPP_RT_CLOCK_TSC)
		return ts;
	if (ts >= s->tsc0)
		return s->mono0 + (uint64_t)(((unsigned __int128)(ts - s->tsc0) * s->mult) >> 32);
	return s->mono0 - (uint64_t)(((unsigned __int128)(s->tsc0 - ts) * s->mult) >> 32);
}

static int tsc_is_clocksource(void)
{
	const char *force = getenv("TPP_RT_CLOCK");
	if (force)
		return !strcmp(force, "tsc");
	char buf[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return !strncmp(buf, "tsc", 3);
}

/* The command as execvp would find it. */
static int resolve_cmd(const char *cmd, char *out, size_t len)
{
	(void)len; /* realpath writes at most PATH_MAX */
	if (strchr(cmd, '/')) {
		if (!realpath(cmd, out))
			return -errno;
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t dl = c ? (size_t)(c - path) : strlen(path);
		char cand[PATH_MAX];
		func_fmt(cand, sizeof(cand), "%.*s/%s", (int)dl, path, cmd);
		if (!access(cand, X_OK) && realpath(cand, out))
			return 0;
		path += dl + (c ? 1 : 0);
	}
	return -ENOENT;
}

static int find_rt_lib(struct func_session *s)
{
	const char *env = getenv("TPP_RT_LIB");
	if (env) {
		func_fmt(s->rt_lib, sizeof(s->rt_lib), "%s", env);
		return access(s->rt_lib, R_OK) ? -errno : 0;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -errno;
	self[n] = 0;
	char *sl = strrchr(self, '/');
	if (sl)
		*sl = 0;
	func_fmt(s->rt_lib, sizeof(s->rt_lib), "%s/libtpprt.so", self);
	if (!access(s->rt_lib, R_OK))
		return 0;
	func_fmt(s->rt_lib, sizeof(s->rt_lib), "%s/../lib/tracepp/libtpprt.so", self);
	return access(s->rt_lib, R_OK) ? -ENOENT : 0;
}

static int match_any(const char *name, const char **globs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!fnmatch(globs[i], name, 0))
			return 1;
	return 0;
}

/* -F/-N become address ranges of the executable's functions: the runtime
 * then decides per call without knowing any names. */
static int setup_filters(struct func_session *s, const char *exe)
{
	struct tpp_rt_hdr *h = s->h;
	if (!s->o.nfilter && !s->o.nnotrace)
		return 0;
	struct func_elfsym *es;
	long n = func_elf_syms(exe, &es, s->err, sizeof(s->err));
	if (n < 0)
		return (int)n;
	struct tpp_rt_filter *f = (struct tpp_rt_filter *)((char *)h + h->filter_off);
	uint32_t k = 0, nonly = 0;
	for (long i = 0; i < n && k < TPP_RT_FILTER_MAX; i++) {
		uint32_t kind = 0;
		if (match_any(es[i].name, s->o.notrace, s->o.nnotrace))
			kind = 2;
		else if (match_any(es[i].name, s->o.filter, s->o.nfilter))
			kind = 1;
		if (!kind)
			continue;
		nonly += kind == 1;
		f[k++] = (struct tpp_rt_filter){es[i].addr, es[i].addr + (es[i].size ? es[i].size : 1), kind, 0};
	}
	func_elf_syms_free(es, (size_t)n);
	for (size_t i = 0; i < s->o.nfilter; i++) {
		/* A -F glob that matches nothing would silently record nothing. */
		if (!nonly) {
			func_fmt(s->err, sizeof(s->err), "-F %s: matches no function of %s", s->o.filter[i], exe);
			return -ENOENT;
		}
	}
	struct stat st;
	if (stat(exe, &st) < 0)
		return -errno;
	h->exe_dev = st.st_dev;
	h->exe_ino = st.st_ino;
	h->nfilter = k;
	h->has_only = nonly > 0;
	return 0;
}

/* Allocates the ring pages of the slots the next threads will claim, here
 * rather than by page faults in the traced program's hot path. */
static void prealloc_slots(struct func_session *s, uint32_t upto)
{
	struct tpp_rt_hdr *h = s->h;
	if (upto > h->nslots)
		upto = h->nslots;
	for (; s->prealloc < upto; s->prealloc++)
		if (fallocate(s->shm_fd, 0, (off_t)(h->slots_off + (uint64_t)s->prealloc * h->slot_bytes),
			      (off_t)h->slot_bytes) < 0)
			break;
}

static int create_shm(struct func_session *s, const char *exe)
{
	uint32_t nslots = DEF_SLOTS, recs = DEF_SLOT_RECS;
	const char *e = getenv("TPP_FUNC_SLOT_RECS");
	if (e && atoi(e) >= 16) {
		recs = 16;
		while (recs < (uint32_t)atoi(e) && recs < (1u << 26))
			recs <<= 1;
	}
	uint64_t slot_bytes = TPP_RT_SLOT_HDR + (uint64_t)recs * sizeof(struct tpp_rt_rec);
	uint64_t hdr = 4096, filt = (sizeof(struct tpp_rt_filter) * TPP_RT_FILTER_MAX + 4095) & ~4095ULL;
	uint64_t procs = ((uint64_t)DEF_PROCS * sizeof(struct tpp_rt_proc) + 4095) & ~4095ULL;
	uint64_t total = hdr + filt + procs + nslots * slot_bytes;
	func_fmt(s->shm_path, sizeof(s->shm_path), "/dev/shm/tpp-rt-%d", (int)getpid());
	int fd = open(s->shm_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		func_fmt(s->err, sizeof(s->err), "%s: %s", s->shm_path, strerror(errno));
		return -errno;
	}
	if (ftruncate(fd, (off_t)total) < 0) {
		int r = -errno;
		func_fmt(s->err, sizeof(s->err), "%s: %s", s->shm_path, strerror(errno));
		close(fd);
		return r;
	}
	void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	s->shm_fd = fd;
	if (p == MAP_FAILED) {
		func_fmt(s->err, sizeof(s->err), "mmap %s: %s", s->shm_path, strerror(errno));
		return -errno;
	}
	s->h = p;
	s->h_len = total;
	struct tpp_rt_hdr *h = s->h;
	h->version = TPP_RT_VERSION;
	h->hdr_size = sizeof(*h);
	h->nslots = nslots;
	h->slot_recs = recs;
	h->slot_bytes = slot_bytes;
	h->filter_off = hdr;
	h->procs_off = hdr + filt;
	h->nprocs = DEF_PROCS;
	h->slots_off = hdr + filt + procs;
	h->total_bytes = total;
	h->max_depth = s->o.max_depth > 0 ? s->o.max_depth : 0;
	h->clock = tsc_is_clocksource() ? TPP_RT_CLOCK_TSC : TPP_RT_CLOCK_MONO;
	clock_pair(&s->tsc0, &s->mono0);
	if (h->clock == TPP_RT_CLOCK_TSC) {
		struct timespec d = {0, 5000000};
		nanosleep(&d, NULL);
		uint64_t t, m;
		clock_pair(&t, &m);
		calibrate(s, t, m);
		h->min_ticks = s->o.min_ns ? (uint64_t)(((unsigned __int128)s->o.min_ns << 32) / s->mult) : 0;
	} else {
		h->min_ticks = s->o.min_ns;
	}
	s->slot_stream = calloc(nslots, sizeof(*s->slot_stream));
	s->slot_lost = calloc(nslots, sizeof(*s->slot_lost));
	s->slot_exited = calloc(nslots, sizeof(*s->slot_exited));
	s->proc_gen = calloc(DEF_PROCS, sizeof(*s->proc_gen));
	if (!s->slot_stream || !s->slot_lost || !s->slot_exited || !s->proc_gen)
		return -ENOMEM;
	int r = setup_filters(s, exe);
	if (r < 0)
		return r;
	prealloc_slots(s, 1); /* the first thread's; the drain keeps two ahead */
	__atomic_store_n(&h->magic, TPP_RT_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

int func_session_new(struct func_session **sp, const struct func_opts *o, const char *cmd_path)
{
	struct func_session *s = calloc(1, sizeof(*s));
	*sp = s;
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->maps = func_maps_new();
	if (!s->maps)
		return -ENOMEM;
	if (!o->max_probes)
		s->o.max_probes = 1000;
	int want_filters = o->nfilter || o->nnotrace || o->max_depth || o->min_ns;
	if (!cmd_path || o->no_func)
		return 0;
	char exe[PATH_MAX];
	int r = resolve_cmd(cmd_path, exe, sizeof(exe));
	if (r < 0) {
		func_fmt(s->err, sizeof(s->err), "%s: command not found", cmd_path);
		return r;
	}
	int inst = func_elf_instrumented(exe);
	if (!inst && want_filters && !o->nuprobes) {
		func_fmt(s->err, sizeof(s->err),
			 "%s: not built with -pg or -finstrument-functions, so -F/-N/-D/--min-duration have nothing to act on",
			 exe);
		return -EINVAL;
	}
	/* Uprobes on a command still want the runtime, only for the memory
	 * maps it copies from inside the process: a short program is gone
	 * before the recorder sees its first probe hit and could read
	 * /proc/PID/maps, and without maps no address gets a name. */
	if (!inst && !o->nuprobes)
		return 0;
	r = find_rt_lib(s);
	if (r < 0) {
		func_fmt(s->err, sizeof(s->err), "libtpprt.so: not found next to tracerec (set TPP_RT_LIB)");
		return r;
	}
	r = create_shm(s, exe);
	if (r < 0)
		return r;
	s->use_rt = 1;
	const char *old = getenv("LD_PRELOAD");
	if (asprintf(&s->env[0], "LD_PRELOAD=%s%s%s", s->rt_lib, old && *old ? ":" : "", old ? old : "") < 0 ||
	    asprintf(&s->env[1], "%s=%s", TPP_RT_ENV_SHM, s->shm_path) < 0) {
		s->env[0] = s->env[1] = NULL;
		return -ENOMEM;
	}
	return 0;
}

char *const *func_child_env(struct func_session *s)
{
	return s->env;
}

int func_create_probes(struct func_session *s, const char *const **names, size_t *n)
{
	*names = NULL;
	*n = 0;
	if (!s->o.nuprobes && !s->o.nkprobes)
		return 0;
	int r = func_probes_create(&s->probes, &s->o, s->err, sizeof(s->err));
	if (r < 0)
		return r;
	func_probes_names(s->probes, names, n);
	return 0;
}

int func_declare_types(struct func_session *s, struct tpp_writer *w, uint16_t *next_type)
{
	static const struct tpp_field_def addr[] = {{"addr", TPP_F_U64}, {"why", TPP_F_U64}};
	static const struct tpp_field_def pid[] = {{"pid", TPP_F_S64}};
	if (!s->use_rt)
		return 0;
	/* func_unwind and func_resume say why (enum tpp_rt_why, specs/format.md). */
	const char *names[5] = {"func_entry", "func_exit", "func_unwind", "func_thread_exit", "func_resume"};
	uint16_t *ids[5] = {&s->t_entry, &s->t_exit, &s->t_unwind, &s->t_thread_exit, &s->t_resume};
	static const uint16_t nf[5] = {1, 1, 2, 1, 2};
	for (int i = 0; i < 5; i++) {
		struct tpp_type_def t = {*next_type, names[i], "tracepp", nf[i], i == 3 ? pid : addr};
		int r = tpp_w_add_type(w, &t);
		if (r < 0) {
			func_fmt(s->err, sizeof(s->err), "declaring %s: %s", names[i], tpp_w_error(w));
			return r;
		}
		*ids[i] = (*next_type)++;
	}
	s->types_done = 1;
	return 0;
}

static void note_addr(struct func_session *s, int32_t pid, uint64_t addr)
{
	if (s->naddrs * 2 >= s->capaddrs) {
		size_t nc = s->capaddrs ? s->capaddrs * 2 : 1024;
		struct addrkey *na = calloc(nc, sizeof(*na));
		if (!na)
			return;
		for (size_t i = 0; i < s->capaddrs; i++) {
			if (!s->addrs[i].used)
				continue;
			size_t j = (s->addrs[i].addr * 0x9E3779B97F4A7C15ULL ^ (uint64_t)s->addrs[i].pid) & (nc - 1);
			while (na[j].used)
				j = (j + 1) & (nc - 1);
			na[j] = s->addrs[i];
		}
		free(s->addrs);
		s->addrs = na;
		s->capaddrs = nc;
	}
	size_t j = (addr * 0x9E3779B97F4A7C15ULL ^ (uint64_t)pid) & (s->capaddrs - 1);
	while (s->addrs[j].used) {
		if (s->addrs[j].addr == addr && s->addrs[j].pid == pid)
			return;
		j = (j + 1) & (s->capaddrs - 1);
	}
	s->addrs[j] = (struct addrkey){addr, pid, 1};
	s->naddrs++;
}

static void drain_procs(struct func_session *s)
{
	struct tpp_rt_hdr *h = s->h;
	uint32_t np = __atomic_load_n(&h->next_proc, __ATOMIC_ACQUIRE);
	if (np > h->nprocs)
		np = h->nprocs;
	for (uint32_t i = 0; i < np; i++) {
		struct tpp_rt_proc *p = tpp_rt_proc_at(h, i);
		uint32_t g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);
		if (!__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) || (g & 1) || g == s->proc_gen[i])
			continue;
		uint32_t len = p->maps_len;
		if (len > TPP_RT_MAPS_MAX)
			continue;
		char *copy = malloc(len ? len : 1);
		if (!copy)
			continue;
		memcpy(copy, p->maps, len);
		if (__atomic_load_n(&p->gen, __ATOMIC_ACQUIRE) == g) {
			func_maps_add_text(s->maps, p->pid, copy, len);
			s->proc_gen[i] = g;
		}
		free(copy);
	}
}

int func_drain(struct func_session *s, struct tpp_writer *w, uint32_t *next_stream)
{
	if (!s->use_rt || !s->types_done)
		return 0;
	struct tpp_rt_hdr *h = s->h;
	if (h->clock == TPP_RT_CLOCK_TSC) {
		uint64_t t = __rdtsc();
		/* Longer baselines give a better TSC rate; re-read it every 50 ms or so. */
		if (t - s->tsc1 > (s->tsc1 - s->tsc0) / 4 + 100000000ULL) {
			uint64_t m;
			clock_pair(&t, &m);
			calibrate(s, t, m);
		}
	}
	drain_procs(s);
	uint32_t ns = __atomic_load_n(&h->next_slot, __ATOMIC_ACQUIRE);
	if (ns > h->nslots)
		ns = h->nslots;
	prealloc_slots(s, ns + 2);
	uint64_t mask = h->slot_recs - 1;
	for (uint32_t i = 0; i < ns; i++) {
		struct tpp_rt_slot *sl = tpp_rt_slot_at(h, i);
		/* Read before head: a done thread has published its last record. */
		uint32_t state = __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE);
		if (state == TPP_RT_SLOT_FREE || s->slot_exited[i])
			continue;
		if (!s->slot_stream[i]) {
			uint32_t id = (*next_stream)++;
			int r = tpp_w_stream(w, id, TPP_S_THREAD, -1, sl->pid, sl->tid);
			if (r < 0) {
				func_fmt(s->err, sizeof(s->err), "thread stream: %s", tpp_w_error(w));
				return r;
			}
			char comm[17];
			memcpy(comm, sl->comm, 16);
			comm[16] = 0;
			tpp_w_task(w, to_mono(s, sl->start_ts), sl->pid, sl->tid, comm);
			s->slot_stream[i] = id;
		}
		uint64_t head = __atomic_load_n(&sl->head, __ATOMIC_ACQUIRE), tail = sl->tail;
		struct tpp_rt_rec *rec = tpp_rt_recs(sl);
		uint64_t first_ts = 0, last_ts = 0;
		for (; tail != head; tail++) {
			struct tpp_rt_rec r = rec[tail & mask];
			unsigned kind = (unsigned)(r.word >> TPP_RT_KIND_SHIFT);
			unsigned why = (unsigned)(r.word >> TPP_RT_WHY_SHIFT) & TPP_RT_WHY_MASK;
			uint64_t a = r.word & TPP_RT_ADDR_MASK;
			union tpp_val v[2] = {{.u = a}, {.u = why}};
			if (kind > TPP_RT_UNWIND)
				continue; /* data records of a later runtime */
			uint16_t type = kind == TPP_RT_ENTRY ? (why ? s->t_resume : s->t_entry)
							     : kind == TPP_RT_EXIT ? s->t_exit : s->t_unwind;
			uint64_t ts = to_mono(s, r.ts);
			if (!first_ts)
				first_ts = ts;
			last_ts = ts;
			int e = tpp_w_event(w, s->slot_stream[i], type, ts, sl->tid, v);
			if (e < 0) {
				__atomic_store_n(&sl->tail, tail, __ATOMIC_RELEASE);
				func_fmt(s->err, sizeof(s->err), "writing function events: %s", tpp_w_error(w));
				return e;
			}
			if (kind == TPP_RT_ENTRY && !why)
				note_addr(s, sl->pid, a);
			s->events++;
		}
		__atomic_store_n(&sl->tail, tail, __ATOMIC_RELEASE);
		uint64_t lost = __atomic_load_n(&sl->lost, __ATOMIC_RELAXED);
		if (lost != s->slot_lost[i]) {
			tpp_w_lost(w, s->slot_stream[i], lost - s->slot_lost[i], first_ts, last_ts);
			s->slot_lost[i] = lost;
		}
		if (state == TPP_RT_SLOT_DONE) {
			/* The runtime took exit_ts after the thread's last record. */
			union tpp_val v = {.i = sl->pid};
			int e = tpp_w_event(w, s->slot_stream[i], s->t_thread_exit, to_mono(s, sl->exit_ts), sl->tid, &v);
			if (e < 0) {
				func_fmt(s->err, sizeof(s->err), "writing function events: %s", tpp_w_error(w));
				return e;
			}
			s->slot_exited[i] = 1;
		}
	}
	return 0;
}

void func_note_pid(struct func_session *s, int32_t pid)
{
	for (size_t i = 0; i < s->npids; i++)
		if (s->pids[i] == pid)
			return;
	if (s->npids == s->cappids) {
		size_t nc = s->cappids ? 2 * s->cappids : 32;
		int32_t *np = realloc(s->pids, nc * sizeof(*np));
		if (!np)
			return;
		s->pids = np;
		s->cappids = nc;
	}
	s->pids[s->npids++] = pid;
	/* Now, while it most likely still runs: at finish it may be gone. */
	if (!func_maps_has(s->maps, pid))
		func_maps_read_proc(s->maps, pid);
}

int func_finish(struct func_session *s, struct tpp_writer *w, uint32_t *next_stream)
{
	int r = func_drain(s, w, next_stream);
	if (r < 0)
		return r;
	if (s->use_rt)
		drain_procs(s);
	for (size_t i = 0; i < s->npids; i++)
		if (!func_maps_has(s->maps, s->pids[i]))
			func_maps_read_proc(s->maps, s->pids[i]);
	for (size_t i = 0; i < s->capaddrs; i++)
		if (s->addrs[i].used)
			func_maps_mark(s->maps, s->addrs[i].pid, s->addrs[i].addr);
	if (s->probes) {
		const char *const *paths;
		size_t np;
		func_probes_paths(s->probes, &paths, &np);
		for (size_t i = 0; i < np; i++)
			func_maps_mark_path(s->maps, paths[i]);
	}
	r = func_maps_write(s->maps, w, mono_ns());
	if (r < 0) {
		func_fmt(s->err, sizeof(s->err), "writing maps and symbols: %s", tpp_w_error(w));
		return r;
	}
	if (s->use_rt) {
		struct tpp_rt_hdr *h = s->h;
		uint64_t nolost = __atomic_load_n(&h->no_slot_lost, __ATOMIC_RELAXED);
		char threads[32], events[32], nl[32], clk[8];
		func_fmt(threads, sizeof(threads), "%u", __atomic_load_n(&h->next_slot, __ATOMIC_RELAXED));
		func_fmt(events, sizeof(events), "%" PRIu64, s->events);
		func_fmt(nl, sizeof(nl), "%" PRIu64, nolost);
		func_fmt(clk, sizeof(clk), "%s", h->clock == TPP_RT_CLOCK_TSC ? "tsc" : "mono");
		const char *k[] = {"threads", "events", "lost_no_slot", "clock"};
		const char *v[] = {threads, events, nl, clk};
		tpp_w_note(w, "func_runtime", 4, k, v);
		if (nolost)
			tpp_w_lost(w, UINT32_MAX, nolost, 0, 0);
	}
	return 0;
}

void func_session_free(struct func_session *s)
{
	if (!s)
		return;
	if (s->probes) {
		func_probes_remove(s->probes);
		func_probes_free(s->probes);
	}
	if (s->h) {
		munmap(s->h, s->h_len);
		close(s->shm_fd);
		unlink(s->shm_path);
	}
	free(s->env[0]);
	free(s->env[1]);
	free(s->slot_stream);
	free(s->slot_lost);
	free(s->slot_exited);
	free(s->proc_gen);
	free(s->pids);
	free(s->addrs);
	func_maps_free(s->maps);
	free(s);
}

void func_session_cleanup_signal(struct func_session *s)
{
	if (!s)
		return;
	func_probes_remove(s->probes);
	if (s->h)
		unlink(s->shm_path);
}
