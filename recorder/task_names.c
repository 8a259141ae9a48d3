#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "task_names.h"

int tn_init(struct tn_table *t)
{
	memset(t, 0, sizeof(*t));
	t->cap = 1024;
	t->e = calloc(t->cap, sizeof(*t->e));
	return t->e ? 0 : -ENOMEM;
}

void tn_release(struct tn_table *t)
{
	free(t->e);
	t->e = NULL;
}

static struct tn_entry *slot(struct tn_table *t, int32_t tid)
{
	uint32_t m = t->cap - 1, i = ((uint32_t)tid * 2654435761u) & m;
	while (t->e[i].tid && t->e[i].tid != tid)
		i = (i + 1) & m;
	return &t->e[i];
}

static int grow(struct tn_table *t)
{
	struct tn_entry *old = t->e;
	uint32_t oldcap = t->cap;
	t->e = calloc(oldcap * 2, sizeof(*t->e));
	if (!t->e) {
		t->e = old;
		return -ENOMEM;
	}
	t->cap = oldcap * 2;
	for (uint32_t i = 0; i < oldcap; i++)
		if (old[i].tid)
			*slot(t, old[i].tid) = old[i];
	free(old);
	return 0;
}

/* Returns the entry for tid, inserting it (pid -1, no name) when new;
 * *fresh says which. NULL on allocation failure. */
static struct tn_entry *lookup(struct tn_table *t, int32_t tid, int *fresh)
{
	if (t->n * 2 >= t->cap && grow(t))
		return NULL;
	struct tn_entry *e = slot(t, tid);
	*fresh = !e->tid;
	if (*fresh) {
		e->tid = tid;
		e->pid = -1;
		e->n = 0;
		t->n++;
	}
	return e;
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t r = read(fd, buf, len - 1);
	close(fd);
	if (r < 0)
		return -errno;
	buf[r] = 0;
	return (int)r;
}

/* Name and thread group of a live tid from /proc/TID/status. */
static int proc_task(int32_t tid, char comm[32], int32_t *pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return -ENOENT;
	char *n = strstr(buf, "Name:\t"), *g = strstr(buf, "\nTgid:\t");
	if (!n || !g)
		return -ENOENT;
	n += 6;
	size_t l = strcspn(n, "\n");
	if (l > 31)
		l = 31;
	memcpy(comm, n, l);
	comm[l] = 0;
	*pid = atoi(g + 7);
	return 0;
}

int32_t tn_proc_tgid(int32_t tid)
{
	char c[32];
	int32_t pid;
	return tid > 0 && proc_task(tid, c, &pid) == 0 ? pid : -1;
}

/* Keeps name nm in e's history, in time order; the oldest goes when full,
 * or nm itself when it is older than all. */
static void keep(struct tn_entry *e, const struct tn_name *nm)
{
	int k = e->n;
	while (k > 0 && e->h[k - 1].ts > nm->ts)
		k--;
	if (e->n == TN_HIST) {
		if (!k)
			return;
		memmove(&e->h[0], &e->h[1], (size_t)(k - 1) * sizeof(e->h[0]));
		k--;
	} else {
		memmove(&e->h[k + 1], &e->h[k], (size_t)(e->n - k) * sizeof(e->h[0]));
		e->n++;
	}
	e->h[k] = *nm;
}

static int write_name(struct tpp_writer *w, const struct tn_entry *e, const struct tn_name *nm)
{
	char c[32];
	memcpy(c, nm->comm, nm->len);
	c[nm->len] = 0;
	/* -1, not the tid: a thread taken for a process of its own has no
	 * memory maps, and its calls no names */
	return tpp_w_task(w, nm->ts, e->pid, e->tid, c);
}

/* tid was named comm at ts. Written unless the name in force at ts (the last
 * kept at or before it) says the same; before every kept name it is not
 * known (the first may be a /proc read, later than the task's renames). */
static int record(struct tn_table *t, struct tpp_writer *w, uint64_t ts, struct tn_entry *e,
		  int32_t pid, const char *comm, uint32_t len)
{
	if (len > sizeof(e->h[0].comm))
		len = sizeof(e->h[0].comm);
	int32_t old_pid = e->pid;
	if (pid >= 0)
		e->pid = pid;
	int k = e->n;
	while (k > 0 && e->h[k - 1].ts > ts)
		k--;
	struct tn_name *in = k ? &e->h[k - 1] : NULL;
	if (in && e->pid == old_pid && in->len == len && !memcmp(in->comm, comm, len)) {
		if (ts > in->last)
			in->last = ts;
		return 0;
	}
	struct tn_name nm = {.ts = ts, .last = ts, .len = (uint8_t)len};
	memcpy(nm.comm, comm, len);
	if (e->pid >= 0 && e->pid != old_pid && t->on_new_pid)
		t->on_new_pid(t->arg, e->pid);
	int err = write_name(w, e, &nm);
	/* the name in force was seen again after ts: it holds again from then */
	struct tn_name again = {0};
	if (!err && in && in->last > ts && (in->len != len || memcmp(in->comm, comm, len))) {
		again = *in;
		again.ts = in->last;
		in->last = in->ts;
		err = write_name(w, e, &again);
	}
	if (err)
		return err;
	keep(e, &nm);
	if (again.ts)
		keep(e, &again);
	return 0;
}

