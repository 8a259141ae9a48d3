/* fork: the child inherits main's frame, calls child_work and returns from
 * main; the parent waits and calls parent_work. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int v;
void leaf(void) { v++; }
void child_work(void) { leaf(); leaf(); }
void parent_work(void) { leaf(); }
int do_fork(void) { return fork(); }
int main(void)
{
	pid_t p = do_fork();
	if (p == 0) {
		child_work();
		return 0;
	}
	waitpid(p, NULL, 0);
	parent_work();
	return 0;
}
