/* an_dwarf — source lines (file:line) of recorded addresses, from the ELF
 * objects found on this host whose build-id matches the one the recording
 * stored: the mapped path itself, or DEBUG_DIR/.build-id/xx/rest.debug.
 *
 * A file recorded elsewhere, or whose binaries are gone or rebuilt, simply
 * has no source lines: lookups return NULL, never an error. Errors: -ENOMEM
 * from open only. Nothing prints. Ownership: strings returned belong to the
 * an_dwarf object and stay valid until an_dwarf_close(); the reader must
 * outlive it.
 */
#ifndef TPP_AN_DWARF_H
#define TPP_AN_DWARF_H
#include <stdint.h>
#include "tpp_decode.h"

struct an_dwarf;
/* debug_dir: where .build-id/ lives; NULL means /usr/lib/debug. */
int an_dwarf_open(struct an_dwarf **d, const struct tpp_reader *r, const char *debug_dir);
void an_dwarf_close(struct an_dwarf *d);
/* "FILE:LINE" of addr in process pid (as in the file's mmap records), or
 * NULL when no local object with line information matches. Cached per
 * (pid, addr): repeated lookups are one hash probe. */
const char *an_dwarf_srcline(struct an_dwarf *d, int32_t pid, uint64_t addr);
#endif
