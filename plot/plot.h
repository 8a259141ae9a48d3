/* plot — the gnuplot rendering behind `tracepp plot` and `tracepp report`:
 * a plot_model (numbers) into data files plus a gnuplot script, then images.
 *
 * plot/ depends on no analysis: the commands fill the model
 * (postproc/cmd/plot_scan.h runs the analyses and hands it their numbers:
 * per-bucket counts, per-CPU busy time, latency summaries and heat maps,
 * run intervals, tasks, one thread's calls). The writers (plot_timeline.c,
 * plot_hist.c, plot_heatmap.c, plot_gantt.c) turn a model into data files
 * plus a gnuplot script; plot_gp.c runs gnuplot on them. It reads the
 * file's names and index (decoders/) only to label and size what it draws.
 *
 * Errors: functions return 0 or a negative errno value and leave a one-line
 * message in the model's or job's `err`; nothing here prints except
 * plot_gp_render, which relays gnuplot's own complaints to stderr.
 * Ownership: a model owns all its arrays (plot_model_free releases them);
 * strings passed in are copied.
 */
#ifndef TPP_PLOT_H
#define TPP_PLOT_H
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "tpp_decode.h"
#include "hmap.h"

/* Latency kinds: wakeup = sched_wakeup -> switched in; runq = runnable (woken
 * or preempted) -> switched in; io = block_rq_issue -> block_rq_complete;
 * func = a call's entry -> its return (func_entry/func_exit or a uprobe and
 * its uretprobe), paired by an_pair as every command pairs them. */
enum plot_lat { PL_WAKEUP, PL_RUNQ, PL_IO, PL_FUNC, PL_NLAT };
extern const char *const plot_lat_name[PL_NLAT];
extern const char *const plot_lat_title[PL_NLAT];

/* A growable array of u64; v is NULL when n == 0. */
struct plot_vec {
	uint64_t *v;
	size_t n, cap;
};
int plot_vec_push(struct plot_vec *a, uint64_t x);
/* Adds x at index i, growing (zero-filled) as needed. Inline: the scan
 * adds to a series several times per event and the index is almost always
 * within what was already grown. */
int plot_vec_grow_add(struct plot_vec *a, size_t i, uint64_t x);
static inline int plot_vec_add(struct plot_vec *a, size_t i, uint64_t x)
{
	if (i >= a->cap)
		return plot_vec_grow_add(a, i, x);
	if (i >= a->n)
		a->n = i + 1;
	a->v[i] += x;
	return 0;
}
void plot_vec_free(struct plot_vec *a);

/* One bar of a Gantt chart: tid ran on cpu during [start, end). */
struct plot_bar {
	uint64_t start, end;
	int32_t cpu, tid;
};
/* One completed call of the traced thread, depth 0 = outermost. */
struct plot_call {
	uint64_t start, end;
	uint64_t addr;
	uint32_t depth;
};

/* A latency distribution's summary: percentiles nearest rank. */
struct plot_dist {
	uint64_t count, max, p50, p99;
};
struct plot_task {
	int32_t tid;
	char comm[16];
	uint64_t oncpu_ns;
};

struct plot_type_series {
	uint16_t id;
	const char *name;      /* reader-owned */
	uint64_t total;
	struct plot_vec per_bucket;
};

/* Log-spaced latency bins: PLOT_BINS_PER_DECADE per power of ten from 1 ns. */
#define PLOT_BINS_PER_DECADE 10
#define PLOT_NBINS (PLOT_BINS_PER_DECADE * 11)
int plot_lat_bin(uint64_t ns);
double plot_bin_lo(int bin); /* ns */
double plot_bin_hi(int bin); /* ns: the next bin's low edge; the last bin gets one step */

struct plot_opts {
	uint64_t interval;     /* bucket width, ns (timeline, latency heat map) */
	uint64_t cpu_interval; /* bucket width of the CPU heat map, ns */
	int want_bars;         /* keep every run interval (Gantt) */
	int32_t call_tid;      /* keep the calls of this thread (flame chart); 0: of the
				* first thread that enters a function (set by the scan)
				* among those the scan's task filter lets through */
};

