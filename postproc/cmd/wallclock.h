/* wallclock — --clock=mono|wall for the commands that print times, and the
 * one note that says how far a file's wall-clock times may be off. Times
 * are put on the wall clock by the file's time base (tpp_clock_wall,
 * specs/format.md "Time base") and printed as ISO-8601 UTC with ns
 * (of_wall), which sorts as text and reads the same on every host, as
 * journalctl's short-iso-precise and babeltrace2's --clock-date --clock-gmt
 * do. These print (CLI side). */
#ifndef TPP_WALLCLOCK_H
#define TPP_WALLCLOCK_H
#include <stdint.h>
#include "tpp_format.h"

#define WALLCLOCK_USAGE \
	"  --clock=mono|wall        times as CLOCK_MONOTONIC (default) or wall-clock UTC\n" \
	"                           (ISO-8601 with ns, from the file's clock samples)\n"
/* "mono" 0, "wall" 1; else prints "tracepp CMD: --clock: ..." and -1. */
int wallclock_parse(const char *cmd, const char *arg);
/* The worst error of the wall-clock times of r's events (its span's ends:
 * inside the samples the error only blends) in *err_ns (-1: unknown), and
 * the drift between its first and last samples in *drift_ns (0 with fewer
 * than two). 0, or -1 when the file has no time base at all. */
int wallclock_error(const struct tpp_reader *r, int64_t *err_ns, int64_t *drift_ns);
/* On stderr, once: "tracepp CMD: note: wall-clock times of PATH within
 * ±E (drift D between its clock samples)", or that the error is unknown. */
void wallclock_note(const char *cmd, const char *path, const struct tpp_reader *r);
#endif
