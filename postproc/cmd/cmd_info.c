/* tracepp info — what a trace holds: version, host, span, counts per type
 * and per stream, lost and unstored events (losses.h), the clock the
 * scheduler analysis reads, size per event and compression. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an_pair.h"
#include "an_run.h"
#include "cli.h"
#include "commands.h"
#include "esc.h"
#include "losses.h"
#include "table.h"
#include "out_fast.h"
#include "wallclock.h"

struct scount {
	uint32_t id;
	uint64_t events;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tracepp info [--format=text|json|csv] FILE...\n"
		   "Several files (one per host or run): each file's facts in turn (JSON: an array,\n"
		   "CSV: a row per file),\n"
		   "then in text their sum and their span on the wall clock.\n"
		   "  -h, --help  this text\n");
}

/* A JSON string literal, and the text form: every string here comes from
 * the (untrusted) file. */
static void fjs(FILE *f, const char *s)
{
	esc_json_put(f, s ? s : "", s ? strlen(s) : 0);
}

static void txt(FILE *f, const char *s)
{
	esc_text_put(f, s ? s : "", s ? strlen(s) : 0);
}

static void json_kv_str(FILE *f, const char *k, const char *v, int comma)
{
	fprintf(f, "\"%s\": ", k);
	fjs(f, v);
	fputs(comma ? ", " : "", f);
}

/* The recorder's footprint note ("recorder"): peak RSS and the function
 * runtime's shared memory, peak and budget; 0 when absent. */
struct footprint {
	int have;
	unsigned long long rss, own_rss, shm_peak, shm_budget; /* own_rss: without the pool's pages */
};

static void footprint(const struct tpp_meta *me, struct footprint *f)
{
	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < me->nnotes; i++) {
		const struct tpp_note *n = &me->notes[i];
		if (!n->kind || strcmp(n->kind, "recorder"))
			continue;
		f->have = 1;
		for (size_t k = 0; k < n->n; k++) {
			unsigned long long v = n->vals[k] ? strtoull(n->vals[k], NULL, 10) : 0;
			if (!n->keys[k])
				continue;
			if (!strcmp(n->keys[k], "peak_rss_bytes"))
				f->rss = v;
			else if (!strcmp(n->keys[k], "shm_peak_bytes"))
				f->shm_peak = v;
			else if (!strcmp(n->keys[k], "shm_budget_bytes"))
				f->shm_budget = v;
			else if (!strcmp(n->keys[k], "own_rss_bytes"))
				f->own_rss = v;
		}
	}
}

/* What info reports, gathered once for either format. */
struct info {
	const char *path;
	struct tpp_reader *r;
	const struct tpp_file_info *in;
	const struct tpp_meta *me;
	uint64_t *by_type; /* TPP_MAX_TYPES + 1: the last for events of no known type */
	struct scount *sc; /* per stream */
	size_t ns;
	uint64_t raw, stored, events, chunks, damaged, start, end;
	const char *cut;
	struct footprint fp;
	struct tpp_losses lo_;
	struct an_pair_stats ps;
	int has_calls;
	uint64_t nswitch, nruntime;
};

/* Per-type counts need every event decoded; per-stream counts and sizes
 * come from chunk headers. 0, or -ENOMEM. */