struct plot_model {
	struct plot_opts o;
	struct tpp_reader *r;  /* borrowed */
	struct tpp_names *names;
	const char *path;
	uint64_t t0, t1;       /* first and last event */
	uint64_t nevents, damaged;
	int ncpus;             /* highest CPU seen + 1 */

	/* per-interval series (index = (ts - t0) / o.interval) */
	size_t nbuckets;
	struct plot_type_series *types;
	size_t ntypes;
	struct plot_vec cswitch, iops, io_bytes, rx_pkts, tx_pkts, calls;
	struct plot_vec lat_max[PL_NLAT], lat_sum[PL_NLAT], lat_cnt[PL_NLAT];
	/* latency heat maps: nbuckets x PLOT_NBINS counts per kind, row-major */
	struct plot_vec heat[PL_NLAT];

	/* per-CPU busy ns per o.cpu_interval bucket; cpu_busy[cpu] */
	struct plot_vec *cpu_busy;
	size_t cpu_nbuckets;
	uint64_t busy_total;
	/* each latency kind's distribution, as the analyses summed it up */
	struct plot_dist dist[PL_NLAT];

	struct plot_bar *bars;
	size_t nbars, bars_cap;
	struct plot_call *calls_v;
	size_t ncalls, calls_cap;

	/* the scheduler analysis' tasks (tid 0 included): names, on-CPU time */
	struct plot_task *tasks;
	size_t ntasks, tasks_cap;
	struct hmap task_ix; /* tid -> index in tasks */

	/* what the trace holds */
	uint64_t n_switch, n_wakeup, n_blk, n_net, n_func;
	uint64_t inferred; /* switches missing from the file, placed by inference */

	char err[256];
};

/* Releases what a model holds (its arrays, its names). */
void plot_model_free(struct plot_model *m);
/* Adds a task (comm copied): 0 or -ENOMEM. */
int plot_model_add_task(struct plot_model *m, int32_t tid, const char *comm, uint64_t oncpu_ns);
/* The task tid, or NULL. */
const struct plot_task *plot_model_task(const struct plot_model *m, int32_t tid);
/* Span of the event chunks from the chunk index, without decoding (0 when none). */
uint64_t plot_index_span(struct tpp_reader *r);
/* The thread stream with the most events among those want (NULL: all)
 * lets through, or 0. */
int32_t plot_busiest_thread(struct tpp_reader *r, int (*want)(void *ctx, int32_t tid), void *ctx);
/* A round duration (1, 2, 5 x 10^k ns) near span / n, at least min_ns. */
uint64_t plot_nice_interval(uint64_t span, unsigned n, uint64_t min_ns);

/* ------------------------------------------------------------- rendering */

enum plot_term { PT_PNG, PT_SVG, PT_PDF };

/* One plot being produced: OUT.EXT plus OUT.gp and OUT.NAME.dat beside it.
 * Everything is made in a private directory (`work`, 0700, in DIR) and
 * renamed into DIR at the end, where it replaces only regular files of the
 * caller's (format/safefile.h): another user who can write DIR can neither
 * change what gnuplot runs nor have a planted name written through. */
struct plot_job {
	char out[4096];   /* image path as given */
	char dir[4096];   /* its directory ("." when none) */
	char base[1024];  /* file name without extension */
	const char *ext;
	enum plot_term term;
	int keep, data_only;
	int dfd, wfd;     /* DIR and the private directory (-1 until made) */
	char work[300];   /* the private directory's name in DIR */
	char *files[16];  /* written so far, names in work */
	size_t nfiles;
	char err[512];
};

/* Checks the extension, that DIR is writable and that OUT (and OUT.gp with
 * keep) may be replaced; opens DIR. plot_job_finish or plot_job_abort
 * releases the job, and after a failure nothing is held. */
int plot_job_init(struct plot_job *j, const char *out, int keep, int data_only);
/* Creates BASE.SUFFIX (SUFFIX e.g. "gp", "busy.dat") in the private
 * directory, 0600, and remembers it. *name gets the file name, valid as
 * long as the job (scripts name data files so: gnuplot runs there). */
