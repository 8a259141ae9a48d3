/* The gnuplot side of a plot: quoting for scripts and data files, the
 * script prologue, and finding and running gnuplot safely. */
/* Error messages are cut at their buffer on purpose: paths can be long. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hmap.h"
#include "plot.h"
#include "utf8.h"

void plot_gp_str(FILE *f, const char *s)
{
	/* single quotes: gnuplot substitutes neither `command` nor @macro in
	 * them; the script says `set encoding utf8`, so bytes that are not
	 * UTF-8 become U+FFFD and control bytes go */
	const uint8_t *p = (const uint8_t *)s, *end = p + strlen(s);
	fputc('\'', f);
	while (p < end) {
		size_t k = *p >= 0x80 ? utf8_seq(p, (size_t)(end - p)) : 1;
		if (*p == '\'')
			fputs("''", f);
		else if (!k)
			fputs("\xef\xbf\xbd", f);
		else if (*p >= 0x20 && *p != 0x7f)
			fwrite(p, 1, k, f);
		p += k ? k : 1;
	}
	fputc('\'', f);
}

void plot_data_str(FILE *f, const char *s)
{
	const uint8_t *p = (const uint8_t *)s, *end = p + strlen(s);
	fputc('"', f);
	while (p < end) {
		size_t k = *p >= 0x80 ? utf8_seq(p, (size_t)(end - p)) : 1;
		if (!k)
			fputs("\xef\xbf\xbd", f);
		else if (*p == '"' || *p < 0x20 || *p == 0x7f)
			fputc('_', f);
		else
			fwrite(p, 1, k, f);
		p += k ? k : 1;
	}
	fputc('"', f);
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

/* Trusted: owned by root or the caller, writable by no one else (a group
 * other than root's counts as someone else). */
static int trusted(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) && !(st->st_mode & S_IWOTH) &&
	       (!(st->st_mode & S_IWGRP) || st->st_gid == 0);
}

/* 0 when the executable file `path` (absolute, no symlinks) and every
 * directory above it are trusted, so no one else can swap what is run;
 * else -1 with the reason in why. */
static int safe_exec(const char *path, char *why, size_t len)
{
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || access(path, X_OK)) {
		snprintf(why, len, "%s is not an executable file", path);
		return -1;
	}
	if (!trusted(&st)) {
		snprintf(why, len, "%s can be changed by other users", path);
		return -1;
	}
	char p[4096];
	snprintf(p, sizeof(p), "%s", path);
	for (char *slash; (slash = strrchr(p, '/')) && strcmp(p, "/");) {
		slash[slash == p] = 0; /* the parent; "/" stays */
		if (stat(p, &st)) {
			snprintf(why, len, "%s: %s", p, strerror(errno));
			return -1;
		}
		if (!trusted(&st)) {
			snprintf(why, len, "%s can be written by other users", p);
			return -1;
		}
	}
	return 0;
}

const char *plot_gp_find(char *why, size_t len)
{
	static char buf[4096];
	why[0] = 0;
	const char *env = getenv("TPP_GNUPLOT");
	char cand[4096];
	if (env && *env) {
		if (!realpath(env, buf)) {
			snprintf(why, len, "TPP_GNUPLOT=%s: %s", env, strerror(errno));
			return NULL;
		}
		return safe_exec(buf, why, len) ? NULL : buf;
	}
	/* PATH as execvp reads it, but only its absolute entries, and only a
	 * gnuplot that the checks above trust: a directory in root's PATH
	 * that another user can write must not decide what root runs */
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *e = strchr(path, ':');
		size_t n = e ? (size_t)(e - path) : strlen(path);
		if (n && *path == '/' && n < sizeof(cand) - 16) {
			snprintf(cand, sizeof(cand), "%.*s/gnuplot", (int)n, path);
			char w[600];
			if (!access(cand, X_OK) && realpath(cand, buf)) {
				if (!safe_exec(buf, w, sizeof(w)))
					return buf;
				if (!why[0])
					snprintf(why, len, "not running %s: %s", cand, w);
			}
		}
		path += n + (e ? 1 : 0);
	}
	return NULL;
}

/* gnuplot's environment: the locale, a fixed PATH, and a HOME without a
 * ~/.gnuplot, so nothing of the caller's (GNUPLOT_LIB, LD_PRELOAD, a
 * sudo user's init file) runs in it. */
static void gp_env(char **env, size_t n, char *store, size_t len)
{
	static const char *const keep[] = {"LANG", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "TZ"};
	size_t k = 0, off = 0;
	env[k++] = "PATH=/usr/local/bin:/usr/bin:/bin";
	env[k++] = "HOME=/nonexistent";
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]) && k + 1 < n; i++) {
		const char *v = getenv(keep[i]);
		int w = v ? snprintf(store + off, len - off, "%s=%s", keep[i], v) : -1;
		if (w < 0 || (size_t)w >= len - off)
			continue;
		env[k++] = store + off;
		off += (size_t)w + 1;
	}
	env[k] = NULL;
}

int plot_gp_run(struct plot_job *j, const char *prog, const char *gp)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(j->err, sizeof(j->err), "pipe: %s", strerror(errno));
		return -1;
	}
	char *env[8], store[1024];
	gp_env(env, sizeof(env) / sizeof(env[0]), store, sizeof(store));
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
		/* in the job's private directory: the script and its data are
		 * there, where no one else can reach them */
		if (fchdir(j->wfd)) {
			fprintf(stderr, "cannot enter the plot's directory: %s\n", strerror(errno));
			_exit(126);
		}
		execle(prog, "gnuplot", gp, (char *)NULL, env);
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
