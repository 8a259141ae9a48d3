/* Thread churn: 40 short threads in batches of 4, each calls leaf() 5 times
 * and exits while main spins, so that they run on the other CPUs. Each lives
 * well under a millisecond: a recorder that reads its buffers every few
 * hundred ms meets most of them only after they are gone, and their events
 * sit in other CPUs' buffers than the clones that made them.
 * expect: main=1 churn=40 leaf=200 */
#include <pthread.h>
#include <stdio.h>

static volatile long sink;
static long done;

void leaf(long i) { sink += i; }

void *churn(void *arg)
{
	for (long i = 0; i < 5; i++)
		leaf(i + (long)arg);
	__atomic_add_fetch(&done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int main(void)
{
	for (long b = 0; b < 10; b++) {
		pthread_t t[4];
		for (long i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, churn, (void *)(b * 4 + i)))
				return 1;
		while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < (b + 1) * 4)
			;
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	printf("%ld\n", sink);
	return 0;
}
