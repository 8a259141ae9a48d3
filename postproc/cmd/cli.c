/* cli — see cli.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct tpp_reader *cli_open(const char *cmd, const char *path)
{
	char msg[768];
	struct tpp_reader *r;
	if (!path) {
		fprintf(stderr, "tracepp %s: no trace file given\n", cmd);
		return NULL;
	}
	if (tpp_r_open(&r, path, msg, sizeof(msg))) {
		fprintf(stderr, "tracepp %s: %s\n", cmd, msg);
		return NULL;
	}
	const struct tpp_file_info *in = tpp_r_info(r);
	const char *why = cli_cut_short(r);
	if (why)
		fprintf(stderr, "tracepp %s: %s: %s; the file holds what was written before\n", cmd, path, why);
	else if (!in->has_trailer)
		fprintf(stderr, "tracepp %s: %s: no trailer: its writer did not finish it (killed, crashed or "
				"out of disk space); %zu chunks recovered by scanning\n",
			cmd, path, tpp_r_nchunks(r));
	return r;
}

const char *cli_cut_short(const struct tpp_reader *r)
{
	const struct tpp_meta *m = tpp_r_meta(r);
	for (size_t i = 0; m && i < m->nnotes; i++) {
		const struct tpp_note *n = &m->notes[i];
		if (!n->kind || strcmp(n->kind, "writer_end"))
			continue;
		for (size_t k = 0; k < n->n; k++)
			if (!strcmp(n->keys[k], "reason"))
				return !strcmp(n->vals[k], "ENOSPC") ? "the recording was cut short: its disk filled (ENOSPC)"
								   : "the recording was cut short";
	}
	return NULL;
}

int cli_format(const char *cmd, const char *arg, unsigned allowed)
{
	static const char *const names[] = {"text", "json", "csv"};
	for (int i = 0; i < 3; i++)
		if (!strcmp(arg, names[i]) && (allowed & (1u << i)))
			return i;
	fprintf(stderr, "tracepp %s: unknown --format '%s' (use", cmd, arg);
	for (int i = 0; i < 3; i++)
		if (allowed & (1u << i))
			fprintf(stderr, " %s", names[i]);
	fprintf(stderr, ")\n");
	return -1;
}

void cli_span(const struct tpp_reader *r, uint64_t *start, uint64_t *end)
{
	uint64_t s = UINT64_MAX, e = 0;
	for (size_t i = 0; i < tpp_r_nchunks(r); i++) {
		const struct tpp_chunk *c = tpp_r_chunk(r, i);
		if (c->kind != TPP_C_EVENTS || !c->count)
			continue;
		if (c->first_ts < s)
			s = c->first_ts;
		if (c->last_ts > e)
			e = c->last_ts;
	}
	*start = s == UINT64_MAX ? 0 : s;
	*end = e;
}

int cli_duration(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || v < 0 || !isfinite(v))
		return -1;
	double mul = 1;
	if (!*end || !strcmp(end, "ns"))
		mul = 1;
	else if (!strcmp(end, "us") || !strcmp(end, "µs"))
		mul = 1e3;
	else if (!strcmp(end, "ms"))
		mul = 1e6;
	else if (!strcmp(end, "s"))
		mul = 1e9;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mul = 60e9;
	else
		return -1;
	*ns = (uint64_t)(v * mul + 0.5);
	return 0;
}

static int bound(const char *s, size_t n, uint64_t start, uint64_t *out)
{
	char b[64];
	if (!n)
		return 1; /* open side */
	if (n >= sizeof(b))
		return -1;
	memcpy(b, s, n);
	b[n] = 0;
	char *end;
	unsigned long long abs = strtoull(b, &end, 10);
	if (!*end && end != b) {
		*out = abs;
		return 0;
	}
	uint64_t rel;
	if (cli_duration(b, &rel) || !strpbrk(b, "nums"))
		return -1;
	*out = start + rel;
	return 0;
}

int cli_time_range(const char *cmd, const char *arg, const struct tpp_reader *r, uint64_t *from, uint64_t *to)
{
	const char *sep = strpbrk(arg, ",~");
	uint64_t start, end;
	cli_span(r, &start, &end);
	*from = 0;
	*to = UINT64_MAX;
	int a = sep ? bound(arg, (size_t)(sep - arg), start, from) : -1;
	int b = sep ? bound(sep + 1, strlen(sep + 1), start, to) : -1;
	if (a < 0 || b < 0 || *from > *to) {
		fprintf(stderr, "tracepp %s: bad --time-range '%s' (use FROM,TO: absolute ns, or relative like 1.5s,2s)\n",
			cmd, arg);
		return -1;
	}
	if (!*from && *to == UINT64_MAX)
		*to = 0; /* no range at all */
	else if (!*from)
		*from = 1;
	return 0;
}

void cli_warn_damaged(const char *cmd, uint64_t n, const char *msg)
{
	if (n)
		fprintf(stderr, "tracepp %s: warning: %llu damaged chunk(s) skipped%s%s%s\n", cmd,
			(unsigned long long)n, msg && *msg ? " (" : "", msg && *msg ? msg : "", msg && *msg ? ")" : "");
}

void cli_no_match(const char *cmd, const char *path, const char *filters)
{
	fprintf(stderr, "tracepp %s: no event of %s passes%s\n", cmd, path, filters);
}

void cli_filter_add(char *buf, size_t cap, const char *name, const char *val)
{
	size_t n = strlen(buf);
	if (n < cap)
		snprintf(buf + n, cap - n, " --%s=%s", name, val);
}

void cli_tids_text(char *buf, size_t cap, const int32_t *tids, size_t n)
{
	buf[0] = 0;
	for (size_t i = 0, l = 0; i < n && l + 16 < cap; i++)
		l += (size_t)snprintf(buf + l, cap - l, "%s%d", i ? "," : "", (int)tids[i]);
}