static int info_count(struct info *x)
{
	struct tpp_reader *r = x->r;
	x->by_type = calloc(TPP_MAX_TYPES + 1, sizeof(*x->by_type));
	x->ns = tpp_r_nstreams(r);
	x->sc = calloc(x->ns + 1, sizeof(*x->sc));
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *ch = tpp_r_chunk(r, i);
		x->raw += ch->raw_size;
		x->stored += ch->comp_size + ch->hdr_size;
		x->chunks++;
	}
	struct tpp_iter *it;
	struct tpp_iter_opts io = {.sz = sizeof(io)};
	if (!x->by_type || !x->sc || tpp_iter_open(&it, r, &io))
		return -ENOMEM;
	const struct tpp_event *ev;
	int e;
	char damage[700] = "";
	uint32_t last_stream = UINT32_MAX;
	size_t last_k = 0;
	struct an_progress prog;
	an_progress_start(&prog, r, 1);
	for (;;) {
		e = tpp_iter_next(it, &ev);
		if (e == 0)
			break;
		an_progress(&prog, x->events + 1);
		if (e < 0) {
			if (!damage[0])
				snprintf(damage, sizeof(damage), "%s", tpp_iter_error(it));
			continue;
		}
		x->by_type[ev->t ? ev->type : TPP_MAX_TYPES]++;
		x->events++;
		if (ev->stream != last_stream) {
			const struct tpp_stream_info *si = tpp_r_stream_by_id(r, ev->stream);
			last_k = si ? (size_t)(si - tpp_r_stream(r, 0)) : x->ns;
			last_stream = ev->stream;
		}
		x->sc[last_k].events++;
	}
	an_progress_end(&prog);
	struct tpp_iter_stats ist;
	tpp_iter_stats(it, &ist);
	tpp_iter_close(it);
	cli_warn_damaged("info", x->in->damaged_chunks + ist.damaged_chunks, damage[0] ? damage : tpp_r_error(r));
	x->damaged = x->in->damaged_chunks + ist.damaged_chunks;
	return 0;
}

/* The rest: span, losses, recorder footprint, how calls ended, the clock
 * tracepp sched reads. */
static void info_gather(struct info *x)
{
	cli_span(x->r, &x->start, &x->end);
	x->cut = cli_cut_short(x->r); /* a full disk, as the writer said */
	footprint(x->me, &x->fp);
	tpp_losses(x->me, &x->lo_);
	/* how calls ended: the marks replay prints, counted (a second pass,
	 * in time order, over function events only) */
	x->has_calls = an_pair_count(x->r, &x->ps);
	/* what info says of a damaged file stands without it */
	if (x->has_calls < 0)
		fprintf(stderr, "tracepp info: warning: calls not counted: %s\n", strerror(-x->has_calls));
	/* what tracepp sched reads its clock from */
	for (uint32_t i = 0; i < x->in->ntypes; i++) {
		const char *n = x->in->types[i].name, *colon = n ? strrchr(n, ':') : NULL;
		n = colon ? colon + 1 : n;
		if (n && !strcmp(n, "sched_switch"))
			x->nswitch += x->by_type[x->in->types[i].id];
		if (n && !strcmp(n, "sched_stat_runtime"))
			x->nruntime += x->by_type[x->in->types[i].id];
	}
}

/* The time base (specs/format.md "Time base"): the span on the wall clock,
 * how far it may be off, the drift between the first and last samples. */
static void info_wall_json(FILE *f, const struct info *x)
{
	const struct tpp_clock *c = tpp_r_clock(x->r);
	int64_t err, drift;
	if (wallclock_error(x->r, &err, &drift) < 0) {
		fputs("\"wall_clock\": null, ", f);
		return;
	}
	char a[40], b[40];
	int64_t w0 = tpp_clock_wall(c, x->start, NULL), w1 = tpp_clock_wall(c, x->end, NULL);
	wall_iso(a, sizeof(a), w0);
	wall_iso(b, sizeof(b), w1);
	fprintf(f, "\"wall_clock\": {\"samples\": %zu, \"start\": \"%s\", \"end\": \"%s\", \"start_ns\": %lld, "
		"\"end_ns\": %lld, ", c->n, a, b, (long long)w0, (long long)w1);
	if (err >= 0)
		fprintf(f, "\"err_ns\": %lld, ", (long long)err);
	else
		fputs("\"err_ns\": null, ", f);
	if (c->n > 1)
		fprintf(f, "\"drift_ns\": %lld}, ", (long long)drift);
	else
		fputs("\"drift_ns\": null}, ", f);
}

