/* losses — what a recording says it does not hold, in the two words every
 * command uses:
 *   lost      the ring buffer or the recorder dropped them (overruns, no
 *             room): the file's `lost` records;
 *   unstored  the kernel fired them but never stored them in its ring
 *             buffer (a CPU leaving idle, on some kernels): counted by
 *             tracerec's kernel counters, its `kernel_unstored` note.
 * Files of tracerec before the split wrote the unstored as `lost` records
 * too; for those, lost is the records less the note's total, and the
 * per-stream records mix both (split_known = 0).
 * Nothing here allocates; the printers write to f, the rest only computes.
 * The meta and reader must outlive the result. */
#ifndef TPP_LOSSES_H
#define TPP_LOSSES_H
#include <stdint.h>
#include <stdio.h>
#include "tpp_decode.h"

struct tpp_losses {
	uint64_t lost, unstored;
	int split_known;             /* 0: the lost records include the unstored */
	int types_known;             /* the note's per-type counts add up to unstored */
	const struct tpp_note *note; /* kernel_unstored, NULL when the file has none */
};
void tpp_losses(const struct tpp_meta *m, struct tpp_losses *l);
/* Unstored events on CPU stream cpu (0 when the file does not say). */
uint64_t tpp_losses_unstored_on(const struct tpp_losses *l, int cpu);
/* "sched:sched_switch 855, sched:sched_wakeup 2" into buf: the types with
 * unstored events; "" when none, or when !types_known. Returns buf. */
char *tpp_losses_types(const struct tpp_losses *l, char *buf, size_t len);
/* tracepp info's lines: "lost:" and "unstored:"; the unstored per CPU. */
void tpp_losses_text(FILE *f, const struct tpp_losses *l);
void tpp_losses_text_cpus(FILE *f, const struct tpp_losses *l, const struct tpp_reader *r);
/* Its JSON members, each followed by ", ": lost, and with the note
 * unstored, unstored_by_type, unstored_by_stream, lost_includes_unstored. */
void tpp_losses_json(FILE *f, const struct tpp_losses *l, const struct tpp_reader *r);
#endif
