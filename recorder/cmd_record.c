/* tracerec record: kernel events from a private tracefs instance, read raw
 * per CPU, transcoded into one compact tracepp file. Threads: one reader per
 * CPU (cpu_reader.c) and this one, the writer, the only one touching the
 * tpp_writer. The recorder neither pairs nor sorts events. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <traceevent/kbuffer.h>
#include "cpu_reader.h"
#include "event_format.h"
#include "event_select.h"
#include "func.h"
#include "kernel_counts.h"
#include "rec_commands.h"
#include "rec_options.h"
#include "task_names.h"
#include "tpp_format.h"
#include "tracefs_instance.h"
#include "transcode.h"

#define FIRST_FUNC_STREAM 1000
#define POOL_PAGES 256 /* per CPU: 1 MiB with 4 KiB sub-buffers */
#define POLL_MS 200
/* The file is complete up to the last flush if the recorder dies or the disk
 * fills; at high rates chunks fill (and go out) long before this. */
#define FLUSH_NS 1000000000ull
/* Readers wake when a CPU's buffer is this full (or every POLL_MS): few
 * wakeups on the traced CPUs, 80% of the buffer left as headroom. */
#define BUFFER_PERCENT "20"

static volatile sig_atomic_t stop_req, dump_req;

static void on_stop(int sig)
{
	(void)sig;
	stop_req = 1;
}
static void on_dump(int sig)
{
	(void)sig;
	dump_req = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct rec {
	struct rec_opts o;
	struct tfs_inst ti;
	struct es_list ev;
	struct transcoder *tc;
	struct tn_table tn;
	struct func_session *fs;
	struct tpp_writer *w;
	struct rd_set *rs;
	struct kbuffer *kb;
	int cpus[1024], ncpus;
	pid_t child;
	int go_fd, err_fd; /* the child waits on go_fd; err_fd reports a failed exec */
	int child_status, child_done;
	uint32_t next_stream;
	uint64_t events, lost, cutoff_ns, t_start;
	int write_err; /* first writer error: recording stops */
	int capped;
	/* fired-vs-stored check (kernel_counts.h): kc_what[k] counts the event
	 * with tpp id kc_tpp[k] (k < nkc); kc_what[nkc], when kc_cs >= 0, counts
	 * context switches, the truth for sched_switch (tracepoint kc_cs);
	 * stored[cpu * st_w + tpp id] counts what the ring buffer delivered */
	struct kc_set *kc;
	char kc_skip[128]; /* why the check does not apply; "": it does */
	struct kc_counter *kc_what;
	int nkc, kc_cs, kc_read;
	uint16_t *kc_tpp;
	uint64_t *stored, st_w, kc_t0, kc_t1, unstored;
	uint64_t cpu_lost[1024];
};

static void note_pid(void *arg, int32_t pid)
{
	struct rec *r = arg;
	if (r->fs)
		func_note_pid(r->fs, pid);
}

static int append_pid(struct rec *r, int32_t pid)
{
	char v[16];
	snprintf(v, sizeof(v), "%d", (int)pid);
	return tfs_append(&r->ti, "set_event_pid", v);
}

static int setup_targets(struct rec *r)
{
	struct rec_opts *o = &r->o;
	if (o->all || (!o->npids && !r->child))
		return 0;
	int err = tfs_write(&r->ti, "options/event-fork", "1");
	if (err) {
		fprintf(stderr, "tracerec: cannot follow children (options/event-fork): %s\n",
			strerror(-err));
		return err;
	}
	if (r->child)
		err = append_pid(r, r->child);
	/* every existing thread of each process; future ones come via event-fork */
	for (int i = 0; !err && i < o->npids; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)o->pids[i]);
		DIR *d = opendir(path);
		if (!d) {
			fprintf(stderr, "tracerec: no such process: %d\n", (int)o->pids[i]);
			return -ESRCH;
		}
		struct dirent *de;
		while (!err && (de = readdir(d)))
			if (atoi(de->d_name) > 0)
				err = append_pid(r, atoi(de->d_name));
		closedir(d);
	}
	if (err)
		fprintf(stderr, "tracerec: cannot set the pid filter (set_event_pid): %s\n",
			strerror(-err));
	return err;
}

/* Forks the command stopped before exec: it execs only when the recorder
 * writes to go_fd, so nothing it does escapes the recording. */
