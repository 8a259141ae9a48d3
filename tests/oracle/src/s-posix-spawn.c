/* posix_spawn of this program twice, once with an explicit environment of
 * its own (no LD_PRELOAD in it) and once with environ: 3 processes. */
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
static volatile int v;
void child_main(void) { v++; }
void spawn_one(char *self, char **envp)
{
	char *argv[] = {self, "child", NULL};
	pid_t p;
	if (posix_spawn(&p, "/proc/self/exe", NULL, NULL, argv, envp) == 0)
		waitpid(p, NULL, 0);
}
int main(int argc, char **argv)
{
	if (argc > 1) {
		child_main();
		return 0;
	}
	char *own[] = {"PATH=/usr/bin:/bin", "LANG=C", NULL};
	spawn_one(argv[0], own);
	spawn_one(argv[0], environ);
	return 0;
}
