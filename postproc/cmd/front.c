/* front — see front.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "an_run.h"
#include "color.h"
#include "front.h"

static pid_t pager_pid = -1;
static const char *pager_cmd; /* for the line that names it */

/* Appends s to b (n bytes, NUL kept), for the async-signal-safe line. */
static void cat_s(char *b, size_t n, const char *s)
{
	size_t l = strlen(b);
	while (*s && l + 1 < n)
		b[l++] = *s++;
	b[l] = 0;
}

static void cat_u(char *b, size_t n, unsigned v)
{
	char d[12];
	int i = sizeof(d) - 1;
	d[i] = 0;
	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i);
	cat_s(b, n, d + i);
}

/* The pager is gone: exit status st of waitpid (-1: not known). It was quit
 * (exit 0: 'q' in less) or it failed: one line naming it and its end. A
 * signal handler calls this: write and _exit only. */
static void pager_ended(int st, int early)
{
	if (st >= 0 && WIFEXITED(st) && !WEXITSTATUS(st))
		_exit(0); /* the user quit the pager: the end they asked for */
	char b[512] = "tracepp: the pager '";
	cat_s(b, sizeof(b), pager_cmd ? pager_cmd : "?");
	if (st >= 0 && WIFEXITED(st) && (WEXITSTATUS(st) == 126 || WEXITSTATUS(st) == 127))
		cat_s(b, sizeof(b), "' could not run (exit status ");
	else
		cat_s(b, sizeof(b), st >= 0 && WIFSIGNALED(st) ? "' was killed (signal " : "' failed (exit status ");
	cat_u(b, sizeof(b), st < 0 ? 0 : WIFSIGNALED(st) ? (unsigned)WTERMSIG(st) : (unsigned)WEXITSTATUS(st));
	cat_s(b, sizeof(b), early ? ") before it read the output; run with --no-pager, or set TRACEPP_PAGER\n"
				  : ") and the output was not shown; run with --no-pager, or set TRACEPP_PAGER\n");
	if (write(2, b, strlen(b)) < 0)
		_exit(1);
	_exit(1);
}

static int pager_reap(void)
{
	int st;
	pid_t p;
	while ((p = waitpid(pager_pid, &st, 0)) < 0 && errno == EINTR)
		;
	return p == pager_pid ? st : -1;
}

/* A write into the pager's pipe after it ended: tracepp ends with it,
 * saying why (not a silent death by SIGPIPE, exit 141). Another pipe's
 * SIGPIPE (stdout still has its reader) keeps the default action. */
static void pager_sigpipe(int sig)
{
	struct pollfd p = {.fd = 1, .events = POLLOUT};
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
		pager_ended(pager_reap(), 1);
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when this handler returns */
}

/* At exit: the pager sees the end of its input, and the terminal is not
 * handed back to the shell while it still shows the output. A pager that
 * failed (could not run: the shell's 126/127; any other status, or a
 * signal) after an output small enough to fit the pipe had every byte and
 * may have shown none: said, exit 1. */
static void pager_wait(void)
{
	fflush(stdout);
	fclose(stdout);
	int st = pager_reap();
	if (st >= 0 && !(WIFEXITED(st) && !WEXITSTATUS(st)))
		pager_ended(st, 0);
}

/* One word (no blank, no shell metacharacter): run directly, as git runs
 * such a pager, so a name that cannot run is known before any output. */
static int one_word(const char *pg)
{
	return !pg[strcspn(pg, "|&;<>()$`\\\"' \t\n*?[#~=%")];
}

