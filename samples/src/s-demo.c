/* s-demo [ROUNDS BLOCKS MESSAGES [FILE]]: the workload of `make demo` as one
 * instrumented program, so that a single system-wide recording
 *   tracerec record -a -e sched,block,net -- s-demo-fi ...
 * holds the kernel's view of the work and the calls that did it. The phases
 * run one after another so each has its own stretch of the timeline:
 *   ping-pong  main and a partner thread bounce a byte over two pipes ROUNDS
 *              times (context switches, wakeups);
 *   disk       BLOCKS 4 KiB O_DIRECT writes, then reads, of FILE (block IO;
 *              buffered + fdatasync per block where O_DIRECT is refused, as
 *              on tmpfs, so the call tree stays the same);
 *   tcp        MESSAGES 1000-byte loopback TCP messages, each acked (packets);
 *   digest     a checksum of the data by recursive halving (CPU, call depth).
 * FILE defaults to a temporary file in $TMPDIR or /var/tmp, removed at exit.
 * Every loop that depends on the kernel (short reads) is inside one call, so
 * the call counts follow from the arguments alone; with the defaults:
 * expect: main=1 ping_pong=1 partner=1 volley=400 disk_io=1 prepare_file=1 write_block=100 read_block=100 tcp_transfer=1 receiver=1 send_message=100 wait_ack=100 recv_message=100 send_ack=100 transfer=400 digest=255 fold=128 */
#define _GNU_SOURCE /* O_DIRECT */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BLOCK 4096
#define MSG 1000
#define DIGEST_LEN (64 * 1024)
#define DIGEST_LEAF 512

static long rounds = 200, blocks = 100, messages = 100;
static int ab[2], ba[2];
static int lsock;
static unsigned char data[DIGEST_LEN] __attribute__((aligned(BLOCK)));

static void fail(const char *what)
{
	fprintf(stderr, "s-demo: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* One stroke: send the ball, wait for it to come back (or the reverse). */
void volley(int out, int in, int serve)
{
	char c = 'x';
	if (serve && write(out, &c, 1) != 1)
		fail("pipe write");
	if (read(in, &c, 1) != 1)
		fail("pipe read");
	if (!serve && write(out, &c, 1) != 1)
		fail("pipe write");
}

void *partner(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++)
		volley(ba[1], ab[0], 0);
	return NULL;
}

void ping_pong(void)
{
	pthread_t th;
	if (pipe(ab) || pipe(ba))
		fail("pipe");
	pthread_create(&th, NULL, partner, NULL);
	for (long i = 0; i < rounds; i++)
		volley(ab[1], ba[0], 1);
	pthread_join(th, NULL);
	close(ab[0]), close(ab[1]), close(ba[0]), close(ba[1]);
}

/* Written and synced first, so the measured writes overwrite allocated
 * blocks: plain data IO, no allocation or journal traffic in between. */
int prepare_file(const char *path, int *direct)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		fail(path);
	for (long i = 0; i < blocks; i++)
		if (write(fd, data, BLOCK) != BLOCK)
			fail("write");
	if (fsync(fd))
		fail("fsync");
	close(fd);
	fd = open(path, O_RDWR | O_DIRECT);
	*direct = fd >= 0;
	if (fd < 0 && (fd = open(path, O_RDWR)) < 0)
		fail(path);
	return fd;
}

void write_block(int fd, long i, int direct)
{
	if (pwrite(fd, data, BLOCK, (off_t)i * BLOCK) != BLOCK)
		fail("pwrite");
	if (!direct && fdatasync(fd))
		fail("fdatasync");
}

void read_block(int fd, long i, int direct)
{
	if (!direct)
		posix_fadvise(fd, (off_t)i * BLOCK, BLOCK, POSIX_FADV_DONTNEED);
	if (pread(fd, data, BLOCK, (off_t)i * BLOCK) != BLOCK)
		fail("pread");
}

void disk_io(const char *path)
{
	int direct;
	int fd = prepare_file(path, &direct);
	for (long i = 0; i < blocks; i++)
		write_block(fd, i, direct);
	for (long i = 0; i < blocks; i++)
		read_block(fd, i, direct);
	close(fd);
}

/* The whole of n bytes, however the kernel splits them. */
void transfer(int fd, unsigned char *b, long n, int wr)
{
	while (n > 0) {
		ssize_t r = wr ? write(fd, b, (size_t)n) : read(fd, b, (size_t)n);
		if (r <= 0)
			fail(wr ? "socket write" : "socket read");
		b += r;
		n -= r;
	}
}

void recv_message(int fd, unsigned char *b) { transfer(fd, b, MSG, 0); }
void send_ack(int fd, unsigned char *b) { transfer(fd, b, 1, 1); }
void send_message(int fd, unsigned char *b) { transfer(fd, b, MSG, 1); }
void wait_ack(int fd, unsigned char *b) { transfer(fd, b, 1, 0); }

void *receiver(void *arg)
{
	unsigned char b[MSG];
	(void)arg;
	int c = accept(lsock, NULL, NULL);
	if (c < 0)
		fail("accept");
	for (long i = 0; i < messages; i++) {
		recv_message(c, b);
		send_ack(c, b);
	}
	close(c);
	return NULL;
}

void tcp_transfer(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int one = 1;
	lsock = socket(AF_INET, SOCK_STREAM, 0);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&a, sizeof(a)) || listen(lsock, 1) ||
	    getsockname(lsock, (struct sockaddr *)&a, &al))
		fail("listen on loopback");
	pthread_t th;
	pthread_create(&th, NULL, receiver, NULL);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	/* Without Nagle each message leaves as its own packets. */
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(s, (struct sockaddr *)&a, sizeof(a)))
		fail("connect");
	for (long i = 0; i < messages; i++) {
		send_message(s, data);
		wait_ack(s, data);
	}
	close(s);
	pthread_join(th, NULL);
	close(lsock);
}

/* Many passes per leaf, so the phase is wide enough to see in the flame
 * chart (a few ms) without changing the call counts. */
unsigned long fold(const unsigned char *b, size_t n)
{
	unsigned long h = 5381;
	for (int pass = 0; pass < 64; pass++)
		for (size_t i = 0; i < n; i++)
			h = h * 33 + (b[i] ^ (unsigned char)pass);
	return h;
}

unsigned long digest(const unsigned char *b, size_t n)
{
	if (n <= DIGEST_LEAF)
		return fold(b, n);
	return digest(b, n / 2) * 31 + digest(b + n / 2, n - n / 2);
}

int main(int argc, char **argv)
{
	char tmp[4096];
	const char *path;
	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		blocks = atol(argv[2]);
	if (argc > 3)
		messages = atol(argv[3]);
	if (rounds < 0 || blocks < 0 || messages < 0) {
		fprintf(stderr, "usage: s-demo [ROUNDS BLOCKS MESSAGES [FILE]]\n");
		return 2;
	}
	if (argc > 4) {
		path = argv[4];
	} else {
		const char *d = getenv("TMPDIR");
		snprintf(tmp, sizeof(tmp), "%s/s-demo.XXXXXX", d && *d ? d : "/var/tmp");
		int fd = mkstemp(tmp);
		if (fd < 0)
			fail(tmp);
		close(fd);
		path = tmp;
	}
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 7 + 3);
	ping_pong();
	disk_io(path);
	if (argc <= 4)
		unlink(path);
	tcp_transfer();
	printf("digest %lx\n", digest(data, sizeof(data)));
	return 0;
}
