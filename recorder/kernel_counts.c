/* One perf group per CPU (leader = first event) so enabling, disabling and
 * reading cost one syscall per CPU, which keeps the window between the
 * counters and the ring buffer starting and stopping short. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kernel_counts.h"

struct kc_set {
	int ncpus, nids;
	int *fds;        /* [ci * nids + ev]; the leader of CPU ci is ev 0 */
	uint64_t *count; /* same layout */
};

_Static_assert((int)KC_SOFTWARE == (int)PERF_TYPE_SOFTWARE &&
		       (int)KC_TRACEPOINT == (int)PERF_TYPE_TRACEPOINT &&
		       (int)KC_SW_CONTEXT_SWITCHES == (int)PERF_COUNT_SW_CONTEXT_SWITCHES,
	       "kc types are perf types");

static int perf_open(const struct kc_counter *k, int cpu, int group_fd)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = k->type;
	a.config = k->config;
	a.disabled = group_fd < 0; /* members follow their leader */
	a.read_format = PERF_FORMAT_GROUP;
	long fd = syscall(SYS_perf_event_open, &a, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int kc_open(struct kc_set **out, const int *cpus, int ncpus, const struct kc_counter *what,
	    int nids)
{
	*out = NULL;
	if (ncpus <= 0 || nids <= 0)
		return -EINVAL;
	struct kc_set *ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	ks->ncpus = ncpus;
	ks->nids = nids;
	ks->fds = malloc((size_t)ncpus * (size_t)nids * sizeof(*ks->fds));
	ks->count = calloc((size_t)ncpus * (size_t)nids, sizeof(*ks->count));
	if (!ks->fds || !ks->count) {
		kc_free(ks);
		return -ENOMEM;
	}
	for (int i = 0; i < ncpus * nids; i++)
		ks->fds[i] = -1;
	for (int c = 0; c < ncpus; c++)
		for (int e = 0; e < nids; e++) {
			int lead = e ? ks->fds[c * nids] : -1;
			int fd = perf_open(&what[e], cpus[c], lead);
			if (fd < 0) {
				kc_free(ks);
				return fd;
			}
			ks->fds[c * nids + e] = fd;
		}
	*out = ks;
	return 0;
}

static void close_fds(struct kc_set *ks)
{
	for (int i = 0; i < ks->ncpus * ks->nids; i++)
		if (ks->fds[i] >= 0) {
			close(ks->fds[i]);
			ks->fds[i] = -1;
		}
}

static int each_leader(struct kc_set *ks, unsigned long req)
{
	for (int c = 0; c < ks->ncpus; c++)
		if (ioctl(ks->fds[c * ks->nids], req, PERF_IOC_FLAG_GROUP) < 0)
			return -errno;
	return 0;
}

int kc_enable(struct kc_set *ks)
{
	return each_leader(ks, PERF_EVENT_IOC_ENABLE);
}

int kc_disable(struct kc_set *ks)
{
	int err = each_leader(ks, PERF_EVENT_IOC_DISABLE);
	if (err)
		return err;
	size_t len = (1 + (size_t)ks->nids) * sizeof(uint64_t);
	uint64_t *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	for (int c = 0; c < ks->ncpus && !err; c++) {
		/* PERF_FORMAT_GROUP: nr, then one value per member in creation order */
		ssize_t n = read(ks->fds[c * ks->nids], buf, len);
		if (n != (ssize_t)len || buf[0] != (uint64_t)ks->nids)
			err = n < 0 ? -errno : -EIO;
		else
			memcpy(ks->count + c * ks->nids, buf + 1, (size_t)ks->nids * sizeof(uint64_t));
	}
	free(buf);
	/* the last counter on a tracepoint unregisters the kernel's perf probe
	 * (a text poke on every CPU, then an RCU wait): done now, while the
	 * readers drain, rather than on the way out */
	close_fds(ks);
	return err;
}

uint64_t kc_count(const struct kc_set *ks, int ci, int ev)
{
	return ks->count[ci * ks->nids + ev];
}

void kc_free(struct kc_set *ks)
{
	if (!ks)
		return;
	if (ks->fds)
		close_fds(ks);
	free(ks->fds);
	free(ks->count);
	free(ks);
}