int pager_start(void)
{
	if (!isatty(1))
		return 0;
	const char *pg = getenv("TRACEPP_PAGER");
	if (!pg)
		pg = getenv("PAGER");
	if (pg && (!*pg || !strcmp(pg, "cat")))
		return 0;
	const char *less = NULL;
	if (!pg) {
		static const char *const at[] = {"/usr/bin/less", "/bin/less"};
		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]) && !less; i++)
			if (!access(at[i], X_OK))
				less = at[i];
		if (!less)
			return 0;
	}
	int fd[2], sp[2]; /* the pager's input; the child's exec errno, if exec fails */
	if (pipe2(fd, O_CLOEXEC))
		return -errno;
	if (pipe2(sp, O_CLOEXEC)) {
		int e = errno;
		close(fd[0]);
		close(fd[1]);
		return -e;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fd[0]);
		close(fd[1]);
		close(sp[0]);
		close(sp[1]);
		return -e;
	}
	if (!pid) {
		close(sp[0]);
		if (dup2(fd[0], 0) < 0)
			_exit(127);
		if (!getenv("LESS"))
			setenv("LESS", "FRSX", 1);
		if (!pg)
			execl(less, "less", (char *)NULL);
		else if (one_word(pg))
			execlp(pg, pg, (char *)NULL);
		else
			execl("/bin/sh", "sh", "-c", pg, (char *)NULL);
		int e = errno;
		if (write(sp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(fd[0]);
	close(sp[1]);
	int e = 0;
	ssize_t got;
	while ((got = read(sp[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(sp[0]);
	if (got == (ssize_t)sizeof(e) || dup2(fd[1], 1) < 0) {
		/* the output goes to the terminal as without a pager */
		if (got != (ssize_t)sizeof(e)) {
			e = errno;
			kill(pid, SIGTERM);
		}
		close(fd[1]);
		waitpid(pid, NULL, 0);
		fprintf(stderr, "tracepp: cannot run the pager '%s': %s (output not paged)\n", pg ? pg : less,
			strerror(e));
		return -e;
	}
	close(fd[1]);
	pager_pid = pid;
	pager_cmd = pg ? pg : less;
	signal(SIGPIPE, pager_sigpipe);
	atexit(pager_wait);
	an_progress_off(); /* stderr is the pager's terminal: no line over its screen, as git */
	return 1;
}

const char cli_front_help[] =
	"options every command takes:\n"
	"  --no-pager       no pager: by default text for a terminal goes through\n"
	"                   $TRACEPP_PAGER, else $PAGER (your choice, run as /bin/sh -c PAGER,\n"
	"                   or directly when one word; empty or cat: none), else\n"
	"                   /usr/bin/less (an absolute path, never looked up in PATH) with\n"
	"                   LESS=FRSX unless LESS is set; a pager that cannot run is said\n"
	"                   (one line; exit 1 when the output was lost in it)\n"
	"  --color=WHEN     colour in text: auto (on a terminal, unless NO_COLOR is set or\n"
	"                   TERM=dumb; the default), always, never: table headers bold,\n"
	"                   durations of 1 ms or more green, of 1 s yellow, of 1 min red\n";

int cli_front(const char *cmd, int *argc, char **argv, int *page)
{
	const char *when = "auto";
	int out = 1;
	*page = 1;
	int i = 1;
	for (; i < *argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--no-pager"))
			*page = 0;
		else if (!strcmp(a, "--color") || !strcmp(a, "--colour"))
			when = "always";
		else if (!strncmp(a, "--color=", 8) || !strncmp(a, "--colour=", 9))
			when = strchr(a, '=') + 1;
		else
			argv[out++] = argv[i];
	}
	while (i < *argc) /* "--" and what follows it, as they were */
		argv[out++] = argv[i++];
	argv[out] = NULL;
	*argc = out;
	if (strcmp(when, "auto") && strcmp(when, "always") && strcmp(when, "never")) {
		fprintf(stderr, "tracepp %s: unknown --color '%s' (use auto, always or never)\n", cmd, when);
		return 2;
	}
	const char *term = getenv("TERM"), *nc = getenv("NO_COLOR");
	oc_on = !strcmp(when, "always") ||
		(!strcmp(when, "auto") && isatty(1) && !(nc && *nc) && !(term && !strcmp(term, "dumb")));
	return -1;
}
