/* an_sched — the scheduler state machine, the one place runs, waits, wakeup
 * delays and missing switch-ins are worked out: fed switch, wakeup,
 * migrate, fork, exec, exit and runtime events in time order, finished once
 * (an_sched_finish), then read from plain structs. Lifecycle: an_sched_init
 * .. an_sched_free; the struct is the caller's.
 * Errors: negative errno values (-ENOMEM, -EINVAL) or tpp_format.h codes;
 * nothing here prints. A callback's non-zero return stops the feed and is returned.
 */
#ifndef TPP_AN_SCHED_H
#define TPP_AN_SCHED_H
#include <stdint.h>
#include <stddef.h>
#include "hmap.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_run.h"

/* Per task, the numbers /proc/PID/task/TID/schedstat keeps. Where the file
 * has sched_stat_runtime (tracerec -e sched records it), on-CPU time and
 * run-queue waits are read on the kernel's own clock, as schedstat counts
 * them; without it, from the switch and wakeup timestamps (an_sched.c says
 * why the two differ). */
enum an_partial {
	AN_PARTIAL_START = 1, /* already running or runnable when the events begin */
	AN_PARTIAL_END = 2,   /* still running or runnable when they end */
	AN_PARTIAL_GAPS = 4,  /* switch-outs missing from the file: its runs end where inferred */
};
struct an_task {
	int32_t tid, pid;
	char comm[16];
	/* after an_sched_finish: oncpu_ns is the kernel's (the sum of its
	 * runtime reports) for a task that has them, else switch to switch */
	uint64_t oncpu_ns, runq_wait_ns, offcpu_ns;
	uint64_t switches, voluntary, involuntary, migrations, wakeups;
	uint64_t wakeup_lat_n, wakeup_lat_sum, wakeup_lat_max;
	uint64_t inferred_in; /* switch-ins missing from the file, inferred */
	uint64_t rt_ns;       /* the sum of its sched_stat_runtime reports */
	uint8_t keep_known, keep; /* an_sched.keep's answer, asked once */
	uint8_t partial;      /* enum an_partial bits: the numbers are bounds */
	uint8_t rt_seen;      /* the kernel reported its runtime at least once */
	/* state */
	uint8_t running, woken, fresh;
	int32_t cpu;
	uint64_t on_since, off_since;
	uint64_t runnable_since; /* the wait's start, 0: not waiting */
	uint64_t ready_ts;       /* when it became runnable, on the trace's clock */
	/* the running slice on the kernel's clock (in trace time): its start,
	 * 0 until its first runtime report, and its runtime so far */
	uint64_t k_start, k_run;
	int32_t rq_cpu; /* the run queue it is on (running or runnable), -1 none: on_rq's */
	uint32_t rq_epoch; /* ... as of that CPU's rq_epoch: a later one emptied it */
};
/* The average wakeup -> running delay, the number every command prints. */
static inline uint64_t an_task_wakeup_avg(const struct an_task *t)
{
	return t->wakeup_lat_n ? t->wakeup_lat_sum / t->wakeup_lat_n : 0;
}
/* One CPU's scheduler state (an_sched.c's cpu_step). */
struct an_cpu {
	int32_t curr;     /* tid running, -1 unknown */
	int32_t ev_tid;   /* the task of the CPU's latest event */
	uint64_t last_switch, ev_ts;
	uint64_t other_ts; /* latest event of a task other than ev_tid */
	int seen;
	/* when the CPU's latest event is a runtime report: its time, the task
	 * it reports and the task that fired it (rt_ts 0: it is not) */
	uint64_t rt_ts;
	int32_t rt_pid, rt_tid;
};
struct an_sched {
	struct an_task *t;
	size_t n, cap;
	struct hmap by_tid;
	/* per CPU: the current task and the last switch, the task of the
	 * latest event and the latest event of another: bounds for when a task
	 * whose switch-in is missing came on the CPU */
	struct an_cpu *cpu;
	size_t ncpu;
	/* switch-outs of tasks whose switch-in is missing from the file (the
	 * kernel does not always store a switch from idle, and a recording
	 * filtered by pid loses some): their on-CPU interval is taken to start
	 * at max(last switch on that CPU, the CPU's latest event of another
	 * task, runnable since). */
	uint64_t inferred;
	uint64_t runtime_reports; /* sched_stat_runtime events fed */
	int has_runtime;          /* the file declares sched_stat_runtime */
	uint64_t t0;              /* the first event fed */
	int no_comm;    /* set after init when task names are not wanted */
#define AN_SCHED_RECENT 64
	struct an_task *recent[AN_SCHED_RECENT]; /* by tid, a cache; cleared when t moves */
	/* all tasks but the idle ones (tid 0), and of those only the ones keep
	 * says yes to, when it is set (latency --tid / --comm) */
	struct an_lat wakeup, runq, offcpu;
	int (*keep)(void *ctx, int32_t tid);
	void *keep_ctx;
	/* Optional, set after init (plots): every on-CPU interval [from, to)
	 * of a task as it closes (switch to switch, in trace time: where the
	 * file lacks a switch, the inferred one), and every run-queue wait as
	 * it ends (the same values the distributions take). A non-zero return
	 * stops the feed and is returned from it. */
	int (*on_run)(void *ctx, int32_t cpu, int32_t tid, uint64_t from, uint64_t to);
	int (*on_wait)(void *ctx, const struct an_task *t, uint64_t ts, uint64_t wait_ns);
	void *cb_ctx;
	/* Optional, set after init (export): a CPU's run-queue length (its
	 * tasks running or runnable, idle left out) each time it changes, as
	 * the kernel's nr_running counts it. A task counts from the first
	 * wakeup, switch or migration of it the file holds, so a CPU's length
	 * is a lower bound until its tasks have each shown up once. Kept by
	 * an_sched_feed only. */
	int (*on_rq)(void *ctx, int32_t cpu, uint64_t ts, uint32_t nr);
	uint32_t *rq_n;     /* per CPU: the length on_rq last reported */
	uint32_t *rq_epoch; /* per CPU: bumped each time it goes idle */
	size_t nrq;
	int32_t *run_tid;  /* per CPU: the task switched in last, -1 none */
	uint64_t *run_end; /* per CPU: the end of the latest run on_run was told */
	size_t nrun;
	struct an_sched_cmap *cmap; /* an_sched_want_cols */
};
int an_sched_init(struct an_sched *s);
int an_sched_feed(struct an_sched *s, const struct an_types *ty, const struct tpp_event *ev);
/* The same state machine fed by a column scan (an_run_cols), for callers
 * that set no_comm: an_sched_want_cols adds the fields it reads to want and
 * sets f's want and prep for r's scan (-ENOTSUP while task names are
 * wanted, or when r's streams do not map one to a CPU); an_sched_feed_cols
 * then takes the runs. */
int an_sched_want_cols(struct an_sched *s, const struct an_types *ty, const struct tpp_reader *r, uint32_t *want,
		       struct an_filter *f);
int an_sched_feed_cols(struct an_sched *s, const struct tpp_run *runs, int n);
/* Ends the analysis at end_ts: charges tasks still on a CPU up to it, ends
 * waits that are still open (a lower bound, marked AN_PARTIAL_END, kept out
 * of the distributions) and settles oncpu_ns. 0, or what on_run returned. */
int an_sched_finish(struct an_sched *s, uint64_t end_ts);
void an_sched_free(struct an_sched *s);
#endif
