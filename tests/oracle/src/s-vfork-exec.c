/* vfork + exec: the child borrows the parent's stack until it execs. */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int v;
void child_main(void) { v++; }
void parent_main(void) { v--; }
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child")) {
		child_main();
		return 0;
	}
	pid_t p = vfork();
	if (p == 0) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	waitpid(p, NULL, 0);
	parent_main();
	return 0;
}
