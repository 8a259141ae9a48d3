/* tracepp script — bpftrace one-liners over a recorded file: the program
 * from -e or a .bt file, compiled against the file's event types (one
 * clear error with line and column if it cannot be), run over every event
 * in time order, printed as bpftrace prints. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "an_run.h"
#include "cli.h"
#include "commands.h"
#include "script.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: tracepp script [--format=text|json] [--time-range=FROM,TO] [-q] -e 'PROGRAM' FILE\n"
		   "       tracepp script [OPTIONS] PROGRAM.bt FILE\n"
		   "  a bpftrace program over a recording: probes BEGIN, END, tracepoint:SYS:NAME,\n"
		   "  uprobe:BIN:FUNC, uretprobe:BIN:FUNC, interval:s:N (on trace time);\n"
		   "  maps and aggregations printed at the end as bpftrace prints them\n"
		   "  -f, --format=json  bpftrace's -f json output\n"
		   "  -q, --quiet        no progress line (else one on stderr when it is a terminal,\n"
		   "                     the file holds over 4 Mi events and no pager runs)\n"
		   "  -h, --help         this text\n");
}

#define PROG_MAX (1u << 20)

/* The program file: a regular file, read whole. NULL after a message. */
static char *read_prog(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb)) {
		fprintf(stderr, "tracepp script: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size > PROG_MAX) {
		fprintf(stderr, "tracepp script: %s: %s\n", path,
			!S_ISREG(sb.st_mode) ? "not a regular file" : "a program larger than 1 MiB");
		close(fd);
		return NULL;
	}
	char *buf = malloc((size_t)sb.st_size + 1);
	size_t n = 0;
	while (buf && n < (size_t)sb.st_size) {
		ssize_t k = read(fd, buf + n, (size_t)sb.st_size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (!buf || n != (size_t)sb.st_size) {
		fprintf(stderr, "tracepp script: %s: %s\n", path, buf ? "short read" : "out of memory");
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* The progress line of the events read; cleared when they end, before
 * END's output goes to the same terminal. */
static void progress(void *ctx, uint64_t events, int done)
{
	struct an_progress *p = ctx;
	if (!done) {
		an_progress(p, events);
		return;
	}
	an_progress_end(p);
	p->on = 0;
}

int cmd_script(int argc, char **argv)
{
	int fmt = OUT_TEXT;
	const char *range = NULL, *inline_prog = NULL;
	int quiet = 0;
	static const struct option lo[] = {{"format", 1, 0, 'f'}, {"time-range", 1, 0, 'r'}, {"help", 0, 0, 'h'},
					   {"quiet", 0, 0, 'q'}, {0, 0, 0, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "he:f:q", lo, NULL)) != -1) {
		switch (c) {
		case 'e': inline_prog = optarg; break;
		case 'f':
			if ((fmt = cli_format("script", optarg, 1u << OUT_TEXT | 1u << OUT_JSON)) < 0)
				return 2;
			break;
		case 'r': range = optarg; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - (inline_prog ? 1 : 2)) {
		usage(stderr);
		return 2;
	}
	const char *prog_name = inline_prog ? "-e" : argv[optind], *path = argv[argc - 1];
	size_t plen = 0;
	char *prog = inline_prog ? strdup(inline_prog) : read_prog(prog_name, &plen);
	if (!prog) {
		if (inline_prog)
			fprintf(stderr, "tracepp script: out of memory\n");
		return inline_prog ? 1 : 2;
	}
	if (inline_prog)
		plen = strlen(prog);
	struct tpp_reader *r = cli_open("script", path);
	if (!r) {
		free(prog);
		return 1;
	}
	struct tps_opts o = {.sz = sizeof(o), .file = path, .json = fmt == OUT_JSON, .fd = STDOUT_FILENO};
	const char *scan = getenv("TPP_SCAN");
	o.rows = scan && !strcmp(scan, "0");
	struct an_progress pl; /* as dump and info draw it (an_run.h); the program keeps o */
	an_progress_start(&pl, r, !quiet);
	o.progress = progress;
	o.progress_ctx = &pl;
	struct tpp_names *nm = NULL;
	struct tps_prog *p = NULL;
	char err[600];
	int rc = 0;
	if (range && cli_time_range("script", range, r, &o.from_ts, &o.to_ts)) {
		rc = 2;
		goto out;
	}
	if (tpp_names_open(&nm, r)) {
		fprintf(stderr, "tracepp script: out of memory\n");
		rc = 1;
		goto out;
	}
	int e = tps_prog_new(&p, prog, plen, r, nm, &o, err, sizeof(err));
	if (e) {
		if (e == -EINVAL)
			fprintf(stderr, "tracepp script: %s:%s\n", prog_name, err);
		else
			fprintf(stderr, "tracepp script: %s\n", err);
		rc = e == -EINVAL ? 2 : 1;
		goto out;
	}
	struct tps_stats st;
	e = tps_prog_run(p, &st, err, sizeof(err));
	an_progress_end(&pl); /* when the run ended early: before any message */
	if (e) {
		fprintf(stderr, "tracepp script: %s: %s\n", path, err);
		rc = 1;
	}
	if (!e && range && !st.events && !st.exited) {
		char fl[320] = "";
		cli_filter_add(fl, sizeof(fl), "time-range", range);
		cli_no_match("script", path, fl);
	}
	for (int i = 0; tps_prog_warning(p, i); i++)
		fprintf(stderr, "tracepp script: warning: %s: %s\n", path, tps_prog_warning(p, i));
	for (int i = 0; !st.exited && !o.from_ts && !o.to_ts && tps_prog_silent(p, i); i++)
		fprintf(stderr, "tracepp script: warning: %s:%s: no event of %s reached this probe\n", prog_name,
			tps_prog_silent(p, i), path);
	if (st.spec_dropped)
		fprintf(stderr, "tracepp script: warning: %llu speculation(s) neither committed nor discarded: their output is dropped\n",
			(unsigned long long)st.spec_dropped);
	if (st.spec_full)
		fprintf(stderr, "tracepp script: warning: speculation() found no free buffer %llu time(s) (%d at once at most)\n",
			(unsigned long long)st.spec_full, 4096);
	/* the one rule for a damaged file (cli.h): what the intact chunks hold,
	 * one warning line, exit 0 */
	uint64_t at_open = tpp_r_info(r)->damaged_chunks;
	cli_warn_damaged("script", st.damaged + at_open, st.damaged ? st.damage : tpp_r_error(r));
out:
	tps_prog_free(p);
	tpp_names_close(nm);
	tpp_r_close(r);
	free(prog);
	return rc;
}
