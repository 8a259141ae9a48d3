/* front — what the dispatcher does for every command before it runs:
 * the options every command takes (pager, colour), and the pager.
 *
 * The pager: tracepp's text through a pager when it goes to a terminal, as
 * perf and git do it. Nothing is run by a name someone else can swap:
 * $TRACEPP_PAGER or $PAGER is the user's own choice and runs as git runs it:
 * one word (no blank, no shell metacharacter) directly (a PATH search, as
 * the shell would make), else "/bin/sh -c PAGER" (empty or "cat": no
 * pager); without one, less from
 * /usr/bin or /bin (absolute paths, never a PATH search), with LESS=FRSX
 * when LESS is not set (quit when it fits one screen, colours through, no
 * line wrapping, no screen clearing). */
#ifndef TPP_FRONT_H
#define TPP_FRONT_H

/* The options every command takes, taken out of argv (up to a "--")
 * before the command parses it: --no-pager, --color=auto|always|never
 * (--colour too; bare, "always"). Decides colour (color.h: auto is on when
 * stdout is a terminal, NO_COLOR is not set and TERM is not dumb) and sets
 * *page to 0 for --no-pager (else 1). -1 to go on, or 2 after one usage
 * line naming the bad value. */
int cli_front(const char *cmd, int *argc, char **argv, int *page);
/* Their lines for a --help text. */
extern const char cli_front_help[];

/* Starts the pager when stdout is a terminal: stdout then goes into it,
 * and at exit tracepp closes stdout and waits for it. 1 when started, 0
 * when not (no terminal, no pager), -errno when it could not start (one
 * line names it; the output then goes to the terminal as it would have).
 * A pager that ends before the output does ends tracepp: exit 0 when it
 * exited 0 (the user quit it), else one line naming it and its exit status
 * (127: the shell found no such command), exit 1; never a silent SIGPIPE. */
int pager_start(void);

#endif
