/* A profiled program that execs itself N times, each time just before its
 * profiling timer fires (issue 15: a -pg program exec'ing under tracerec
 * died of SIGPROF now and then).
 *
 * gmon (-pg) arms ITIMER_PROF every 10 ms of CPU with a SIGPROF handler. The
 * timer survives exec, the handler does not: if the period ends before the
 * new image's gmon sets its handler again, the default action kills it.
 * The kernel counts the timer in scheduler ticks: each image spins until
 * the next tick will end the period, waits until that tick is ~0.3 ms away,
 * and execs. Under -finstrument-functions (no gmon) main arms the same
 * timer. The spinning is inline in main: no calls to trace. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void on_prof(int sig)
{
	(void)sig;
}

#define LEFT_US(it) (getitimer(ITIMER_PROF, &it), it.it_value.tv_sec * 1000000L + it.it_value.tv_usec)
#define NOW_US(ts) (clock_gettime(CLOCK_MONOTONIC, &ts), ts.tv_sec * 1000000L + ts.tv_nsec / 1000)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	struct sigaction sa;
	struct itimerval it;
	struct timespec ts;
	sigaction(SIGPROF, NULL, &sa);
	if (sa.sa_handler == SIG_DFL) {
		sa.sa_handler = on_prof;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGPROF, &sa, NULL);
	}
	if (LEFT_US(it) == 0) {
		struct itimerval ten = {{0, 10000}, {0, 10000}};
		setitimer(ITIMER_PROF, &ten, NULL);
	}
	if (n <= 0) {
		printf("done\n");
		return 0;
	}
	/* the tick: the shortest time between two decreases of the timer's
	 * value; then the decrease after which one more tick ends the period
	 * (at most ~1 s of spinning: a starved run just catches less) */
	long l = LEFT_US(it), t0 = 0, tick = 1000000, end = NOW_US(ts) + 1000000;
	for (int k = 0; NOW_US(ts) < end;) {
		long v = LEFT_US(it), t = NOW_US(ts);
		if (v == l)
			continue;
		if (v > 0 && v < l) {
			if (k++ && t - t0 < tick)
				tick = t - t0;
			t0 = t;
			if (k > 3 && v <= tick)
				break;
		}
		l = v;
	}
	while (NOW_US(ts) < t0 + tick - 300)
		;
	char arg[16];
	snprintf(arg, sizeof(arg), "%d", n - 1);
	execl("/proc/self/exe", argv[0], arg, (char *)NULL);
	perror("exec");
	return 1;
}
