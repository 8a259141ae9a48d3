#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "transcode.h"

void tc_init(struct transcoder *tc)
{
	memset(tc, 0, sizeof(*tc));
}

void tc_release(struct transcoder *tc)
{
	for (int i = 0; i < tc->ntypes; i++) {
		ef_release(&tc->types[i]->ev);
		free(tc->types[i]);
	}
	free(tc->types);
	tc->types = NULL;
	tc->ntypes = 0;
}

static int8_t field_idx(const struct ef_event *ev, const char *name)
{
	for (int i = 0; i < ev->nfields; i++)
		if (!strcmp(ev->f[i].name, name))
			return (int8_t)i;
	return -1;
}

int tc_add(struct transcoder *tc, const struct ef_event *ev, uint16_t tpp_id)
{
	if (ev->id < 0 || ev->id > 65535)
		return -EINVAL;
	if (tc->by_kernel_id[ev->id])
		return -EEXIST;
	struct tc_type **nt = realloc(tc->types, (size_t)(tc->ntypes + 1) * sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	tc->types = nt;
	struct tc_type *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->ev = *ev;
	/* its own copy: the caller's ev is released after the call */
	if (ev->print_fmt && !(t->ev.print_fmt = strdup(ev->print_fmt))) {
		free(t);
		return -ENOMEM;
	}
	nt[tc->ntypes] = t;
	t->tpp_id = tpp_id;
	t->i_pid_a = t->i_comm_a = t->i_pid_b = t->i_comm_b = t->i_flags = -1;
	if (!strcmp(ev->system, "sched")) {
		if (!strcmp(ev->name, "sched_switch")) {
			t->role = TC_SWITCH;
			t->i_pid_a = field_idx(ev, "prev_pid");
			t->i_comm_a = field_idx(ev, "prev_comm");
			t->i_pid_b = field_idx(ev, "next_pid");
			t->i_comm_b = field_idx(ev, "next_comm");
		} else if (!strcmp(ev->name, "sched_process_fork")) {
			t->role = TC_FORK;
			t->i_pid_a = field_idx(ev, "parent_pid");
			t->i_pid_b = field_idx(ev, "child_pid");
			t->i_comm_b = field_idx(ev, "child_comm");
		} else if (!strcmp(ev->name, "sched_process_exec")) {
			t->role = TC_EXEC;
			t->i_pid_a = field_idx(ev, "pid");
			t->i_comm_a = field_idx(ev, "filename");
		} else if (!strcmp(ev->name, "sched_process_exit")) {
			t->role = TC_EXIT;
			t->i_pid_a = field_idx(ev, "pid");
		}
	} else if (!strcmp(ev->system, "task")) {
		/* the child of a clone, in the parent's context: its flags say
		 * thread or process, which sched_process_fork cannot */
		if (!strcmp(ev->name, "task_newtask")) {
			t->role = TC_NEWTASK;
			t->i_pid_b = field_idx(ev, "pid");
			t->i_comm_b = field_idx(ev, "comm");
			t->i_flags = field_idx(ev, "clone_flags");
		} else if (!strcmp(ev->name, "task_rename")) {
			t->role = TC_RENAME;
			t->i_pid_a = field_idx(ev, "pid");
			t->i_comm_a = field_idx(ev, "newcomm");
		}
	}
	for (int i = 0; i < ev->nfields; i++) {
		t->defs[i].name = t->ev.f[i].name;
		t->defs[i].type = ev->f[i].ftype;
	}
	tc->ntypes++;
	tc->by_kernel_id[ev->id] = (uint16_t)tc->ntypes;
	return 0;
}

struct tpp_type_def tc_type_def(const struct tc_type *t)
{
	struct tpp_type_def d = {
		.id = t->tpp_id,
		.name = t->ev.name,
		.system = t->ev.system,
		.nfields = (uint16_t)t->ev.nfields,
		.fields = t->defs,
	};
	return d;
}

static uint64_t rd_uint(const uint8_t *p, unsigned size)
{
	switch (size) {
	case 1:
		return *p;
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	default: {
		uint64_t v;
		memcpy(&v, p, 8);
		return v;
	}
	}
}

static int64_t sign_extend(uint64_t v, unsigned size)
{
	if (size >= 8)
		return (int64_t)v;
	unsigned sh = 64 - 8 * size;
	return (int64_t)(v << sh) >> sh;
}

const struct tc_type *tc_decode(const struct transcoder *tc, const uint8_t *data, uint32_t len,
				int32_t *tid, union tpp_val *vals)
{
	if (len < 8)
		return NULL;
	uint16_t kid;
	memcpy(&kid, data, 2);
	unsigned idx = tc->by_kernel_id[kid];
	if (!idx)
		return NULL;
	const struct tc_type *t = tc->types[idx - 1];
	const struct ef_event *ev = &t->ev;
	if (ev->pid_off >= 0 && (uint32_t)ev->pid_off + 4 <= len)
		*tid = (int32_t)rd_uint(data + ev->pid_off, 4);
	else
		*tid = -1;
	for (int i = 0; i < ev->nfields; i++) {
		const struct ef_field *f = &ev->f[i];
		if ((uint32_t)f->offset + f->size > len)
			return NULL;
		const uint8_t *p = data + f->offset;
		switch (f->kind) {
		case EF_INT: {
			uint64_t v = rd_uint(p, f->size);
			if (f->is_signed)
				vals[i].i = sign_extend(v, f->size);
			else
				vals[i].u = v;
			break;
		}
		case EF_CHARS:
			vals[i].s.p = (const char *)p;
			vals[i].s.len = (uint32_t)strnlen((const char *)p, f->size);
			break;
		case EF_BYTES:
			vals[i].s.p = (const char *)p;
			vals[i].s.len = f->size;
			break;
		default: { /* __data_loc: low 16 bits offset, high 16 bits length */
			uint32_t loc = (uint32_t)rd_uint(p, 4);
			uint32_t off = loc & 0xffff, n = loc >> 16;
			if (f->rel)
				off += (uint32_t)f->offset + f->size;
			if (off > len || n > len - off)
				return NULL;
			vals[i].s.p = (const char *)data + off;
			vals[i].s.len = f->kind == EF_LOC_STR ? (uint32_t)strnlen((const char *)data + off, n) : n;
			break;
		}
		}
	}
	return t;
}