FILE *plot_job_file(struct plot_job *j, const char *suffix, const char **name);
/* Closes a data file or script from plot_job_file: 0, or -EIO with j->err
 * naming it ("writing NAME: reason"). */
int plot_data_close(struct plot_job *j, FILE *d, const char *name);
/* Writes the terminal/output/common style lines for a figure of the given
 * height in pixels (at 1200 px width). */
void plot_gp_prologue(FILE *f, const struct plot_job *j, int height_px);
/* Writes s as a single-quoted gnuplot string: valid UTF-8 (a byte that is
 * not becomes U+FFFD), no control bytes. */
void plot_gp_str(FILE *f, const char *s);
/* Writes s as a double-quoted column of a data file: the same, with '"'
 * and control bytes as '_'. */
void plot_data_str(FILE *f, const char *s);
/* The full path of a gnuplot no other user can swap: TPP_GNUPLOT, or the
 * first gnuplot in PATH's absolute directories that is, with every
 * directory above it, owned by root or the caller and writable by no one
 * else. NULL if none; why then (or when one was passed over) says why. */
const char *plot_gp_find(char *why, size_t len);
/* Runs prog on the script gp in the job's private directory, with a
 * clean environment (no caller's GNUPLOT_*, LD_*, ~/.gnuplot). 0, or -1
 * with j->err set; gnuplot's stderr lines are printed as "tracepp plot:
 * gnuplot: LINE" and make it fail. */
int plot_gp_run(struct plot_job *j, const char *prog, const char *gp);
/* Runs gnuplot on the job's script (unless data_only), then moves the image
 * (and with keep, data and script) into DIR and removes the rest. Returns
 * 0, or -1 with j->err set. Releases the job. */
int plot_job_finish(struct plot_job *j, const char *prog);
/* Removes what the job wrote and releases it (on error paths). */
void plot_job_abort(struct plot_job *j);

/* Colour of a task/function: a stable pick from a palette, "#rrggbb". */
uint32_t plot_color(uint64_t key);
/* Seconds since t0 as double. */
static inline double plot_sec(const struct plot_model *m, uint64_t ts)
{
	return ts >= m->t0 ? (double)(ts - m->t0) / 1e9 : -(double)(m->t0 - ts) / 1e9;
}
/* "1.5 ms" style text for a duration. */
const char *plot_fmt_ns(char *buf, size_t len, double ns);

/* The diagrams. Each checks the model holds the events it needs (else
 * -ENOENT with a message naming them), then writes data + script. */
struct plot_req {
	const char *metrics; /* comma list or NULL: all that have data */
	const char *by;      /* "cpu", "task", "call", "latency"; NULL = default */
	const char *title;   /* trace name for titles */
	int exact;           /* gantt: never merge bars to display resolution */
};
int plot_timeline(struct plot_model *m, struct plot_job *j, const struct plot_req *q);
int plot_hist(struct plot_model *m, struct plot_job *j, const struct plot_req *q);
int plot_heatmap(struct plot_model *m, struct plot_job *j, const struct plot_req *q);
int plot_gantt(struct plot_model *m, struct plot_job *j, const struct plot_req *q);
/* Which latency kinds to draw: a comma list of plot_lat_name, or NULL for
 * every kind with samples. sel[PL_NLAT] gets 0/1; -EINVAL/-ENOENT + err. */
int plot_pick_lat(const struct plot_model *m, const char *list, int *sel, char *err, size_t len);


/* The diagram types by name ("timeline", "hist", "heatmap", "gantt"); -1 unknown. */
int plot_type_index(const char *name);
/* Writes and renders one diagram of type (plot_type_index) into out; gnuplot
 * is plot_gp_find()'s answer (unused with data_only). 0 or negative error,
 * with the message in err. */
int plot_render(struct plot_model *m, int type, const struct plot_req *q, const char *out, int keep,
		int data_only, const char *gnuplot, char *err, size_t errlen);
/* Fills unset intervals from the trace's span (chunk index, no decoding). */
void plot_default_opts(struct tpp_reader *r, struct plot_opts *o);
/* "FILE on HOST", for titles. */
void plot_trace_title(struct tpp_reader *r, const char *path, char *buf, size_t len);
#endif
