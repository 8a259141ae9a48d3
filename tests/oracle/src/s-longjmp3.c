/* siglongjmp out of a signal handler back to the loop in main. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
static sigjmp_buf jb;
static volatile int n;
void handler(int sig) { (void)sig; siglongjmp(jb, 1); }
void victim(void) { raise(SIGUSR1); n++; }
void work(void) { victim(); n++; }
void after(void) { n++; }
int main(void)
{
	signal(SIGUSR1, handler);
	for (int i = 0; i < 3; i++) {
		if (sigsetjmp(jb, 1) == 0)
			work();
		after();
	}
	printf("%d\n", n);
	return 0;
}