static void info_wall_text(FILE *f, const struct info *x)
{
	const struct tpp_clock *c = tpp_r_clock(x->r);
	int64_t err, drift;
	if (wallclock_error(x->r, &err, &drift) < 0) {
		fputs("wall clock:   none (no offset in the file)\n", f);
		return;
	}
	char a[40], b[40], e[32], d[32];
	wall_iso(a, sizeof(a), tpp_clock_wall(c, x->start, NULL));
	wall_iso(b, sizeof(b), tpp_clock_wall(c, x->end, NULL));
	fprintf(f, "wall clock:   %s .. %s, ", a, b);
	if (err < 0)
		fputs("error unknown (the start offset alone)\n", f);
	else
		fprintf(f, "within +-%s, drift %s%s (%zu clock samples)\n", human_ns(e, sizeof(e), (uint64_t)err),
			drift < 0 ? "-" : "", human_ns(d, sizeof(d), (uint64_t)(drift < 0 ? -drift : drift)), c->n);
}

/* {"type": count, ...}: JSON's by_type, CSV's by_type cell. */
static void info_by_type(FILE *f, const struct info *x)
{
	fputc('{', f);
	int first = 1;
	for (uint32_t i = 0; i < x->in->ntypes; i++) {
		const struct tpp_type *t = &x->in->types[i];
		if (!x->by_type[t->id])
			continue;
		fputs(first ? "" : ", ", f);
		fjs(f, t->name);
		fprintf(f, ": %llu", (unsigned long long)x->by_type[t->id]);
		first = 0;
	}
	if (x->by_type[TPP_MAX_TYPES])
		fprintf(f, "%s\"(unknown)\": %llu", first ? "" : ", ", (unsigned long long)x->by_type[TPP_MAX_TYPES]);
	fputc('}', f);
}

/* CSV: one row per file, its facts in the JSON's keys; by_type as a JSON
 * object in one cell (streams and losses per stream are JSON's alone). */
static const struct tbl_col info_cols[] = {
	{"file", NULL, TBL_STR},	   {"format_version", NULL, TBL_STR}, {"producer", NULL, TBL_STR},
	{"producer_version", NULL, TBL_STR}, {"hostname", NULL, TBL_STR},	  {"kernel", NULL, TBL_STR},
	{"arch", NULL, TBL_STR},	   {"clock", NULL, TBL_STR},	      {"ncpus", NULL, TBL_INT},
	{"complete", NULL, TBL_INT},	   {"start_ns", NULL, TBL_INT},	      {"end_ns", NULL, TBL_INT},
	{"duration_ns", NULL, TBL_INT},	   {"events", NULL, TBL_INT},	      {"lost", NULL, TBL_INT},
	{"unstored", NULL, TBL_INT},	   {"chunks", NULL, TBL_INT},	      {"damaged_chunks", NULL, TBL_INT},
	{"calls", NULL, TBL_INT},	   {"file_bytes", NULL, TBL_INT},     {"raw_bytes", NULL, TBL_INT},
	{"stored_bytes", NULL, TBL_INT},   {"bytes_per_event", NULL, TBL_F64}, {"compression_ratio", NULL, TBL_F64},
	{"tasks", NULL, TBL_INT},	   {"symtabs", NULL, TBL_INT},	      {"mmaps", NULL, TBL_INT},
	{"by_type", NULL, TBL_STR},
};
#define INFO_NCOLS (sizeof(info_cols) / sizeof(info_cols[0]))

