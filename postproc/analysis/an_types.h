/* an_types — how the analyses see a file's event types: each tracefs type
 * classified (enum an_kind) with the index of each field role it has
 * (enum an_role), and the projections (which fields to decode) each
 * analysis asks for. Filled once per file (an_types_init) from the reader's
 * schema; plain data, nothing to free, no errors. Nothing here prints.
 */
#ifndef TPP_AN_TYPES_H
#define TPP_AN_TYPES_H
#include <stdint.h>
#include <stddef.h>
#include "tpp_decode.h"

enum an_kind {
	AN_OTHER = 0,
	AN_SWITCH, AN_WAKEUP, AN_WAKEUP_NEW, AN_MIGRATE, AN_FORK, AN_EXEC, AN_EXIT,
	AN_RUNTIME, /* sched_stat_runtime: the kernel's own clock of a running task */
	AN_BLK_INSERT, AN_BLK_ISSUE, AN_BLK_COMPLETE,
	AN_NET_QUEUE, AN_NET_XMIT, AN_NET_RECV,
	AN_SOCK_STATE, AN_SOCK_SEND, AN_SOCK_RECV, /* sock:* tracepoints */
	AN_FENTRY, AN_FEXIT, AN_FUNWIND, AN_FRESUME, /* the preloaded runtime's events */
	AN_UENTRY, AN_URET,              /* uprobes / uretprobes */
	AN_NKINDS
};
/* Field roles: index into tpp_event.v per role, -1 when the type lacks it. */
enum an_role {
	R_PID, R_COMM, R_PREV_PID, R_PREV_COMM, R_PREV_STATE, R_NEXT_PID, R_NEXT_COMM,
	R_CPU,  /* target_cpu / dest_cpu */
	R_DEV, R_SECTOR, R_NSECT, R_BYTES, R_RWBS, R_ERROR,
	R_LEN, R_NAME, R_RC,
	R_ADDR, R_RET, R_DEPTH, R_ARG0, R_WHY,
	R_SP, R_RA, /* uprobes: stack pointer (entry and return), return address (entry) */
	R_SK, R_OLDSTATE, R_NEWSTATE, R_FAMILY, R_SPORT, R_DPORT, R_SADDR, R_DADDR, R_SADDR6,
	R_DADDR6, R_FLAGS,
	R_RUNTIME,
	AN_NROLES
};
#define AN_MAX_ARGS 6
struct an_tinfo {
	uint8_t kind;   /* enum an_kind */
	uint8_t nargs;  /* function arguments, from R_ARG0 on */
	int8_t f[AN_NROLES];
};
/* Classification of every type of a file, by tracefs name. */
struct an_types {
	struct an_tinfo t[TPP_MAX_TYPES];
	int has[AN_NKINDS]; /* how many types of each kind the file declares */
};
void an_types_init(struct an_types *ty, const struct tpp_reader *r);
static inline const struct an_tinfo *an_ti(const struct an_types *ty, const struct tpp_event *ev)
{
	return &ty->t[ev->type < TPP_MAX_TYPES ? ev->type : 0];
}
/* Field value helpers: 0 / "" when the role is missing. */
static inline uint64_t an_u(const struct tpp_event *ev, const struct an_tinfo *ti, int role)
{
	return ti->f[role] >= 0 ? ev->v[(int)ti->f[role]].u : 0;
}
/* Projection: an analysis names the roles it reads and the decoder skips
 * every other field (tpp_iter_opts.want; fields left out read as 0). want
 * has TPP_MAX_TYPES entries and starts zeroed. an_want_roles adds the
 * fields of the given roles in every type; an_want_kind every field of the
 * types of one kind (for analyses that print whole events). */
void an_want_roles(const struct an_types *ty, uint32_t *want, const int *roles, size_t n);
void an_want_kind(const struct an_types *ty, uint32_t *want, int kind);
/* The fields an_pair_feed reads; those an_sched_feed reads (comms: the
 * task-name fields too, unless no_comm is set). */
void an_want_pairing(const struct an_types *ty, uint32_t *want);
void an_want_sched(const struct an_types *ty, uint32_t *want, int comms);
/* Copies a string field (not NUL-terminated in the event) into buf. */
const char *an_s(const struct tpp_event *ev, const struct an_tinfo *ti, int role, char *buf,
		 size_t len);
#endif
