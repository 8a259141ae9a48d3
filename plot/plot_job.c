/* The files of one plot. They are made in a fresh private directory
 * (0700, a random name, in the output's directory), gnuplot renders there,
 * and only then are the results renamed into place, each replacing only a
 * regular file of the caller's (format/safefile.h). So another user who can
 * write the output's directory (/tmp) can neither swap the script gnuplot
 * runs nor have a planted symlink or FIFO written through. */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "plot.h"
#include "safefile.h"
#include "tpp_format.h"

/* "cannot write OUT: reason", naming what refused it. */
static int refused(struct plot_job *j, const char *name, int e)
{
	snprintf(j->err, sizeof(j->err), "cannot write %s%s%s: %s", strcmp(j->dir, ".") ? j->dir : "",
		 strcmp(j->dir, ".") ? "/" : "", name, tpp_strerror(e));
	return e;
}

int plot_job_init(struct plot_job *j, const char *out, int keep, int data_only)
{
	memset(j, 0, sizeof(*j));
	j->dfd = j->wfd = -1;
	j->keep = keep || data_only;
	j->data_only = data_only;
	if (strlen(out) >= sizeof(j->out) - 16) {
		snprintf(j->err, sizeof(j->err), "output path too long");
		return -ENAMETOOLONG;
	}
	strcpy(j->out, out);
	const char *slash = strrchr(out, '/'), *file = slash ? slash + 1 : out;
	if (slash == out)
		strcpy(j->dir, "/");
	else if (slash)
		snprintf(j->dir, sizeof(j->dir), "%.*s", (int)(slash - out), out);
	else
		strcpy(j->dir, ".");
	const char *dot = strrchr(file, '.');
	if (!dot || dot == file) {
		snprintf(j->err, sizeof(j->err), "%s: output needs an extension: .png, .svg or .pdf", out);
		return -EINVAL;
	}
	j->ext = dot + 1;
	if (!strcmp(j->ext, "png"))
		j->term = PT_PNG;
	else if (!strcmp(j->ext, "svg"))
		j->term = PT_SVG;
	else if (!strcmp(j->ext, "pdf"))
		j->term = PT_PDF;
	else {
		snprintf(j->err, sizeof(j->err), "%s: unsupported output type '.%s' (use .png, .svg or .pdf)",
			 out, j->ext);
		return -EINVAL;
	}
	snprintf(j->base, sizeof(j->base), "%.*s", (int)(dot - file), file);
	const char *name;
	j->dfd = sf_dir_of(out, &name);
	if (j->dfd < 0 || faccessat(j->dfd, ".", W_OK | X_OK, AT_EACCESS)) {
		int e = j->dfd < 0 ? -j->dfd : errno;
		snprintf(j->err, sizeof(j->err), "cannot write %s: directory %s: %s", out, j->dir, strerror(e));
		plot_job_abort(j);
		return -e;
	}
	/* what is sure to be replaced is checked now, before any work */
	char gp[1100];
	snprintf(gp, sizeof(gp), "%s.gp", j->base);
	int e = 0;
	if ((!data_only && (e = sf_replaceable(j->dfd, file)) && refused(j, file, e)) ||
	    (j->keep && (e = sf_replaceable(j->dfd, gp)) && refused(j, gp, e))) {
		plot_job_abort(j);
		return e;
	}
	return 0;
}

int plot_data_close(struct plot_job *j, FILE *d, const char *name)
{
	if (!fclose(d))
		return 0;
	snprintf(j->err, sizeof(j->err), "writing %s: %s", name, strerror(errno));
	return -EIO;
}

FILE *plot_job_file(struct plot_job *j, const char *suffix, const char **name)
{
	if (j->nfiles == sizeof(j->files) / sizeof(j->files[0])) {
		snprintf(j->err, sizeof(j->err), "too many files for one plot");
		return NULL;
	}
	int e = 0;
	if (j->wfd < 0) {
		if ((e = sf_mkdtemp(j->dfd, j->base, j->work, sizeof(j->work))) ||
		    (j->wfd = openat(j->dfd, j->work, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			e = e ? e : -errno;
			snprintf(j->err, sizeof(j->err), "cannot make a private directory in %s: %s", j->dir,
				 strerror(-e));
			return NULL;
		}
	}
	char *kept = NULL;
	FILE *f = NULL;
	int fd = -1;
	if (asprintf(&kept, "%s.%s", j->base, suffix) < 0)
		kept = NULL;
	else if ((fd = openat(j->wfd, kept, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0 ||
		 !(f = fdopen(fd, "w")))
		e = -errno;
	if (!f) {
		snprintf(j->err, sizeof(j->err), "cannot write %s.%s: %s", j->base, suffix,
			 strerror(kept ? -e : ENOMEM));
		if (fd >= 0)
			close(fd);
		free(kept);
		return NULL;
	}
	j->files[j->nfiles++] = kept;
	if (name)
		*name = kept; /* relative to the directory, like the script */
	return f;
}

/* Moves name from the private directory into the output's; the first
 * error is the one told. */
static int put_in_place(struct plot_job *j, const char *name)
{
	int e = sf_move(j->wfd, name, j->dfd, name);
	if (e && !j->err[0])
		refused(j, name, e);
	return e;
}

int plot_job_finish(struct plot_job *j, const char *prog)
{
	char gp[1200], img[1200];
	snprintf(gp, sizeof(gp), "%s.gp", j->base);
	snprintf(img, sizeof(img), "%s.%s", j->base, j->ext);
	int rc = 0;
	if (!j->data_only && (rc = plot_gp_run(j, prog, gp)))
		j->keep = 1; /* keep what failed so the user can look at it */
	if (!rc && !j->data_only && put_in_place(j, img))
		rc = -1;
	for (size_t i = 0; j->keep && i < j->nfiles; i++)
		if (put_in_place(j, j->files[i]) && !rc)
			rc = -1;
	plot_job_abort(j);
	return rc;
}

void plot_job_abort(struct plot_job *j)
{
	if (j->wfd >= 0) {
		close(j->wfd);
		sf_rmdir(j->dfd, j->work);
	}
	if (j->dfd >= 0)
		close(j->dfd);
	for (size_t i = 0; i < j->nfiles; i++)
		free(j->files[i]);
	j->nfiles = 0;
	j->wfd = j->dfd = -1;
}
