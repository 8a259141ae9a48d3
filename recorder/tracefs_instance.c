/* Instance management by hand rather than through libtracefs: it is mkdir,
 * rmdir and a few file writes, and the removal paths (atexit, the guard
 * process) must use only raw syscalls on paths built beforehand anyway. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "func.h"
#include "tracefs_instance.h"

#define TRACEFS_MAGIC_ 0x74726163
#define DEBUGFS_MAGIC_ 0x64626720

/* The one instance this process owns, for the atexit and fatal-signal paths. */
static struct tfs_inst *owned;

static int is_tracefs(const char *dir)
{
	struct statfs sf;
	return statfs(dir, &sf) == 0 && (unsigned long)sf.f_type == TRACEFS_MAGIC_;
}

int tfs_find_root(char *root, size_t len)
{
	static const char *const cand[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	for (size_t i = 0; i < 2; i++)
		if (is_tracefs(cand[i])) {
			snprintf(root, len, "%s", cand[i]);
			return 0;
		}
	struct stat st;
	if (stat(cand[0], &st) == 0 && S_ISDIR(st.st_mode) &&
	    mount("nodev", cand[0], "tracefs", 0, NULL) == 0 && is_tracefs(cand[0])) {
		snprintf(root, len, "%s", cand[0]);
		return 0;
	}
	return errno == EPERM || errno == EACCES ? -EACCES : -ENOENT;
}

static int write_path(const char *path, const char *val, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	size_t n = strlen(val);
	ssize_t w = write(fd, val, n);
	int err = w < 0 ? -errno : (size_t)w != n ? -EIO : 0;
	close(fd);
	return err;
}

int tfs_write(const struct tfs_inst *ti, const char *rel, const char *val)
{
	char path[640];
	snprintf(path, sizeof(path), "%s/%s", ti->dir, rel);
	return write_path(path, val, O_TRUNC);
}

int tfs_append(const struct tfs_inst *ti, const char *rel, const char *val)
{
	char path[640];
	snprintf(path, sizeof(path), "%s/%s", ti->dir, rel);
	return write_path(path, val, O_APPEND);
}

int tfs_read(const struct tfs_inst *ti, const char *rel, char *buf, size_t len)
{
	char path[640];
	snprintf(path, sizeof(path), "%s/%s", ti->dir, rel);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t r = read(fd, buf, len - 1);
	int err = r < 0 ? -errno : 0;
	close(fd);
	buf[r > 0 ? r : 0] = 0;
	return err;
}

/* Async-signal-safe: only syscalls on a path built beforehand. Stops tracing
 * first so the kernel does no work for an instance about to go away. */
static void remove_owned(void)
{
	struct tfs_inst *ti = owned;
	if (!ti || !ti->dir[0])
		return;
	char path[640];
	size_t n = strlen(ti->dir);
	memcpy(path, ti->dir, n);
	memcpy(path + n, "/tracing_on", 12);
	int fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "0", 1) < 0) {
			/* removal below still frees the buffers */
		}
		close(fd);
	}
	memcpy(path + n, "/events/enable", 15);
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "0", 1) < 0) {
		}
		close(fd);
	}
	if (rmdir(ti->dir) == 0 || errno == ENOENT)
		ti->dir[0] = 0;
}

/* The guard: a small child that outlives us. It holds the read end of a pipe
 * whose write end only we have; EOF means we are gone (exit, crash, SIGKILL,
 * a sanitizer abort), and it then removes the instance, then our probes
 * (group tpp_PID: they are global and would stay for ever). Retries because
 * our trace_pipe_raw files may still be closing when the pipe reports EOF,
 * and a probe cannot go while its instance still has it enabled. */
static void guard_main(int rfd, const char *dir, const char *root, pid_t owner)
{
	char path[640], c;
	snprintf(path, sizeof(path), "%s/tracing_on", dir);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	while (read(rfd, &c, 1) < 0 && errno == EINTR)
		;
	for (int i = 0; i < 500; i++) {
		int fd = open(path, O_WRONLY);
		if (fd < 0 && errno == ENOENT)
			break; /* removed by the recorder itself */
		if (fd >= 0) {
			if (write(fd, "0", 1) < 0) {
			}
			close(fd);
		}
		if (rmdir(dir) == 0 || errno == ENOENT)
			break;
		usleep(10000);
	}
	for (int i = 0; i < 500 && func_probes_remove_group(root, owner) == -EBUSY; i++)
		usleep(10000);
	_exit(0);
}

static int start_guard(struct tfs_inst *ti)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid_t owner = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid == 0) {
		/* drop every other descriptor so we hold nothing of the recorder's */
		if (p[0] > 0)
			close_range(0, (unsigned)p[0] - 1, 0);
		close_range((unsigned)p[0] + 1, ~0u, 0);
		prctl(PR_SET_NAME, "tracerec-guard");
		guard_main(p[0], ti->dir, ti->root, owner);
	}
	close(p[0]);
	ti->guard_fd = p[1];
	ti->guard_pid = pid;
	return 0;
}

int tfs_inst_create(struct tfs_inst *ti, const char *root)
{
	memset(ti, 0, sizeof(*ti));
	snprintf(ti->root, sizeof(ti->root), "%s", root);
	snprintf(ti->name, sizeof(ti->name), "tracepp-%d", (int)getpid());
	char dir[384];
	snprintf(dir, sizeof(dir), "%s/instances/%s", root, ti->name);
	if (mkdir(dir, 0750) != 0) {
		if (errno != EEXIST)
			return -errno;
		/* a previous recorder with our pid died without cleaning up */
		if (rmdir(dir) != 0 || mkdir(dir, 0750) != 0)
			return -EEXIST;
	}
	snprintf(ti->dir, sizeof(ti->dir), "%s", dir);
	ti->guard_fd = -1;
	int err = start_guard(ti);
	if (err) {
		rmdir(ti->dir);
		ti->dir[0] = 0;
		return err;
	}
	if (!owned) {
		owned = ti;
		atexit(remove_owned);
	}
	return 0;
}

void tfs_inst_destroy(struct tfs_inst *ti)
{
	struct tfs_inst *save = owned;
	owned = ti;
	remove_owned();
	owned = save == ti ? (ti->dir[0] ? ti : NULL) : save;
	if (ti->guard_fd >= 0) {
		/* the guard retries whatever removal failed here, then exits */
		close(ti->guard_fd);
		ti->guard_fd = -1;
		if (!ti->dir[0])
			waitpid(ti->guard_pid, NULL, 0);
	}
}
