/* Many threads: s-many-threads [N [CALLS [seq|conc [GOFILE]]]] starts N
 * threads (default 8) that each call leaf() CALLS times (default 10):
 * "seq" one after another, each joined before the next starts; "conc" all
 * at once, held until every one exists (and GOFILE exists, when given) and
 * then let go together. With GOFILE, GOFILE.done is created once every
 * thread has been joined. The recorder's pool is tested and measured with
 * it: thread descriptors reused, budgets that run out. leaf() sets errno
 * as a failing libc call does and its caller checks it: a tracer whose
 * hooks change errno between them makes the program exit 3.
 * expect: main=1 worker=8 leaf=80 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;
static long calls = 10;
static pthread_barrier_t start;
static int held;
static long errno_changed;

void leaf(long i)
{
	sink += i;
	errno = ENOENT;
}

void *worker(void *arg)
{
	if (held)
		pthread_barrier_wait(&start);
	long changed = 0;
	for (long i = 0; i < calls; i++) {
		errno = 0;
		leaf(i + (long)arg);
		changed += errno != ENOENT;
	}
	__atomic_fetch_add(&errno_changed, changed, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 8;
	calls = argc > 2 ? atol(argv[2]) : 10;
	int conc = argc > 3 && !strcmp(argv[3], "conc");
	const char *go = argc > 4 ? argv[4] : NULL;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	if (!t || n < 1)
		return 2;
	if (conc) {
		held = 1;
		pthread_barrier_init(&start, NULL, (unsigned)n + 1);
	}
	for (long i = 0; i < n; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
		if (!conc)
			pthread_join(t[i], NULL);
	}
	if (conc) {
		while (go && access(go, F_OK))
			usleep(1000);
		pthread_barrier_wait(&start);
		for (long i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	}
	if (go) {
		char done[4096];
		snprintf(done, sizeof(done), "%s.done", go);
		int fd = open(done, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd >= 0)
			close(fd);
	}
	printf("%ld\n", sink);
	free(t);
	if (errno_changed) {
		fprintf(stderr, "s-many-threads: errno changed across %ld calls of leaf\n", errno_changed);
		return 3;
	}
	return 0;
}
