/* tracepp — offline analysis of tracepp trace files. One subcommand per file
 * (postproc/cmd_*.c); this file only dispatches. */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "tpp_format.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} cmds[] = {
	{"info", cmd_info, "facts about a trace: host, span, counts, lost events, sizes"},
	{"dump", cmd_dump, "every event with its fields, in file or time order"},
	/* further subcommands: one line each, keep alphabetical after these two */
	{"callgraph", cmd_callgraph, "per-function calls, total/self time; call tree, callers, callees, folded stacks"},
	{"export", cmd_export, "the recording for other viewers: Chrome trace-event JSON (Perfetto, speedscope)"},
	{"io", cmd_io, "block IO per device and direction: IOPS, bytes, latency, queue depth"},
	{"latency", cmd_latency, "latency distributions: functions, scheduler, block IO, network"},
	{"net", cmd_net, "packets and bytes per network device, each way"},
	{"plot", cmd_plot, "gnuplot diagrams: timeline, hist, heatmap, gantt"},
	{"replay", cmd_replay, "the flow of calls per thread, indented, with kernel events inline"},
	{"report", cmd_report, "one self-contained HTML page: facts, summaries, plots"},
	{"script", cmd_script, "bpftrace programs over the recording: predicates, maps, aggregations, printf"},
	{"sched", cmd_sched, "per task: on-CPU time, switches, migrations, run-queue wait, wakeup latency"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tracepp COMMAND [OPTIONS] FILE\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'tracepp COMMAND --help' for a command's options.\n"
		   "\nFILE must be a regular file (a FIFO or a device is refused: traces are read\n"
		   "by seeking). Exit status: 0 with a result, also from a damaged file (what its\n"
		   "intact chunks hold, and one warning line); 1 no result (the file cannot be\n"
		   "read, or the output cannot be written); 2 a usage error.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("tracepp %s (format %d.%d)\n", TPP_VERSION, TPP_MAJOR, TPP_MINOR);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "tracepp: unknown command '%s' (try 'tracepp --help')\n", argv[1]);
	return 2;
}