int tn_named(struct tn_table *t, struct tpp_writer *w, uint64_t ts, int32_t pid, int32_t tid,
	     const char *comm, uint32_t len)
{
	if (tid <= 0) /* the per-CPU idle tasks all share tid 0: one record */
		return t->idle_done++ ? 0 : tpp_w_task(w, ts, 0, 0, "swapper");
	int fresh;
	struct tn_entry *e = lookup(t, tid, &fresh);
	if (!e)
		return -ENOMEM;
	if (fresh && pid < 0) {
		char c[32];
		int32_t p;
		t->proc_reads++;
		if (proc_task(tid, c, &p) == 0)
			pid = p;
	}
	return record(t, w, ts, e, pid, comm, (uint32_t)strnlen(comm, len));
}

int tn_seen(struct tn_table *t, struct tpp_writer *w, uint64_t ts, int32_t tid)
{
	if (tid <= 0)
		return t->idle_done++ ? 0 : tpp_w_task(w, ts, 0, 0, "swapper");
	int fresh;
	struct tn_entry *e = lookup(t, tid, &fresh);
	if (!e)
		return -ENOMEM;
	if (!fresh)
		return 0;
	char c[32];
	int32_t pid;
	t->proc_reads++;
	if (proc_task(tid, c, &pid) != 0) {
		/* gone already: a later fork/exec/switch event may still name it */
		return 0;
	}
	/* the name now, not at ts: the task may have exec'd or renamed since */
	uint64_t now = t->now ? t->now() : ts;
	return record(t, w, now > ts ? now : ts, e, pid, c, (uint32_t)strlen(c));
}

int32_t tn_pid_of(struct tn_table *t, int32_t tid)
{
	if (tid <= 0)
		return tid == 0 ? 0 : -1;
	struct tn_entry *e = slot(t, tid);
	if (e->tid == tid && e->pid >= 0)
		return e->pid;
	t->proc_reads++;
	return tn_proc_tgid(tid);
}

int tn_newtask(struct tn_table *t, struct tpp_writer *w, uint64_t ts, int32_t parent_tid, int32_t child,
	       const char *comm, uint32_t len, uint64_t clone_flags)
{
	if (child <= 0)
		return 0;
	int32_t ppid = tn_pid_of(t, parent_tid);
	int32_t pid = clone_flags & CLONE_THREAD ? ppid : child;
	int fresh;
	struct tn_entry *e = lookup(t, child, &fresh);
	if (!e)
		return -ENOMEM;
	if (!(clone_flags & CLONE_THREAD) && ppid > 0 && t->on_fork)
		t->on_fork(t->arg, ppid, child);
	return record(t, w, ts, e, pid, comm, (uint32_t)strnlen(comm, len));
}

int tn_exec(struct tn_table *t, struct tpp_writer *w, uint64_t ts, int32_t pid, const char *comm, uint32_t len)
{
	int err = tn_named(t, w, ts, pid, pid, comm, len);
	if (!err && pid > 0 && t->on_exec)
		t->on_exec(t->arg, pid);
	return err;
}

int tn_scan_proc(struct tn_table *t, struct tpp_writer *w, uint64_t ts)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *de;
	int err = 0;
	while (!err && (de = readdir(d))) {
		int32_t pid = atoi(de->d_name);
		if (pid <= 0)
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		DIR *td = opendir(path);
		if (!td)
			continue;
		struct dirent *te;
		while (!err && (te = readdir(td))) {
			int32_t tid = atoi(te->d_name);
			if (tid <= 0)
				continue;
			char cpath[96], c[64];
			snprintf(cpath, sizeof(cpath), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
			int n = read_small(cpath, c, sizeof(c));
			if (n <= 0)
				continue;
			c[strcspn(c, "\n")] = 0;
			int fresh;
			struct tn_entry *e = lookup(t, tid, &fresh);
			err = e ? record(t, w, ts, e, pid, c, (uint32_t)strlen(c)) : -ENOMEM;
		}
		closedir(td);
	}
	closedir(d);
	return tn_named(t, w, ts, 0, 0, "", 0) < 0 ? -EIO : err;
}
