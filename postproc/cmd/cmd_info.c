/* tracepp info — what a trace holds: version, host, span, counts per type
 * and per stream, lost and unstored events (losses.h), the clock the
 * scheduler analysis reads, size per event and compression. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "an_pair.h"
#include "cli.h"
#include "commands.h"
#include "esc.h"
#include "losses.h"
#include "table.h"

struct scount {
	uint32_t id;
	uint64_t events;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tracepp info [--format=text|json] FILE\n"
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
	for (;;) {
		e = tpp_iter_next(it, &ev);
		if (e == 0)
			break;
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

static void info_json(FILE *f, const struct info *x)
{
	const char *path = x->path;
	struct tpp_reader *r = x->r;
	const struct tpp_file_info *in = x->in;
	const struct tpp_meta *me = x->me;
	const uint64_t *by_type = x->by_type;
	const struct scount *sc = x->sc;
	size_t ns = x->ns;
	uint64_t raw = x->raw;
	uint64_t stored = x->stored;
	uint64_t events = x->events;
	uint64_t chunks = x->chunks;
	uint64_t damaged = x->damaged;
	uint64_t start = x->start;
	uint64_t end = x->end;
	const char *cut = x->cut;
	const struct footprint fp = x->fp;
	const struct tpp_losses lo_ = x->lo_;
	const struct an_pair_stats ps = x->ps;
	int has_calls = x->has_calls;
	uint64_t nswitch = x->nswitch;
	uint64_t nruntime = x->nruntime;
	fprintf(f, "{\"file\": ");
	fjs(f, path);
	fprintf(f, ", \"format_version\": \"%u.%u\", ", in->major, in->minor);
	json_kv_str(f, "producer", in->producer, 1);
	json_kv_str(f, "producer_version", in->producer_version, 1);
	json_kv_str(f, "hostname", in->hostname, 1);
	json_kv_str(f, "kernel", in->kernel, 1);
	json_kv_str(f, "arch", in->arch, 1);
	json_kv_str(f, "clock", in->clock, 1);
	fprintf(f, "\"ncpus\": %d, \"wall_offset_ns\": %lld, \"cmdline\": [", in->ncpus,
		(long long)in->wall_offset_ns);
	for (int i = 0; i < in->argc; i++) {
		fputs(i ? ", " : "", f);
		fjs(f, in->argv[i]);
	}
	fprintf(f, "], \"complete\": %s, \"cut_short\": ", in->has_trailer ? "true" : "false");
	if (cut)
		fjs(f, cut);
	else
		fputs("null", f);
	fprintf(f, ", \"start_ns\": %llu, \"end_ns\": %llu, \"duration_ns\": %llu, ",
		(unsigned long long)start, (unsigned long long)end, (unsigned long long)(end - start));
	fprintf(f, "\"events\": %llu, ", (unsigned long long)events);
	tpp_losses_json(f, &lo_, r);
	fprintf(f, "\"chunks\": %llu, \"damaged_chunks\": %llu, ", (unsigned long long)chunks,
		(unsigned long long)damaged);
	if (nswitch)
		fprintf(f, "\"sched_clock\": \"%s\", ", nruntime ? "kernel" : "timestamps");
	if (has_calls > 0)
		fprintf(f, "\"calls\": {\"calls\": %llu, \"unwound\": %llu, \"exception\": %llu, \"tail\": %llu, "
			"\"orphans\": %llu, \"noret\": %llu}, ",
			(unsigned long long)ps.calls, (unsigned long long)ps.unwound, (unsigned long long)ps.exception,
			(unsigned long long)ps.tail, (unsigned long long)ps.orphans, (unsigned long long)ps.noret);
	fprintf(f, "\"file_bytes\": %llu, \"raw_bytes\": %llu, \"stored_bytes\": %llu, ",
		(unsigned long long)in->file_size, (unsigned long long)raw, (unsigned long long)stored);
	fprintf(f, "\"bytes_per_event\": %.4f, \"compression_ratio\": %.3f, ",
		events ? (double)in->file_size / (double)events : 0.0, stored ? (double)raw / (double)stored : 0.0);
	fprintf(f, "\"by_type\": {");
	int first = 1;
	for (uint32_t i = 0; i < in->ntypes; i++) {
		const struct tpp_type *t = &in->types[i];
		if (!by_type[t->id])
			continue;
		fputs(first ? "" : ", ", f);
		fjs(f, t->name);
		fprintf(f, ": %llu", (unsigned long long)by_type[t->id]);
		first = 0;
	}
	if (by_type[TPP_MAX_TYPES])
		fprintf(f, "%s\"(unknown)\": %llu", first ? "" : ", ", (unsigned long long)by_type[TPP_MAX_TYPES]);
	fprintf(f, "}, \"streams\": [");
	for (size_t i = 0; i < ns; i++) {
		const struct tpp_stream_info *s = tpp_r_stream(r, i);
		fprintf(f, "%s{\"id\": %u, \"kind\": \"%s\", \"cpu\": %d, \"pid\": %d, \"tid\": %d, \"events\": %llu}",
			i ? ", " : "", s->id, s->kind == TPP_S_CPU ? "cpu" : "thread", s->cpu, s->pid, s->tid,
			(unsigned long long)sc[i].events);
	}
	fprintf(f, "], \"lost_by_stream\": [");
	for (size_t i = 0; i < me->nlost; i++)
		fprintf(f, "%s{\"stream\": %u, \"count\": %llu, \"from_ns\": %llu, \"to_ns\": %llu}", i ? ", " : "",
			me->lost[i].stream, (unsigned long long)me->lost[i].count,
			(unsigned long long)me->lost[i].from_ts, (unsigned long long)me->lost[i].to_ts);
	fprintf(f, "], \"tasks\": %zu, \"symtabs\": %zu, \"mmaps\": %zu", me->ntasks, me->nsymtabs, me->nmmaps);
	if (fp.have)
		fprintf(f, ", \"recorder\": {\"peak_rss_bytes\": %llu, \"own_rss_bytes\": %llu, \"shm_peak_bytes\": %llu, \"shm_budget_bytes\": %llu}",
			fp.rss, fp.own_rss, fp.shm_peak, fp.shm_budget);
	fputs("}\n", f);
}

static void info_text(FILE *f, const struct info *x)
{
	char b1[64], b2[64];
	const char *path = x->path;
	struct tpp_reader *r = x->r;
	const struct tpp_file_info *in = x->in;
	const struct tpp_meta *me = x->me;
	const uint64_t *by_type = x->by_type;
	const struct scount *sc = x->sc;
	size_t ns = x->ns;
	uint64_t raw = x->raw;
	uint64_t stored = x->stored;
	uint64_t events = x->events;
	uint64_t chunks = x->chunks;
	uint64_t damaged = x->damaged;
	uint64_t start = x->start;
	uint64_t end = x->end;
	const char *cut = x->cut;
	const struct footprint fp = x->fp;
	const struct tpp_losses lo_ = x->lo_;
	const struct an_pair_stats ps = x->ps;
	int has_calls = x->has_calls;
	uint64_t nswitch = x->nswitch;
	uint64_t nruntime = x->nruntime;
	/* every string from the file, and the path, in its text form (esc.h) */
	fputs("file:         ", f);
	txt(f, path);
	fprintf(f, "\nformat:       %u.%u%s%s%s%s\n", in->major, in->minor,
		in->has_trailer ? "" : " (no trailer: recovered by scanning)", cut ? " (" : "",
		cut ? cut : "", cut ? ")" : "");
	fputs("producer:     ", f);
	txt(f, in->producer ? in->producer : "?");
	fputc(' ', f);
	txt(f, in->producer_version);
	fputs("\nhost:         ", f);
	txt(f, in->hostname ? in->hostname : "?");
	fputs(", Linux ", f);
	txt(f, in->kernel ? in->kernel : "?");
	fputc(' ', f);
	txt(f, in->arch ? in->arch : "?");
	fprintf(f, ", %d CPUs\n", in->ncpus);
	fprintf(f, "command:     ");
	for (int i = 0; i < in->argc; i++) {
		fputc(' ', f);
		txt(f, in->argv[i]);
	}
	fputs("\nclock:        ", f);
	txt(f, in->clock ? in->clock : "?");
	fputc('\n', f);
	fprintf(f, "span:         %llu .. %llu ns (%s)\n", (unsigned long long)start, (unsigned long long)end,
		human_ns(b1, sizeof(b1), end - start));
	fprintf(f, "events:       %llu in %llu chunks, %zu streams\n", (unsigned long long)events,
		(unsigned long long)chunks, ns);
	tpp_losses_text(f, &lo_);
	if (has_calls > 0)
		fprintf(f, "calls:        %llu: %llu unwound (%llu by an exception), %llu tail call(s), "
			"%llu return(s) without entry, %llu without return\n",
			(unsigned long long)ps.calls, (unsigned long long)ps.unwound,
			(unsigned long long)ps.exception, (unsigned long long)ps.tail,
			(unsigned long long)ps.orphans, (unsigned long long)ps.noret);
	if (nswitch && nruntime)
		fprintf(f, "sched clock:  the kernel's (%llu sched_stat_runtime reports): on-CPU time and "
			"run-queue waits as /proc/PID/schedstat counts them\n", (unsigned long long)nruntime);
	else if (nswitch)
		fprintf(f, "sched clock:  switch and wakeup timestamps (no sched_stat_runtime): run-queue "
			"waits can differ from /proc/PID/schedstat's\n");
	if (damaged)
		fprintf(f, "damaged:      %llu chunks skipped\n", (unsigned long long)damaged);
	fprintf(f, "size:         %s, %.2f bytes/event, compression %.2fx (%s raw)\n",
		human_bytes(b1, sizeof(b1), in->file_size),
		events ? (double)in->file_size / (double)events : 0.0, stored ? (double)raw / (double)stored : 0.0,
		human_bytes(b2, sizeof(b2), raw));
	fprintf(f, "metadata:     %zu tasks, %zu maps, %zu symbol tables\n", me->ntasks, me->nmmaps,
		me->nsymtabs);
	if (fp.have) {
		fprintf(f, "recorder:     peak RSS %s", human_bytes(b1, sizeof(b1), fp.rss));
		if (fp.own_rss)
			fprintf(f, " (own %s)", human_bytes(b1, sizeof(b1), fp.own_rss));
		if (fp.shm_budget)
			fprintf(f, ", shared memory %s of a %s budget", human_bytes(b1, sizeof(b1), fp.shm_peak),
				human_bytes(b2, sizeof(b2), fp.shm_budget));
		fputc('\n', f);
	}
	fprintf(f, "\nby type:\n");
	for (uint32_t i = 0; i < in->ntypes; i++) {
		const struct tpp_type *t = &in->types[i];
		if (by_type[t->id]) {
			char *name = esc_text_dup(t->name, strlen(t->name));
			fprintf(f, "  %-28s %12llu\n", name ? name : "?", (unsigned long long)by_type[t->id]);
			free(name);
		}
	}
	if (by_type[TPP_MAX_TYPES])
		fprintf(f, "  %-28s %12llu\n", "(unknown type)", (unsigned long long)by_type[TPP_MAX_TYPES]);
	fprintf(f, "\nby stream:\n");
	for (size_t i = 0; i < ns; i++) {
		const struct tpp_stream_info *s = tpp_r_stream(r, i);
		if (s->kind == TPP_S_CPU)
			fprintf(f, "  cpu %-6d %21s %12llu\n", s->cpu, "", (unsigned long long)sc[i].events);
		else
			fprintf(f, "  thread %-8d (pid %d) %8s %12llu\n", s->tid, s->pid, "",
				(unsigned long long)sc[i].events);
	}
	tpp_losses_text_cpus(f, &lo_, r);
	if (me->nlost) {
		fprintf(f, "\nlost events:\n");
		for (size_t i = 0; i < me->nlost; i++)
			fprintf(f, "  stream %-6u %12llu between %llu and %llu\n", me->lost[i].stream,
				(unsigned long long)me->lost[i].count, (unsigned long long)me->lost[i].from_ts,
				(unsigned long long)me->lost[i].to_ts);
	}
}

int cmd_info(int argc, char **argv)
{
	int fmt = OUT_TEXT;
	static const struct option lo[] = {{"format", 1, 0, 'f'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'f') {
			if ((fmt = cli_format("info", optarg, 1u << OUT_TEXT | 1u << OUT_JSON)) < 0)
				return 2;
		} else if (c == 'h') {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	struct info x = {.path = argv[optind]};
	if (!(x.r = cli_open("info", x.path)))
		return 1;
	x.in = tpp_r_info(x.r);
	x.me = tpp_r_meta(x.r);
	if (info_count(&x)) {
		fprintf(stderr, "tracepp info: out of memory\n");
		return 1;
	}
	info_gather(&x);
	if (fmt == OUT_JSON)
		info_json(stdout, &x);
	else
		info_text(stdout, &x);
	free(x.by_type);
	free(x.sc);
	tpp_r_close(x.r);
	if (fflush(stdout)) {
		perror("tracepp info: stdout");
		return 1;
	}
	return 0;
}
