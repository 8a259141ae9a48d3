/* w-pingpong ROUNDS: two threads bounce a byte over two pipes ROUNDS times,
 * so each round is two context switches at least. Afterwards, with both
 * workers parked on a pipe (switched out, counters still), main prints each
 * worker's context-switch counters from /proc and the CLOCK_MONOTONIC time of
 * that reading:  "task TID VOLUNTARY NONVOLUNTARY MONO_NS"
 * A recording must show exactly VOLUNTARY+NONVOLUNTARY sched_switch events
 * with prev_pid == TID before MONO_NS. With W_TIME set in the environment it
 * also prints the ping-pong's duration and the CPU time the process used in
 * it on stderr: "elapsed_ns N" and "cpu_ns N" (the CPU time holds the
 * kernel's tracing work done in the workers' context, not the time other
 * programs of a busy machine take from the CPU); with
 * W_SCHEDSTAT set, after the task lines, each worker's kernel accounting
 * (w-truth.h): "schedstat TID ONCPU_NS RUNQ_NS SLICES VOL NONVOL MONO_NS". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "w-truth.h"

static int ab[2], ba[2], park[2], done[2];
static long rounds;
static pid_t tids[2];

static void *worker(void *arg)
{
	int me = (int)(long)arg;
	char c = 'x';
	tids[me] = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < rounds; i++) {
		if (me == 0) {
			if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
				exit(1);
		} else {
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				exit(1);
		}
	}
	if (write(done[1], &c, 1) != 1 || read(park[0], &c, 1) != 1)
		exit(1);
	return NULL;
}

static void counters(pid_t tid, long *vol, long *invol)
{
	char path[96], buf[4096];
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	*vol = *invol = -1;
	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f)) {
		sscanf(buf, "voluntary_ctxt_switches: %ld", vol);
		sscanf(buf, "nonvoluntary_ctxt_switches: %ld", invol);
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	rounds = argc > 1 ? atol(argv[1]) : 10000;
	if (pipe(ab) || pipe(ba) || pipe(park) || pipe(done))
		return 1;
	struct timespec start, cpu0;
	clock_gettime(CLOCK_MONOTONIC, &start);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
	pthread_t th[2];
	for (long i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	char c;
	for (int i = 0; i < 2; i++)
		if (read(done[0], &c, 1) != 1)
			return 1;
	struct timespec end, cpu1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
	clock_gettime(CLOCK_MONOTONIC, &end);
	if (getenv("W_TIME")) /* for benchmarks: the ping-pong alone, on stderr */
		fprintf(stderr, "elapsed_ns %lld\ncpu_ns %lld\n",
			(long long)(end.tv_sec - start.tv_sec) * 1000000000ll + (end.tv_nsec - start.tv_nsec),
			(long long)(cpu1.tv_sec - cpu0.tv_sec) * 1000000000ll + (cpu1.tv_nsec - cpu0.tv_nsec));
	usleep(20000); /* both are blocked in read(park) by now */
	long v[2], n[2];
	for (int i = 0; i < 2; i++)
		counters(tids[i], &v[i], &n[i]);
	unsigned long long t = w_mono();
	for (int i = 0; i < 2; i++)
		printf("task %d %ld %ld %llu\n", (int)tids[i], v[i], n[i], t);
	return w_report_release(tids, th, park[1], getenv("W_SCHEDSTAT") != NULL);
}
