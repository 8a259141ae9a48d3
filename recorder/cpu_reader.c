/* read(2) of whole sub-buffers rather than splice: one copy of a 4 KiB page
 * per ~60 events costs less than the pipe bookkeeping splice needs, and the
 * page must reach user memory anyway to be transcoded. Pages are parsed by
 * libtraceevent's kbuffer on the writer thread, not here.
 *
 * A read of the page the kernel is still writing copies its events out one
 * by one. A reader that reads until the buffer is empty chases the writer
 * that way, a few events per read(2): on a pinned ping-pong 12,900 reads
 * for ~2,700 pages' worth, each read bouncing the cache lines of the page
 * the traced CPU writes, each a hand-off to the writer thread. So once woken,
 * a reader takes the full pages and the first partial one, then waits again
 * (buffer_percent, or poll_ms for a quiet CPU); only the final drain and the
 * flight recorder's reads go on until the buffer is empty. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "cpu_reader.h"

struct rd_cpu {
	struct rd_set *rs;
	pthread_t th;
	int cpu, fd, stats_fd, started;
	struct rd_item *free; /* this CPU's own pages: readers never starve each other */
	int npages;           /* allocated so far, up to o.pages_per_cpu */
	uint64_t lost_seen, overrun_seen, last_check;
	unsigned drain_gen;
};

