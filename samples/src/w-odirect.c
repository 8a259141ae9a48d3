/* w-odirect FILE COUNT: COUNT 4 KiB O_DIRECT writes then COUNT reads of FILE
 * (created and written out beforehand, so the measured phase issues plain
 * data IO, no allocation). Around the measured phase it reads the file's
 * disk line in /proc/diskstats and prints
 *   "disk MAJ MIN READS WRITES T0_NS T1_NS"
 * (completed reads and writes during the phase, CLOCK_MONOTONIC bounds).
 * The kernel counts a request when it completes, as block_rq_complete
 * reports it, including completions in interrupt context. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static unsigned long long mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* The whole disk holding dev: diskstats has partitions too, but the block
 * tracepoints report the disk. */
static int disk_stats(unsigned maj, unsigned min, unsigned long long *rd, unsigned long long *wr)
{
	char path[128], line[512];
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", maj, min);
	if (access(path, F_OK) == 0) {
		/* a partition: its parent directory is the disk */
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../dev", maj, min);
		FILE *f = fopen(path, "r");
		if (!f || fscanf(f, "%u:%u", &maj, &min) != 2)
			return -1;
		fclose(f);
	}
	FILE *f = fopen("/proc/diskstats", "r");
	if (!f)
		return -1;
	int found = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned a, b;
		char name[64];
		unsigned long long r, x1, x2, x3, w;
		if (sscanf(line, "%u %u %63s %llu %llu %llu %llu %llu", &a, &b, name, &r, &x1, &x2, &x3,
			   &w) == 8 &&
		    a == maj && b == min) {
			*rd = r;
			*wr = w;
			found = 0;
		}
	}
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: w-odirect FILE COUNT\n");
		return 2;
	}
	long n = atol(argv[2]);
	const size_t bs = 4096;
	void *buf;
	if (posix_memalign(&buf, 4096, bs))
		return 1;
	memset(buf, 'a', bs);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (long i = 0; i < n; i++)
		if (write(fd, buf, bs) != (ssize_t)bs)
			return 1;
	fsync(fd);
	close(fd);
	fd = open(argv[1], O_RDWR | O_DIRECT);
	if (fd < 0) {
		perror("O_DIRECT");
		return 1;
	}
	struct stat st;
	fstat(fd, &st);
	unsigned maj = major(st.st_dev), min = minor(st.st_dev);
	sync();
	usleep(100000); /* let writeback of other files settle */
	unsigned long long r0, w0, r1, w1;
	unsigned long long t0 = mono();
	if (disk_stats(maj, min, &r0, &w0)) {
		fprintf(stderr, "w-odirect: no /proc/diskstats line for %u:%u\n", maj, min);
		return 3;
	}
	for (long i = 0; i < n; i++)
		if (pwrite(fd, buf, bs, (off_t)(i * (long)bs)) != (ssize_t)bs)
			return 1;
	for (long i = 0; i < n; i++)
		if (pread(fd, buf, bs, (off_t)(i * (long)bs)) != (ssize_t)bs)
			return 1;
	disk_stats(maj, min, &r1, &w1);
	unsigned long long t1 = mono();
	close(fd);
	printf("disk %u %u %llu %llu %llu %llu\n", maj, min, r1 - r0, w1 - w0, t0, t1);
	return 0;
}
