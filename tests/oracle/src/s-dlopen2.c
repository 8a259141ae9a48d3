#define _GNU_SOURCE
/* The same library opened, closed and opened again (maybe elsewhere). */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include "dl_path.h"
int round_trip(const char *path, int n)
{
	void *h = dlopen(path, RTLD_NOW);
	if (!h)
		return -1;
	int (*w)(int) = (int (*)(int))dlsym(h, "plugin_work");
	int r = w(n);
	dlclose(h);
	return r;
}
int main(void)
{
	char path[PATH_MAX];
	plugin_path(path, sizeof(path));
	printf("%d\n", round_trip(path, 2) + round_trip(path, 1));
	return 0;
}
