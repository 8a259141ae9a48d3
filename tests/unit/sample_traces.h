/* sample_traces — runs a check on each trace named on the command line or,
 * when none is, on every trace of samples/traces/. */
#ifndef TPP_SAMPLE_TRACES_H
#define TPP_SAMPLE_TRACES_H
#include <dirent.h>
#include <stdio.h>
#include <string.h>

static void for_each_trace(int argc, char **argv, void (*check)(const char *path))
{
	for (int i = 1; i < argc; i++)
		check(argv[i]);
	if (argc > 1)
		return;
	DIR *dir = opendir("samples/traces");
	struct dirent *de;
	while (dir && (de = readdir(dir))) {
		size_t l = strlen(de->d_name);
		if (l > 4 && !strcmp(de->d_name + l - 4, ".tpp")) {
			char p[512];
			snprintf(p, sizeof(p), "samples/traces/%s", de->d_name);
			check(p);
		}
	}
	if (dir)
		closedir(dir);
}

#endif
