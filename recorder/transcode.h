/* transcode — one raw ftrace record (the bytes after the ring-buffer event
 * header) into a tracepp event: type id, tid (common_pid) and field values in
 * the order of the type's schema, which comes from the event's format file.
 * Nothing here allocates on the per-event path. Errors: negative errno.
 */
#ifndef TPP_REC_TRANSCODE_H
#define TPP_REC_TRANSCODE_H

#include <stdint.h>
#include "event_format.h"
#include "tpp_format.h"

/* Events whose values also feed task-name metadata. */
enum tc_role { TC_PLAIN, TC_SWITCH, TC_FORK, TC_EXEC, TC_EXIT, TC_NEWTASK, TC_RENAME };

struct tc_type {
	struct ef_event ev;
	uint16_t tpp_id;
	enum tc_role role;
	/* field indices used by the role (-1: absent) */
	int8_t i_pid_a, i_comm_a, i_pid_b, i_comm_b;
	int8_t i_flags;     /* TC_NEWTASK: clone_flags */
	uint8_t names_only; /* read for task names, not written to the file */
	struct tpp_field_def defs[TPP_MAX_FIELDS];
};

/* Owns ntypes tc_type values, each its own allocation so that pointers into
 * one (tc_type_def's names) stay valid as types are added; tc_release frees. */
struct transcoder {
	uint16_t by_kernel_id[65536]; /* kernel common_type → index+1, 0 = unknown */
	struct tc_type **types;
	int ntypes;
};

void tc_init(struct transcoder *tc);
void tc_release(struct transcoder *tc);
/* Adds an event (a copy: ev stays the caller's); its tpp id is tpp_id.
 * -EEXIST when the kernel id is known. */
int tc_add(struct transcoder *tc, const struct ef_event *ev, uint16_t tpp_id);
/* The schema entry for type t (points into t). */
struct tpp_type_def tc_type_def(const struct tc_type *t);
/* Decodes data[0..len). Returns the type, or NULL when the kernel id is not
 * ours or the record is too short for its layout (the event is skipped).
 * String values point into data. */
const struct tc_type *tc_decode(const struct transcoder *tc, const uint8_t *data, uint32_t len,
				int32_t *tid, union tpp_val *vals);

#endif
