/* Output files of a plot and the gnuplot child process that renders them. */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "plot.h"

int plot_job_init(struct plot_job *j, const char *out, int keep, int data_only)
{
	memset(j, 0, sizeof(*j));
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
	struct stat st;
	if (stat(j->dir, &st) || !S_ISDIR(st.st_mode) || access(j->dir, W_OK | X_OK)) {
		int e = errno ? errno : ENOTDIR;
		snprintf(j->err, sizeof(j->err), "cannot write %s: directory %s: %s", out, j->dir,
			 strerror(e));
		return -e;
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
	char path[8192];
	int dl = snprintf(path, sizeof(path), "%s/", j->dir);
	snprintf(path + dl, sizeof(path) - (size_t)dl, "%s.%s", j->base, suffix);
	if (j->nfiles == sizeof(j->files) / sizeof(j->files[0])) {
		snprintf(j->err, sizeof(j->err), "too many files for one plot");
		return NULL;
	}
	char *kept = strdup(path);
	FILE *f = kept ? fopen(path, "w") : NULL;
	if (!f) {
		snprintf(j->err, sizeof(j->err), "cannot write %s: %s", path, strerror(kept ? errno : ENOMEM));
		free(kept);
		return NULL;
	}
	j->files[j->nfiles++] = kept;
	if (name)
		*name = kept + dl; /* relative to the directory, like the script */
	return f;
}

void plot_gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	fputc('\'', f);
}

void plot_gp_prologue(FILE *f, const struct plot_job *j, int height_px)
{
	char img[1200];
	snprintf(img, sizeof(img), "%s.%s", j->base, j->ext);
	fprintf(f, "# Written by tracepp plot. Render again with:  gnuplot %s.gp\n", j->base);
	fprintf(f, "# (run it in this directory; data files are named relative to it)\n");
	/* 1200 px is A4 width at ~145 dpi: fonts stay readable when printed. */
	switch (j->term) {
	case PT_PNG:
		fprintf(f, "set terminal pngcairo size 1200,%d noenhanced font 'Sans,11' background '#ffffff'\n",
			height_px);
		break;
	case PT_SVG:
		fprintf(f, "set terminal svg size 1200,%d noenhanced font 'Sans,11' background '#ffffff'\n",
			height_px);
		break;
	case PT_PDF:
		fprintf(f, "set terminal pdfcairo size 8.27in,%.2fin noenhanced font 'Sans,8'\n",
			height_px * 8.27 / 1200);
		break;
	}
	fprintf(f, "set output ");
	plot_gp_str(f, img);
	fprintf(f, "\nset encoding utf8\nset datafile separator whitespace\n"
		   "set grid lc rgb '#dddddd'\nset border lc rgb '#555555'\n"
		   "set style fill solid 1.0 noborder\n");
}

const char *plot_gp_find(void)
{
	static char buf[4096];
	const char *env = getenv("TPP_GNUPLOT");
	if (env && *env)
		return access(env, X_OK) ? NULL : env;
	const char *path = getenv("PATH");
	if (!path)
		return NULL;
	while (*path) {
		const char *e = strchr(path, ':');
		size_t n = e ? (size_t)(e - path) : strlen(path);
		if (n && n < sizeof(buf) - 16) {
			snprintf(buf, sizeof(buf), "%.*s/gnuplot", (int)n, path);
			if (!access(buf, X_OK))
				return buf;
		}
		path += n + (e ? 1 : 0);
	}
	return NULL;
}

static int run_gnuplot(struct plot_job *j, const char *prog, const char *gp)
{
	int pfd[2];
	if (pipe(pfd)) {
		snprintf(j->err, sizeof(j->err), "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(j->err, sizeof(j->err), "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		int dn = open("/dev/null", O_RDWR);
		dup2(pfd[1], 2);
		if (dn >= 0) {
			dup2(dn, 0);
			dup2(dn, 1);
		}
		close(pfd[0]);
		close(pfd[1]);
		if (chdir(j->dir)) {
			fprintf(stderr, "cannot enter %s: %s\n", j->dir, strerror(errno));
			_exit(126);
		}
		execl(prog, "gnuplot", gp, (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	/* Every line gnuplot writes to stderr is a warning or an error: relay
	 * them so a silently degraded plot never passes for a good one. */
	FILE *ef = fdopen(pfd[0], "r");
	char line[1024];
	int nlines = 0;
	while (ef && fgets(line, sizeof(line), ef)) {
		size_t n = strlen(line);
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (!n)
			continue;
		fprintf(stderr, "tracepp plot: gnuplot: %s\n", line);
		nlines++;
	}
	if (ef)
		fclose(ef);
	else
		close(pfd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(j->err, sizeof(j->err), "gnuplot failed on %s/%s (exit %d)", j->dir, gp,
			 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
		return -1;
	}
	if (nlines) {
		snprintf(j->err, sizeof(j->err), "gnuplot warned %d time%s on %s/%s", nlines,
			 nlines > 1 ? "s" : "", j->dir, gp);
		return -1;
	}
	return 0;
}

static void remove_files(struct plot_job *j, int all)
{
	for (size_t i = 0; i < j->nfiles; i++) {
		if (all || !j->keep)
			unlink(j->files[i]);
		free(j->files[i]);
	}
	j->nfiles = 0;
}

int plot_job_finish(struct plot_job *j, const char *prog)
{
	char gp[1200];
	snprintf(gp, sizeof(gp), "%s.gp", j->base);
	int rc = 0;
	if (!j->data_only) {
		rc = run_gnuplot(j, prog, gp);
		if (rc) {
			/* Keep what failed so the user can look at it. */
			j->keep = 1;
		}
	}
	remove_files(j, 0);
	return rc;
}

void plot_job_abort(struct plot_job *j)
{
	remove_files(j, 1);
}

uint32_t plot_color(uint64_t key)
{
	/* Well-separated hues (Tableau 20 style); neighbours in the palette
	 * differ strongly so adjacent bars stay distinguishable. */
	static const uint32_t pal[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
				       0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf, 0xaec7e8, 0xffbb78,
				       0x98df8a, 0xff9896, 0xc5b0d5, 0xc49c94, 0xf7b6d2, 0xc7c7c7,
				       0xdbdb8d, 0x9edae5};
	return pal[hmap_hash(key + 1) % (sizeof(pal) / sizeof(pal[0]))];
}

const char *plot_fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.3g us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.3g ms", ns / 1e6);
	else
		snprintf(buf, len, "%.3g s", ns / 1e9);
	return buf;
}