struct rd_set {
	struct rd_opts o;
	pthread_mutex_t mu;
	pthread_cond_t have_item, have_free, wake;
	struct rd_item *head, *tail;
	int stopping, running, err;
	unsigned drain_gen;
	struct rd_cpu *c;
	int nc;
	/* rd_stop makes wake_fd readable so that readers in poll() and the
	 * watcher leave at once: the end of a recording waits for no timeout */
	int wake_fd;
	pthread_t watcher;
	int watching, watch_fired; /* fired: 1 = rd_pop to return, 2 = done */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t stat_num(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

static void push(struct rd_set *rs, struct rd_item *it)
{
	pthread_mutex_lock(&rs->mu);
	it->next = NULL;
	if (rs->tail)
		rs->tail->next = it;
	else
		rs->head = it;
	rs->tail = it;
	pthread_cond_signal(&rs->have_item);
	pthread_mutex_unlock(&rs->mu);
}

/* A free page of this CPU, waiting for the writer to release one. */
static struct rd_item *get_free(struct rd_cpu *c)
{
	struct rd_set *rs = c->rs;
	pthread_mutex_lock(&rs->mu);
	/* pages are allocated on first need: a quiet CPU costs none, a busy one
	 * grows to the cap; the page faults of a full pool up front were a
	 * measurable share of a short recording's CPU time */
	if (!c->free && c->npages < rs->o.pages_per_cpu) {
		struct rd_item *it = malloc(sizeof(*it) + rs->o.page_size);
		if (it) {
			c->npages++;
			pthread_mutex_unlock(&rs->mu);
			return it;
		}
	}
	while (!c->free)
		pthread_cond_wait(&rs->have_free, &rs->mu);
	struct rd_item *it = c->free;
	c->free = it->next;
	pthread_mutex_unlock(&rs->mu);
	return it;
}

static void put_free(struct rd_cpu *c, struct rd_item *it)
{
	pthread_mutex_lock(&c->rs->mu);
	it->next = c->free;
	c->free = it;
	pthread_cond_broadcast(&c->rs->have_free);
	pthread_mutex_unlock(&c->rs->mu);
}

static void set_err(struct rd_set *rs, int err)
{
	pthread_mutex_lock(&rs->mu);
	if (!rs->err)
		rs->err = err;
	pthread_mutex_unlock(&rs->mu);
}

/* Whether a page read is one the kernel had not finished writing. The page
 * header is the 64-bit kernel's: u64 time stamp, long commit (the data's
 * length; the top two bits flag missed events). A finished page is full but
 * for the room the next event did not find; SLACK is more than nearly every
 * event takes. A wrong guess costs only an earlier or later read. */
#define PAGE_HEADER 16
#define SLACK 256
static int page_partial(const struct rd_set *rs, const struct rd_item *it)
{
	uint64_t commit;
	if (it->len < PAGE_HEADER)
		return 1;
	memcpy(&commit, it->data + 8, sizeof(commit));
	commit &= (1ull << 30) - 1;
	return commit + SLACK < rs->o.page_size - PAGE_HEADER;
}

/* Reads pages until the buffer is empty (to_empty), or up to and including
 * the first page the kernel is still writing. */
static void read_all(struct rd_cpu *c, int to_empty)
{
	struct rd_set *rs = c->rs;
	for (;;) {
		struct rd_item *it = get_free(c);
		ssize_t n = read(c->fd, it->data, rs->o.page_size);
		if (n <= 0) {
			int e = n < 0 ? errno : 0;
			put_free(c, it);
			if (e && e != EAGAIN && e != EINTR)
				set_err(rs, -e);
			if (e == EINTR)
				continue;
			return;
		}
		it->kind = RD_PAGE;
		it->cpu = c->cpu;
		it->len = (uint32_t)n;
		int last = !to_empty && page_partial(rs, it);
		push(rs, it);
		if (last)
			return;
	}
}

static void check_stats(struct rd_cpu *c)
{
	char buf[512];
	ssize_t n = pread(c->stats_fd, buf, sizeof(buf) - 1, 0);
	uint64_t now = now_ns();
	if (n <= 0)
		return;
	buf[n] = 0;
	uint64_t overrun = stat_num(buf, "\noverrun: ");
	uint64_t dropped = stat_num(buf, "dropped events: ");
	uint64_t lost = dropped + (c->rs->o.count_overrun ? overrun : 0);
	c->overrun_seen = overrun;
	if (lost > c->lost_seen) {
		struct rd_item *it = get_free(c);
		it->kind = RD_LOST;
		it->cpu = c->cpu;
		it->lost = lost - c->lost_seen;
		it->from = c->last_check;
		it->to = now;
		push(c->rs, it);
		c->lost_seen = lost;
	}
	c->last_check = now;
}

static void *reader_main(void *arg)
{
	struct rd_cpu *c = arg;
	struct rd_set *rs = c->rs;
	for (;;) {
		pthread_mutex_lock(&rs->mu);
		int stopping = rs->stopping;
		unsigned gen = rs->drain_gen;
		pthread_mutex_unlock(&rs->mu);
		if (stopping || !rs->o.hold || gen != c->drain_gen) {
			read_all(c, stopping || rs->o.hold);
			check_stats(c);
			c->drain_gen = gen;
		}
		if (stopping)
			break;
		if (rs->o.hold) {
			pthread_mutex_lock(&rs->mu);
			if (!rs->stopping && rs->drain_gen == c->drain_gen) {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += (long)rs->o.poll_ms * 1000000L;
				ts.tv_sec += ts.tv_nsec / 1000000000L;
				ts.tv_nsec %= 1000000000L;
				pthread_cond_timedwait(&rs->wake, &rs->mu, &ts);
			}
			pthread_mutex_unlock(&rs->mu);
		} else {
			/* poll wakes when the instance's buffer_percent is reached, or
			 * at the timeout to pick up a partial page */
			struct pollfd p[2] = {{.fd = c->fd, .events = POLLIN},
					      {.fd = rs->wake_fd, .events = POLLIN}};
			poll(p, 2, rs->o.poll_ms);
		}
	}
	pthread_mutex_lock(&rs->mu);
	rs->running--;
	pthread_cond_broadcast(&rs->have_item);
	pthread_mutex_unlock(&rs->mu);
	return NULL;
}

/* Waits for o.watch_fd (the command's exit) so that the writer, asleep in
 * rd_pop, learns of it now rather than at its next timeout. */
static void *watcher_main(void *arg)
{
	struct rd_set *rs = arg;
	struct pollfd p[2] = {{.fd = rs->o.watch_fd, .events = POLLIN}, {.fd = rs->wake_fd, .events = POLLIN}};
	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	if (p[0].revents) {
		pthread_mutex_lock(&rs->mu);
		rs->watch_fired = 1;
		pthread_cond_broadcast(&rs->have_item);
		pthread_mutex_unlock(&rs->mu);
	}
	return NULL;
}

int rd_start(struct rd_set **out, const struct rd_opts *o)
{
	*out = NULL;
	struct rd_set *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->o = *o;
	pthread_mutex_init(&rs->mu, NULL);
	pthread_cond_init(&rs->have_item, NULL);
	pthread_cond_init(&rs->have_free, NULL);
	pthread_cond_init(&rs->wake, NULL);
	rs->c = calloc((size_t)o->ncpus, sizeof(*rs->c));
	if (!rs->c) {
		free(rs);
		return -ENOMEM;
	}
	rs->nc = o->ncpus;
	for (int i = 0; i < o->ncpus; i++)
		rs->c[i].fd = rs->c[i].stats_fd = -1;
	int err = 0;
	rs->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (rs->wake_fd < 0)
		err = -errno;
	for (int i = 0; i < o->ncpus && !err; i++) {
		struct rd_cpu *c = &rs->c[i];
		c->rs = rs;
		c->cpu = o->cpus[i];
		c->fd = c->stats_fd = -1;
		char path[512];
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", o->instance_dir, c->cpu);
		c->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", o->instance_dir, c->cpu);
		c->stats_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (c->fd < 0 || c->stats_fd < 0) {
			err = -errno;
			break;
		}
		/* one page up front so a reader can always make progress */
		struct rd_item *it = malloc(sizeof(*it) + o->page_size);
		if (!it) {
			err = -ENOMEM;
			break;
		}
		it->next = NULL;
		c->free = it;
		c->npages = 1;
		c->last_check = now_ns();
		{ /* baseline: count only what is lost from now on */
			char buf[512];
			ssize_t n = pread(c->stats_fd, buf, sizeof(buf) - 1, 0);
			if (n > 0) {
				buf[n] = 0;
				c->lost_seen = stat_num(buf, "dropped events: ") +
					       (o->count_overrun ? stat_num(buf, "\noverrun: ") : 0);
			}
		}
	}
	for (int i = 0; i < o->ncpus && !err; i++) {
		if (pthread_create(&rs->c[i].th, NULL, reader_main, &rs->c[i])) {
			err = -EAGAIN;
			break;
		}
		rs->c[i].started = 1;
		pthread_mutex_lock(&rs->mu);
		rs->running++;
		pthread_mutex_unlock(&rs->mu);
	}
	if (!err && o->watch_fd >= 0 && !pthread_create(&rs->watcher, NULL, watcher_main, rs))
		rs->watching = 1;
	*out = rs;
	if (err) {
		rd_stop(rs);
		struct rd_item *it;
		while ((it = rd_pop(rs, 100)) || !rd_finished(rs))
			if (it)
				rd_release(rs, it);
		rd_free(rs);
		*out = NULL;
	}
	return err;
}

struct rd_item *rd_pop(struct rd_set *rs, int timeout_ms)
{
	pthread_mutex_lock(&rs->mu);
	if (!rs->head && rs->running > 0 && rs->watch_fired != 1) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)timeout_ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&rs->have_item, &rs->mu, &ts);
	}
	struct rd_item *it = rs->head;
	if (it) {
		rs->head = it->next;
		if (!rs->head)
			rs->tail = NULL;
	} else if (rs->watch_fired == 1) {
		rs->watch_fired = 2;
	}
	pthread_mutex_unlock(&rs->mu);
	return it;
}

