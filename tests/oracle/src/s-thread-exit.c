/* pthread_exit two calls down in a thread: the thread's frames end there. */
#include <pthread.h>
#include <stdio.h>
static volatile int v;
void leaf(void) { v++; }
void quit(void) { leaf(); pthread_exit(NULL); }
void middle(void) { quit(); leaf(); }
void *thread_main(void *arg) { (void)arg; middle(); return NULL; }
int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, thread_main, NULL);
	pthread_join(t, NULL);
	leaf();
	printf("%d\n", v);
	return 0;
}
