/* The function-tracing session as tracerec's record loop sees it (func.h):
 * decides whether the command gets the preloaded runtime, sets up the pool
 * the runtime writes into (func_pool.c), drains it into per-thread streams,
 * and writes memory maps, build-ids and symbol tables as soon as they are
 * known, so that a recorder killed by SIGKILL leaves them in the file. */
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

#include "func_args.h"
#include "func_int.h"
#include "rt/tpp_rt_abi.h"

/* The pool per online CPU when -b is not given: events come from CPUs, so
 * that is what the budget scales with, not the number of threads. */
#define DEF_POOL_PER_CPU (32ull << 20)
/* Maps and symbols known so far go into the file this often (the writer
 * loop flushes every second): a killed recorder's file still names them. */
#define CHECKPOINT_NS 500000000ull

struct addrkey {
	uint64_t addr;
	int32_t pid;
	int16_t used, marked; /* marked: its object is known to func_maps */
};

struct func_session {
	struct func_opts o;
	char err[FUNC_ERR_MAX];
	int use_rt;
	char rt_lib[PATH_MAX];
	struct func_pool *pool;
	struct tpp_rt_hdr *h;
	char *env[4];
	struct func_probes *probes;
	uint16_t t_entry, t_exit, t_unwind, t_thread_exit, t_resume;
	int types_done;
	struct func_maps *maps;
	int32_t *pids;
	size_t npids, cappids;
	struct addrkey *addrs; /* open-addressing set of (pid, addr) */
	size_t naddrs, capaddrs, nunmarked;
	struct func_clock clk;
	uint64_t tsc_first, mono_first; /* the first calibration point: the rate's baseline */
	uint64_t last_checkpoint;
	struct func_args *args; /* -A on the executable's own functions, or NULL */
	const char *warning;    /* said once before the command runs, or NULL */
};

const char *func_error(const struct func_session *s)
{
	return s ? s->err : "out of memory";
}

