/* kernel_counts — how many times each recorded tracepoint fired on each CPU,
 * counted by the kernel itself (per-CPU perf counting events, no sampling:
 * nothing is stored, only a counter incremented), so the recorder can tell
 * events the ring buffer never stored from events it did. Some kernels fire
 * tracepoints that no ring buffer keeps (sched_switch out of idle, here), and
 * the buffer's own stats do not count them as dropped.
 *
 * A tracepoint's own counter sees what its probes see; where the kernel skips
 * the tracepoint itself (this VM kernel fires no sched_switch when a CPU
 * leaves idle) only an independent counter, like the software
 * context-switch count, tells.
 *
 * Lifecycle: kc_open (creates the counters, disabled; the kernel arms the
 * tracepoints then, so kc_enable itself is cheap), kc_enable just before the
 * ring buffer starts, kc_disable just after it stops (reads every count and
 * closes the counters), kc_free. Errors: negative errno, nothing prints.
 * Ownership: the set owns its fds and arrays; kc_free releases them.
 */
#ifndef TPP_REC_KERNEL_COUNTS_H
#define TPP_REC_KERNEL_COUNTS_H

#include <stdint.h>

struct kc_set;

/* What to count: a tracepoint (type KC_TRACEPOINT, config = the tracefs
 * events/SYS/NAME/id) or a software event (KC_SOFTWARE, config = a
 * PERF_COUNT_SW_* value). The values are the kernel's perf_type_id. */
enum { KC_SOFTWARE = 1, KC_TRACEPOINT = 2 };
enum { KC_SW_CONTEXT_SWITCHES = 3 }; /* PERF_COUNT_SW_CONTEXT_SWITCHES */
struct kc_counter {
	uint32_t type;
	uint64_t config;
};

/* One counter per (cpu, what[i]). -EACCES/-EPERM without permission,
 * -ENOENT for an unknown id, -EMFILE when out of fds. */
int kc_open(struct kc_set **ks, const int *cpus, int ncpus, const struct kc_counter *what, int n);
int kc_enable(struct kc_set *ks);
/* Stops counting, reads the counts and closes the counters (kc_count still
 * answers; kc_enable no longer works). */
int kc_disable(struct kc_set *ks);
/* Count of what[ev] on cpus[ci], as read by kc_disable. */
uint64_t kc_count(const struct kc_set *ks, int ci, int ev);
void kc_free(struct kc_set *ks);

#endif