static int info_csv(struct table *t, const struct info *x)
{
	char ver[32], *bt = NULL;
	size_t btn = 0;
	FILE *m = open_memstream(&bt, &btn);
	if (!m)
		return -ENOMEM;
	info_by_type(m, x);
	if (fclose(m))
		return -ENOMEM;
	snprintf(ver, sizeof(ver), "%u.%u", x->in->major, x->in->minor);
	const struct tbl_cell c[INFO_NCOLS] = {
		{.s = x->path},
		{.s = ver},
		{.s = x->in->producer},
		{.s = x->in->producer_version},
		{.s = x->in->hostname},
		{.s = x->in->kernel},
		{.s = x->in->arch},
		{.s = x->in->clock},
		{.i = x->in->ncpus},
		{.i = x->in->has_trailer ? 1 : 0},
		{.i = (int64_t)x->start},
		{.i = (int64_t)x->end},
		{.i = (int64_t)(x->end - x->start)},
		{.i = (int64_t)x->events},
		{.i = (int64_t)x->lo_.lost},
		{.i = (int64_t)x->lo_.unstored},
		{.i = (int64_t)x->chunks},
		{.i = (int64_t)x->damaged},
		{.i = x->has_calls > 0 ? (int64_t)x->ps.calls : 0},
		{.i = (int64_t)x->in->file_size},
		{.i = (int64_t)x->raw},
		{.i = (int64_t)x->stored},
		{.f = x->events ? (double)x->in->file_size / (double)x->events : 0.0},
		{.f = x->stored ? (double)x->raw / (double)x->stored : 0.0},
		{.i = (int64_t)x->me->ntasks},
		{.i = (int64_t)x->me->nsymtabs},
		{.i = (int64_t)x->me->nmmaps},
		{.s = bt},
	};
	int rc = tbl_row(t, c);
	free(bt);
	return rc;
}

static void info_json(FILE *f, const struct info *x)
{
	fprintf(f, "{\"file\": ");
	fjs(f, x->path);
	fprintf(f, ", \"format_version\": \"%u.%u\", ", x->in->major, x->in->minor);
	json_kv_str(f, "producer", x->in->producer, 1);
	json_kv_str(f, "producer_version", x->in->producer_version, 1);
	json_kv_str(f, "hostname", x->in->hostname, 1);
	json_kv_str(f, "kernel", x->in->kernel, 1);
	json_kv_str(f, "arch", x->in->arch, 1);
	json_kv_str(f, "clock", x->in->clock, 1);
	fprintf(f, "\"ncpus\": %d, \"wall_offset_ns\": %lld, \"cmdline\": [", x->in->ncpus,
		(long long)x->in->wall_offset_ns);
	for (int i = 0; i < x->in->argc; i++) {
		fputs(i ? ", " : "", f);
		fjs(f, x->in->argv[i]);
	}
	fputs("], ", f);
	info_wall_json(f, x);
	fprintf(f, "\"complete\": %s, \"cut_short\": ", x->in->has_trailer ? "true" : "false");
	if (x->cut)
		fjs(f, x->cut);
	else
		fputs("null", f);
	fprintf(f, ", \"start_ns\": %llu, \"end_ns\": %llu, \"duration_ns\": %llu, ",
		(unsigned long long)x->start, (unsigned long long)x->end, (unsigned long long)(x->end - x->start));
	fprintf(f, "\"events\": %llu, ", (unsigned long long)x->events);
	tpp_losses_json(f, &x->lo_, x->r);
	fprintf(f, "\"chunks\": %llu, \"damaged_chunks\": %llu, ", (unsigned long long)x->chunks,
		(unsigned long long)x->damaged);
	if (x->nswitch)
		fprintf(f, "\"sched_clock\": \"%s\", ", x->nruntime ? "kernel" : "timestamps");
	if (x->has_calls > 0)
		fprintf(f, "\"calls\": {\"calls\": %llu, \"unwound\": %llu, \"exception\": %llu, \"tail\": %llu, "
			"\"orphans\": %llu, \"noret\": %llu}, ",
			(unsigned long long)x->ps.calls, (unsigned long long)x->ps.unwound, (unsigned long long)x->ps.exception,
			(unsigned long long)x->ps.tail, (unsigned long long)x->ps.orphans, (unsigned long long)x->ps.noret);
	fprintf(f, "\"file_bytes\": %llu, \"raw_bytes\": %llu, \"stored_bytes\": %llu, ",
		(unsigned long long)x->in->file_size, (unsigned long long)x->raw, (unsigned long long)x->stored);
	fprintf(f, "\"bytes_per_event\": %.4f, \"compression_ratio\": %.3f, ",
		x->events ? (double)x->in->file_size / (double)x->events : 0.0, x->stored ? (double)x->raw / (double)x->stored : 0.0);
	fprintf(f, "\"by_type\": ");
	info_by_type(f, x);
	fprintf(f, ", \"streams\": [");
	for (size_t i = 0; i < x->ns; i++) {
		const struct tpp_stream_info *s = tpp_r_stream(x->r, i);
		fprintf(f, "%s{\"id\": %u, \"kind\": \"%s\", \"cpu\": %d, \"pid\": %d, \"tid\": %d, \"events\": %llu}",
			i ? ", " : "", s->id, s->kind == TPP_S_CPU ? "cpu" : "thread", s->cpu, s->pid, s->tid,
			(unsigned long long)x->sc[i].events);
	}
	fprintf(f, "], \"lost_by_stream\": [");
	for (size_t i = 0; i < x->me->nlost; i++)
		fprintf(f, "%s{\"stream\": %u, \"count\": %llu, \"from_ns\": %llu, \"to_ns\": %llu}", i ? ", " : "",
			x->me->lost[i].stream, (unsigned long long)x->me->lost[i].count,
			(unsigned long long)x->me->lost[i].from_ts, (unsigned long long)x->me->lost[i].to_ts);
	fprintf(f, "], \"tasks\": %zu, \"symtabs\": %zu, \"mmaps\": %zu", x->me->ntasks, x->me->nsymtabs, x->me->nmmaps);
	if (x->fp.have)
		fprintf(f, ", \"recorder\": {\"peak_rss_bytes\": %llu, \"own_rss_bytes\": %llu, \"shm_peak_bytes\": %llu, \"shm_budget_bytes\": %llu}",
			x->fp.rss, x->fp.own_rss, x->fp.shm_peak, x->fp.shm_budget);
	fputs("}\n", f);
}

