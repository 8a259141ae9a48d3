/* tracepp info — what a trace holds: version, host, span, counts per type
 * and per stream, lost and unstored events (losses.h), the clock the
 * scheduler analysis reads, size per event and compression. */
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
	fprintf(f, "usage: tracepp info [--format=text|json] FILE\n");
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
	const char *path = argv[optind];
	struct tpp_reader *r = cli_open("info", path);
	if (!r)
		return 1;
	const struct tpp_file_info *in = tpp_r_info(r);
	const struct tpp_meta *me = tpp_r_meta(r);

	/* Per-type counts need every event decoded; per-stream counts and sizes
	 * come from chunk headers. */
	uint64_t *by_type = calloc(TPP_MAX_TYPES + 1, sizeof(*by_type));
	size_t ns = tpp_r_nstreams(r);
	struct scount *sc = calloc(ns + 1, sizeof(*sc));
	uint64_t raw = 0, stored = 0, events = 0, chunks = 0;
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *ch = tpp_r_chunk(r, i);
		raw += ch->raw_size;
		stored += ch->comp_size + ch->hdr_size;
		chunks++;
	}
	struct tpp_iter *it;
	struct tpp_iter_opts io = {.sz = sizeof(io)};
	int rc = 0;
	if (!by_type || !sc || tpp_iter_open(&it, r, &io)) {
		fprintf(stderr, "tracepp info: out of memory\n");
		return 1;
	}
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
		by_type[ev->t ? ev->type : TPP_MAX_TYPES]++;
		events++;
		if (ev->stream != last_stream) {
			const struct tpp_stream_info *si = tpp_r_stream_by_id(r, ev->stream);
			last_k = si ? (size_t)(si - tpp_r_stream(r, 0)) : ns;
			last_stream = ev->stream;
		}
		sc[last_k].events++;
	}
	struct tpp_iter_stats ist;
	tpp_iter_stats(it, &ist);
	tpp_iter_close(it);
	cli_warn_damaged("info", in->damaged_chunks + ist.damaged_chunks, damage[0] ? damage : tpp_r_error(r));
	uint64_t start, end;
	cli_span(r, &start, &end);
	uint64_t damaged = in->damaged_chunks + ist.damaged_chunks;
	const char *cut = cli_cut_short(r); /* a full disk, as the writer said */
	struct footprint fp;
	footprint(me, &fp);
	struct tpp_losses lo_;
	tpp_losses(me, &lo_);
	/* how calls ended: the marks replay prints, counted (a second pass,
	 * in time order, over function events only) */
	struct an_pair_stats ps;
	int has_calls = an_pair_count(r, &ps);
	/* what info says of a damaged file stands without it */
	if (has_calls < 0)
		fprintf(stderr, "tracepp info: warning: calls not counted: %s\n", strerror(-has_calls));
	/* what tracepp sched reads its clock from */
	uint64_t nswitch = 0, nruntime = 0;
	for (uint32_t i = 0; i < in->ntypes; i++) {
		const char *n = in->types[i].name, *colon = n ? strrchr(n, ':') : NULL;
		n = colon ? colon + 1 : n;
		if (n && !strcmp(n, "sched_switch"))
			nswitch += by_type[in->types[i].id];
		if (n && !strcmp(n, "sched_stat_runtime"))
			nruntime += by_type[in->types[i].id];
	}
	char b1[64], b2[64];
	FILE *f = stdout;
	if (fmt == OUT_JSON) {
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
	} else {
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
	free(by_type);
	free(sc);
	tpp_r_close(r);
	if (fflush(stdout)) {
		perror("tracepp info: stdout");
		return 1;
	}
	return rc;
}
