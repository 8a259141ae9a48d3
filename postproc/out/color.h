/* color — whether text output is coloured, and the escapes it uses. The
 * front door (cli.h, cli_front) decides once, before any output: on a
 * terminal by default (--color=auto), everywhere with --color=always, never
 * with --color=never, NO_COLOR or TERM=dumb. Writers ask oc(); nothing here
 * prints. */
#ifndef TPP_COLOR_H
#define TPP_COLOR_H
#include <stdint.h>

extern int oc_on;

#define OC_BOLD "\033[1m"
#define OC_GREEN "\033[32m"
#define OC_YELLOW "\033[33m"
#define OC_RED "\033[31m"
#define OC_RESET "\033[0m"

/* esc when colour is on, else "". */
static inline const char *oc(const char *esc)
{
	return oc_on ? esc : "";
}

/* The colour of a duration as uftrace colours its unit: ms green, s
 * yellow, a minute or more red; NULL below 1 ms or when colour is off. */
static inline const char *oc_dur(uint64_t ns)
{
	if (!oc_on || ns < 1000000)
		return 0;
	return ns < 1000000000 ? OC_GREEN : ns < 60000000000ull ? OC_YELLOW : OC_RED;
}
#endif