/* info_text's tables: events by type and by stream, losses. */
static void info_text_tables(FILE *f, const struct info *x)
{
	fprintf(f, "\nby type:\n");
	for (uint32_t i = 0; i < x->in->ntypes; i++) {
		const struct tpp_type *t = &x->in->types[i];
		if (x->by_type[t->id]) {
			char *name = esc_text_dup(t->name, strlen(t->name));
			fprintf(f, "  %-28s %12llu\n", name ? name : "?", (unsigned long long)x->by_type[t->id]);
			free(name);
		}
	}
	if (x->by_type[TPP_MAX_TYPES])
		fprintf(f, "  %-28s %12llu\n", "(unknown type)", (unsigned long long)x->by_type[TPP_MAX_TYPES]);
	fprintf(f, "\nby stream:\n");
	for (size_t i = 0; i < x->ns; i++) {
		const struct tpp_stream_info *s = tpp_r_stream(x->r, i);
		if (s->kind == TPP_S_CPU)
			fprintf(f, "  cpu %-6d %21s %12llu\n", s->cpu, "", (unsigned long long)x->sc[i].events);
		else
			fprintf(f, "  thread %-8d (pid %d) %8s %12llu\n", s->tid, s->pid, "",
				(unsigned long long)x->sc[i].events);
	}
	tpp_losses_text_cpus(f, &x->lo_, x->r);
	if (x->me->nlost) {
		fprintf(f, "\nlost events:\n");
		for (size_t i = 0; i < x->me->nlost; i++)
			fprintf(f, "  stream %-6u %12llu between %llu and %llu\n", x->me->lost[i].stream,
				(unsigned long long)x->me->lost[i].count, (unsigned long long)x->me->lost[i].from_ts,
				(unsigned long long)x->me->lost[i].to_ts);
	}
}

