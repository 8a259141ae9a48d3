/* The end of a recording: the function session's last events, the
 * fired-vs-stored notes, the closing "record_end" note, the summary line on
 * stderr, and the release of everything the setup acquired. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <traceevent/kbuffer.h>
#include "record.h"

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The kernel counts the pool's pages the recorder has read in its resident
 * set (RssShmem): its own memory is the rest. */
void rec_sample_memory(struct rec *r)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return;
	char line[128];
	unsigned long long kb, own = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %llu kB", &kb) == 1 || sscanf(line, "RssFile: %llu kB", &kb) == 1)
			own += kb;
	fclose(f);
	if (own * 1024 > r->own_rss_peak)
		r->own_rss_peak = own * 1024;
}

/* The recorder's footprint, as the kernel counts it: the highest resident
 * set (the pool's pages it has read included), its own part of it, and the
 * pages the function runtime's pool ever had, against its budget. */
struct footprint {
	uint64_t rss, own_rss, shm_peak, shm_budget;
};

static void footprint(struct rec *r, struct footprint *f)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	struct func_stats fs;
	func_session_stats(r->fs, &fs);
	rec_sample_memory(r);
	f->rss = (uint64_t)ru.ru_maxrss * 1024;
	f->own_rss = r->own_rss_peak < f->rss ? r->own_rss_peak : f->rss;
	f->shm_peak = fs.pool_peak_bytes;
	f->shm_budget = fs.pool_bytes;
}

static int footprint_note(struct rec *r, const struct footprint *f)
{
	char rss[32], own[32], peak[32], budget[32];
	snprintf(rss, sizeof(rss), "%llu", (unsigned long long)f->rss);
	snprintf(own, sizeof(own), "%llu", (unsigned long long)f->own_rss);
	snprintf(peak, sizeof(peak), "%llu", (unsigned long long)f->shm_peak);
	snprintf(budget, sizeof(budget), "%llu", (unsigned long long)f->shm_budget);
	const char *keys[] = {"peak_rss_bytes", "shm_peak_bytes", "shm_budget_bytes", "own_rss_bytes"};
	const char *vals[] = {rss, peak, budget, own};
	return tpp_w_note(r->w, "recorder", 4, keys, vals);
}

static double mib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

/* What the function runtime's pool saw besides losses: each one line. */
static void func_report_pool(const struct func_stats *fs)
{
	if (fs->wait_capped)
		fprintf(stderr, "tracerec: warning: %llu threads waited for room as long as any may in all "
				"(100 x --blocking-timeout); later records of theirs that found the pool full were "
				"counted lost\n", (unsigned long long)fs->wait_capped);
	if (fs->data_lost)
		fprintf(stderr, "tracerec: warning: %llu -A values dropped for want of room (their calls are "
				"kept without them)\n", (unsigned long long)fs->data_lost);
	if (fs->args_refused)
		fprintf(stderr, "tracerec: warning: -A off in %llu process(es) (first: pid %d): process_vm_readv "
				"is refused there (a seccomp filter), so strings and frame values cannot be read\n",
			(unsigned long long)fs->args_refused, (int)fs->args_refused_pid);
	if (fs->damaged)
		fprintf(stderr, "tracerec: warning: the traced command wrote over %llu values of the function "
				"tracing pool's shared memory; they were ignored and its threads' events may be "
				"incomplete\n", (unsigned long long)fs->damaged);
}

int rec_finish_file(struct rec *r)
{
	int err = 0;
	if (r->fs && !r->write_err) {
		err = func_finish(r->fs, r->w, &r->next_stream);
		if (err < 0 && err != -EFBIG) {
			fprintf(stderr, "tracerec: %s\n", func_error(r->fs));
			r->write_err = err;
		}
	}
	if (!r->write_err && (err = rec_counts_compare(r)) < 0)
		rec_writer_failed(r, err);
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
			      rec_stop_req ? "signal" : r->child_done ? "command-exit" : "duration"};
	struct footprint fp;
	footprint(r, &fp);
	if (!r->write_err) {
		tpp_w_note(r->w, "record_end", 4, keys, vals);
		footprint_note(r, &fp);
	}
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
	char unst[256];
	if (r->kc_skip[0])
		snprintf(unst, sizeof(unst), "events fired but not stored: not checked (%s)",
			 r->kc_skip);
	else
		snprintf(unst, sizeof(unst), "%llu events fired but not stored by the kernel",
			 (unsigned long long)r->unstored);
	char shm[96] = "";
	if (fp.shm_budget)
		snprintf(shm, sizeof(shm), ", shared memory %.1f MiB of %.1f MiB", mib(fp.shm_peak),
			 mib(fp.shm_budget));
	struct func_stats fs;
	func_session_stats(r->fs, &fs);
	char waited[96] = "";
	if (fs.waits)
		snprintf(waited, sizeof(waited), ", the command's threads waited %.3f s for room (%llu times)",
			 (double)fs.waited_ns / 1e9, (unsigned long long)fs.waits);
	if (!r->o.quiet)
		fprintf(stderr,
			"tracerec: %llu events, %llu lost, %llu bytes written to %s, "
			"%.1f bytes/event, recorder CPU %.3f s, peak RSS %.1f MiB (own %.1f MiB)%s%s, %s\n",
			(unsigned long long)r->events, (unsigned long long)(r->lost + fs.lost),
			(unsigned long long)bytes, r->o.out,
			r->events ? (double)bytes / (double)r->events : 0.0, cpu_seconds(), mib(fp.rss), mib(fp.own_rss), shm,
			waited, unst);
	if (r->write_err) /* the error said it all: what was lost after it is its doing */
		return -1;
	if (fs.lost)
		fprintf(stderr, "tracerec: warning: %llu function events lost: the pool of %.1f MiB was full "
				"(raise -b, per CPU)\n", (unsigned long long)fs.lost, mib(fs.pool_bytes));
	func_report_pool(&fs);
	if (r->lost)
		fprintf(stderr, "tracerec: warning: the kernel lost %llu events (buffer full); "
				"raise -b\n", (unsigned long long)r->lost);
	return r->write_err ? -1 : 0;
}

void rec_cleanup(struct rec *r)
{
	if (r->rs) {
		rec_discard_pending(r);
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
		rec_reap_child(r, 1);
	}
	if (r->child_pidfd >= 0)
		close(r->child_pidfd), r->child_pidfd = -1;
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
