/* The traced tasks: the command, forked and held before exec so that the
 * recording sees all of it, and the tracefs pid filter for it and for -p. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "record.h"

static int append_pid(struct rec *r, int32_t pid)
{
	char v[16];
	snprintf(v, sizeof(v), "%d", (int)pid);
	return tfs_append(&r->ti, "set_event_pid", v);
}

int rec_setup_targets(struct rec *r)
{
	struct rec_opts *o = &r->o;
	if (o->all || (!o->npids && !r->child))
		return 0;
	int err = tfs_write(&r->ti, "options/event-fork", "1");
	if (err) {
		fprintf(stderr, "tracerec: cannot follow children (options/event-fork): %s\n",
			strerror(-err));
		return err;
	}
	if (r->child)
		err = append_pid(r, r->child);
	/* every existing thread of each process; future ones come via event-fork */
	for (int i = 0; !err && i < o->npids; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", (int)o->pids[i]);
		DIR *d = opendir(path);
		if (!d) {
			fprintf(stderr, "tracerec: no such process: %d\n", (int)o->pids[i]);
			return -ESRCH;
		}
		struct dirent *de;
		while (!err && (de = readdir(d)))
			if (atoi(de->d_name) > 0)
				err = append_pid(r, atoi(de->d_name));
		closedir(d);
	}
	if (err)
		fprintf(stderr, "tracerec: cannot set the pid filter (set_event_pid): %s\n",
			strerror(-err));
	return err;
}

/* The command's environment: ours with the function session's additions
 * (NAME=VALUE, replacing ours of the same NAME), made before the fork: the
 * child, recorded from its release on, must run none of the recorder's code
 * a probe could see (putenv's malloc was the first "call" of every
 * command traced with -u libc:malloc). */
static char **child_envp(char *const *add)
{
	extern char **environ;
	size_t n = 0, na = 0;
	while (environ[n])
		n++;
	while (add && add[na])
		na++;
	char **e = malloc((n + na + 1) * sizeof(*e));
	if (!e)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = strcspn(environ[i], "=");
		size_t j = 0;
		while (j < na && !(strncmp(add[j], environ[i], l + 1) == 0))
			j++;
		if (j == na)
			e[k++] = environ[i];
	}
	for (size_t j = 0; j < na; j++)
		e[k++] = add[j];
	e[k] = NULL;
	return e;
}

/* Forks the command stopped before exec: it execs only when the recorder
 * writes to go_fd, so nothing it does escapes the recording. */
int rec_spawn(struct rec *r)
{
	int go[2], ef[2];
	if (pipe2(go, O_CLOEXEC) || pipe2(ef, O_CLOEXEC)) {
		fprintf(stderr, "tracerec: pipe: %s\n", strerror(errno));
		return -errno;
	}
	char **envp = child_envp(r->fs ? func_child_env(r->fs) : NULL);
	if (!envp) {
		fprintf(stderr, "tracerec: out of memory\n");
		return -ENOMEM;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		free(envp);
		fprintf(stderr, "tracerec: fork: %s\n", strerror(e));
		return -e;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		close(ef[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGUSR1, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the recorder gave up */
		func_child_prepare(r->fs);
		execvpe(r->o.cmd[0], r->o.cmd, envp);
		int e = errno;
		if (write(ef[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	free(envp);
	close(go[0]);
	close(ef[1]);
	/* the writer loop wakes on the command's exit instead of finding it at
	 * its next timeout; without pidfds (Linux < 5.3) it still finds it then */
	r->child_pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec */
	r->child = pid;
	r->go_fd = go[1];
	r->err_fd = ef[0];
	return 0;
}

/* Lets the child exec; returns -errno when the exec failed. */
int rec_release_child(struct rec *r)
{
	if (write(r->go_fd, "g", 1) != 1)
		return -EPIPE;
	close(r->go_fd);
	r->go_fd = -1;
	int e = 0;
	ssize_t n = read(r->err_fd, &e, sizeof(e)); /* EOF on a successful exec */
	close(r->err_fd);
	r->err_fd = -1;
	return n == sizeof(e) ? -e : 0;
}

void rec_reap_child(struct rec *r, int block)
{
	if (!r->child || r->child_done)
		return;
	int st;
	pid_t p = waitpid(r->child, &st, block ? 0 : WNOHANG);
	if (p == r->child) {
		r->child_done = 1;
		r->child_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
}
