#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "table.h"
#include "wallclock.h"

int wallclock_parse(const char *cmd, const char *arg)
{
	if (!strcmp(arg, "mono"))
		return 0;
	if (!strcmp(arg, "wall"))
		return 1;
	fprintf(stderr, "tracepp %s: --clock: '%s' is not mono or wall\n", cmd, arg);
	return -1;
}

int wallclock_error(const struct tpp_reader *r, int64_t *err_ns, int64_t *drift_ns)
{
	const struct tpp_clock *c = tpp_r_clock(r);
	*err_ns = -1;
	*drift_ns = 0;
	if (!c->n)
		return -1;
	uint64_t start, end;
	cli_span(r, &start, &end);
	int64_t e0, e1;
	tpp_clock_wall(c, start, &e0);
	tpp_clock_wall(c, end, &e1);
	if (e0 >= 0 && e1 >= 0)
		*err_ns = e0 > e1 ? e0 : e1;
	if (c->n > 1) {
		/* the file's offsets are untrusted: their difference in 128 bits,
		 * kept within +-INT64_MAX so that its negation is one too */
		__int128 d = (__int128)c->s[c->n - 1].offset_ns - c->s[0].offset_ns;
		*drift_ns = d > INT64_MAX ? INT64_MAX : d < -INT64_MAX ? -INT64_MAX : (int64_t)d;
	}
	return 0;
}

void wallclock_note(const char *cmd, const char *path, const struct tpp_reader *r)
{
	int64_t err, drift;
	if (wallclock_error(r, &err, &drift) < 0) {
		fprintf(stderr, "tracepp %s: warning: %s has no wall-clock offset: its times are CLOCK_MONOTONIC\n",
			cmd, path);
		return;
	}
	char b1[32], b2[32];
	if (err < 0)
		fprintf(stderr, "tracepp %s: note: wall-clock times of %s from its start offset alone (an older "
			"file, or one cut short): error unknown\n", cmd, path);
	else
		fprintf(stderr, "tracepp %s: note: wall-clock times of %s within +-%s (clock drift %s%s over the "
			"recording)\n", cmd, path, human_ns(b1, sizeof(b1), (uint64_t)err), drift < 0 ? "-" : "",
			human_ns(b2, sizeof(b2), (uint64_t)(drift < 0 ? -drift : drift)));
}
