/* Four threads, each with its own small tree; main joins them. */
#include <pthread.h>
#include <stdio.h>
static volatile int v;
void leaf(int i) { __atomic_add_fetch(&v, i, __ATOMIC_RELAXED); }
void work(int i) { for (int k = 0; k < 5; k++) leaf(i); }
void *thread_main(void *arg) { work((int)(long)arg); return NULL; }
int main(void)
{
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("%d\n", v);
	return 0;
}
