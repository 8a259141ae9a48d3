/* A signal handler: work() raises SIGUSR1 5 times; the handler calls
 * hleaf().
 * expect: main=1 work=5 handler=5 hleaf=5 */
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t count;

void hleaf(void) { count++; }
void handler(int sig) { (void)sig; hleaf(); }
void work(void) { raise(SIGUSR1); }

int main(void)
{
	signal(SIGUSR1, handler);
	for (int i = 0; i < 5; i++)
		work();
	printf("%d\n", (int)count);
	return 0;
}
