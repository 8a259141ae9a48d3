/* task_names — keeps the file's task-name metadata complete without repeating
 * names per event: every task alive at start, then each tid the first time an
 * event shows it, and again whenever its name changes (fork, exec, a new
 * comm seen in sched_switch). A reader names an event by the last record at
 * or before it, so each record is true at its time: events arrive CPU by
 * CPU, not in time order, and a name is dropped as a repeat only when the
 * record in force at its time already says it; a name read from /proc is
 * stamped with the time it was read. A task whose process cannot be known
 * (gone before it was seen, its clone not recorded) is written with pid -1,
 * never a guess. Runs on the writer thread only.
 * Ownership: the table is owned by struct tn_table; tn_release frees it.
 * Errors: negative errno (from the writer).
 */
#ifndef TPP_REC_TASK_NAMES_H
#define TPP_REC_TASK_NAMES_H

#include <stdint.h>
#include "tpp_format.h"

/* A name written for a task: true from ts, and seen again up to last. */
struct tn_name {
	uint64_t ts, last;
	uint8_t len;
	char comm[16]; /* the kernel's TASK_COMM_LEN: compared, not hashed, per event */
};

#define TN_HIST 3
struct tn_entry {
	int32_t tid, pid; /* tid 0 marks a free slot; the idle task is kept apart */
	uint8_t n;        /* names kept: the latest TN_HIST written, oldest first */
	struct tn_name h[TN_HIST];
};

struct tn_table {
	struct tn_entry *e;
	uint32_t cap, n;  /* cap is a power of two */
	int idle_done;
	void (*on_new_pid)(void *arg, int32_t pid); /* called for each new task's pid */
	/* a process forked child (its memory starts as parent's copy); a
	 * process exec'd (a new memory layout). Either may be NULL. */
	void (*on_fork)(void *arg, int32_t parent_pid, int32_t child_pid);
	void (*on_exec)(void *arg, int32_t pid);
	void *arg;
	uint64_t (*now)(void); /* the trace clock, for names read from /proc; NULL: the event's time */
	uint64_t proc_reads; /* /proc lookups made for unknown tids */
};

int tn_init(struct tn_table *t);
void tn_release(struct tn_table *t);
/* Records every task in /proc (one tpp_w_task each). */
int tn_scan_proc(struct tn_table *t, struct tpp_writer *w, uint64_t ts);
/* An event ran as tid at ts: if the tid is new, looks it up in /proc (name
 * and thread group) and records it as of now. Cheap for known tids. */
int tn_seen(struct tn_table *t, struct tpp_writer *w, uint64_t ts, int32_t tid);
/* The kernel told us tid's name (comm, len bytes, not NUL-terminated);
 * pid is its thread group or -1 when unknown. Records it if new or changed. */
int tn_named(struct tn_table *t, struct tpp_writer *w, uint64_t ts, int32_t pid, int32_t tid,
	     const char *comm, uint32_t len);

/* task:task_newtask: parent_tid cloned child (named comm, len bytes) with
 * clone_flags: a thread of parent's process (CLONE_THREAD) or a process of
 * its own. Right even when both are gone by the time the event is read. */
int tn_newtask(struct tn_table *t, struct tpp_writer *w, uint64_t ts, int32_t parent_tid, int32_t child,
	       const char *comm, uint32_t len, uint64_t clone_flags);
/* sched_process_exec: pid runs a new program, named comm (len bytes). */
int tn_exec(struct tn_table *t, struct tpp_writer *w, uint64_t ts, int32_t pid, const char *comm, uint32_t len);
/* The process of tid: known, else from /proc while it lives; -1 otherwise. */
int32_t tn_pid_of(struct tn_table *t, int32_t tid);

/* The thread group of a live tid, from /proc/TID/status; -1 when gone. */
int32_t tn_proc_tgid(int32_t tid);

#endif
