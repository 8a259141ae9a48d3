/* safefile — see safefile.h for the rules. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safefile.h"
#include "tpp_format.h"

int sf_dir_of(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	if (!**name || !strcmp(*name, ".") || !strcmp(*name, ".."))
		return -EISDIR;
	char dir[4096];
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int sf_replaceable(int dfd, const char *name)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	return S_ISREG(st.st_mode) && st.st_uid == geteuid() ? 0 : -TPP_ENOTOURS;
}

/* ".PREFIX." and 12 random letters: 2^60 names nobody can guess. */
static int temp_name(const char *prefix, char *tmp, size_t cap)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
	uint8_t r[12];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -EAGAIN;
	int n = snprintf(tmp, cap, ".%.200s.", prefix);
	if (n < 0 || (size_t)n + sizeof(r) + 1 > cap)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < sizeof(r); i++)
		tmp[n + i] = abc[r[i] & 63];
	tmp[n + sizeof(r)] = 0;
	return 0;
}

int sf_create_temp(int dfd, const char *prefix, char *tmp, size_t cap)
{
	for (int tries = 0; tries < 100; tries++) {
		int e = temp_name(prefix, tmp, cap);
		if (e)
			return e;
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			/* exactly 0600, whatever the umask */
			if (fchmod(fd, 0600)) {
				e = -errno;
				close(fd);
				unlinkat(dfd, tmp, 0);
				return e;
			}
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int sf_mkdtemp(int dfd, const char *prefix, char *tmp, size_t cap)
{
	for (int tries = 0; tries < 100; tries++) {
		int e = temp_name(prefix, tmp, cap);
		if (e)
			return e;
		if (!mkdirat(dfd, tmp, 0700))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int sf_move(int fdir, const char *from, int tdir, const char *to)
{
	/* If someone plants `to` between this check and the rename, the
	 * rename replaces their entry: their own file is gone, nothing is
	 * written through it. */
	int e = sf_replaceable(tdir, to);
	if (e)
		return e;
	return renameat(fdir, from, tdir, to) ? -errno : 0;
}

int sf_rmdir(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = -errno;
		close(fd);
		return e;
	}
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(fd, de->d_name, 0);
	closedir(d);
	return unlinkat(dfd, name, AT_REMOVEDIR) ? -errno : 0;
}
