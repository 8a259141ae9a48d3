/* A handler (with its own callee) runs in the middle of a call tree. */
#include <signal.h>
#include <stdio.h>
static volatile int v;
void leaf(void) { v++; }
void handler(int sig) { (void)sig; leaf(); }
void raiser(void) { raise(SIGUSR1); leaf(); }
int main(void)
{
	signal(SIGUSR1, handler);
	raiser();
	raiser();
	printf("%d\n", v);
	return 0;
}
