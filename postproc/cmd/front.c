/* front — see front.h. */
#include <errno.h>
#include <fcntl.h>
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

/* At exit: the pager sees the end of its input, and the terminal is not
 * handed back to the shell while it still shows the output. */
static void pager_wait(void)
{
	fflush(stdout);
	fclose(stdout);
	int st;
	while (waitpid(pager_pid, &st, 0) < 0 && errno == EINTR)
		;
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
	int fd[2];
	if (pipe2(fd, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fd[0]);
		close(fd[1]);
		return -e;
	}
	if (!pid) {
		if (dup2(fd[0], 0) < 0)
			_exit(127);
		if (!getenv("LESS"))
			setenv("LESS", "FRSX", 1);
		if (pg)
			execl("/bin/sh", "sh", "-c", pg, (char *)NULL);
		else
			execl(less, "less", (char *)NULL);
		_exit(127);
	}
	close(fd[0]);
	if (dup2(fd[1], 1) < 0) {
		int e = errno;
		close(fd[1]);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return -e;
	}
	close(fd[1]);
	pager_pid = pid;
	atexit(pager_wait);
	an_progress_off(); /* stderr is the pager's terminal: no line over its screen, as git */
	return 1;
}

const char cli_front_help[] =
	"options every command takes:\n"
	"  --no-pager       no pager: by default text for a terminal goes through\n"
	"                   $TRACEPP_PAGER, else $PAGER (your choice, run as /bin/sh -c PAGER;\n"
	"                   empty or cat: none), else /usr/bin/less (an absolute path, never\n"
	"                   looked up in PATH) with LESS=FRSX unless LESS is set\n"
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
