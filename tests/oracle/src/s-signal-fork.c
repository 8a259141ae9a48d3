/* fork from inside a signal handler (fork is async-signal-safe). */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int v;
static volatile pid_t child;
void leaf(void) { v++; }
void handler(int sig)
{
	(void)sig;
	pid_t p = fork();
	if (p == 0) {
		leaf();
		_exit(0);
	}
	child = p;
}
int main(void)
{
	signal(SIGUSR1, handler);
	raise(SIGUSR1);
	waitpid(child, NULL, 0);
	leaf();
	return 0;
}
