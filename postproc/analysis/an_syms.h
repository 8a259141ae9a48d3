/* an_syms — function identities: (pid, addr) resolved to a name and
 * interned, so that equal names share one id (one line in a call graph).
 * Lifecycle: an_syms_open .. an_syms_close; the tpp_names passed in must
 * outlive it; names returned stay valid until close. Errors: -ENOMEM from
 * open; ids are UINT32_MAX on -ENOMEM (the one sentinel here: an id is an
 * index). Nothing here prints.
 */
#ifndef TPP_AN_SYMS_H
#define TPP_AN_SYMS_H
#include <stdint.h>
#include <stddef.h>
#include "tpp_decode.h"

/* Function identities: (pid, addr) resolved to a name and interned, so that
 * equal names share one id (one line in a call graph). */
struct an_syms;
int an_syms_open(struct an_syms **s, const struct tpp_names *n);
void an_syms_close(struct an_syms *s);
/* The id of the function at addr in pid; UINT32_MAX on -ENOMEM. Names of
 * unknown addresses are "0xADDR". */
uint32_t an_func_id(struct an_syms *s, int32_t pid, uint64_t addr);
/* A C++ symbol (_Z...) as its qualified name without template arguments
 * or parameters, uftrace's default ("app::work"), in buf; other names as
 * they are. Returns buf or name. */
const char *an_demangle(const char *name, char *buf, size_t len);
/* The id of a name, as an_func_id gives for an address of that function. */
uint32_t an_func_id_named(struct an_syms *s, const char *name);
/* The function of a call event at addr in pid: a probe event's own
 * function (tpp_names_probe: right even where pid's maps are missing),
 * else an_func_id. */
uint32_t an_func_id_ev(struct an_syms *s, int32_t pid, const struct tpp_event *ev, uint64_t addr);
const char *an_func_name(const struct an_syms *s, uint32_t id);
size_t an_func_name_len(const struct an_syms *s, uint32_t id);
size_t an_nfuncs(const struct an_syms *s);
#endif
