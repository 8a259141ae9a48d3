/* w-tcp COUNT SIZE: a loopback TCP sender and receiver (two threads) move
 * COUNT messages of SIZE bytes, each answered by a one-byte ack so every
 * message travels as its own packets. Around the transfer it reads lo's
 * counters in /proc/net/dev and prints
 *   "lo RX_PACKETS TX_PACKETS T0_NS T1_NS"
 * (deltas, CLOCK_MONOTONIC bounds). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long count, size;
static int lsock;

static unsigned long long mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int lo_counters(unsigned long long *rx, unsigned long long *tx)
{
	FILE *f = fopen("/proc/net/dev", "r");
	char line[512];
	int found = -1;
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');
		if (!p)
			continue;
		*p = 0;
		char *name = line + strspn(line, " ");
		unsigned long long rb, rp, x[6], tb, tp;
		if (strcmp(name, "lo") == 0 &&
		    sscanf(p + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &rb, &rp, &x[0],
			   &x[1], &x[2], &x[3], &x[4], &x[5], &tb, &tp) == 10) {
			*rx = rp;
			*tx = tp;
			found = 0;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static int full_io(int fd, char *b, long n, int wr)
{
	while (n > 0) {
		ssize_t r = wr ? write(fd, b, (size_t)n) : read(fd, b, (size_t)n);
		if (r <= 0)
			return -1;
		b += r;
		n -= r;
	}
	return 0;
}

static void *receiver(void *arg)
{
	(void)arg;
	int c = accept(lsock, NULL, NULL);
	char *b = malloc((size_t)size);
	for (long i = 0; c >= 0 && b && i < count; i++)
		if (full_io(c, b, size, 0) || full_io(c, b, 1, 1))
			break;
	free(b);
	if (c >= 0)
		close(c);
	return NULL;
}

int main(int argc, char **argv)
{
	count = argc > 1 ? atol(argv[1]) : 1000;
	size = argc > 2 ? atol(argv[2]) : 1000;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	lsock = socket(AF_INET, SOCK_STREAM, 0);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&a, sizeof(a)) || listen(lsock, 1) ||
	    getsockname(lsock, (struct sockaddr *)&a, &al)) {
		perror("w-tcp: listen");
		return 1;
	}
	unsigned long long rx0, tx0, rx1, tx1;
	unsigned long long t0 = mono();
	if (lo_counters(&rx0, &tx0)) {
		fprintf(stderr, "w-tcp: no lo in /proc/net/dev\n");
		return 3;
	}
	pthread_t th;
	pthread_create(&th, NULL, receiver, NULL);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(s, (struct sockaddr *)&a, sizeof(a))) {
		perror("w-tcp: connect");
		return 1;
	}
	char *b = calloc(1, (size_t)size);
	for (long i = 0; i < count; i++)
		if (full_io(s, b, size, 1) || full_io(s, b, 1, 0))
			return 1;
	close(s);
	pthread_join(th, NULL);
	close(lsock);
	usleep(50000); /* the FIN/ACK exchange finishes */
	lo_counters(&rx1, &tx1);
	unsigned long long t1 = mono();
	printf("lo %llu %llu %llu %llu\n", rx1 - rx0, tx1 - tx0, t0, t1);
	free(b);
	return 0;
}
