/* report_dir — see report_dir.h. */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_dir.h"
#include "safefile.h"
#include "tpp_format.h"

static int fail(struct report_dir *d, const char *what, int e)
{
	if (!d->err[0])
		snprintf(d->err, sizeof(d->err), "%s: %s", what, tpp_strerror(e));
	return -1;
}

int report_dir_open(struct report_dir *d, const char *dir)
{
	memset(d, 0, sizeof(*d));
	d->pfd = d->wfd = -1;
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n >= sizeof(d->dir) - 1)
		return fail(d, dir, -ENAMETOOLONG);
	memcpy(d->dir, dir, n);
	d->dir[n] = 0;
	if ((d->pfd = sf_dir_of(d->dir, &d->name)) < 0) {
		int e = d->pfd;
		char what[4200];
		snprintf(what, sizeof(what), "cannot create %s", d->dir);
		d->pfd = -1;
		return fail(d, what, e);
	}
	struct stat st;
	char parent[4096];
	snprintf(parent, sizeof(parent), "%.*s", (int)(d->name - d->dir), d->dir);
	if (fstatat(d->pfd, d->name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno != ENOENT) {
			char what[4200];
			snprintf(what, sizeof(what), "cannot create %s", d->dir);
			fail(d, what, -errno);
			report_dir_abort(d);
			return -1;
		}
		d->fresh = 1;
	} else if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & S_IWOTH) ||
		   ((st.st_mode & S_IWGRP) && st.st_gid != getegid())) {
		snprintf(d->err, sizeof(d->err),
			 "%s: exists and is not a directory only you can write: not reused (choose a new name)",
			 d->dir);
		report_dir_abort(d);
		return -1;
	} else {
		int fd = openat(d->pfd, d->name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			fail(d, d->dir, -errno);
			report_dir_abort(d);
			return -1;
		}
		close(d->pfd);
		d->pfd = fd;
		snprintf(parent, sizeof(parent), "%s/", d->dir);
	}
	int e = sf_mkdtemp(d->pfd, d->fresh ? d->name : "report", d->work, sizeof(d->work));
	if (!e && (d->wfd = openat(d->pfd, d->work, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		e = -errno;
	if (e) {
		snprintf(d->err, sizeof(d->err), "cannot make a private directory in %s: %s",
			 parent[0] ? parent : ".", tpp_strerror(e));
		report_dir_abort(d);
		return -1;
	}
	snprintf(d->path, sizeof(d->path), "%s%s", parent, d->work);
	return 0;
}

FILE *report_dir_file(struct report_dir *d, const char *name)
{
	int fd = openat(d->wfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		snprintf(d->err, sizeof(d->err), "cannot write %s in %s: %s", name, d->path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	return f;
}

int report_dir_finish(struct report_dir *d)
{
	int rc = 0;
	if (d->fresh) {
		/* NOREPLACE: a DIR that appeared meanwhile is not taken over */
		if (renameat2(d->pfd, d->work, d->pfd, d->name, RENAME_NOREPLACE)) {
			snprintf(d->err, sizeof(d->err), "cannot put the report in %s: %s", d->dir, strerror(errno));
			rc = -1;
		} else {
			d->work[0] = 0;
		}
	} else {
		int fd = openat(d->pfd, d->work, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;
		while (dh && (de = readdir(dh))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			int e = sf_move(d->wfd, de->d_name, d->pfd, de->d_name);
			if (e && !rc) {
				char what[4400];
				snprintf(what, sizeof(what), "cannot write %s/%s", d->dir, de->d_name);
				rc = fail(d, what, e);
			}
		}
		if (dh)
			closedir(dh);
		else if (fd >= 0)
			close(fd);
		if (!dh)
			rc = fail(d, d->path, -errno);
	}
	report_dir_abort(d);
	return rc;
}

void report_dir_abort(struct report_dir *d)
{
	if (d->wfd >= 0)
		close(d->wfd);
	if (d->pfd >= 0 && d->work[0])
		sf_rmdir(d->pfd, d->work);
	if (d->pfd >= 0)
		close(d->pfd);
	d->wfd = d->pfd = -1;
}
