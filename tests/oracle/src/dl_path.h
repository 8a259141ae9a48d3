/* The plugin built beside this executable for the same flags:
 * s-dlopen-pg-O2 loads libplugin-pg-O2.so from its own directory. */
/* needs _GNU_SOURCE (memrchr) before the first include */
#include <string.h>
#include <unistd.h>
static void plugin_path(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 32);
	out[n > 0 ? n : 0] = 0;
	char *base = strrchr(out, '/'), *dash = strrchr(out, '-');
	dash = dash ? memrchr(out, '-', (size_t)(dash - out)) : NULL;
	if (!base || !dash || dash < base)
		return;
	char flags[32];
	strncpy(flags, dash, sizeof(flags) - 1);
	flags[sizeof(flags) - 1] = 0;
	strcpy(base + 1, "libplugin");
	strcat(base, flags);
	strcat(base, ".so");
}
