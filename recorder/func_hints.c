/* One-line hints for recordings that would hold no function calls and not
 * say why: a command built without instrumentation (uftrace refuses those
 * with the same advice), a running process built with -pg or
 * -finstrument-functions whose calls go nowhere because tracerec's runtime
 * was not loaded into it. The caller prints the message. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "func_int.h"

/* The command as execvp would find it (a name without '/' on $PATH). */
static int find_cmd(const char *cmd, char *out)
{
	if (strchr(cmd, '/'))
		return realpath(cmd, out) ? 0 : -errno;
	const char *path = getenv("PATH");
	for (const char *d = path ? path : "/usr/bin:/bin"; *d;) {
		size_t dl = strcspn(d, ":");
		char cand[PATH_MAX];
		func_fmt(cand, sizeof(cand), "%.*s/%s", (int)dl, dl ? d : ".", cmd);
		if (!access(cand, X_OK) && realpath(cand, out))
			return 0;
		d += dl + (d[dl] == ':');
	}
	return -ENOENT;
}

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

int func_hint_untraced(const char *cmd, char *msg, size_t len)
{
	char path[PATH_MAX];
	if (find_cmd(cmd, path) < 0 || func_elf_instrumented(path))
		return 0;
	func_fmt(msg, len,
		 "%s: not built with -pg or -finstrument-functions, so it has no calls to record: rebuild it with "
		 "one of them, probe its functions with -u '%s:GLOB', or record kernel events with -e",
		 path, base(path));
	return 1;
}

int func_hint_pid(int32_t pid, char *msg, size_t len)
{
	char exe[64], path[PATH_MAX], comm[32] = "";
	func_fmt(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(exe, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	int inst = func_elf_instrumented(exe); /* the file the process runs, even if since replaced */
	if (!inst)
		return 0;
	char maps[64], line[PATH_MAX + 128];
	func_fmt(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(maps, "re");
	if (!f)
		return 0;
	int loaded = 0;
	while (!loaded && fgets(line, sizeof(line), f))
		loaded = strstr(line, "/libtpprt.so") != NULL;
	fclose(f);
	if (loaded)
		return 0;
	func_fmt(exe, sizeof(exe), "/proc/%d/comm", (int)pid);
	f = fopen(exe, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = 0;
		comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	func_fmt(msg, len,
		 "%d (%s) is built with %s, but its calls cannot be recorded: tracerec's runtime is not loaded in it "
		 "(start it with 'tracerec record -- CMD', or probe it with -u '%s:GLOB')",
		 (int)pid, comm, inst & 1 ? "-pg" : "-finstrument-functions", base(path));
	return 1;
}
