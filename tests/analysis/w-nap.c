/* w-nap N MS: main calls nap() N times; nap sleeps MS milliseconds in
 * clock_nanosleep (absolute deadline, so early wakeups are impossible) and
 * then calls tick(), which returns at once. It prints each nap's duration
 * as main measured it around the call ("nap NS"). A trace must show N calls
 * of nap lasting at least MS ms each, as long as main saw them (less the
 * tracing of the call itself), and tick inside every nap. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void tick(void) {}

void nap(long ms)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec += ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL))
		;
	tick();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	long ms = argc > 2 ? atol(argv[2]) : 20;
	unsigned long long d[1000];
	for (int i = 0; i < n && i < 1000; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		nap(ms);
		clock_gettime(CLOCK_MONOTONIC, &b);
		d[i] = (b.tv_sec - a.tv_sec) * 1000000000ULL + b.tv_nsec - a.tv_nsec;
	}
	for (int i = 0; i < n && i < 1000; i++)
		printf("nap %llu\n", d[i]);
	return 0;
}
