/* tracerec — records kernel and in-process events into a tracepp file. One
 * subcommand per file (recorder/cmd_*.c); this file only dispatches. */
#include <stdio.h>
#include <string.h>
#include "rec_commands.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} cmds[] = {
	{"record", cmd_record, "record kernel events (and function calls of a command) to a file"},
	{"list", cmd_list, "event groups and the kernel's tracepoints"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tracerec COMMAND [OPTIONS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'tracerec COMMAND --help' for a command's options.\n");
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
		printf("tracerec %s\n", TPP_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "tracerec: unknown command '%s' (try 'tracerec --help')\n", argv[1]);
	return 2;
}
