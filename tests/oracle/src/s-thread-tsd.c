/* A thread-specific-data destructor runs functions as the thread ends. */
#include <pthread.h>
#include <stdio.h>
static pthread_key_t key;
static volatile int v;
void leaf(void) { v++; }
void destroy(void *p) { (void)p; leaf(); }
void *thread_main(void *arg) { pthread_setspecific(key, arg); leaf(); return NULL; }
int main(void)
{
	pthread_key_create(&key, destroy);
	pthread_t t;
	pthread_create(&t, NULL, thread_main, (void *)1);
	pthread_join(t, NULL);
	printf("%d\n", v);
	return 0;
}
