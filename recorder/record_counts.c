/* The fired-vs-stored check: kernel counters (kernel_counts.h) count events
 * fired on the recorded CPUs; what the ring buffer neither delivered nor
 * reported lost is "unstored", written to the file as a "kernel_unstored"
 * note (per type, per CPU, total). Not as lost records: nothing was dropped
 * from the ring, and a reader must be able to tell the two apart (a CPU
 * leaving idle fires sched_switch on some kernels without storing it; the
 * analysis infers those, but cannot bring lost ones back).
 *
 * By default the one counter is the scheduler's context-switch count: it is
 * the truth for sched_switch, the event this kernel fires without storing,
 * and it costs ~25 ns per switch. A perf counter on a tracepoint costs ~120
 * ns per event (perf builds its own copy of every event to count it): on the
 * pinned ping-pong the sched counters were a third of the recording's whole
 * cost to the workload. They are opened only on request (--count-fired). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "record.h"

/* Whether every event fired should also be stored: only when nothing narrows
 * the recording below "these events on these CPUs". Never fails the
 * recording; without counters the summary says the check was not made. */
void rec_counts_setup(struct rec *r)
{
	struct rec_opts *o = &r->o;
	int filtered = 0;
	for (size_t i = 0; i < r->ev.n; i++)
		filtered |= r->ev.v[i].filter != NULL;
	const char *why = !o->all && (o->npids || r->child) ? "only some tasks are recorded"
			  : o->flight ? "flight-recorder mode overwrites by design"
			  : filtered ? "--filter drops events on purpose"
			  : !r->nkc ? "no kernel tracepoints"
			  : !o->count_fired && r->kc_cs < 0
			  ? "only sched_switch is checked by default; --count-fired checks every tracepoint"
			  : NULL;
	if (why) {
		snprintf(r->kc_skip, sizeof(r->kc_skip), "%s", why);
		return;
	}
	int top = 0;
	for (int i = 0; i < r->ncpus; i++)
		top = r->cpus[i] > top ? r->cpus[i] : top;
	r->st_w = r->ev.n + 1;
	r->stored = calloc((size_t)(top + 1) * r->st_w, sizeof(*r->stored));
	int n = 0;
	if (o->count_fired) {
		r->kc_tp = 1;
		n = r->nkc;
	} else { /* sched_switch alone, against the context-switch count */
		r->kc_tpp[0] = r->kc_tpp[r->kc_cs];
		r->nkc = 1;
		r->kc_cs = 0;
	}
	if (r->kc_cs >= 0)
		r->kc_what[n++] = (struct kc_counter){KC_SOFTWARE, KC_SW_CONTEXT_SWITCHES};
	int err = r->stored ? kc_open(&r->kc, r->cpus, r->ncpus, r->kc_what, n) : -ENOMEM;
	if (err)
		snprintf(r->kc_skip, sizeof(r->kc_skip), "kernel counters: %s", strerror(-err));
}

/* Counting starts before the ring buffer and stops after it, so the kernel's
 * count covers at least every stored event; the gap is a few syscalls. */
void rec_counts_start(struct rec *r)
{
	r->kc_t0 = mono_ns();
	int err = r->kc ? kc_enable(r->kc) : 0;
	if (err)
		snprintf(r->kc_skip, sizeof(r->kc_skip), "kernel counters: %s", strerror(-err));
}

void rec_counts_stop(struct rec *r)
{
	if (!r->kc || r->kc_read || r->kc_skip[0])
		return;
	int err = kc_disable(r->kc);
	r->kc_t1 = mono_ns();
	if (err)
		snprintf(r->kc_skip, sizeof(r->kc_skip), "kernel counters: %s", strerror(-err));
	else
		r->kc_read = 1;
}

/* Fired minus stored, per CPU, less what the buffer already reported lost
 * on that CPU. The buffer does not say of which type its losses were, so
 * per-type numbers may include them; and when sched_switch alone is checked,
 * the CPU's total is net of the losses of other types, a lower bound where
 * both occurred. */
int rec_counts_compare(struct rec *r)
{
	if (!r->kc_skip[0] && (r->capped || r->write_err))
		snprintf(r->kc_skip, sizeof(r->kc_skip), "the recording was cut short");
	if (!r->kc_skip[0] && !r->kc_read)
		snprintf(r->kc_skip, sizeof(r->kc_skip), "the counters were not read");
	if (r->kc_skip[0])
		return 0;
	int nk = r->nkc + 1 + r->ncpus;
	uint64_t per_type[r->nkc];
	memset(per_type, 0, sizeof(per_type));
	const char *keys[nk], *vals[nk];
	char kbuf[nk][200], vbuf[nk][24];
	int n = r->nkc + 1;
	for (int ci = 0; ci < r->ncpus; ci++) {
		int cpu = r->cpus[ci];
		uint64_t d = 0;
		for (int k = 0; k < r->nkc; k++) {
			uint64_t fired = r->kc_tp ? kc_count(r->kc, ci, k) : 0;
			int cs = r->kc_tp ? r->nkc : 0; /* the context-switch counter */
			if (k == r->kc_cs && kc_count(r->kc, ci, cs) > fired)
				fired = kc_count(r->kc, ci, cs);
			uint64_t st = r->stored[(uint64_t)cpu * r->st_w + r->kc_tpp[k]];
			if (fired > st) {
				d += fired - st;
				per_type[k] += fired - st;
			}
		}
		d = d > r->cpu_lost[cpu] ? d - r->cpu_lost[cpu] : 0;
		if (!d)
			continue;
		r->unstored += d;
		snprintf(kbuf[n], sizeof(kbuf[n]), "cpu %d", cpu);
		snprintf(vbuf[n], sizeof(vbuf[n]), "%llu", (unsigned long long)d);
		keys[n] = kbuf[n];
		vals[n] = vbuf[n];
		n++;
	}
	for (int k = 0; k < r->nkc; k++) {
		const struct es_event *e = &r->ev.v[r->kc_tpp[k] - 1];
		snprintf(kbuf[k], sizeof(kbuf[k]), "%s:%s", e->system, e->name);
		snprintf(vbuf[k], sizeof(vbuf[k]), "%llu", (unsigned long long)per_type[k]);
		keys[k] = kbuf[k];
		vals[k] = vbuf[k];
	}
	snprintf(kbuf[r->nkc], sizeof(kbuf[0]), "total");
	snprintf(vbuf[r->nkc], sizeof(vbuf[0]), "%llu", (unsigned long long)r->unstored);
	keys[r->nkc] = kbuf[r->nkc];
	vals[r->nkc] = vbuf[r->nkc];
	return tpp_w_note(r->w, "kernel_unstored", (size_t)n, keys, vals);
}
