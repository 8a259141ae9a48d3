#define _GNU_SOURCE
/* dlopen a traced library, call into it, dlclose it before exit: its
 * functions still need names. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include "dl_path.h"
int use(void *h, int n) { int (*w)(int) = (int (*)(int))dlsym(h, "plugin_work"); return w ? w(n) : -1; }
int main(void)
{
	char path[PATH_MAX];
	plugin_path(path, sizeof(path));
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	printf("%d\n", use(h, 3));
	dlclose(h);
	return 0;
}
