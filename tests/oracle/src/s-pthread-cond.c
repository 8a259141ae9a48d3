/* A producer and a consumer thread hand items over through a condition
 * variable: each side's calls are fixed whatever the interleaving. */
#include <pthread.h>
#include <stdio.h>
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int slot = -1, total;
void put(int x)
{
	pthread_mutex_lock(&mu);
	while (slot >= 0)
		pthread_cond_wait(&cv, &mu);
	slot = x;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}
int get(void)
{
	pthread_mutex_lock(&mu);
	while (slot < 0)
		pthread_cond_wait(&cv, &mu);
	int x = slot;
	slot = -1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return x;
}
void *producer(void *a) { (void)a; for (int i = 0; i < 5; i++) put(i); return NULL; }
void *consumer(void *a) { (void)a; for (int i = 0; i < 5; i++) total += get(); return NULL; }
int main(void)
{
	pthread_t p, c;
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("%d\n", total);
	return 0;
}
