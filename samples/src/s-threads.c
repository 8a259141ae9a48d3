/* Threads: 4 threads each call leaf() 100 times.
 * expect: main=1 worker=4 leaf=400 */
#include <pthread.h>
#include <stdio.h>

static volatile long sink;

void leaf(long i) { sink += i; }

void *worker(void *arg)
{
	for (long i = 0; i < 100; i++)
		leaf(i + (long)arg);
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", sink);
	return 0;
}
