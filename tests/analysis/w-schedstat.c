/* w-schedstat THREADS MS: THREADS threads (more than CPUs, so they queue)
 * each alternate busy spins and short sleeps for about MS milliseconds, then
 * park on a pipe. With all of them parked (switched out, counters settled),
 * main reads each one's /proc/self/task/TID/schedstat and prints
 *   "task TID ONCPU_NS RUNQ_NS SLICES MONO_NS"
 * then releases them. A trace of the run, cut at MONO_NS, must account the
 * same on-CPU and run-queue time per thread. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static int park[2], ready[2];
static long ms;
static pid_t tids[64];

static unsigned long long mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *worker(void *arg)
{
	long i = (long)arg;
	tids[i] = (pid_t)syscall(SYS_gettid);
	unsigned long long end = mono() + ms * 1000000ULL;
	/* Slices of milliseconds: the few microseconds between the kernel's
	 * own accounting points and the sched_switch tracepoint stay small. */
	while (mono() < end) {
		unsigned long long spin = mono() + 2000000;
		while (mono() < spin)
			;
		usleep(500 + 200 * i);
	}
	char c = 0;
	if (write(ready[1], &c, 1) != 1 || read(park[0], &c, 1) != 1)
		exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;
	ms = argc > 2 ? atol(argv[2]) : 300;
	if (n < 1 || n > 64 || pipe(park) || pipe(ready))
		return 2;
	pthread_t t[64];
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	char c;
	for (int i = 0; i < n; i++)
		if (read(ready[0], &c, 1) != 1)
			return 1;
	usleep(20000); /* all of them are now blocked in read() */
	for (int i = 0; i < n; i++) {
		char path[64];
		unsigned long long on, rq, sl;
		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tids[i]);
		FILE *f = fopen(path, "r");
		if (!f || fscanf(f, "%llu %llu %llu", &on, &rq, &sl) != 3)
			return 1;
		fclose(f);
		printf("task %d %llu %llu %llu %llu\n", tids[i], on, rq, sl, mono());
	}
	fflush(stdout);
	for (int i = 0; i < n; i++)
		if (write(park[1], &c, 1) != 1)
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
