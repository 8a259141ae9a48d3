/* func_args — -A FUNC:ARGS for the functions of a compiled-in (-pg or
 * -finstrument-functions) executable: where each named parameter is at the
 * function's entry (from its DWARF signature: which register under -pg,
 * which frame slot under -finstrument-functions -O0), the table the runtime
 * copies them by (tpp_rt_argspec), the event types they are written as
 * (the uprobe path's fields: the parameters by name, `ret`, with an
 * `arg_types` note of their type codes), and those events, built from the
 * runtime's DATA records.
 *
 * Errors: negative errno and a one-line message in err. Ownership: a
 * func_args is the caller's (func_args_free); the strings of an event point
 * into the func_args_pending it was built from, valid until its next use. */
#ifndef FUNC_ARGS_H
#define FUNC_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "rt/tpp_rt_abi.h"
#include "tpp_format.h"

struct func_args;

/* Plans the -A specs ("FUNC:name,name", "FUNC:argN") that name a function
 * of exe (pg: built with -pg, else -finstrument-functions). Specs naming no
 * function of exe are left to the uprobes, or refused if strict. *out is
 * NULL when none applies. */
int func_args_plan(struct func_args **out, const char *exe, int pg, int strict, const char *const *specs,
		   size_t nspecs, char *err, size_t errlen);
void func_args_free(struct func_args *a);
/* Writes the runtime's table (at most TPP_RT_ARGSPEC_MAX entries, sorted
 * by address); returns how many. */
uint32_t func_args_fill(const struct func_args *a, struct tpp_rt_argspec *tab);
/* Declares, per function, an `aN:func_entry` type (addr, then the
 * arguments) and an `aN:func_exit` type (addr, ret; no ret for a void
 * function), ids from *next, each with its arg_types note. */
int func_args_declare(struct func_args *a, struct tpp_writer *w, uint16_t *next);

/* One thread's DATA records waiting for the ENTRY or EXIT they precede. */
struct func_args_pending;
struct func_args_pending *func_args_pending_new(void);
/* Forgets waiting values (NULL: nothing to do). */
void func_args_pending_clear(struct func_args_pending *p);
/* Whether values wait for the next ENTRY or EXIT (NULL: no). */
int func_args_waiting(const struct func_args_pending *p);
/* Takes a DATA record's word and value. */
void func_args_data(struct func_args_pending *p, uint64_t word, uint64_t value);
/* For the ENTRY (exit 0) or EXIT (exit 1) after waiting values: its type
 * and values (addr first, TPP_RT_ARGS + 1 of them); left as they are when
 * nothing waits. Clears p. */
void func_args_event(const struct func_args *a, struct func_args_pending *p, int exit, uint64_t addr,
		     uint16_t *type, union tpp_val *vals);

#endif