const char *func_warning(const struct func_session *s)
{
	return s ? s->warning : NULL;
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

/* The rate over the whole baseline (the longer, the better), applied from
 * the latest point: if the TSC ever jumps (a VM restored from a snapshot),
 * only records up to the next point are misplaced. */
static void calibrate(struct func_session *s, uint64_t tsc, uint64_t mono)
{
	if (tsc <= s->tsc_first || mono <= s->mono_first)
		return;
	s->clk.mult = (uint64_t)(((unsigned __int128)(mono - s->mono_first) << 32) / (tsc - s->tsc_first));
	s->clk.tsc0 = tsc;
	s->clk.mono0 = mono;
}

/* Whether the runtime may time calls with rdtsc and leave the conversion
 * to us: when the kernel's clock is the TSC, or a hypervisor clock built on
 * an invariant TSC (kvm-clock, Hyper-V's TSC page: CLOCK_MONOTONIC is then a
 * linear function of the TSC, the same on every CPU, or the vDSO would not
 * serve it). Else every call pays clock_gettime, as uftrace does. */
static int use_tsc(void)
{
	const char *force = getenv("TPP_RT_CLOCK");
	if (force)
		return !strcmp(force, "tsc");
	char buf[64] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	if (!strncmp(buf, "tsc", 3))
		return 1;
	if (strncmp(buf, "kvm-clock", 9) && strncmp(buf, "hyperv_clocksource_tsc_page", 27))
		return 0;
	int inv = 0;
	char *line = NULL;
	size_t cap = 0;
	if ((f = fopen("/proc/cpuinfo", "re"))) {
		while (getline(&line, &cap, f) > 0)
			if (!strncmp(line, "flags", 5)) {
				inv = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
				break;
			}
		fclose(f);
	}
	free(line);
	return inv;
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

uint64_t func_pool_budget(const struct func_opts *o)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	return (o->pool_per_cpu ? o->pool_per_cpu : DEF_POOL_PER_CPU) * (uint64_t)(ncpu > 0 ? ncpu : 1);
}

static int create_pool(struct func_session *s, const char *exe)
{
	int r = func_pool_new(&s->pool, func_pool_budget(&s->o), s->err, sizeof(s->err));
	if (r < 0)
		return r;
	struct tpp_rt_hdr *h = s->h = func_pool_hdr(s->pool);
	h->max_depth = s->o.max_depth > 0 ? s->o.max_depth : 0;
	if (s->o.wait_set)
		h->wait_ns = s->o.wait_ms * 1000000ull;
	h->clock = use_tsc() ? TPP_RT_CLOCK_TSC : TPP_RT_CLOCK_MONO;
	s->clk.tsc = h->clock == TPP_RT_CLOCK_TSC;
	if (s->clk.tsc) {
		/* A first rate from a short baseline; the drain refines it. */
		clock_pair(&s->tsc_first, &s->mono_first);
		struct timespec d = {0, 1000000};
		nanosleep(&d, NULL);
		uint64_t t, m;
		clock_pair(&t, &m);
		calibrate(s, t, m);
		h->min_ticks = s->o.min_ns ? (uint64_t)(((unsigned __int128)s->o.min_ns << 32) / s->clk.mult) : 0;
	} else {
		h->min_ticks = s->o.min_ns;
	}
	if ((r = setup_filters(s, exe)) < 0)
		return r;
	if (s->args) {
		/* the runtime copies them, in this executable only (as filters) */
		struct stat st;
		if (stat(exe, &st) < 0)
			return -errno;
		h->exe_dev = st.st_dev;
		h->exe_ino = st.st_ino;
		h->nargspec = func_args_fill(s->args, (struct tpp_rt_argspec *)((char *)h + h->args_off));
	}
	func_pool_publish(s->pool);
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
	if (inst && o->nargs) {
		/* -A on the program's own functions: the runtime copies them;
		 * with probes, -A of a function no probe names is theirs to refuse */
		r = func_args_plan(&s->args, exe, inst & 1, !o->nuprobes, o->args, o->nargs, s->err, sizeof(s->err));
		if (r < 0)
			return r;
		/* the runtime holds entries back until the call proves long
		 * enough; their argument registers are long gone by then */
		if (s->args && o->min_ns)
			s->warning = "-A: no arguments or return values are recorded with --min-duration (a call is "
				     "written only once it has lasted long enough, and its values are gone by then)";
	}
	r = find_rt_lib(s);
	if (r < 0) {
		func_fmt(s->err, sizeof(s->err), "libtpprt.so: not found next to tracerec (set TPP_RT_LIB)");
		return r;
	}
	r = create_pool(s, exe);
	if (r < 0)
		return r;
	s->use_rt = 1;
	const char *old = getenv("LD_PRELOAD");
	if (asprintf(&s->env[0], "LD_PRELOAD=%s%s%s", s->rt_lib, old && *old ? ":" : "", old ? old : "") < 0) {
		s->env[0] = NULL;
		return -ENOMEM;
	}
	return func_pool_env(s->pool, &s->env[1]);
}

char *const *func_child_env(struct func_session *s)
{
	return s->env;
}

void func_child_prepare(struct func_session *s)
{
	if (s && s->pool)
		func_pool_child(s->pool);
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
	int pr = func_probes_note(s->probes, w);
	if (pr < 0) {
		func_fmt(s->err, sizeof(s->err), "writing probe notes: %s", tpp_w_error(w));
		return pr;
	}
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
	int r = func_args_declare(s->args, w, next_type);
	if (r < 0) {
		func_fmt(s->err, sizeof(s->err), "declaring -A types: %s", tpp_w_error(w));
		return r;
	}
	s->types_done = 1;
	return 0;
}

static void note_addr(void *arg, int32_t pid, uint64_t addr)
{
	struct func_session *s = arg;
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
	s->addrs[j] = (struct addrkey){addr, pid, 1, 0};
	s->naddrs++;
	s->nunmarked++;
}

static void add_maps(void *arg, int32_t pid, const char *text, size_t len)
{
	struct func_session *s = arg;
	func_maps_add_text(s->maps, pid, text, len);
}

static void remember_pid(struct func_session *s, int32_t pid)
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

void func_note_fork(struct func_session *s, int32_t parent, int32_t child)
{
	func_note_pid(s, parent);
	func_maps_fork(s->maps, parent, child);
	func_note_pid(s, child);
}

void func_note_exec(struct func_session *s, int32_t pid)
{
	func_note_pid(s, pid);
	func_maps_read_proc(s->maps, pid);
}

/* A traced thread's process: the runtime copies its maps, unless it found
 * no room in the pool's process table; then /proc has them. */
static void new_pid(void *arg, int32_t pid)
{
	remember_pid(arg, pid);
}

static void sink(struct func_session *s, struct func_sink *k, struct tpp_writer *w, uint32_t *next_stream)
{
	*k = (struct func_sink){
		.w = w,
		.next_stream = next_stream,
		.t_entry = s->t_entry,
		.t_exit = s->t_exit,
		.t_unwind = s->t_unwind,
		.t_thread_exit = s->t_thread_exit,
		.t_resume = s->t_resume,
		.clk = &s->clk,
		.arg = s,
		.note = note_addr,
		.maps = add_maps,
		.new_pid = new_pid,
		.args = s->args,
	};
}

/* Maps of every process seen and symbol tables of every object a recorded
 * address fell in, as far as known now; only what is new goes out. */
static int checkpoint(struct func_session *s, struct tpp_writer *w, uint64_t now)
{
	s->last_checkpoint = now;
	/* forked children known only by their parent's maps */
	func_maps_inherit(s->maps);
	if (s->nunmarked) {
		for (size_t i = 0; i < s->capaddrs; i++)
			if (s->addrs[i].used && !s->addrs[i].marked &&
			    func_maps_mark(s->maps, s->addrs[i].pid, s->addrs[i].addr)) {
				s->addrs[i].marked = 1;
				s->nunmarked--;
			}
	}
	if (s->probes) {
		const char *const *paths;
		size_t np;
		func_probes_paths(s->probes, &paths, &np);
		for (size_t i = 0; i < np; i++)
			func_maps_mark_path(s->maps, paths[i]);
	}
	int r = func_maps_write(s->maps, w, now);
	if (r < 0)
		func_fmt(s->err, sizeof(s->err), "writing maps and symbols: %s", tpp_w_error(w));
	return r;
}

int func_drain(struct func_session *s, struct tpp_writer *w, uint32_t *next_stream)
{
	uint64_t now = mono_ns();
	if (s->use_rt && s->types_done) {
		if (s->clk.tsc) {
			uint64_t t = __rdtsc();
			/* A new point every 100 M ticks (~50 ms): a better rate, a fresh base. */
			if (t - s->clk.tsc0 > 100000000ULL) {
				uint64_t m;
				clock_pair(&t, &m);
				calibrate(s, t, m);
			}
		}
		struct func_sink k;
		sink(s, &k, w, next_stream);
		int r = func_pool_drain(s->pool, &k, 0);
		if (r < 0) {
			func_fmt(s->err, sizeof(s->err), "writing function events: %s", tpp_w_error(w));
			return r;
		}
	}
	if (now - s->last_checkpoint >= CHECKPOINT_NS)
		return checkpoint(s, w, now);
	return 0;
}

void func_note_pid(struct func_session *s, int32_t pid)
{
	/* Only probes can hit processes the runtime is not in; the runtime
	 * copies the maps of every process it runs in itself. */
	if (s->probes)
		remember_pid(s, pid);
}

int func_finish(struct func_session *s, struct tpp_writer *w, uint32_t *next_stream)
{
	if (s->use_rt && s->types_done) {
		struct func_sink k;
		sink(s, &k, w, next_stream);
		int r = func_pool_finish(s->pool, &k);
		if (r < 0) {
			func_fmt(s->err, sizeof(s->err), "writing function events: %s", tpp_w_error(w));
			return r;
		}
	}
	for (size_t i = 0; i < s->npids; i++)
		if (!func_maps_has(s->maps, s->pids[i]))
			func_maps_read_proc(s->maps, s->pids[i]);
	int r = checkpoint(s, w, mono_ns());
	if (r < 0)
		return r;
	if (s->use_rt) {
		struct func_pool_stats ps;
		func_pool_stats(s->pool, &ps);
		/* key, value: every count of the pool's life that a reader may want */
		const uint64_t num[] = {ps.threads,   ps.events,    ps.lost,        ps.lost_no_slot, ps.budget,
					ps.shm_peak,  ps.chunk_bytes, ps.waits,     ps.waited_ns,    ps.wait_capped,
					ps.data_lost, ps.damaged,   ps.args_refused};
		const char *k[] = {"threads",     "events",      "lost",      "lost_no_slot", "pool_bytes",
				   "pool_peak_bytes", "chunk_bytes", "waits",  "waited_ns",    "wait_capped",
				   "args_lost",   "damaged",     "args_refused", "clock"};
		enum { NNUM = sizeof(num) / sizeof(num[0]) };
		char buf[NNUM][24];
		const char *v[NNUM + 1];
		for (size_t i = 0; i < NNUM; i++) {
			func_fmt(buf[i], sizeof(buf[i]), "%" PRIu64, num[i]);
			v[i] = buf[i];
		}
		v[NNUM] = s->clk.tsc ? "tsc" : "mono";
		r = tpp_w_note(w, "func_runtime", NNUM + 1, k, v);
	}
	return r;
}

void func_session_stats(const struct func_session *s, struct func_stats *st)
{
	struct func_pool_stats ps;
	func_pool_stats(s ? s->pool : NULL, &ps);
	st->pool_bytes = ps.budget;
	st->pool_peak_bytes = ps.shm_peak;
	st->lost = ps.lost;
	st->threads = ps.threads;
	st->waits = ps.waits;
	st->waited_ns = ps.waited_ns;
	st->wait_capped = ps.wait_capped;
	st->data_lost = ps.data_lost;
	st->damaged = ps.damaged;
	st->args_refused = ps.args_refused;
	st->args_refused_pid = ps.args_refused_pid;
}

void func_session_free(struct func_session *s)
{
	if (!s)
		return;
	if (s->probes) {
		func_probes_remove(s->probes);
		func_probes_free(s->probes);
	}
	func_pool_free(s->pool);
	func_args_free(s->args);
	free(s->env[0]);
	free(s->env[1]);
	free(s->pids);
	free(s->addrs);
	func_maps_free(s->maps);
	free(s);
}

void func_session_cleanup_signal(struct func_session *s)
{
	if (s)
		func_probes_remove(s->probes);
}