static void info_text(FILE *f, const struct info *x)
{
	char b1[64], b2[64];
	/* every string from the file, and the x->path, x->in its text form (esc.h) */
	fputs("file:         ", f);
	txt(f, x->path);
	fprintf(f, "\nformat:       %u.%u%s%s%s%s\n", x->in->major, x->in->minor,
		x->in->has_trailer ? "" : " (no trailer: recovered by scanning)", x->cut ? " (" : "",
		x->cut ? x->cut : "", x->cut ? ")" : "");
	fputs("producer:     ", f);
	txt(f, x->in->producer ? x->in->producer : "?");
	fputc(' ', f);
	txt(f, x->in->producer_version);
	fputs("\nhost:         ", f);
	txt(f, x->in->hostname ? x->in->hostname : "?");
	fputs(", Linux ", f);
	txt(f, x->in->kernel ? x->in->kernel : "?");
	fputc(' ', f);
	txt(f, x->in->arch ? x->in->arch : "?");
	fprintf(f, ", %d CPUs\n", x->in->ncpus);
	fprintf(f, "command:     ");
	for (int i = 0; i < x->in->argc; i++) {
		fputc(' ', f);
		txt(f, x->in->argv[i]);
	}
	fputs("\nclock:        ", f);
	txt(f, x->in->clock ? x->in->clock : "?");
	fputc('\n', f);
	fprintf(f, "span:         %llu .. %llu ns (%s)\n", (unsigned long long)x->start, (unsigned long long)x->end,
		human_ns(b1, sizeof(b1), x->end - x->start));
	info_wall_text(f, x);
	fprintf(f, "events:       %llu in %llu chunks, %zu streams\n", (unsigned long long)x->events,
		(unsigned long long)x->chunks, x->ns);
	tpp_losses_text(f, &x->lo_);
	if (x->has_calls > 0)
		fprintf(f, "calls:        %llu: %llu unwound (%llu by an exception), %llu tail call(s), "
			"%llu return(s) without entry, %llu without return\n",
			(unsigned long long)x->ps.calls, (unsigned long long)x->ps.unwound,
			(unsigned long long)x->ps.exception, (unsigned long long)x->ps.tail,
			(unsigned long long)x->ps.orphans, (unsigned long long)x->ps.noret);
	if (x->nswitch && x->nruntime)
		fprintf(f, "sched clock:  the kernel's (%llu sched_stat_runtime reports): on-CPU time and "
			"run-queue waits as /proc/PID/schedstat counts them\n", (unsigned long long)x->nruntime);
	else if (x->nswitch)
		fprintf(f, "sched clock:  switch and wakeup timestamps (no sched_stat_runtime): run-queue "
			"waits can differ from /proc/PID/schedstat's\n");
	if (x->damaged)
		fprintf(f, "damaged:      %llu chunks skipped\n", (unsigned long long)x->damaged);
	fprintf(f, "size:         %s, %.2f bytes/event, compression %.2fx (%s raw)\n",
		human_bytes(b1, sizeof(b1), x->in->file_size),
		x->events ? (double)x->in->file_size / (double)x->events : 0.0, x->stored ? (double)x->raw / (double)x->stored : 0.0,
		human_bytes(b2, sizeof(b2), x->raw));
	fprintf(f, "metadata:     %zu tasks, %zu maps, %zu symbol tables\n", x->me->ntasks, x->me->nmmaps,
		x->me->nsymtabs);
	if (x->fp.have) {
		fprintf(f, "recorder:     peak RSS %s", human_bytes(b1, sizeof(b1), x->fp.rss));
		if (x->fp.own_rss)
			fprintf(f, " (own %s)", human_bytes(b1, sizeof(b1), x->fp.own_rss));
		if (x->fp.shm_budget)
			fprintf(f, ", shared memory %s of a %s budget", human_bytes(b1, sizeof(b1), x->fp.shm_peak),
				human_bytes(b2, sizeof(b2), x->fp.shm_budget));
		fputc('\n', f);
	}
	info_text_tables(f, x);
}

