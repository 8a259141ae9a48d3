/* What the kernel records: the selected events (and the function session's
 * probes) resolved to formats the transcoder decodes, and the instance's
 * settings (clock, buffer, overwrite, CPU mask, filters). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_format.h"
#include "record.h"

/* Readers wake when a CPU's buffer is this full (or every POLL_MS): few
 * wakeups on the traced CPUs, 80% of the buffer left as headroom. */
#define BUFFER_PERCENT "20"

int rec_resolve_events(struct rec *r)
{
	char evdir[512];
	snprintf(evdir, sizeof(evdir), "%s/events", r->ti.dir);
	for (int i = 0; i < r->o.nev; i++) {
		int err = es_add(&r->ev, evdir, r->o.ev_specs[i]);
		if (!err && r->o.filters[i])
			err = es_set_filter(&r->ev, r->o.filters[i]);
		if (err) {
			fprintf(stderr, "tracerec: %s\n", r->ev.msg);
			return err;
		}
	}
	size_t nkernel = r->ev.n;
	if (r->fs) {
		const char *const *names = NULL;
		size_t n = 0;
		int err = func_create_probes(r->fs, &names, &n);
		if (err) {
			fprintf(stderr, "tracerec: %s\n", func_error(r->fs));
			return err;
		}
		for (size_t i = 0; i < n; i++)
			if ((err = es_add_raw(&r->ev, names[i]))) {
				fprintf(stderr, "tracerec: bad probe event name '%s'\n", names[i]);
				return err;
			}
	}
	/* Read, not stored (unless -e asked for them): which process a new
	 * thread belongs to, what a task renamed itself to, which program a
	 * process now runs. A short thread may be gone before its first event
	 * is read, and /proc cannot say any more. (A recording of the runtime
	 * alone has no instance: the runtime names its own threads.) */
	static const char *const names_ev[] = {"task/task_newtask", "task/task_rename", "sched/sched_process_exec"};
	for (size_t i = 0; !r->no_kernel && i < sizeof(names_ev) / sizeof(*names_ev); i++) {
		int err = es_add_names(&r->ev, evdir, names_ev[i]);
		if (err) {
			fprintf(stderr, "tracerec: %s: %s\n", names_ev[i], strerror(-err));
			return err;
		}
	}
	uint16_t next = 1;
	/* probes are counted by their own ring buffer path only: opening perf
	 * counters on them would register every uprobe a second time */
	r->kc_what = calloc(r->ev.n + 1, sizeof(*r->kc_what));
	r->kc_tpp = calloc(r->ev.n + 1, sizeof(*r->kc_tpp));
	r->kc_cs = -1;
	if (!r->kc_what || !r->kc_tpp) {
		fprintf(stderr, "tracerec: out of memory\n");
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->ev.n; i++) {
		struct ef_event ef;
		int err = ef_load(evdir, r->ev.v[i].system, r->ev.v[i].name, &ef);
		if (err) {
			fprintf(stderr, "tracerec: cannot read the format of %s:%s: %s\n",
				r->ev.v[i].system, r->ev.v[i].name,
				err == -E2BIG ? "more than 32 fields" : strerror(-err));
			return err;
		}
		err = tc_add(r->tc, &ef, next++);
		ef_release(&ef);
		if (err && err != -EEXIST) {
			fprintf(stderr, "tracerec: %s\n", strerror(-err));
			return err;
		}
		if (!err)
			r->tc->types[r->tc->ntypes - 1]->names_only = (uint8_t)r->ev.v[i].names_only;
		/* perf counts the sched_stat_* tracepoints by the time they
		 * report (__perf_count), not one per event: no check for them */
		if (!err && i < nkernel && !(!strcmp(ef.system, "sched") && !strncmp(ef.name, "sched_stat_", 11))) {
			if (!strcmp(ef.system, "sched") && !strcmp(ef.name, "sched_switch"))
				r->kc_cs = r->nkc;
			r->kc_what[r->nkc] = (struct kc_counter){KC_TRACEPOINT, (uint64_t)ef.id};
			r->kc_tpp[r->nkc++] = (uint16_t)(next - 1);
		}
	}
	return 0;
}

int rec_configure(struct rec *r)
{
	char v[64];
	int err;
	if ((err = tfs_write(&r->ti, "tracing_on", "0")) ||
	    (err = tfs_write(&r->ti, "trace_clock", "mono"))) {
		fprintf(stderr, "tracerec: cannot set trace_clock mono in %s: %s\n", r->ti.dir,
			strerror(-err));
		return err;
	}
	unsigned kb = r->o.buffer_kb;
	if (r->o.flight_bytes) {
		kb = (unsigned)(r->o.flight_bytes / 1024 / (uint64_t)r->ncpus);
		if (kb < 64)
			kb = 64;
	}
	snprintf(v, sizeof(v), "%u", kb);
	/* resizing costs a free and an allocation of every page: only on request */
	if (kb && (err = tfs_write(&r->ti, "buffer_size_kb", v))) {
		fprintf(stderr, "tracerec: cannot set buffer_size_kb to %s: %s\n", v, strerror(-err));
		return err;
	}
	tfs_write(&r->ti, "buffer_percent", BUFFER_PERCENT); /* older kernels lack it */
	if ((err = tfs_write(&r->ti, "options/overwrite", r->o.flight ? "1" : "0"))) {
		fprintf(stderr, "tracerec: cannot set options/overwrite: %s\n", strerror(-err));
		return err;
	}
	if (r->o.have_cpus) {
		/* tracing_cpumask: hex, 32-bit groups separated by commas, most significant first */
		char mask[600] = "";
		int top = 0;
		for (int c = 0; c < 1024; c++)
			if (r->o.cpumask[c / 64] >> (c % 64) & 1)
				top = c;
		for (int g = top / 32; g >= 0; g--) {
			uint32_t word = (uint32_t)(r->o.cpumask[g / 2] >> (g % 2 * 32));
			size_t l = strlen(mask);
			snprintf(mask + l, sizeof(mask) - l, g == top / 32 ? "%x" : ",%08x", word);
		}
		if ((err = tfs_write(&r->ti, "tracing_cpumask", mask))) {
			fprintf(stderr, "tracerec: cannot set tracing_cpumask %s: %s\n", mask,
				strerror(-err));
			return err;
		}
	}
	for (size_t i = 0; i < r->ev.n; i++) {
		struct es_event *e = &r->ev.v[i];
		char rel[256];
		if (!e->filter)
			continue;
		snprintf(rel, sizeof(rel), "events/%s/%s/filter", e->system, e->name);
		if ((err = tfs_write(&r->ti, rel, e->filter))) {
			fprintf(stderr, "tracerec: kernel refused filter '%s' for %s:%s: %s\n", e->filter,
				e->system, e->name, strerror(-err));
			return err;
		}
	}
	return 0;
}

int rec_enable_events(struct rec *r, const char *val)
{
	for (size_t i = 0; i < r->ev.n; i++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "events/%s/%s/enable", r->ev.v[i].system, r->ev.v[i].name);
		int err = tfs_write(&r->ti, rel, val);
		if (err && *val == '1') {
			fprintf(stderr, "tracerec: cannot enable %s:%s: %s\n", r->ev.v[i].system,
				r->ev.v[i].name, strerror(-err));
			return err;
		}
	}
	return 0;
}
