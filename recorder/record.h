/* The record command's private state, shared by its files:
 *   cmd_record.c     parse, signals, and the order of the phases below
 *   record_setup.c   tracefs instance, CPUs, function session, the output file
 *   record_events.c  event selection, transcoder formats, instance settings
 *   record_writer.c  opening the output file, writer failures
 *   record_targets.c the traced command (held before exec) and the pid filter
 *   record_counts.c  the fired-vs-stored check against kernel counters
 *   record_loop.c    the writer loop: pages, task names, drains, flushes
 *   record_finish.c  the closing notes, the summary line, cleanup
 * Threads: one reader per CPU (cpu_reader.c) and the writer, the only one
 * touching the tpp_writer; every function here runs on the writer.
 * Functions that print say so: they print the one error line themselves. */
#ifndef TPP_RECORD_H
#define TPP_RECORD_H
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "cpu_reader.h"
#include "event_select.h"
#include "func.h"
#include "kernel_counts.h"
#include "rec_options.h"
#include "task_names.h"
#include "tpp_format.h"
#include "tracefs_instance.h"
#include "transcode.h"

struct kbuffer;

/* Set by the signal handlers (cmd_record.c), polled by the writer loop. */
extern volatile sig_atomic_t rec_stop_req, rec_dump_req;

/* Zeroed, then go_fd = err_fd = child_pidfd = -1, before any phase; rec_cleanup releases
 * everything any phase acquired, whatever point the recording reached. */
struct rec {
	struct rec_opts o;
	char root[256]; /* the tracefs mount: o.fo.tracefs_dir points here */
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
	int child_pidfd;   /* readable once the child has exited (-1: not available) */
	int child_status, child_done;
	uint32_t next_stream;
	uint64_t events, lost, cutoff_ns, t_start;
	int write_err; /* first writer error: recording stops */
	/* A command's function trace and no kernel event nor probe: no tracefs
	 * instance (its mkdir and rmdir cost 50-150 ms), no readers, no pid
	 * filter; the writer loop waits on the command alone. */
	int no_kernel;
	int capped;
	/* fired-vs-stored check (kernel_counts.h) of the event types with tpp
	 * ids kc_tpp[k] (k < nkc). With kc_tp (--count-fired), counter k counts
	 * tracepoint k (kc_what[k]); the context-switch counter, when kc_cs >= 0,
	 * comes after them and is the truth for sched_switch (type kc_cs).
	 * stored[cpu * st_w + tpp id] counts what the ring buffer delivered */
	struct kc_set *kc;
	char kc_skip[160]; /* why the check does not apply; "": it does */
	struct kc_counter *kc_what;
	int nkc, kc_cs, kc_tp, kc_read;
	uint16_t *kc_tpp;
	uint64_t *stored, st_w, kc_t0, kc_t1, unstored;
	uint64_t cpu_lost[1024];
	uint64_t own_rss_peak; /* RssAnon + RssFile at the most, sampled (rec_sample_memory) */
};

static inline uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* record_setup.c: everything before the command is started, up to an open
 * output file. Prints; returns 0 when ready, else the exit status. */
int rec_setup(struct rec *r, int argc, char **argv);

/* record_events.c. Print; return 0 or -errno. */
int rec_resolve_events(struct rec *r);
int rec_configure(struct rec *r);
/* val "1" enables every event (stops at the first failure), "0" disables. */
int rec_enable_events(struct rec *r, const char *val);

/* record_writer.c */
int rec_open_writer(struct rec *r, int argc, char **argv); /* prints; 0 or < 0 */
void rec_writer_failed(struct rec *r, int err);            /* prints once */

/* record_targets.c. rec_spawn, rec_setup_targets print; 0 or -errno. */
int rec_spawn(struct rec *r);
int rec_setup_targets(struct rec *r);
int rec_release_child(struct rec *r); /* silent; -errno when the exec failed */
void rec_reap_child(struct rec *r, int block);

/* record_counts.c: never fail the recording; a reason lands in kc_skip. */
void rec_counts_setup(struct rec *r);
void rec_counts_start(struct rec *r);
void rec_counts_stop(struct rec *r);
int rec_counts_compare(struct rec *r); /* < 0: the writer failed */

/* record_loop.c */
void rec_loop(struct rec *r);
void rec_discard_pending(struct rec *r); /* stops the readers, drops their pages */

/* record_finish.c */
int rec_finish_file(struct rec *r); /* prints the summary; -1 after a writer error */
/* Samples the recorder's own resident memory (not the pool's shared pages
 * it has read) into own_rss_peak: cheap, for once a second and the end. */
void rec_sample_memory(struct rec *r);
void rec_cleanup(struct rec *r);
#endif
