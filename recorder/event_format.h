/* event_format — one tracefs event's binary layout, read from its
 * events/SYSTEM/NAME/format file, and the rule that maps each field to a
 * tracepp field type. Errors: negative errno values; nothing prints.
 * Ownership: struct ef_event owns print_fmt (heap); ef_release frees it,
 * and a copy of the struct shares it.
 */
#ifndef TPP_REC_EVENT_FORMAT_H
#define TPP_REC_EVENT_FORMAT_H

#include <stdint.h>
#include "tpp_format.h"

enum ef_kind {
	EF_INT,      /* 1, 2, 4 or 8 byte integer (pointers too) */
	EF_CHARS,    /* char NAME[N]: NUL-padded text */
	EF_LOC_STR,  /* __data_loc / __rel_loc char[]: text stored after the fixed part */
	EF_LOC_BYTES,/* __data_loc / __rel_loc of anything else */
	EF_BYTES,    /* any other fixed-size field (int arrays, odd sizes) */
};

struct ef_field {
	char name[64];
	uint16_t offset, size;
	uint8_t is_signed, kind, rel; /* rel: __rel_loc (offset counts from the field's end) */
	enum tpp_ftype ftype;
};

/* Fields named common_* are dropped except common_pid, kept aside as the
 * event's tid. At most TPP_MAX_FIELDS remain. */
struct ef_event {
	int id;
	char system[64], name[TPP_NAME_MAX];
	int pid_off;    /* offset of common_pid, -1 when absent */
	int nfields;
	struct ef_field f[TPP_MAX_FIELDS];
	/* the text after "print fmt: ", as the kernel wrote it (it tells how
	 * flag sets and symbolic values read), or NULL */
	char *print_fmt;
};

/* Parses the text of a format file. Returns 0, -EINVAL when the text is not a
 * format file, -E2BIG when it has more than TPP_MAX_FIELDS fields, -ENOMEM.
 * On success the caller ef_release()s ev; on failure nothing is held. */
int ef_parse(const char *text, struct ef_event *ev);
/* Reads and parses events_dir/SYSTEM/NAME/format. -ENOENT: no such event.
 * A format file longer than EF_FILE_MAX is read for its fields only. */
#define EF_FILE_MAX (256u << 10)
int ef_load(const char *events_dir, const char *system, const char *name, struct ef_event *ev);
void ef_release(struct ef_event *ev);

#endif
