#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "event_select.h"

struct group {
	const char *name;
	const char *const *events; /* "system/name" */
};

/* sched_stat_runtime is the kernel's own clock for each task it runs (what
 * /proc/PID/schedstat adds up): tracepp's scheduler accounting reads its
 * on-CPU time and run-queue waits from it, as perf sched record does. */
static const char *const g_sched[] = {
	"sched/sched_switch", "sched/sched_wakeup", "sched/sched_wakeup_new",
	"sched/sched_migrate_task", "sched/sched_process_fork", "sched/sched_process_exec",
	"sched/sched_process_exit", "sched/sched_stat_runtime", NULL};
static const char *const g_block[] = {"block/block_rq_insert", "block/block_rq_issue",
				      "block/block_rq_complete", NULL};
/* inet_sock_set_state is where the kernel reports TCP state changes. */
static const char *const g_net[] = {"net/net_dev_xmit", "net/netif_receive_skb",
				    "sock/inet_sock_set_state", "tcp/tcp_retransmit_skb",
				    "tcp/tcp_retransmit_synack", NULL};
static const char *const g_sys[] = {"raw_syscalls/sys_enter", "raw_syscalls/sys_exit", NULL};

static const struct group groups[] = {
	{"sched", g_sched}, {"block", g_block}, {"net", g_net}, {"syscalls", g_sys},
};

static const char *const group_names[] = {"sched", "block", "net", "syscalls", NULL};

const char *const *es_group_names(void)
{
	return group_names;
}

static int exists(const char *events_dir, const char *system, const char *name)
{
	char path[512];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s/%s/format", events_dir, system, name);
	return stat(path, &st) == 0;
}

static int push(struct es_list *l, const char *system, const char *name, int from_group)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].system, system) && !strcmp(l->v[i].name, name))
			return 0;
	if (strlen(system) >= sizeof(l->v[0].system) || strlen(name) >= sizeof(l->v[0].name))
		return -ENAMETOOLONG;
	struct es_event *nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	l->v = nv;
	struct es_event *e = &nv[l->n++];
	memset(e, 0, sizeof(*e));
	strcpy(e->system, system);
	strcpy(e->name, name);
	e->from_group = from_group;
	return 0;
}

static int add_word(struct es_list *l, const char *dir, const char *w)
{
	char sys[64], name[128];
	const char *sep = strpbrk(w, ":/");
	if (sep) {
		size_t sl = (size_t)(sep - w);
		if (!sl || sl >= sizeof(sys) || strlen(sep + 1) >= sizeof(name) || !sep[1])
			goto unknown;
		memcpy(sys, w, sl);
		sys[sl] = 0;
		strcpy(name, sep + 1);
		if (!strchr(name, '/') && exists(dir, sys, name))
			return push(l, sys, name, 0);
		goto unknown;
	}
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		if (strcmp(groups[g].name, w))
			continue;
		int n = 0;
		for (const char *const *e = groups[g].events; *e; e++) {
			const char *s = strchr(*e, '/');
			snprintf(sys, sizeof(sys), "%.*s", (int)(s - *e), *e);
			/* groups name what exists on most kernels: skip the rest */
			if (exists(dir, sys, s + 1)) {
				int err = push(l, sys, s + 1, 1);
				if (err)
					return err;
				n++;
			}
		}
		if (n)
			return 0;
		goto unknown;
	}
	/* a whole tracefs subsystem */
	if (strlen(w) < sizeof(sys) && !strchr(w, '.')) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, w);
		DIR *d = opendir(path);
		if (d) {
			struct dirent *de;
			int n = 0, err = 0;
			while (!err && (de = readdir(d)))
				if (de->d_name[0] != '.' && exists(dir, w, de->d_name)) {
					err = push(l, w, de->d_name, 1);
					n++;
				}
			closedir(d);
			if (err || n)
				return err;
		}
	}
	/* a bare event name, when exactly one subsystem has it */
	DIR *d = opendir(dir);
	int found = 0;
	if (d && strlen(w) < sizeof(name)) {
		struct dirent *de;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && strlen(de->d_name) < sizeof(sys) &&
			    exists(dir, de->d_name, w)) {
				if (!found++)
					strcpy(sys, de->d_name);
			}
	}
	if (d)
		closedir(d);
	if (found == 1)
		return push(l, sys, w, 0);
unknown:
	snprintf(l->msg, sizeof(l->msg), "unknown event '%s' (see 'tracerec list')", w);
	return -ENOENT;
}

int es_add(struct es_list *l, const char *events_dir, const char *spec)
{
	char buf[1024];
	if (strlen(spec) >= sizeof(buf) || !*spec) {
		snprintf(l->msg, sizeof(l->msg), "bad event list '%.64s'", spec);
		return -EINVAL;
	}
	strcpy(buf, spec);
	l->last_start = l->n;
	char *save = NULL;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int err = add_word(l, events_dir, w);
		if (err)
			return err;
	}
	return 0;
}

int es_add_raw(struct es_list *l, const char *sn)
{
	const char *s = strchr(sn, '/');
	char sys[64];
	if (!s || (size_t)(s - sn) >= sizeof(sys))
		return -EINVAL;
	snprintf(sys, sizeof(sys), "%.*s", (int)(s - sn), sn);
	return push(l, sys, s + 1, 0);
}

int es_add_names(struct es_list *l, const char *dir, const char *sn)
{
	const char *s = strchr(sn, '/');
	char sys[64];
	if (!s || (size_t)(s - sn) >= sizeof(sys))
		return -EINVAL;
	snprintf(sys, sizeof(sys), "%.*s", (int)(s - sn), sn);
	if (!exists(dir, sys, s + 1))
		return 0;
	size_t n = l->n;
	int err = push(l, sys, s + 1, 0);
	if (!err && l->n > n)
		l->v[n].names_only = 1;
	return err;
}

int es_set_filter(struct es_list *l, const char *filter)
{
	if (l->last_start >= l->n) {
		snprintf(l->msg, sizeof(l->msg), "--filter must follow the -e it applies to");
		return -EINVAL;
	}
	for (size_t i = l->last_start; i < l->n; i++)
		l->v[i].filter = filter;
	return 0;
}

void es_release(struct es_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}
