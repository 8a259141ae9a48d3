/* w-cpupair MS: two threads pinned to one CPU (the last one this process may
 * use) each spin for MS milliseconds of wall time, so the scheduler keeps
 * preempting one for the other: nearly all their switches are involuntary,
 * and each waits on the run queue about as long as it runs. Then both park
 * on a pipe and main prints each one's kernel accounting (w-truth.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "w-truth.h"

static int park[2], ready[2];
static long ms;
static pid_t tids[2];
static cpu_set_t one;

static void *worker(void *arg)
{
	tids[(long)arg] = (pid_t)syscall(SYS_gettid);
	if (sched_setaffinity(0, sizeof(one), &one))
		exit(1);
	unsigned long long end = w_mono() + (unsigned long long)ms * 1000000ull;
	while (w_mono() < end)
		;
	char c = 0;
	if (write(ready[1], &c, 1) != 1 || read(park[0], &c, 1) != 1)
		exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	ms = argc > 1 ? atol(argv[1]) : 300;
	cpu_set_t all;
	if (ms < 1 || pipe(park) || pipe(ready) || sched_getaffinity(0, sizeof(all), &all))
		return 2;
	CPU_ZERO(&one);
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &one);
			break;
		}
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
