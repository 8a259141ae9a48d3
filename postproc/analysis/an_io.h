/* an_io — block I/O per device and direction, from block_rq_insert/issue/
 * complete: counts as /proc/diskstats keeps them, device and queue latency
 * distributions, queue depth. Lifecycle: an_io_init .. an_io_free.
 * Errors: negative errno values (-ENOMEM, -EINVAL) or tpp_format.h codes;
 * nothing here prints.
 */
#ifndef TPP_AN_IO_H
#define TPP_AN_IO_H
#include <stdint.h>
#include <stddef.h>
#include "hmap.h"
#include "an_types.h"
#include "an_lat.h"

enum an_io_op { AN_IO_READ, AN_IO_WRITE, AN_IO_DISCARD, AN_IO_FLUSH, AN_IO_OTHER, AN_IO_NOPS };
extern const char *const an_io_op_name[AN_IO_NOPS];
struct an_iodev {
	uint32_t dev; /* kernel dev_t: major << 20 | minor */
	int op;
	uint64_t count, bytes, errors;
	struct an_lat d2c;  /* issue -> complete: the device's latency */
	struct an_lat q2c;  /* insert -> complete, when inserts were recorded */
	uint64_t first_ts, last_ts;
	uint32_t inflight, max_qd;
	long double qd_area; /* integral of inflight over time, ns */
	uint64_t qd_ts;
};
struct an_ioreq_done {
	uint64_t sector, bytes;
	uint64_t insert_ts, issue_ts, complete_ts;
	int64_t error;
};
struct an_io {
	struct an_iodev *d;
	size_t n, cap;
	struct hmap req;  /* (dev, sector) -> request slot */
	struct an_ioreq *rq;
	size_t nrq, caprq;
	uint32_t free_rq;
	uint64_t unmatched; /* completions without issue */
	uint64_t first_ts, last_ts;
	/* Optional, set after init (plots): every device latency (issue ->
	 * complete) as its completion at ts is fed, the value d2c takes. A
	 * non-zero return is returned from an_io_feed. */
	int (*on_d2c)(void *ctx, uint64_t ts, uint64_t ns);
	/* Optional (export): each completed request, its insert and issue
	 * times 0 where they were not recorded; and each change of a
	 * device's requests in flight, d->inflight after it. */
	int (*on_req)(void *ctx, const struct an_iodev *d, const struct an_ioreq_done *r);
	int (*on_qd)(void *ctx, const struct an_iodev *d, uint64_t ts);
	void *cb_ctx;
};
int an_io_init(struct an_io *io);
int an_io_feed(struct an_io *io, const struct an_types *ty, const struct tpp_event *ev);
void an_io_free(struct an_io *io);
#endif
