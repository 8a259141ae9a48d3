/* fieldfmt — kernel field values as people read them, beside the raw
 * number: a task state as its letters (prev_state=256 is "R+", as perf and
 * trace-cmd print it), a block device number as major:minor, a syscall
 * number as its name, a negative syscall return as its errno name, a
 * kernel address in hex, a flag set or a symbolic value as the event's
 * print format names it ("gfp_flags=GFP_KERNEL|__GFP_ZERO").
 *
 * ff_kind classifies a field once per event type; ff_text formats one
 * value. Nothing here allocates or prints; the caller decides where the
 * text goes (text output in place of the number, JSON beside it).
 */
#ifndef TPP_FIELDFMT_H
#define TPP_FIELDFMT_H
#include <stddef.h>
#include <stdint.h>
#include "tpp_decode.h"

enum ff_kind { FF_NONE, FF_TASK_STATE, FF_DEV, FF_SYSCALL, FF_ERRNO, FF_HEX };

/* x86-64 syscall names by number, made at build time (gen-syscalls.sh) from
 * the kernel's list; empty where the build host has none. A 32-bit task on
 * an x86-64 host makes i386 calls, whose numbers differ: raw_syscalls does
 * not say which table a number is from, so such a task's names are wrong. */
extern const char *const ff_syscalls_x86_64[];
extern const unsigned ff_nsyscalls_x86_64;

/* How field FIELD of event type TYPE reads (TYPE as the file names it, with
 * or without its "subsystem:"); arch is the recording host's (tpp_file_info),
 * syscall numbers are named only for the ones whose table tracepp has. */
enum ff_kind ff_kind(const char *arch, const char *type, const char *field);

/* v as kind k reads, NUL-terminated in buf; its length, or 0 when v has no
 * reading of that kind (a return that is no error, a syscall number
 * unknown): print the number then. */
size_t ff_text(char *buf, size_t len, enum ff_kind k, uint64_t v);

/* A system call as people read it, "read(fd=3, buf=0x7ffd1e40, count=4096)":
 * syscall nr (x86-64) with the arguments its definition takes, named, out
 * of raw_syscalls:sys_enter's args field (words: its six words, as the
 * x86-64 host stored them, nbytes 48); a call whose arguments tracepp does
 * not know shows all six in hex. Its length, or 0 when nr has no name, the
 * field is not six words or buf is short. ff_syscall_nargs: how many
 * arguments nr takes, -1 when not known. */
size_t ff_syscall_call(char *buf, size_t len, uint64_t nr, const void *words, size_t nbytes);
int ff_syscall_nargs(uint64_t nr);

/* Where an event type keeps a system call: the indexes of its id and args
 * fields, -1 both when it is no raw_syscalls:sys_enter recorded on x86-64.
 * ff_call_fields works it out once per type; ff_call_text is
 * ff_syscall_call of one such event (0: none, or no name). */
struct ff_call {
	int id, args;
};
void ff_call_fields(struct ff_call *f, const char *arch, const struct tpp_type *t);
size_t ff_call_text(const struct ff_call *f, const struct tpp_event *ev, char *buf, size_t len);

/* v as the kernel's print format names it (f from tpp_names_pfield): a
 * flag set as its names joined by the format's delimiter, "GFP_KERNEL|
 * __GFP_ZERO", the bits no name covers last as "0x..." (as the kernel's
 * trace file and trace-cmd print them: each name taken in the format's
 * order when all its bits are set, then cleared); a symbolic value as its
 * name, or "0x..." when none is v's. Its length, or 0 when buf is short or
 * v is an empty set whose format names no text for it ("none"): print the
 * number then. Used where ff_kind gives FF_NONE: tracepp's own readings
 * (task states, devices...) come first. */
size_t ff_pf_text(char *buf, size_t len, const struct tpp_pfield *f, uint64_t v);

/* Whether text output prints the reading beside the number, "id=3(close)",
 * "ret=-9(EBADF)" (the number is what people look up), rather than in its
 * place, "prev_state=R+". */
static inline int ff_beside(enum ff_kind k)
{
	return k == FF_SYSCALL || k == FF_ERRNO;
}
#endif
