/* The kernel's own accounting of one thread, which the scheduler workloads
 * (w-pingpong with W_SCHEDSTAT set, w-cpupair, w-sleeper) print as the truth
 * a recording of them is compared with, one line per thread:
 *   "schedstat TID ONCPU_NS RUNQ_NS SLICES VOLUNTARY NONVOLUNTARY MONO_NS"
 * ONCPU_NS, RUNQ_NS and SLICES are /proc/self/task/TID/schedstat (the
 * kernel's sum_exec_runtime, run_delay and pcount), VOLUNTARY and
 * NONVOLUNTARY its status counters, MONO_NS the CLOCK_MONOTONIC time (the
 * trace clock) right after the reading. The workloads read them with the
 * thread parked (blocked, switched out): the counters are then final, and
 * the thread's every switch-out is before MONO_NS. */
#ifndef W_TRUTH_H
#define W_TRUTH_H
#include <pthread.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static unsigned long long w_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* 0, or -1 when /proc could not be read (nothing printed). */
static int w_truth(pid_t tid)
{
	char path[96], buf[256];
	unsigned long long on, rq, sl;
	long vol = -1, invol = -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int n = fscanf(f, "%llu %llu %llu", &on, &rq, &sl);
	fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	if (n != 3 || !(f = fopen(path, "r")))
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		sscanf(buf, "voluntary_ctxt_switches: %ld", &vol);
		sscanf(buf, "nonvoluntary_ctxt_switches: %ld", &invol);
	}
	fclose(f);
	printf("schedstat %d %llu %llu %llu %ld %ld %llu\n", (int)tid, on, rq, sl, vol, invol, w_mono());
	return 0;
}

/* The end the workloads share, their two threads parked (blocked in a
 * read of the pipe park_wr writes to): the truth of each printed when report is set, then both
 * released (a byte each on park_wr) and joined. 0, or 1 on a failure. */
static int w_report_release(const pid_t tids[2], pthread_t th[2], int park_wr, int report)
{
	for (int i = 0; report && i < 2; i++)
		if (w_truth(tids[i]))
			return 1;
	fflush(stdout);
	if (write(park_wr, "gg", 2) != 2)
		return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return 0;
}
#endif
