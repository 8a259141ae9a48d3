/* Everything before the traced command starts: the tracefs instance, the
 * CPUs, the function session, the events and instance settings, and an open
 * output file. Nothing is enabled yet, so a failure here records nothing. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <traceevent/kbuffer.h>
#include "record.h"

static void note_pid(void *arg, int32_t pid)
{
	struct rec *r = arg;
	if (r->fs)
		func_note_pid(r->fs, pid);
}

static void note_fork(void *arg, int32_t parent, int32_t child)
{
	struct rec *r = arg;
	if (r->fs)
		func_note_fork(r->fs, parent, child);
}

static void note_exec(void *arg, int32_t pid)
{
	struct rec *r = arg;
	if (r->fs)
		func_note_exec(r->fs, pid);
}

static int find_root(char *root, size_t size)
{
	const char *forced = getenv("TRACEREC_TRACEFS"); /* tests and unusual mounts */
	if (!forced)
		return tfs_find_root(root, size);
	struct stat st;
	snprintf(root, size, "%s", forced);
	char probe[300];
	snprintf(probe, sizeof(probe), "%s/instances", forced);
	return stat(probe, &st) == 0 ? 0 : -ENOENT;
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

int rec_setup(struct rec *r, int argc, char **argv)
{
	char *root = r->root;
	r->no_kernel = r->o.cmd && !r->o.nev && !r->o.fo.nuprobes && !r->o.fo.nkprobes;
	int err = r->no_kernel ? 0 : find_root(root, sizeof(r->root));
	if (err) {
		fprintf(stderr, "tracerec: %s\n",
			err == -EACCES ? "no permission to use tracefs (run as root)"
				       : "no tracefs: not mounted at /sys/kernel/tracing and cannot be mounted");
		return 1;
	}
	for (int i = 0; i < r->o.npids; i++)
		if (kill(r->o.pids[i], 0) != 0 && errno == ESRCH) {
			fprintf(stderr, "tracerec: no such process: %d\n", (int)r->o.pids[i]);
			return 1;
		}
	char msg[256];
	/* with no kernel recording, tracefs is not even looked for */
	if (!r->no_kernel && func_probes_reap_stale(root, msg, sizeof(msg)) > 0)
		fprintf(stderr, "tracerec: %s\n", msg);
	if (!r->no_kernel && (err = tfs_inst_create(&r->ti, root))) {
		fprintf(stderr, "tracerec: cannot create tracefs instance %s/instances/tracepp-%d: %s%s\n",
			root, (int)getpid(), strerror(-err),
			err == -EACCES || err == -EPERM ? " (run as root)" : "");
		return 1;
	}
	r->tc = calloc(1, sizeof(*r->tc));
	if (!r->tc || tn_init(&r->tn)) {
		fprintf(stderr, "tracerec: out of memory\n");
		return 1;
	}
	tc_init(r->tc);
	r->tn.on_new_pid = note_pid;
	r->tn.on_fork = note_fork;
	r->tn.on_exec = note_exec;
	r->tn.now = mono_ns; /* the trace clock (trace_clock mono) */
	r->tn.arg = r;
	r->o.fo.instance_dir = r->ti.dir;
	r->o.fo.tracefs_dir = root;
	if (r->o.cmd && !command_exists(r->o.cmd[0])) {
		fprintf(stderr, "tracerec: cannot run '%s': No such file or directory\n", r->o.cmd[0]);
		return 127;
	}
	/* function tracing needs a command or probes; kernel-only recording
	 * skips it (it would save maps and symbols of every process seen) */
	int want_func = (r->o.cmd && !r->o.fo.no_func) || r->o.fo.nuprobes || r->o.fo.nkprobes;
	if (want_func && (err = func_session_new(&r->fs, &r->o.fo, r->o.cmd ? r->o.cmd[0] : NULL)) < 0) {
		fprintf(stderr, "tracerec: %s\n", r->fs ? func_error(r->fs) : strerror(-err));
		return 1;
	}
	if (want_func && func_warning(r->fs))
		fprintf(stderr, "tracerec: warning: %s\n", func_warning(r->fs));
	/* Said before anything runs, as uftrace does: a recording that could
	 * hold nothing fails, one that holds kernel events or probes notes it. */
	int nothing_else = !r->o.nev && !r->o.fo.nuprobes && !r->o.fo.nkprobes;
	char hint[1024];
	if (r->o.cmd && !r->o.fo.no_func && nothing_else && func_hint_untraced(r->o.cmd[0], hint, sizeof(hint))) {
		fprintf(stderr, "tracerec: %s\n", hint);
		return 1;
	}
	for (int i = 0; i < r->o.npids; i++)
		if (!r->o.fo.no_func && func_hint_pid(r->o.pids[i], hint, sizeof(hint))) {
			fprintf(stderr, "tracerec: %s%s\n", nothing_else ? "" : "warning: ", hint);
			if (nothing_else)
				return 1;
		}
	if (!r->no_kernel)
		pick_cpus(r);
	if (!r->ncpus && !r->no_kernel) {
		fprintf(stderr, "tracerec: no CPU to record (check -C)\n");
		return 1;
	}
	if (rec_resolve_events(r) || (!r->no_kernel && rec_configure(r)))
		return 1;
	r->kb = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
	if (!r->kb) {
		fprintf(stderr, "tracerec: out of memory\n");
		return 1;
	}
	return rec_open_writer(r, argc, argv) ? 1 : 0;
}
