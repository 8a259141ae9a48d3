/* cpu_reader — one thread per CPU copying whole ring-buffer pages out of
 * per_cpu/cpuN/trace_pipe_raw into a bounded pool shared with the single
 * writer thread. Readers never decode or compress: that is the writer's job,
 * so the work done on each traced CPU stays a page copy.
 *
 * Memory is bounded: at most pages_per_cpu buffers per CPU, allocated as
 * first needed. When the pool is at its cap and empty a reader waits and the
 * kernel's ring buffer absorbs the burst.
 * Loss: after each round a reader compares per_cpu/cpuN/stats (overrun +
 * dropped events) with the previous round and queues a lost record for the
 * difference, with the time window between the two rounds.
 */
#ifndef TPP_REC_CPU_READER_H
#define TPP_REC_CPU_READER_H

#include <stddef.h>
#include <stdint.h>

enum rd_kind { RD_PAGE, RD_LOST };

struct rd_item {
	struct rd_item *next;
	int cpu;
	enum rd_kind kind;
	uint32_t len;              /* RD_PAGE: bytes in data */
	uint64_t lost, from, to;   /* RD_LOST */
	uint8_t data[];            /* page_size bytes */
};

struct rd_opts {
	const char *instance_dir;
	const int *cpus;
	int ncpus;
	size_t page_size;      /* buffer_subbuf_size_kb * 1024 */
	int pages_per_cpu;
	int poll_ms;           /* wake at least this often when idle */
	int hold;              /* flight recorder: read only when rd_drain asks */
	int count_overrun;     /* 0 in flight mode: overwriting is the point */
	int watch_fd;          /* >= 0 (e.g. the command's pidfd): once it is readable,
				* a waiting rd_pop returns at once, one time */
};

struct rd_set;

/* Opens every trace_pipe_raw and starts the threads. -errno on failure. */
int rd_start(struct rd_set **rs, const struct rd_opts *o);
/* Next queued item, waiting up to timeout_ms; NULL on timeout or when all
 * readers have finished and the queue is empty (then rd_finished is 1). */
struct rd_item *rd_pop(struct rd_set *rs, int timeout_ms);
void rd_release(struct rd_set *rs, struct rd_item *it);
/* Hold mode: every reader reads what its buffer holds now, once. */
void rd_drain(struct rd_set *rs);
/* Readers read what is left (tracing must already be off) and exit; a
 * reader waiting for its buffer is woken at once, not at its poll timeout. */
void rd_stop(struct rd_set *rs);
int rd_finished(struct rd_set *rs);
/* Joins the threads and frees everything; items must all be released. */
void rd_free(struct rd_set *rs);
/* Per-CPU totals of the kernel's stats at the last round. */
uint64_t rd_overrun_total(struct rd_set *rs);
/* First reader error (-errno), 0 if none. */
int rd_error(struct rd_set *rs);

#endif
