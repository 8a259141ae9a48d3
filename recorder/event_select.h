/* event_select — turns -e arguments ("sched,block", "tcp:tcp_probe",
 * "irq") into a list of tracefs events, checked against the events
 * directory, each with an optional kernel filter.
 * Ownership: struct es_list owns its array; es_release frees it.
 * Errors: negative errno; es_add leaves a message naming the bad word in
 * msg (nothing prints).
 */
#ifndef TPP_REC_EVENT_SELECT_H
#define TPP_REC_EVENT_SELECT_H

#include <stddef.h>

struct es_event {
	char system[64], name[128];
	const char *filter; /* not owned: points into argv */
	int from_group;     /* chosen through a group/subsystem, not by name */
	int names_only;     /* read for task names, not stored (es_add_names) */
};

struct es_list {
	struct es_event *v;
	size_t n, last_start; /* events added by the latest es_add start here */
	char msg[256];
};

/* Adds the events a comma-separated spec names. -ENOENT with msg set when a
 * word names no event of this kernel. Groups: sched, block, net, syscalls;
 * a tracefs subsystem name selects all its events. */
int es_add(struct es_list *l, const char *events_dir, const char *spec);
/* Appends a raw "SYSTEM/NAME" (probes created by the function tracer). */
int es_add_raw(struct es_list *l, const char *sys_slash_name);
/* Appends "SYSTEM/NAME" if this kernel has it and it is not selected yet,
 * marked names_only: the recorder reads it to name tasks (threads, forks,
 * renames) but stores it only when selected by -e. 0 also when absent. */
int es_add_names(struct es_list *l, const char *events_dir, const char *sys_slash_name);
/* Sets filter on the events of the latest es_add. -EINVAL if none. */
int es_set_filter(struct es_list *l, const char *filter);
void es_release(struct es_list *l);
/* Prints the groups and every available event (for `tracerec list`). */
const char *const *es_group_names(void);

#endif