int cmd_info(int argc, char **argv)
{
	int fmt = OUT_TEXT;
	static const struct option lo[] = {{"format", 1, 0, 'f'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'f') {
			if ((fmt = cli_format("info", optarg, 1u << OUT_TEXT | 1u << OUT_JSON | 1u << OUT_CSV)) < 0)
				return 2;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	int nfiles = argc - optind, rc = 0;
	/* the sum over several files, and their span on the wall clock */
	uint64_t events = 0, bytes = 0;
	int64_t wall0 = INT64_MAX, wall1 = INT64_MIN, worst = 0;
	int unknown = 0, said = 0;
	if (nfiles > 1 && fmt == OUT_JSON)
		fputs("[\n", stdout);
	struct table *csv = fmt == OUT_CSV ? tbl_open(stdout, TBL_CSV, info_cols, INFO_NCOLS) : NULL;
	if (fmt == OUT_CSV && !csv) {
		fprintf(stderr, "tracepp info: out of memory\n");
		return 1;
	}
	for (int i = 0; i < nfiles; i++) {
		struct info x = {.path = argv[optind + i]};
		if (!(x.r = cli_open("info", x.path))) {
			rc = 1;
			continue; /* the others still said */
		}
		x.in = tpp_r_info(x.r);
		x.me = tpp_r_meta(x.r);
		if (info_count(&x)) {
			fprintf(stderr, "tracepp info: %s: out of memory\n", x.path);
			free(x.by_type);
			free(x.sc);
			tpp_r_close(x.r);
			rc = 1;
			continue;
		}
		info_gather(&x);
		/* a separator between the files said, not by position: a file
		 * that failed says nothing here */
		if (fmt == OUT_JSON && nfiles > 1 && said++)
			fputs(",\n", stdout);
		else if (fmt == OUT_TEXT && said++)
			fputc('\n', stdout);
		if (fmt == OUT_JSON)
			info_json(stdout, &x);
		else if (fmt == OUT_CSV && info_csv(csv, &x))
			rc = 1;
		else if (fmt == OUT_TEXT)
			info_text(stdout, &x);
		events += x.events;
		bytes += x.in->file_size;
		int64_t err, drift;
		if (wallclock_error(x.r, &err, &drift) < 0 || err < 0)
			unknown = 1;
		else if (err > worst)
			worst = err;
		const struct tpp_clock *ck = tpp_r_clock(x.r);
		int64_t w0 = tpp_clock_wall(ck, x.start, NULL), w1 = tpp_clock_wall(ck, x.end, NULL);
		wall0 = w0 < wall0 ? w0 : wall0;
		wall1 = w1 > wall1 ? w1 : wall1;
		free(x.by_type);
		free(x.sc);
		tpp_r_close(x.r);
	}
	if (csv && tbl_close(csv))
		rc = 1;
	if (nfiles > 1 && fmt == OUT_JSON)
		fputs("]\n", stdout);
	else if (nfiles > 1 && fmt == OUT_TEXT && wall0 <= wall1) {
		char a[40], b[40], e[32], sz[32];
		wall_iso(a, sizeof(a), wall0);
		wall_iso(b, sizeof(b), wall1);
		printf("\nall %d files: %llu events, %s; on the wall clock %s .. %s, aligned %s%s\n", nfiles,
		       (unsigned long long)events, human_bytes(sz, sizeof(sz), bytes), a, b,
		       unknown ? "with an unknown error (a file has no clock samples)" : "within +-",
		       unknown ? "" : human_ns(e, sizeof(e), (uint64_t)worst));
	}
	if (fflush(stdout)) {
		perror("tracepp info: stdout");
		return 1;
	}
	return rc;
}
