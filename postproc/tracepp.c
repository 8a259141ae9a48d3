/* tracepp — offline analysis of tracepp trace files. One subcommand per file
 * (postproc/cmd_*.c); this file only dispatches. */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "front.h"
#include "tpp_format.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
	int pages; /* prints text for a person: paged on a terminal */
} cmds[] = {
	{"info", cmd_info, "facts about a trace: host, span, counts, lost events, sizes", 1},
	{"dump", cmd_dump, "every event with its fields, in file or time order", 1},
	/* further subcommands: one line each, keep alphabetical after these two */
	{"callgraph", cmd_callgraph, "per-function calls, total/self time; call tree, callers, callees, folded stacks", 1},
	{"export", cmd_export, "the recording for other viewers: Chrome trace-event JSON (Perfetto, speedscope)", 0},
	{"io", cmd_io, "block IO per device and direction: IOPS, bytes, latency, queue depth", 1},
	{"latency", cmd_latency, "latency distributions: functions, scheduler, block IO, network", 1},
	{"net", cmd_net, "packets and bytes per network device, each way", 1},
	{"plot", cmd_plot, "gnuplot diagrams: timeline, hist, heatmap, gantt", 0},
	{"replay", cmd_replay, "the flow of calls per thread, indented, with kernel events inline", 1},
	{"report", cmd_report, "one self-contained HTML page: facts, summaries, plots", 0},
	{"script", cmd_script, "bpftrace programs over the recording: predicates, maps, aggregations, printf", 1},
	{"sched", cmd_sched, "per task: on-CPU time, switches, migrations, run-queue wait, wakeup latency", 1},
};

/* A subcommand run with the options every command takes taken out first,
 * through the pager when it prints text for a terminal; its --help ends
 * with those options. */
static int run(size_t i, int argc, char **argv)
{
	int page, help = 0;
	int rc = cli_front(cmds[i].name, &argc, argv, &page);
	if (rc >= 0)
		return rc;
	for (int k = 1; k < argc && strcmp(argv[k], "--"); k++)
		help |= !strcmp(argv[k], "--help") || !strcmp(argv[k], "-h");
	if (page && cmds[i].pages && !help)
		pager_start();
	rc = cmds[i].fn(argc, argv);
	if (help && !rc)
		printf("\n%s", cli_front_help);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tracepp COMMAND [OPTIONS] FILE\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'tracepp COMMAND --help' for a command's options.\n"
		   "\nFILE must be a regular file (a FIFO or a device is refused: traces are read\n"
		   "by seeking). Exit status: 0 with a result, also from a damaged file (what its\n"
		   "intact chunks hold, and one warning line); 1 no result (the file cannot be\n"
		   "read, or the output cannot be written); 2 a usage error. Filters that pass no\n"
		   "event are no error: one line says so (\"no event of FILE passes --tid=...\"), exit 0.\n\n%s",
		cli_front_help);
}

/* The options every command takes (front.h), given before the command. */
static int is_front(const char *a)
{
	return !strcmp(a, "--no-pager") || !strncmp(a, "--color", 7) || !strncmp(a, "--colour", 8);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* "tracepp --no-pager dump ...", as perf and git take them: the
	 * options every command takes go after the command's name (and
	 * "tracepp --no-pager --help" is the help) */
	int lead = 1;
	while (lead < argc - 1 && is_front(argv[lead]))
		lead++;
	if (lead > 1) {
		char *name = argv[lead];
		memmove(argv + 2, argv + 1, (size_t)(lead - 1) * sizeof(*argv));
		argv[1] = name;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("tracepp %s (format %d.%d)\n", TPP_VERSION, TPP_MAJOR, TPP_MINOR);
		return 0;
	}
	if (is_front(argv[1])) {
		fprintf(stderr, "tracepp: no command after %s (try 'tracepp --help')\n", argv[1]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return run(i, argc - 1, argv + 1);
	fprintf(stderr, "tracepp: unknown command '%s' (try 'tracepp --help')\n", argv[1]);
	return 2;
}
