/* safefile — creating what the tools write, safely on a shared host, where
 * tracerec and tracepp run as root and other users can write /tmp or the
 * directory an output goes to. The rules (specs/format.md says them to
 * users too):
 *  - nothing is ever opened for writing by a name another user can
 *    prepare: new files are created O_CREAT|O_EXCL|O_NOFOLLOW under a fresh
 *    random name, private (0600; directories 0700), and renamed into place;
 *    rename(2) replaces a directory entry and never writes through a
 *    symlink, so a planted link, FIFO or file is never written into;
 *  - an existing output is replaced only when it is a regular file owned
 *    by the caller; anything else (a symlink, a directory, a FIFO, a device,
 *    another user's file) is refused with -TPP_ENOTOURS, and left alone.
 * Everything happens relative to a directory descriptor, so the checks and
 * the rename concern the same directory even if its path changes meanwhile.
 * Private to the project, not the API. Errors: negative errno (or
 * -TPP_ENOTOURS); nothing prints.
 */
#ifndef TPP_SAFEFILE_H
#define TPP_SAFEFILE_H
#include <stddef.h>

/* Opens the directory of path (O_PATH) and points *name at its last
 * component. The descriptor, or -errno (-EISDIR when path names a
 * directory: "x/", "."). */
int sf_dir_of(const char *path, const char **name);
/* 0 when name in dfd does not exist or is a regular file of the caller's
 * (effective uid), -TPP_ENOTOURS when it is anything else, or -errno. */
int sf_replaceable(int dfd, const char *name);
/* Creates ".PREFIX.RANDOM" in dfd for writing, 0600, O_EXCL|O_NOFOLLOW,
 * its name into tmp (cap bytes). The descriptor, or -errno. */
int sf_create_temp(int dfd, const char *prefix, char *tmp, size_t cap);
/* Creates the directory ".PREFIX.RANDOM" in dfd, 0700, its name into tmp.
 * 0 or -errno. */
int sf_mkdtemp(int dfd, const char *prefix, char *tmp, size_t cap);
/* Renames from (in fdir) to `to` (in tdir) when sf_replaceable allows it.
 * 0, -TPP_ENOTOURS or -errno; from is left where it was on failure. */
int sf_move(int fdir, const char *from, int tdir, const char *to);
/* Removes a private directory made by sf_mkdtemp and the files in it (not
 * recursive: it holds only files). 0 or -errno. */
int sf_rmdir(int dfd, const char *name);

#endif
