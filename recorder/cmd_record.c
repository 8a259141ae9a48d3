/* tracerec record: kernel events from a private tracefs instance, read raw
 * per CPU, transcoded into one compact tracepp file. The recorder neither
 * pairs nor sorts events. This file orders the phases; record.h says which
 * file does what. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rec_commands.h"
#include "record.h"

#define FIRST_FUNC_STREAM 1000
#define POOL_PAGES 256 /* per CPU: 1 MiB with 4 KiB sub-buffers */
#define POLL_MS 200

volatile sig_atomic_t rec_stop_req, rec_dump_req;

static void on_stop(int sig)
{
	(void)sig;
	rec_stop_req = 1;
}
static void on_dump(int sig)
{
	(void)sig;
	rec_dump_req = 1;
}

/* From a ready setup to a running recording: the command forked (held),
 * the pid filter, the readers, the counters, the events, then the command
 * let go. Returns 0 when recording, else the exit status. */
static int start(struct rec *r)
{
	int err = 0;
	if (rec_stop_req) { /* nothing recorded yet: undo the setup, start nothing */
		fprintf(stderr, "tracerec: stopped by a signal before recording started\n");
		return 130;
	}
	if (r->o.cmd && rec_spawn(r))
		return 1;
	if (r->no_kernel) {
		snprintf(r->kc_skip, sizeof(r->kc_skip), "no kernel events recorded");
		goto release;
	}
	if (rec_setup_targets(r))
		return 1;
	char sub[32];
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	if (!tfs_read(&r->ti, "buffer_subbuf_size_kb", sub, sizeof(sub)) && atoi(sub) > 0)
		page = (size_t)atoi(sub) * 1024;
	struct rd_opts ro = {
		.instance_dir = r->ti.dir,
		.cpus = r->cpus,
		.ncpus = r->ncpus,
		.page_size = page,
		.pages_per_cpu = POOL_PAGES,
		.poll_ms = POLL_MS,
		.hold = r->o.flight,
		.count_overrun = !r->o.flight,
		.watch_fd = r->child_pidfd,
	};
	if ((err = rd_start(&r->rs, &ro))) {
		fprintf(stderr, "tracerec: cannot read the per-CPU buffers of %s: %s\n", r->ti.dir,
			strerror(-err));
		return 1;
	}
	rec_counts_setup(r);
	if (rec_enable_events(r, "1") ||
	    (rec_counts_start(r), err = tfs_write(&r->ti, "tracing_on", "1"))) {
		if (err)
			fprintf(stderr, "tracerec: cannot start tracing: %s\n", strerror(-err));
		return 1;
	}
release:
	r->t_start = mono_ns();
	if (r->child && (err = rec_release_child(r))) {
		fprintf(stderr, "tracerec: cannot run '%s': %s\n", r->o.cmd[0], strerror(-err));
		rec_reap_child(r, 1);
		if (r->rs) {
			tfs_write(&r->ti, "tracing_on", "0");
			rec_counts_stop(r);
			rec_discard_pending(r);
		}
		rec_finish_file(r);
		return 127;
	}
	if (r->child) {
		/* the exec'd command, named before its short life can end unseen */
		const char *b = strrchr(r->o.cmd[0], '/');
		b = b ? b + 1 : r->o.cmd[0];
		tn_named(&r->tn, r->w, mono_ns(), r->child, r->child, b, (uint32_t)strnlen(b, 15));
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct rec r;
	memset(&r, 0, sizeof(r));
	r.go_fd = r.err_fd = r.child_pidfd = -1;
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
	 * sets rec_stop_req, setup completes and the loop stops at once, so
	 * cleanup (probes, instance) always runs on the normal path */
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_dump;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int rc = rec_setup(&r, argc, argv);
	if (!rc)
		rc = start(&r);
	if (!rc) {
		rec_loop(&r);
		rec_enable_events(&r, "0");
		rc = rec_finish_file(&r) ? 1 : 0;
		if (r.child) {
			/* a capped or failed recording still waits for the command */
			rec_reap_child(&r, 1);
			if (rc == 0)
				rc = r.child_status;
		}
	}
	if (r.w)
		tpp_w_abandon(r.w);
	rec_cleanup(&r);
	return rc;
}