static int spawn(struct rec *r)
{
	int go[2], ef[2];
	if (pipe2(go, O_CLOEXEC) || pipe2(ef, O_CLOEXEC)) {
		fprintf(stderr, "tracerec: pipe: %s\n", strerror(errno));
		return -errno;
	}
	char *const *env = r->fs ? func_child_env(r->fs) : NULL;
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "tracerec: fork: %s\n", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		close(ef[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGUSR1, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up */
		for (size_t i = 0; env && env[i]; i++)
			putenv(env[i]);
		execvp(r->o.cmd[0], r->o.cmd);
		int e = errno;
		if (write(ef[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ef[1]);
	r->child = pid;
	r->go_fd = go[1];
	r->err_fd = ef[0];
	return 0;
}

/* Lets the child exec; returns -errno when the exec failed. */
static int release_child(struct rec *r)
{
	if (write(r->go_fd, "g", 1) != 1)
		return -EPIPE;
	close(r->go_fd);
	r->go_fd = -1;
	int e = 0;
	ssize_t n = read(r->err_fd, &e, sizeof(e)); /* EOF on a successful exec */
	close(r->err_fd);
	r->err_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

static int resolve_events(struct rec *r)
{
	char evdir[512];
	snprintf(evdir, sizeof(evdir), "%s/events", r->ti.dir);
	for (int i = 0; i < r->o.nev; i++) {
		int err = es_add(&r->ev, evdir, r->o.ev_specs[i]);
		if (!err && r->o.filters[i])
			err = es_set_filter(&r->ev, r->o.filters[i]);
		if (err) {
			fprintf(stderr, "tracerec: %s\n", r->ev.msg);
			return err;
		}
	}
	size_t nkernel = r->ev.n;
	if (r->fs) {
		const char *const *names = NULL;
		size_t n = 0;
		int err = func_create_probes(r->fs, &names, &n);
		if (err) {
			fprintf(stderr, "tracerec: %s\n", func_error(r->fs));
			return err;
		}
		for (size_t i = 0; i < n; i++)
			if ((err = es_add_raw(&r->ev, names[i]))) {
				fprintf(stderr, "tracerec: bad probe event name '%s'\n", names[i]);
				return err;
			}
	}
	uint16_t next = 1;
	/* probes are counted by their own ring buffer path only: opening perf
	 * counters on them would register every uprobe a second time */
	r->kc_what = calloc(r->ev.n + 1, sizeof(*r->kc_what));
	r->kc_tpp = calloc(r->ev.n + 1, sizeof(*r->kc_tpp));
	r->kc_cs = -1;
	if (!r->kc_what || !r->kc_tpp) {
		fprintf(stderr, "tracerec: out of memory\n");
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->ev.n; i++) {
		struct ef_event ef;
		int err = ef_load(evdir, r->ev.v[i].system, r->ev.v[i].name, &ef);
		if (err) {
			fprintf(stderr, "tracerec: cannot read the format of %s:%s: %s\n",
				r->ev.v[i].system, r->ev.v[i].name,
				err == -E2BIG ? "more than 32 fields" : strerror(-err));
			return err;
		}
		if ((err = tc_add(r->tc, &ef, next++)) && err != -EEXIST) {
			fprintf(stderr, "tracerec: %s\n", strerror(-err));
			return err;
		}
		if (!err && i < nkernel) {
			if (!strcmp(ef.system, "sched") && !strcmp(ef.name, "sched_switch"))
				r->kc_cs = r->nkc;
			r->kc_what[r->nkc] = (struct kc_counter){KC_TRACEPOINT, (uint64_t)ef.id};
			r->kc_tpp[r->nkc++] = (uint16_t)(next - 1);
		}
	}
	return 0;
}

/* Whether every event fired should also be stored: only when nothing narrows
 * the recording below "these events on these CPUs". Never fails the
 * recording; without counters the summary says the check was not made. */
static void kc_setup(struct rec *r)
{
	struct rec_opts *o = &r->o;
	int filtered = 0;
	for (size_t i = 0; i < r->ev.n; i++)
		filtered |= r->ev.v[i].filter != NULL;
	const char *why = !o->all && (o->npids || r->child) ? "only some tasks are recorded"
			  : o->flight ? "flight-recorder mode overwrites by design"
			  : filtered ? "--filter drops events on purpose"
			  : !r->nkc ? "no kernel tracepoints" : NULL;
	if (why) {
		snprintf(r->kc_skip, sizeof(r->kc_skip), "%s", why);
		return;
	}
	int top = 0;
	for (int i = 0; i < r->ncpus; i++)
		top = r->cpus[i] > top ? r->cpus[i] : top;
	r->st_w = r->ev.n + 1;
	r->stored = calloc((size_t)(top + 1) * r->st_w, sizeof(*r->stored));
	int n = r->nkc;
	if (r->kc_cs >= 0)
		r->kc_what[n++] = (struct kc_counter){KC_SOFTWARE, KC_SW_CONTEXT_SWITCHES};
	int err = r->stored ? kc_open(&r->kc, r->cpus, r->ncpus, r->kc_what, n) : -ENOMEM;
	if (err)
		snprintf(r->kc_skip, sizeof(r->kc_skip), "kernel counters: %s", strerror(-err));
}

/* Counting starts before the ring buffer and stops after it, so the kernel's
 * count covers at least every stored event; the gap is a few syscalls. */
static void kc_start(struct rec *r)
{
	r->kc_t0 = mono_ns();
	int err = r->kc ? kc_enable(r->kc) : 0;
	if (err)
		snprintf(r->kc_skip, sizeof(r->kc_skip), "kernel counters: %s", strerror(-err));
}

static void kc_stop(struct rec *r)
{
	if (!r->kc || r->kc_read || r->kc_skip[0])
		return;
	int err = kc_disable(r->kc);
	r->kc_t1 = mono_ns();
	if (err)
		snprintf(r->kc_skip, sizeof(r->kc_skip), "kernel counters: %s", strerror(-err));
	else
		r->kc_read = 1;
}

/* Fired minus stored, per CPU: written as lost events over the recording's
 * window, less what the buffer already reported lost on that CPU (overruns
 * are not attributed to a type, so per-type numbers may include them). */
static int kc_compare(struct rec *r)
{
	if (!r->kc_skip[0] && (r->capped || r->write_err))
		snprintf(r->kc_skip, sizeof(r->kc_skip), "the recording was cut short");
	if (!r->kc_skip[0] && !r->kc_read)
		snprintf(r->kc_skip, sizeof(r->kc_skip), "the counters were not read");
	if (r->kc_skip[0])
		return 0;
	uint64_t per_type[r->nkc];
	memset(per_type, 0, sizeof(per_type));
	for (int ci = 0; ci < r->ncpus; ci++) {
		int cpu = r->cpus[ci];
		uint64_t d = 0;
		for (int k = 0; k < r->nkc; k++) {
			uint64_t fired = kc_count(r->kc, ci, k);
			if (k == r->kc_cs && kc_count(r->kc, ci, r->nkc) > fired)
				fired = kc_count(r->kc, ci, r->nkc);
			uint64_t st = r->stored[(uint64_t)cpu * r->st_w + r->kc_tpp[k]];
			if (fired > st) {
				d += fired - st;
				per_type[k] += fired - st;
			}
		}
		d = d > r->cpu_lost[cpu] ? d - r->cpu_lost[cpu] : 0;
		if (!d)
			continue;
		r->unstored += d;
		int err = tpp_w_lost(r->w, (uint32_t)cpu, d, r->kc_t0, r->kc_t1);
		if (err < 0)
			return err;
	}
	const char *keys[r->nkc + 1], *vals[r->nkc + 1];
	char kbuf[r->nkc + 1][200], vbuf[r->nkc + 1][24];
	for (int k = 0; k < r->nkc; k++) {
		const struct es_event *e = &r->ev.v[r->kc_tpp[k] - 1];
		snprintf(kbuf[k], sizeof(kbuf[k]), "%s:%s", e->system, e->name);
		snprintf(vbuf[k], sizeof(vbuf[k]), "%llu", (unsigned long long)per_type[k]);
		keys[k] = kbuf[k];
		vals[k] = vbuf[k];
	}
	snprintf(kbuf[r->nkc], sizeof(kbuf[0]), "total");
	snprintf(vbuf[r->nkc], sizeof(vbuf[0]), "%llu", (unsigned long long)r->unstored);
	keys[r->nkc] = kbuf[r->nkc];
	vals[r->nkc] = vbuf[r->nkc];
	return tpp_w_note(r->w, "kernel_unstored", (size_t)r->nkc + 1, keys, vals);
}

static int configure(struct rec *r)
{
	char v[64];
	int err;
	if ((err = tfs_write(&r->ti, "tracing_on", "0")) ||
	    (err = tfs_write(&r->ti, "trace_clock", "mono"))) {
		fprintf(stderr, "tracerec: cannot set trace_clock mono in %s: %s\n", r->ti.dir,
			strerror(-err));
		return err;
	}
	unsigned kb = r->o.buffer_kb;
	if (r->o.flight_bytes) {
		kb = (unsigned)(r->o.flight_bytes / 1024 / (uint64_t)r->ncpus);
		if (kb < 64)
			kb = 64;
	}
	snprintf(v, sizeof(v), "%u", kb);
	/* resizing costs a free and an allocation of every page: only on request */
	if (kb && (err = tfs_write(&r->ti, "buffer_size_kb", v))) {
		fprintf(stderr, "tracerec: cannot set buffer_size_kb to %s: %s\n", v, strerror(-err));
		return err;
	}
	tfs_write(&r->ti, "buffer_percent", BUFFER_PERCENT); /* older kernels lack it */
	if ((err = tfs_write(&r->ti, "options/overwrite", r->o.flight ? "1" : "0"))) {
		fprintf(stderr, "tracerec: cannot set options/overwrite: %s\n", strerror(-err));
		return err;
	}
	if (r->o.have_cpus) {
		/* tracing_cpumask: hex, 32-bit groups separated by commas, most significant first */
		char mask[600] = "";
		int top = 0;
		for (int c = 0; c < 1024; c++)
			if (r->o.cpumask[c / 64] >> (c % 64) & 1)
				top = c;
		for (int g = top / 32; g >= 0; g--) {
			uint32_t word = (uint32_t)(r->o.cpumask[g / 2] >> (g % 2 * 32));
			size_t l = strlen(mask);
			snprintf(mask + l, sizeof(mask) - l, g == top / 32 ? "%x" : ",%08x", word);
		}
		if ((err = tfs_write(&r->ti, "tracing_cpumask", mask))) {
			fprintf(stderr, "tracerec: cannot set tracing_cpumask %s: %s\n", mask,
				strerror(-err));
			return err;
		}
	}
	for (size_t i = 0; i < r->ev.n; i++) {
		struct es_event *e = &r->ev.v[i];
		char rel[256];
		if (!e->filter)
			continue;
		snprintf(rel, sizeof(rel), "events/%s/%s/filter", e->system, e->name);
		if ((err = tfs_write(&r->ti, rel, e->filter))) {
			fprintf(stderr, "tracerec: kernel refused filter '%s' for %s:%s: %s\n", e->filter,
				e->system, e->name, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int enable_events(struct rec *r, const char *val)
{
	for (size_t i = 0; i < r->ev.n; i++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "events/%s/%s/enable", r->ev.v[i].system, r->ev.v[i].name);
		int err = tfs_write(&r->ti, rel, val);
		if (err && *val == '1') {
			fprintf(stderr, "tracerec: cannot enable %s:%s: %s\n", r->ev.v[i].system,
				r->ev.v[i].name, strerror(-err));
			return err;
		}
	}
	return 0;
}

static void pick_cpus(struct rec *r)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	r->ncpus = 0;
	for (int c = 0; c < n && c < 1024; c++) {
		char path[512];
		struct stat st;
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d", r->ti.dir, c);
		if (stat(path, &st) != 0)
			continue;
		if (r->o.have_cpus && !(r->o.cpumask[c / 64] >> (c % 64) & 1))
			continue;
		r->cpus[r->ncpus++] = c;
	}
}

/* As execvp would find it, so a missing command fails before any setup. */
static int command_exists(const char *cmd)
{
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	const char *path = getenv("PATH");
	char buf[4096];
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t l = strcspn(p, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, l ? p : ".", cmd);
		if (access(buf, X_OK) == 0)
			return 1;
		p += l + (p[l] == ':');
	}
	return 0;
}

static int host_notes(struct rec *r)
{
	struct utsname u;
	char ncpu[16], kb[32], sub[32], pages[16];
	uname(&u);
	snprintf(ncpu, sizeof(ncpu), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	tfs_read(&r->ti, "buffer_size_kb", kb, sizeof(kb));
	kb[strcspn(kb, "\n")] = 0;
	if (tfs_read(&r->ti, "buffer_subbuf_size_kb", sub, sizeof(sub)))
		snprintf(sub, sizeof(sub), "%ld", sysconf(_SC_PAGESIZE) / 1024);
	sub[strcspn(sub, "\n")] = 0;
	snprintf(pages, sizeof(pages), "%ld", sysconf(_SC_PAGESIZE));
	const char *keys[] = {"hostname", "kernel", "version", "machine", "cpus_online",
			      "page_size", "trace_clock", "buffer_size_kb", "subbuf_size_kb",
			      "mode"};
	const char *vals[] = {u.nodename, u.release, u.version, u.machine, ncpu, pages,
			      "mono", kb, sub, r->o.flight ? "flight-recorder" : "streaming"};
	return tpp_w_note(r->w, "host", sizeof(keys) / sizeof(keys[0]), keys, vals);
}

static int open_writer(struct rec *r, int argc, char **argv)
{
	struct tpp_w_opts wo = {
		.sz = sizeof(wo),
		.max_file_bytes = r->o.max_bytes,
		.producer = "tracerec",
		.producer_version = "0.1",
		.argc = argc,
		.argv = argv,
	};
	if (r->o.max_bytes && r->o.max_bytes < (8u << 20)) {
		/* a chunk that does not fit is refused whole: keep them small
		 * enough that the cap cuts only a little off the end */
		uint64_t cb = r->o.max_bytes / 4;
		wo.chunk_bytes = (uint32_t)(cb < 16384 ? 16384 : cb);
	}
	int err = tpp_w_open(&r->w, r->o.out, &wo);
	if (err) {
		fprintf(stderr, "tracerec: cannot create %s: %s\n", r->o.out, tpp_strerror(err));
		r->w = NULL;
		return err;
	}
	for (int i = 0; !err && i < r->tc->ntypes; i++) {
		struct tpp_type_def d = tc_type_def(r->tc->types[i]);
		err = tpp_w_add_type(r->w, &d);
	}
	uint16_t next_type = (uint16_t)(r->tc->ntypes + 1);
	if (!err && r->fs && (err = func_declare_types(r->fs, r->w, &next_type)) < 0) {
		fprintf(stderr, "tracerec: %s\n", func_error(r->fs));
		return err;
	}
	for (int i = 0; !err && i < r->ncpus; i++)
		err = tpp_w_stream(r->w, (uint32_t)r->cpus[i], TPP_S_CPU, r->cpus[i], -1, -1);
	if (!err)
		err = host_notes(r);
	if (!err)
		err = tn_scan_proc(&r->tn, r->w, mono_ns());
	if (err < 0)
		fprintf(stderr, "tracerec: writing %s: %s\n", r->o.out, tpp_w_error(r->w));
	return err < 0 ? err : 0;
}

/* Records a writer failure once; -EFBIG is the --max-size cap, not an error. */
static void writer_failed(struct rec *r, int err)
{
	if (r->write_err || r->capped)
		return;
	if (err == -EFBIG) {
		r->capped = 1;
		return;
	}
	r->write_err = err;
	const char *m = tpp_w_error(r->w);
	fprintf(stderr, "tracerec: writing %s: %s\n", r->o.out, m && *m ? m : tpp_strerror(err));
}

/* Keeps task names current from the events that carry them. */
static int names_from(struct rec *r, const struct tc_type *t, uint64_t ts, const union tpp_val *v)
{
	int err = 0;
	switch (t->role) {
	case TC_SWITCH:
		if (t->i_pid_a >= 0 && t->i_comm_a >= 0)
			err = tn_named(&r->tn, r->w, ts, -1, (int32_t)v[t->i_pid_a].i,
				       v[t->i_comm_a].s.p, v[t->i_comm_a].s.len);
		if (!err && t->i_pid_b >= 0 && t->i_comm_b >= 0)
			err = tn_named(&r->tn, r->w, ts, -1, (int32_t)v[t->i_pid_b].i,
				       v[t->i_comm_b].s.p, v[t->i_comm_b].s.len);
		break;
	case TC_FORK:
		/* the event cannot tell a thread from a process: /proc can while
		 * the child lives; otherwise tn_named keeps what is known */
		if (t->i_pid_b >= 0 && t->i_comm_b >= 0)
			err = tn_named(&r->tn, r->w, ts, tn_proc_tgid((int32_t)v[t->i_pid_b].i),
				       (int32_t)v[t->i_pid_b].i, v[t->i_comm_b].s.p,
				       v[t->i_comm_b].s.len);
		break;
	case TC_EXEC:
		if (t->i_pid_a >= 0 && t->i_comm_a >= 0) {
			/* the kernel names the task after the file it executed */
			const char *p = v[t->i_comm_a].s.p, *b = p;
			uint32_t len = v[t->i_comm_a].s.len;
			for (uint32_t k = 0; k < len; k++)
				if (p[k] == '/')
					b = p + k + 1;
			uint32_t bl = (uint32_t)(p + len - b);
			err = tn_named(&r->tn, r->w, ts, (int32_t)v[t->i_pid_a].i,
				       (int32_t)v[t->i_pid_a].i, b, bl > 15 ? 15 : bl);
		}
		break;
	default:
		break;
	}
	return err;
}

static void process_page(struct rec *r, const struct rd_item *it)
{
	union tpp_val vals[TPP_MAX_FIELDS];
	unsigned long long ts;
	if (kbuffer_load_subbuffer(r->kb, (void *)it->data) < 0)
		return;
	for (void *data = kbuffer_read_event(r->kb, &ts); data && !r->write_err && !r->capped;
	     data = kbuffer_next_event(r->kb, &ts)) {
		int size = kbuffer_event_size(r->kb);
		int32_t tid;
		const struct tc_type *t = tc_decode(r->tc, data, (uint32_t)size, &tid, vals);
		if (!t || ts < r->cutoff_ns)
			continue;
		if (r->stored)
			r->stored[(uint64_t)it->cpu * r->st_w + t->tpp_id]++;
		int err = names_from(r, t, ts, vals);
		if (!err)
			err = tn_seen(&r->tn, r->w, ts, tid);
		if (!err)
			err = tpp_w_event(r->w, (uint32_t)it->cpu, t->tpp_id, ts, tid, vals);
		if (err < 0)
			writer_failed(r, err);
		else
			r->events++;
	}
}

static void handle(struct rec *r, struct rd_item *it)
{
	if (it->kind == RD_LOST) {
		r->lost += it->lost;
		if (it->cpu >= 0 && it->cpu < 1024)
			r->cpu_lost[it->cpu] += it->lost;
		int err = tpp_w_lost(r->w, (uint32_t)it->cpu, it->lost, it->from, it->to);
		if (err < 0)
			writer_failed(r, err);
	} else if (!r->write_err && !r->capped) {
		process_page(r, it);
	}
	rd_release(r->rs, it);
}

static void reap_child(struct rec *r, int block)
{
	if (!r->child || r->child_done)
		return;
	int st;
	pid_t p = waitpid(r->child, &st, block ? 0 : WNOHANG);
	if (p == r->child) {
		r->child_done = 1;
		r->child_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
}

/* The runtime's per-thread rings hold ~80 ms of a call-heavy loop: while a
 * drain keeps finding much, drain again at once; as it finds less, back off
 * to DRAIN_IDLE_NS so an idle program costs no CPU. */
#define DRAIN_IDLE_NS 20000000u
#define DRAIN_BUSY_EVENTS 4096 /* a few ms of a call-heavy thread */
static uint64_t next_drain_interval(uint64_t cur, uint64_t moved)
{
	if (moved >= DRAIN_BUSY_EVENTS)
		return 0;
	if (moved >= DRAIN_BUSY_EVENTS / 16)
		return 1000000u;
	cur = cur * 2 + 1000000u;
	return cur > DRAIN_IDLE_NS ? DRAIN_IDLE_NS : cur;
}

/* The writer loop: runs until a stop condition, then drains everything the
 * readers still have. */
static void record_loop(struct rec *r)
{
	uint64_t end = r->o.duration > 0 ? r->t_start + (uint64_t)(r->o.duration * 1e9) : 0;
	uint64_t last_drain = 0, last_flush = mono_ns(), drain_every = DRAIN_IDLE_NS;
	int stopping = 0;
	for (;;) {
		int wait_ms = 50;
		if (r->fs) {
			uint64_t due = last_drain + drain_every, t = mono_ns();
			wait_ms = due <= t ? 0 : (int)((due - t) / 1000000u);
			wait_ms = wait_ms > 50 ? 50 : wait_ms;
		}
		struct rd_item *it = rd_pop(r->rs, wait_ms);
		if (it)
			handle(r, it);
		uint64_t now = mono_ns();
		if (r->fs && now - last_drain >= drain_every) {
			struct tpp_w_stats before, after;
			tpp_w_stats(r->w, &before);
			int err = func_drain(r->fs, r->w, &r->next_stream);
			tpp_w_stats(r->w, &after);
			drain_every = next_drain_interval(drain_every, after.events - before.events);
			if (err < 0 && !r->write_err) {
				if (err == -EFBIG)
					r->capped = 1;
				else
					fprintf(stderr, "tracerec: %s\n", func_error(r->fs)),
						r->write_err = err;
			}
			last_drain = now;
		}
		if (now - last_flush > FLUSH_NS && !r->write_err && !r->capped) {
			int err = tpp_w_flush(r->w);
			if (err < 0)
				writer_failed(r, err);
			last_flush = now;
		}
		if (stopping) {
			if (!it && rd_finished(r->rs))
				break;
			continue;
		}
		reap_child(r, 0);
		if (dump_req && r->o.flight) {
			dump_req = 0;
			if (r->o.flight_secs > 0)
				r->cutoff_ns = now - (uint64_t)(r->o.flight_secs * 1e9);
			rd_drain(r->rs);
		}
		int err = rd_error(r->rs);
		if (err && !r->write_err) {
			fprintf(stderr, "tracerec: reading the kernel buffer: %s\n", strerror(-err));
			r->write_err = err;
		}
		if (stop_req || r->write_err || r->capped || r->child_done || (end && now >= end)) {
			/* stop the kernel first so the final drain has an end */
			tfs_write(&r->ti, "tracing_on", "0");
			kc_stop(r);
			if (r->o.flight && r->o.flight_secs > 0)
				r->cutoff_ns = now - (uint64_t)(r->o.flight_secs * 1e9);
			rd_stop(r->rs);
			stopping = 1;
		}
	}
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int finish_file(struct rec *r)
{
	int err = 0;
	if (r->fs && !r->write_err) {
		err = func_finish(r->fs, r->w, &r->next_stream);
		if (err < 0 && err != -EFBIG) {
			fprintf(stderr, "tracerec: %s\n", func_error(r->fs));
			r->write_err = err;
		}
	}
	if (!r->write_err && (err = kc_compare(r)) < 0)
		writer_failed(r, err);
	/* every event in the file: the kernel's and the function runtime's */
	struct tpp_w_stats st;
	tpp_w_stats(r->w, &st);
	char ev[32], lo[32], ovr[32];
	snprintf(ev, sizeof(ev), "%llu", (unsigned long long)st.events);
	snprintf(lo, sizeof(lo), "%llu", (unsigned long long)r->lost);
	snprintf(ovr, sizeof(ovr), "%llu",
		 (unsigned long long)(r->o.flight && r->rs ? rd_overrun_total(r->rs) : 0));
	const char *keys[] = {"events", "lost", "overwritten", "stopped_by"};
	const char *vals[] = {ev, lo, ovr,
			      r->capped ? "max-size" : r->write_err ? "error" :
			      stop_req ? "signal" : r->child_done ? "command-exit" : "duration"};
	if (!r->write_err)
		tpp_w_note(r->w, "record_end", 4, keys, vals);
	err = tpp_w_close_stats(r->w, &st);
	r->w = NULL;
	r->events = st.events_written; /* a chunk refused by a full disk or the cap is not there */
	if (err < 0 && !r->write_err) {
		fprintf(stderr, "tracerec: finishing %s: %s\n", r->o.out, tpp_strerror(err));
		r->write_err = err;
	}
	struct stat fst;
	uint64_t bytes = stat(r->o.out, &fst) == 0 ? (uint64_t)fst.st_size : st.file_bytes;
	if (r->capped)
		fprintf(stderr, "tracerec: stopped: %s reached the --max-size cap\n", r->o.out);
	char unst[200];
	if (r->kc_skip[0])
		snprintf(unst, sizeof(unst), "events fired but not stored: not checked (%s)",
			 r->kc_skip);
	else
		snprintf(unst, sizeof(unst), "%llu events fired but not stored by the kernel",
			 (unsigned long long)r->unstored);
	if (!r->o.quiet)
		fprintf(stderr,
			"tracerec: %llu events, %llu lost, %llu bytes written to %s, "
			"%.1f bytes/event, recorder CPU %.3f s, %s\n",
			(unsigned long long)r->events, (unsigned long long)r->lost,
			(unsigned long long)bytes, r->o.out,
			r->events ? (double)bytes / (double)r->events : 0.0, cpu_seconds(), unst);
	if (r->lost)
		fprintf(stderr, "tracerec: warning: the kernel lost %llu events (buffer full); "
				"raise -b\n", (unsigned long long)r->lost);
	return r->write_err ? -1 : 0;
}

static void cleanup(struct rec *r)
{
	if (r->rs) {
		rd_stop(r->rs);
		struct rd_item *it;
		while ((it = rd_pop(r->rs, 10)) || !rd_finished(r->rs))
			if (it)
				rd_release(r->rs, it);
		rd_free(r->rs);
		r->rs = NULL;
	}
	if (r->ti.dir[0]) /* it disables every event of the instance in one write */
		tfs_inst_destroy(&r->ti);
	if (r->fs) {
		func_session_free(r->fs);
		r->fs = NULL;
	}
	if (r->child && !r->child_done) {
		if (r->go_fd >= 0) /* never started: let it go away */
			close(r->go_fd), r->go_fd = -1;
		reap_child(r, 1);
	}
	if (r->kb)
		kbuffer_free(r->kb);
	kc_free(r->kc);
	free(r->stored);
	free(r->kc_what);
	free(r->kc_tpp);
	tn_release(&r->tn);
	if (r->tc) {
		tc_release(r->tc);
		free(r->tc);
	}
	es_release(&r->ev);
	rec_opts_free(&r->o);
}

int cmd_record(int argc, char **argv)
{
	struct rec r;
	memset(&r, 0, sizeof(r));
	r.go_fd = r.err_fd = -1;
	r.next_stream = FIRST_FUNC_STREAM;
	char msg[256];
	int pr = rec_parse(&r.o, argc, argv, msg, sizeof(msg));
	if (pr) {
		if (pr > 0) {
			fputs(rec_usage, stdout);
			rec_opts_free(&r.o);
			return 0;
		}
		fprintf(stderr, "tracerec record: %s\n", msg);
		rec_opts_free(&r.o);
		return 2;
	}
	/* before the instance and any probe exist: a signal during setup only
	 * sets stop_req, setup completes and the loop stops at once, so cleanup
	 * (probes, instance) always runs on the normal path */
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_dump;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int rc = 1;
	char root[256];
	const char *forced = getenv("TRACEREC_TRACEFS"); /* tests and unusual mounts */
	int err;
	if (forced) {
		struct stat st;
		snprintf(root, sizeof(root), "%s", forced);
		char probe[300];
		snprintf(probe, sizeof(probe), "%s/instances", forced);
		err = stat(probe, &st) == 0 ? 0 : -ENOENT;
	} else {
		err = tfs_find_root(root, sizeof(root));
	}
	if (err) {
		fprintf(stderr, "tracerec: %s\n",
			err == -EACCES ? "no permission to use tracefs (run as root)"
				       : "no tracefs: not mounted at /sys/kernel/tracing and cannot be mounted");
		goto out;
	}
	for (int i = 0; i < r.o.npids; i++)
		if (kill(r.o.pids[i], 0) != 0 && errno == ESRCH) {
			fprintf(stderr, "tracerec: no such process: %d\n", (int)r.o.pids[i]);
			goto out;
		}
	if ((err = tfs_inst_create(&r.ti, root))) {
		fprintf(stderr, "tracerec: cannot create tracefs instance %s/instances/tracepp-%d: %s%s\n",
			root, (int)getpid(), strerror(-err),
			err == -EACCES || err == -EPERM ? " (run as root)" : "");
		goto out;
	}
	r.tc = calloc(1, sizeof(*r.tc));
	if (!r.tc || tn_init(&r.tn)) {
		fprintf(stderr, "tracerec: out of memory\n");
		goto out;
	}
	tc_init(r.tc);
	r.tn.on_new_pid = note_pid;
	r.tn.arg = &r;
	r.o.fo.instance_dir = r.ti.dir;
	r.o.fo.tracefs_dir = root;
	if (r.o.cmd && !command_exists(r.o.cmd[0])) {
		fprintf(stderr, "tracerec: cannot run '%s': No such file or directory\n", r.o.cmd[0]);
		rc = 127;
		goto out;
	}
	/* function tracing needs a command or probes; kernel-only recording
	 * skips it (it would save maps and symbols of every process seen) */
	int want_func = (r.o.cmd && !r.o.fo.no_func) || r.o.fo.nuprobes || r.o.fo.nkprobes;
	if (want_func && (err = func_session_new(&r.fs, &r.o.fo, r.o.cmd ? r.o.cmd[0] : NULL)) < 0) {
		fprintf(stderr, "tracerec: %s\n", r.fs ? func_error(r.fs) : strerror(-err));
		goto out;
	}
	pick_cpus(&r);
	if (!r.ncpus) {
		fprintf(stderr, "tracerec: no CPU to record (check -C)\n");
		goto out;
	}
	if (resolve_events(&r) || configure(&r))
		goto out;
	r.kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	if (!r.kb) {
		fprintf(stderr, "tracerec: out of memory\n");
		goto out;
	}
	if (open_writer(&r, argc, argv))
		goto out;
	if (stop_req) { /* nothing recorded yet: undo the setup, start nothing */
		fprintf(stderr, "tracerec: stopped by a signal before recording started\n");
		rc = 130;
		goto out;
	}
	if (r.o.cmd && spawn(&r))
		goto out;
	if (setup_targets(&r))
		goto out;
	char sub[32];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (!tfs_read(&r.ti, "buffer_subbuf_size_kb", sub, sizeof(sub)) && atoi(sub) > 0)
		page = (size_t)atoi(sub) * 1024;
	struct rd_opts ro = {
		.instance_dir = r.ti.dir,
		.cpus = r.cpus,
		.ncpus = r.ncpus,
		.page_size = page,
		.pages_per_cpu = POOL_PAGES,
		.poll_ms = POLL_MS,
		.hold = r.o.flight,
		.count_overrun = !r.o.flight,
	};
	if ((err = rd_start(&r.rs, &ro))) {
		fprintf(stderr, "tracerec: cannot read the per-CPU buffers of %s: %s\n", r.ti.dir,
			strerror(-err));
		goto out;
	}
	kc_setup(&r);
	if (enable_events(&r, "1") || (kc_start(&r), err = tfs_write(&r.ti, "tracing_on", "1"))) {
		if (err)
			fprintf(stderr, "tracerec: cannot start tracing: %s\n", strerror(-err));
		goto out;
	}
	r.t_start = mono_ns();
	if (r.child && (err = release_child(&r))) {
		fprintf(stderr, "tracerec: cannot run '%s': %s\n", r.o.cmd[0], strerror(-err));
		reap_child(&r, 1);
		rc = 127;
		tfs_write(&r.ti, "tracing_on", "0");
		kc_stop(&r);
		rd_stop(r.rs);
		struct rd_item *it;
		while ((it = rd_pop(r.rs, 10)) || !rd_finished(r.rs))
			if (it)
				rd_release(r.rs, it);
		finish_file(&r);
		goto out;
	}
	if (r.child) {
		/* the exec'd command, named before its short life can end unseen */
		const char *b = strrchr(r.o.cmd[0], '/');
		b = b ? b + 1 : r.o.cmd[0];
		tn_named(&r.tn, r.w, mono_ns(), r.child, r.child, b, (uint32_t)strnlen(b, 15));
	}
	record_loop(&r);
	enable_events(&r, "0");
	rc = finish_file(&r) ? 1 : 0;
	if (r.child) {
		if (!r.child_done && (r.capped || r.write_err)) {
			/* the command keeps running; we stop recording but wait for it */
		}
		reap_child(&r, 1);
		if (rc == 0)
			rc = r.child_status;
	}
out:
	if (r.w)
		tpp_w_abandon(r.w);
	cleanup(&r);
	return rc;
}
