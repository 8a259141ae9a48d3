/* plot_scan — the one sorted pass behind `tracepp plot` and `report`: it
 * runs the analyses (an_sched, an_io, an_net, an_pair: the numbers
 * `tracepp sched|io|net|latency` print) and hands their numbers to a
 * plot_model for plot/ to draw; report reads the analyses' own results
 * from the scan as well.
 *
 * A task filter (--tid/--comm, an acli's; NULL: every task) keeps the
 * per-task numbers to the tasks it lets through: run intervals (Gantt
 * bars, CPU busy time, the task list), run-queue and wakeup latencies,
 * calls and their durations, and the per-event series (events, context
 * switches: counted by the task that was running). Block I/O and packets
 * stay the devices' (as `tracepp io` and `net`); the time axis is the file's.
 *
 * Lifecycle: plot_scan fills s (always release it with plot_scan_free,
 * even after an error); the reader must outlive it. Errors: 0 or a
 * negative errno / tpp_format.h code with s->m.err set; damaged chunks
 * are skipped and counted in s->m.damaged. Nothing here prints.
 */
#ifndef TPP_PLOT_SCAN_H
#define TPP_PLOT_SCAN_H
#include "plot.h"
#include "an_types.h"
#include "an_lat.h"
#include "an_syms.h"
#include "an_pair.h"
#include "an_sched.h"
#include "an_io.h"
#include "an_net.h"
#include "an_cli.h"
#include "hmap.h"

struct plot_scan {
	struct plot_model m; /* first: the analyses' callbacks get &m as ctx */
	struct an_types *ty;
	struct an_sched sch;
	struct an_io io;
	struct an_net netw;
	struct an_syms *syms;
	struct an_pair *pair; /* calls: the one pairing, compiled-in and uprobe alike */
	/* the latency distributions: wakeup and runq are sch's own, io and
	 * func the scan's, all under the analyses' memory bound */
	struct an_lat io_lat, func_lat;
	struct an_lat runq_lat, wake_lat; /* the filtered tasks', when tasks is set */
	struct an_lat *lat[PL_NLAT];
	size_t ncpu; /* CPUs m.cpu_busy has room for */
	int cb_err;  /* an error in an_pair's callbacks, returned from the feed */
	int32_t slot[TPP_MAX_TYPES]; /* type id -> index in m.types */
	struct acli *tasks;   /* borrowed; NULL: every task */
	struct hmap want;     /* tid -> tasks' answer, asked once per task */
};

int plot_scan(struct plot_scan *s, struct tpp_reader *r, const char *path, const struct plot_opts *o,
	      struct acli *tasks);
void plot_scan_free(struct plot_scan *s);
#endif
