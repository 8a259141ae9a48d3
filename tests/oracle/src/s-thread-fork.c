/* fork inside a second thread: the child is a copy of that thread only. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int v;
void leaf(void) { v++; }
void in_child(void) { leaf(); }
void forker(void)
{
	pid_t p = fork();
	if (p == 0) {
		in_child();
		_exit(0);
	}
	waitpid(p, NULL, 0);
	leaf();
}
void *thread_main(void *arg) { (void)arg; forker(); return NULL; }
int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_join(t, NULL);
	leaf();
	return 0;
}
