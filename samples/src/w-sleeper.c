/* w-sleeper N: two threads each work about 100 us, then sleep 1 ms, N times:
 * nearly all their switches are voluntary, and nearly every wakeup finds
 * a CPU idle (the switch from idle some kernels fire but never store).
 * Then both park on a pipe and main prints each one's kernel accounting
 * (w-truth.h). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "w-truth.h"

static int park[2], ready[2];
static long n;
static pid_t tids[2];

static void *worker(void *arg)
{
	tids[(long)arg] = (pid_t)syscall(SYS_gettid);
	struct timespec nap = {0, 1000000};
	for (long k = 0; k < n; k++) {
		unsigned long long end = w_mono() + 100000;
		while (w_mono() < end)
			;
		nanosleep(&nap, NULL);
	}
	char c = 0;
	if (write(ready[1], &c, 1) != 1 || read(park[0], &c, 1) != 1)
		exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atol(argv[1]) : 300;
	if (n < 1 || pipe(park) || pipe(ready))
		return 2;
	pthread_t t[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	char c;
	for (int i = 0; i < 2; i++)
		if (read(ready[0], &c, 1) != 1)
			return 1;
	usleep(20000); /* both are blocked in read(park) by now */
	return w_report_release(tids, t, park[1], 1);
}
