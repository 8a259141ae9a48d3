/* A handler on an alternate signal stack: its frames live elsewhere. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
static volatile int v;
void leaf(void) { v++; }
void handler(int sig) { (void)sig; leaf(); leaf(); }
void work(void) { raise(SIGUSR2); leaf(); }
int main(void)
{
	stack_t ss = {.ss_sp = malloc(SIGSTKSZ * 4), .ss_size = SIGSTKSZ * 4};
	sigaltstack(&ss, NULL);
	struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_ONSTACK};
	sigaction(SIGUSR2, &sa, NULL);
	work();
	work();
	printf("%d\n", v);
	return 0;
}
