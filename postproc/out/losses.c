/* Lost vs unstored, from the lost records and the kernel_unstored note. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "losses.h"
#include "table.h"

/* The note's per-CPU keys: "cpu N". */
static int cpu_key(const char *k, int *cpu)
{
	char *end;
	if (strncmp(k, "cpu ", 4) || !k[4])
		return 0;
	long v = strtol(k + 4, &end, 10);
	if (*end || v < 0 || v > 1 << 20)
		return 0;
	*cpu = (int)v;
	return 1;
}

static uint64_t num(const char *v)
{
	return v ? strtoull(v, NULL, 10) : 0;
}

/* The note's i-th record when it counts one event type: 1, else 0. */
static int type_key(const struct tpp_losses *l, size_t i)
{
	int cpu;
	const char *k = l->note->keys[i];
	return k && strcmp(k, "total") && !cpu_key(k, &cpu);
}

void tpp_losses(const struct tpp_meta *m, struct tpp_losses *l)
{
	memset(l, 0, sizeof(*l));
	l->split_known = 1;
	if (!m)
		return;
	l->lost = m->lost_total;
	for (size_t i = 0; i < m->nnotes; i++)
		if (m->notes[i].kind && !strcmp(m->notes[i].kind, "kernel_unstored"))
			l->note = &m->notes[i];
	if (!l->note)
		return;
	int per_cpu = 0, cpu;
	uint64_t by_type = 0;
	for (size_t i = 0; i < l->note->n; i++) {
		const char *k = l->note->keys[i];
		if (!k)
			continue;
		if (!strcmp(k, "total"))
			l->unstored = num(l->note->vals[i]);
		per_cpu |= cpu_key(k, &cpu);
		by_type += type_key(l, i) ? num(l->note->vals[i]) : 0;
	}
	/* tracerec counts per type before it takes out what the ring buffer
	 * reported lost (which no type is known for): where the two mix, the
	 * per-type numbers are not the unstored ones */
	l->types_known = by_type == l->unstored;
	if (l->unstored && !per_cpu) {
		/* an older tracerec: the unstored are among the lost records */
		l->split_known = 0;
		l->lost = l->lost > l->unstored ? l->lost - l->unstored : 0;
	}
}

uint64_t tpp_losses_unstored_on(const struct tpp_losses *l, int cpu)
{
	int c;
	for (size_t i = 0; l->note && i < l->note->n; i++)
		if (l->note->keys[i] && cpu_key(l->note->keys[i], &c) && c == cpu)
			return num(l->note->vals[i]);
	return 0;
}

char *tpp_losses_types(const struct tpp_losses *l, char *buf, size_t len)
{
	size_t n = 0;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; l->types_known && l->note && i < l->note->n && n + 1 < len; i++) {
		uint64_t v = num(l->note->vals[i]);
		if (!type_key(l, i) || !v)
			continue;
		int w = snprintf(buf + n, len - n, "%s%s %llu", n ? ", " : "", l->note->keys[i], (unsigned long long)v);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
	return buf;
}

void tpp_losses_text(FILE *f, const struct tpp_losses *l)
{
	char types[512];
	fprintf(f, "lost:         %llu%s\n", (unsigned long long)l->lost,
		l->split_known ? "" : " (an older tracerec: the lost events below include the unstored)");
	if (l->note)
		fprintf(f, "unstored:     %llu (fired by the kernel, never stored%s%s)\n", (unsigned long long)l->unstored,
			tpp_losses_types(l, types, sizeof(types))[0] ? ": " : "", types);
}

void tpp_losses_text_cpus(FILE *f, const struct tpp_losses *l, const struct tpp_reader *r)
{
	if (!l->unstored || !l->split_known)
		return;
	fprintf(f, "\nunstored events:\n");
	for (size_t i = 0; i < tpp_r_nstreams(r); i++) {
		const struct tpp_stream_info *s = tpp_r_stream(r, i);
		uint64_t u = s->kind == TPP_S_CPU ? tpp_losses_unstored_on(l, s->cpu) : 0;
		if (u)
			fprintf(f, "  cpu %-6d %12llu\n", s->cpu, (unsigned long long)u);
	}
}

void tpp_losses_json(FILE *f, const struct tpp_losses *l, const struct tpp_reader *r)
{
	fprintf(f, "\"lost\": %llu, ", (unsigned long long)l->lost);
	if (!l->note)
		return;
	fprintf(f, "\"unstored\": %llu, \"unstored_by_type\": {", (unsigned long long)l->unstored);
	const char *sep = "";
	for (size_t i = 0; l->types_known && i < l->note->n; i++) {
		uint64_t v = num(l->note->vals[i]);
		if (!type_key(l, i) || !v)
			continue;
		fputs(sep, f);
		json_str(f, l->note->keys[i]); /* the file's text: untrusted */
		fprintf(f, ": %llu", (unsigned long long)v);
		sep = ", ";
	}
	fprintf(f, "}, \"unstored_by_stream\": [");
	sep = "";
	for (size_t i = 0; i < tpp_r_nstreams(r); i++) {
		const struct tpp_stream_info *s = tpp_r_stream(r, i);
		uint64_t u = s->kind == TPP_S_CPU ? tpp_losses_unstored_on(l, s->cpu) : 0;
		if (!u)
			continue;
		fprintf(f, "%s{\"stream\": %u, \"count\": %llu}", sep, s->id, (unsigned long long)u);
		sep = ", ";
	}
	fprintf(f, "], \"lost_includes_unstored\": %s, ", l->split_known ? "false" : "true");
}