void rd_release(struct rd_set *rs, struct rd_item *it)
{
	for (int i = 0; i < rs->nc; i++)
		if (rs->c[i].cpu == it->cpu) {
			put_free(&rs->c[i], it);
			return;
		}
	free(it);
}

void rd_drain(struct rd_set *rs)
{
	pthread_mutex_lock(&rs->mu);
	rs->drain_gen++;
	pthread_cond_broadcast(&rs->wake);
	pthread_mutex_unlock(&rs->mu);
}

void rd_stop(struct rd_set *rs)
{
	pthread_mutex_lock(&rs->mu);
	rs->stopping = 1;
	pthread_cond_broadcast(&rs->wake);
	pthread_mutex_unlock(&rs->mu);
	if (rs->wake_fd >= 0 && eventfd_write(rs->wake_fd, 1) < 0)
		return; /* only at its limit of 2^64-2, and readers are awake then */
}

int rd_finished(struct rd_set *rs)
{
	pthread_mutex_lock(&rs->mu);
	int f = rs->running == 0 && !rs->head;
	pthread_mutex_unlock(&rs->mu);
	return f;
}

void rd_free(struct rd_set *rs)
{
	if (!rs)
		return;
	rd_stop(rs);
	for (int i = 0; i < rs->nc; i++) {
		struct rd_cpu *c = &rs->c[i];
		if (c->started)
			pthread_join(c->th, NULL);
	}
	if (rs->watching)
		pthread_join(rs->watcher, NULL);
	if (rs->wake_fd >= 0)
		close(rs->wake_fd);
	struct rd_item *it;
	while ((it = rs->head)) {
		rs->head = it->next;
		free(it);
	}
	for (int i = 0; i < rs->nc; i++) {
		struct rd_cpu *c = &rs->c[i];
		while ((it = c->free)) {
			c->free = it->next;
			free(it);
		}
		if (c->fd >= 0)
			close(c->fd);
		if (c->stats_fd >= 0)
			close(c->stats_fd);
	}
	free(rs->c);
	free(rs);
}

uint64_t rd_overrun_total(struct rd_set *rs)
{
	uint64_t t = 0;
	pthread_mutex_lock(&rs->mu);
	for (int i = 0; i < rs->nc; i++)
		t += rs->c[i].overrun_seen;
	pthread_mutex_unlock(&rs->mu);
	return t;
}

int rd_error(struct rd_set *rs)
{
	pthread_mutex_lock(&rs->mu);
	int e = rs->err;
	pthread_mutex_unlock(&rs->mu);
	return e;
}
