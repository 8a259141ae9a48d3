/* Sixteen threads started one after another, each joined before the next. */
#include <pthread.h>
#include <stdio.h>
static volatile int v;
void leaf(long i) { __atomic_add_fetch(&v, (int)i, __ATOMIC_RELAXED); }
void *thread_main(void *arg) { leaf((long)arg); leaf(1); return NULL; }
int main(void)
{
	for (long i = 0; i < 16; i++) {
		pthread_t t;
		pthread_create(&t, NULL, thread_main, (void *)i);
		pthread_join(t, NULL);
	}
	printf("%d\n", v);
	return 0;
}
