/* w-nap N: sleeps 1 ms N times, so a CPU with nothing else to do goes idle
 * and each wakeup is a switch from the idle task back to this one (the case
 * some kernels count but never store in a ring buffer). Then prints, from
 * /proc, its own context-switch counters and the CLOCK_MONOTONIC times of the
 * first nap and of that reading:  "task TID VOLUNTARY NONVOLUNTARY T0 T1"
 * Between T0 and T1 it switched out VOLUNTARY+NONVOLUNTARY times minus those
 * before T0 (printed as counted at T0, in the same order, first line:
 * "start TID VOLUNTARY NONVOLUNTARY"). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void counters(long *vol, long *invol)
{
	char buf[4096];
	FILE *f = fopen("/proc/thread-self/status", "r");
	*vol = *invol = -1;
	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f)) {
		sscanf(buf, "voluntary_ctxt_switches: %ld", vol);
		sscanf(buf, "nonvoluntary_ctxt_switches: %ld", invol);
	}
	fclose(f);
}

static unsigned long long mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200;
	int tid = (int)syscall(SYS_gettid);
	long v0, i0, v1, i1;
	counters(&v0, &i0);
	unsigned long long t0 = mono();
	struct timespec nap = {0, 1000000};
	for (long k = 0; k < n; k++)
		nanosleep(&nap, NULL);
	counters(&v1, &i1);
	unsigned long long t1 = mono();
	printf("start %d %ld %ld\ntask %d %ld %ld %llu %llu\n", tid, v0, i0, tid, v1, i1, t0, t1);
	return 0;
}
