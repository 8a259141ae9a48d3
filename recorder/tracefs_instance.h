/* tracefs_instance — a private ftrace instance (instances/tracepp-PID) that
 * the recorder creates, configures and removes, so other tracers using the
 * top-level buffer or their own instances are never disturbed.
 * Errors: negative errno values; nothing prints.
 */
#ifndef TPP_REC_TRACEFS_INSTANCE_H
#define TPP_REC_TRACEFS_INSTANCE_H

#include <stddef.h>

struct tfs_inst {
	char root[256];   /* tracefs mount, e.g. /sys/kernel/tracing */
	char dir[384];    /* root/instances/NAME; "" when not created */
	char name[64];
	int guard_fd;     /* write end of the guard's pipe (see tfs_inst_create) */
	int guard_pid;
};

/* Finds the tracefs mount (mounting it at /sys/kernel/tracing when the
 * directory exists but is empty). -ENOENT when tracefs is unavailable. */
int tfs_find_root(char *root, size_t len);
/* Creates root/instances/tracepp-PID and a guard process that removes it
 * when this process ends in any way, even by SIGKILL. -EEXIST if a stale
 * one of the same name cannot be removed, -EACCES/-EPERM without permission. */
int tfs_inst_create(struct tfs_inst *ti, const char *root);
/* Writes val to the instance file rel ("trace_clock", "events/sched/enable").
 * Returns 0 or -errno of the failing open/write. */
int tfs_write(const struct tfs_inst *ti, const char *rel, const char *val);
/* Appends (O_APPEND), for set_event_pid. */
int tfs_append(const struct tfs_inst *ti, const char *rel, const char *val);
/* Reads up to len-1 bytes of a file into buf (NUL-terminated). */
int tfs_read(const struct tfs_inst *ti, const char *rel, char *buf, size_t len);
/* Disables events, removes the instance. Idempotent; safe to call twice. */
void tfs_inst_destroy(struct tfs_inst *ti);

#endif
