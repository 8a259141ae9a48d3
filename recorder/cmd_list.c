/* tracerec list [PATTERN]: the event groups, then every tracepoint of this
 * kernel as SYSTEM:NAME (read from the top-level available_events, which
 * lists the same events every instance has). */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include "event_select.h"
#include "rec_commands.h"
#include "tracefs_instance.h"

int cmd_list(int argc, char **argv)
{
	const char *pat = argc > 1 ? argv[1] : NULL;
	if (pat && (!strcmp(pat, "--help") || !strcmp(pat, "-h"))) {
		printf("usage: tracerec list [GLOB]\n");
		return 0;
	}
	char root[256], path[320], line[256];
	if (tfs_find_root(root, sizeof(root))) {
		fprintf(stderr, "tracerec: no tracefs: not mounted at /sys/kernel/tracing\n");
		return 1;
	}
	if (!pat) {
		printf("groups:");
		for (const char *const *g = es_group_names(); *g; g++)
			printf(" %s", *g);
		printf("\n");
	}
	snprintf(path, sizeof(path), "%s/available_events", root);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "tracerec: cannot read %s (run as root)\n", path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!pat || !fnmatch(pat, line, 0) || strstr(line, pat))
			printf("%s\n", line);
	}
	fclose(f);
	return 0;
}
