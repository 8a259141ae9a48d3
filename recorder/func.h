/* func — function entry/exit recording as the record loop sees it: the
 * compiled-in runtime (-pg / -finstrument-functions, preloaded) and dynamic
 * uprobes/kprobes. Owned by the function-tracing code (recorder/func_*.c);
 * the record command (recorder/cmd_record.c and recorder/record_*.c) only calls what is declared here.
 *
 * Threading: every function here runs on the recorder's writer thread, the
 * only one that touches the tpp_writer. Errors: negative errno values; a
 * message is left in func_error(). Nothing here prints.
 */
#ifndef TPP_REC_FUNC_H
#define TPP_REC_FUNC_H

#include <stdint.h>
#include <stddef.h>
#include "tpp_format.h"

struct func_opts {
	int no_func;               /* --no-func */
	const char **filter;       /* -F GLOB, repeatable */
	size_t nfilter;
	const char **notrace;      /* -N GLOB */
	size_t nnotrace;
	int max_depth;             /* -D N, 0 = unlimited */
	uint64_t min_ns;           /* --min-duration: drop shorter calls in the runtime */
	const char **uprobes;      /* -u BIN:GLOB */
	size_t nuprobes;
	const char **args;         /* -A FUNC:a,b  or  FUNC:%di,+0(%si):string */
	size_t nargs;
	const char **kprobes;      /* -k GLOB */
	size_t nkprobes;
	unsigned max_probes;       /* cap on probes one run may create */
	uint64_t pool_per_cpu;     /* -b: the runtime's pool is this times the online
				    * CPUs, shared by all threads; 0 = default */
	int wait_set;              /* --blocking-timeout given: */
	uint64_t wait_ms;          /* a thread finding the pool full waits this long for room */
	const char *instance_dir;  /* the private tracefs instance, ".../instances/NAME" */
	const char *tracefs_dir;   /* the tracefs mount, for uprobe_events */
};

struct func_session;

/* cmd_path may be NULL (no command: -a / -p targets; only probes apply). */
int func_session_new(struct func_session **s, const struct func_opts *o, const char *cmd_path);
/* Environment additions for the command (LD_PRELOAD=..., TPP_RT_*=...): a
 * NULL-terminated array owned by s, possibly empty. Called before fork. */
char *const *func_child_env(struct func_session *s);
/* In the forked child, before exec (async-signal-safe): lets the command
 * inherit the runtime's pool. s may be NULL. */
void func_child_prepare(struct func_session *s);
/* The whole budget of the runtime's pool for these options, in bytes. */
uint64_t func_pool_budget(const struct func_opts *o);
/* Creates uprobe/kprobe events; *names gets "uprobes/NAME"-style event names
 * (owned by s) for the record command to enable in its instance like any
 * tracepoint. Called before the record command reads event formats. */
int func_create_probes(struct func_session *s, const char *const **names, size_t *n);
/* Adds the runtime's event types to w, ids from *next_type (advanced). */
int func_declare_types(struct func_session *s, struct tpp_writer *w, uint16_t *next_type);
/* Moves what the runtime buffered into w (per-thread streams, ids from
 * *next_stream, advanced). Called often from the writer loop; never blocks. */
int func_drain(struct func_session *s, struct tpp_writer *w, uint32_t *next_stream);
/* pid was seen in the recording (an event's task): remember it so that its
 * maps and symbols are saved. Cheap when called repeatedly. */
void func_note_pid(struct func_session *s, int32_t pid);
/* Process parent forked child: until child's own maps are known, its
 * addresses are parent's (a fork copies the address space). */
void func_note_fork(struct func_session *s, int32_t parent, int32_t child);
/* pid exec'd: its new maps are read now, while it most likely runs. */
void func_note_exec(struct func_session *s, int32_t pid);
/* After the target ended or recording stopped: last drain, memory maps,
 * build-ids and symbol tables, lost counts. */
int func_finish(struct func_session *s, struct tpp_writer *w, uint32_t *next_stream);
struct func_stats {
	uint64_t pool_bytes;      /* the budget: the pool's size; 0 without the runtime */
	uint64_t pool_peak_bytes; /* its pages that existed at the most (the kernel's count) */
	uint64_t lost;            /* runtime records dropped for want of room */
	uint64_t threads;         /* threads traced */
	uint64_t waits, waited_ns; /* the command's threads waited for room: times, ns in all */
	uint64_t wait_capped;      /* threads that waited the most any may in all, then no more */
	uint64_t data_lost;        /* -A values dropped for want of room (not counted in lost) */
	uint64_t damaged;          /* values of the shared pool the command wrote over (ignored) */
	uint64_t args_refused;     /* processes where -A could not read memory (seccomp) */
	int32_t args_refused_pid;  /* the first of them */
};
/* s may be NULL (all zero). */
void func_session_stats(const struct func_session *s, struct func_stats *st);
/* Removes every probe it created (also safe from an atexit/signal path). */
void func_session_free(struct func_session *s);
/* For a signal handler: deletes the probe definitions, using only
 * async-signal-safe calls (the runtime's pool is anonymous: nothing to
 * remove); s stays valid and must still be freed later (or not at all, when
 * the process is exiting). */
void func_session_cleanup_signal(struct func_session *s);
const char *func_error(const struct func_session *s);
/* What the options will not do together, one line for the record command
 * to print before the command runs; NULL if nothing. */
const char *func_warning(const struct func_session *s);

/* Hints (func_hints.c), for the record command to print: 1 with a one-line
 * msg when command cmd is not built with -pg/-finstrument-functions (its
 * recording holds no calls unless probes or kernel events are asked for);
 * when process pid is built with one of them but tracerec's runtime is not
 * loaded in it (-p records none of its calls). 0 otherwise. */
int func_hint_untraced(const char *cmd, char *msg, size_t len);
int func_hint_pid(int32_t pid, char *msg, size_t len);

/* Probe definitions are global: one of a recorder that died (kill -9) stays
 * for ever and keeps the traced binary's breakpoints. (func_probe.c) */
/* Deletes every probe of group tpp_PID in tracefs's uprobe_events and
 * kprobe_events: the count removed, or -EBUSY while some are still enabled
 * (their instance not yet removed). Allocates nothing: the guard process
 * calls it after the recorder is gone. */
int func_probes_remove_group(const char *tracefs, int32_t pid);
/* Removes the probes (and tracefs instances) of recorders that no longer
 * run; > 0 with a one-line msg saying whose and how many. */
int func_probes_reap_stale(const char *tracefs, char *msg, size_t len);

#endif
