/* Call-heavy: loop() calls leaf() N times (argv[1], default 1000); the
 * workload of the function-tracing benchmarks. With a second argument it
 * prints the loop's own wall time and the CPU time its thread used, in ns,
 * on stderr, so every tracer is timed by the same clocks over the same
 * stretch, start-up and tear-down excluded; the CPU time leaves out the
 * waits a busy shared machine adds.
 * expect: main=1 loop=1 leaf=1000 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

void leaf(long i) { sink += i; }

void loop(long n)
{
	for (long i = 0; i < n; i++)
		leaf(i);
}

/* A macro, not a function: the call counts above stay exactly as stated. */
#define NOW_NS(c, t) (clock_gettime(c, &(t)), (t).tv_sec * 1000000000LL + (t).tv_nsec)

int main(int argc, char **argv)
{
	struct timespec ts;
	long long t0 = NOW_NS(CLOCK_MONOTONIC, ts), c0 = NOW_NS(CLOCK_THREAD_CPUTIME_ID, ts);
	loop(argc > 1 ? atol(argv[1]) : 1000);
	long long c1 = NOW_NS(CLOCK_THREAD_CPUTIME_ID, ts), t1 = NOW_NS(CLOCK_MONOTONIC, ts);
	if (argc > 2)
		fprintf(stderr, "loop_ns %lld\nloop_cpu_ns %lld\n", t1 - t0, c1 - c0);
	printf("%ld\n", sink);
	return 0;
}
