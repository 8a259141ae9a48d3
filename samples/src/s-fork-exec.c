/* fork and exec: the parent forks; the child calls child_work() and execs
 * this program again with "exec", whose main calls exec_work().
 * expect: main=2 before_fork=1 parent_work=1 child_work=1 exec_work=1 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int n;

void before_fork(void) { n++; }
void parent_work(void) { n++; }
void child_work(void) { n++; }
void exec_work(void) { n++; }

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec")) {
		exec_work();
		return 0;
	}
	before_fork();
	pid_t p = fork();
	if (p == 0) {
		child_work();
		execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
		_exit(127);
	}
	parent_work();
	int st;
	waitpid(p, &st, 0);
	printf("%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
