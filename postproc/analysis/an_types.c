/* Event classification by tracefs name, and the field each analysis needs. */
#include <string.h>
#include "an_types.h"
#include "an_pair.h"
#include "an_sched.h"

static const struct {
	const char *name;
	uint8_t kind;
} kinds[] = {
	{"sched_switch", AN_SWITCH},
	{"sched_wakeup", AN_WAKEUP},
	{"sched_waking", AN_OTHER}, /* wakeup is what ends the sleep; waking only starts it */
	{"sched_wakeup_new", AN_WAKEUP_NEW},
	{"sched_migrate_task", AN_MIGRATE},
	{"sched_process_fork", AN_FORK},
	{"sched_process_exec", AN_EXEC},
	{"sched_process_exit", AN_EXIT},
	{"sched_stat_runtime", AN_RUNTIME},
	{"block_rq_insert", AN_BLK_INSERT},
	{"block_rq_issue", AN_BLK_ISSUE},
	{"block_rq_complete", AN_BLK_COMPLETE},
	{"net_dev_queue", AN_NET_QUEUE},
	{"net_dev_xmit", AN_NET_XMIT},
	{"netif_receive_skb", AN_NET_RECV},
	{"inet_sock_set_state", AN_SOCK_STATE},
	{"sock_send_length", AN_SOCK_SEND},
	{"sock_recv_length", AN_SOCK_RECV},
	{"func_entry", AN_FENTRY},
	{"func_exit", AN_FEXIT},
	{"func_unwind", AN_FUNWIND},
	{"func_resume", AN_FRESUME},
};

/* Candidate field names per role, first match wins. */
static const char *const roles[AN_NROLES][4] = {
	[R_PID] = {"pid", "child_pid"},
	[R_COMM] = {"comm", "child_comm"},
	[R_PREV_PID] = {"prev_pid", "parent_pid", "old_pid"},
	[R_PREV_COMM] = {"prev_comm", "parent_comm"},
	[R_PREV_STATE] = {"prev_state"},
	[R_NEXT_PID] = {"next_pid"},
	[R_NEXT_COMM] = {"next_comm"},
	[R_CPU] = {"target_cpu", "dest_cpu"},
	[R_DEV] = {"dev"},
	[R_SECTOR] = {"sector"},
	[R_NSECT] = {"nr_sector"},
	[R_BYTES] = {"bytes"},
	[R_RWBS] = {"rwbs"},
	[R_ERROR] = {"error"},
	[R_LEN] = {"len"},
	[R_NAME] = {"name"},
	[R_RC] = {"rc"},
	[R_ADDR] = {"addr", "__probe_ip", "skbaddr"},
	[R_RET] = {"ret", "retval", "arg_ret"},
	[R_DEPTH] = {"depth"},
	[R_WHY] = {"why"},
	[R_SP] = {"__sp"},
	[R_RA] = {"__ra"},
	[R_SK] = {"skaddr", "sk"},
	[R_OLDSTATE] = {"oldstate"},
	[R_NEWSTATE] = {"newstate"},
	[R_FAMILY] = {"family"},
	[R_SPORT] = {"sport"},
	[R_DPORT] = {"dport"},
	[R_SADDR] = {"saddr"},
	[R_DADDR] = {"daddr"},
	[R_SADDR6] = {"saddr_v6"},
	[R_DADDR6] = {"daddr_v6"},
	[R_FLAGS] = {"flags"},
	[R_RUNTIME] = {"runtime"},
};

static int findf(const struct tpp_type *t, const char *name)
{
	for (int i = 0; i < t->nfields && i < TPP_MAX_FIELDS; i++)
		if (t->fields[i].name && !strcmp(t->fields[i].name, name))
			return i;
	return -1;
}

void an_types_init(struct an_types *ty, const struct tpp_reader *r)
{
	memset(ty, 0, sizeof(*ty));
	for (size_t i = 0; i < TPP_MAX_TYPES; i++)
		memset(ty->t[i].f, -1, sizeof(ty->t[i].f));
	const struct tpp_file_info *fi = tpp_r_info(r);
	for (uint32_t i = 0; i < fi->ntypes; i++) {
		const struct tpp_type *t = &fi->types[i];
		if (!t->name || t->id >= TPP_MAX_TYPES)
			continue;
		struct an_tinfo *ti = &ty->t[t->id];
		const char *name = t->name, *colon = strchr(name, ':');
		/* tracerec names its probe group tpp_PID, so the probe fields,
		 * not the group, say that this is a uprobe. */
		int uprobe = (t->system && !strcmp(t->system, "uprobes")) ||
			     !strncmp(name, "uprobes:", 8) || findf(t, "__probe_ip") >= 0 ||
			     (findf(t, "__probe_func") >= 0 && findf(t, "__probe_ret_ip") >= 0);
		if (colon)
			name = colon + 1;
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (!strcmp(name, kinds[k].name))
				ti->kind = kinds[k].kind;
		for (int role = 0; role < AN_NROLES; role++)
			for (int c = 0; c < 4 && roles[role][c]; c++)
				if (ti->f[role] < 0)
					ti->f[role] = (int8_t)findf(t, roles[role][c]);
		if (uprobe) {
			/* A uretprobe's record names the function in __probe_func and
			 * the call site in __probe_ret_ip. */
			int pf = findf(t, "__probe_func");
			ti->kind = pf >= 0 ? AN_URET : AN_UENTRY;
			if (pf >= 0)
				ti->f[R_ADDR] = (int8_t)pf;
			if (ti->kind == AN_URET && ti->f[R_RET] < 0) {
				/* "arg1" of a return probe is the return value by convention. */
				int a = findf(t, "arg1");
				ti->f[R_RET] = (int8_t)a;
			}
		}
		if (ti->kind == AN_FENTRY || ti->kind == AN_UENTRY) {
			/* Arguments: fields after the address that the pairing has no
			 * role for, in schema order. */
			for (int k = 0; k < t->nfields && ti->nargs < AN_MAX_ARGS; k++) {
				const char *fn = t->fields[k].name;
				/* "__probe_ip", "__sp", "__ra": the probe's own */
				if (!fn || k == ti->f[R_ADDR] || k == ti->f[R_DEPTH] ||
				    !strncmp(fn, "__", 2) || t->fields[k].type > TPP_F_S64)
					continue;
				if (ti->nargs == 0)
					ti->f[R_ARG0] = (int8_t)k;
				else if (k != ti->f[R_ARG0] + ti->nargs)
					break; /* only a contiguous run is taken as arguments */
				ti->nargs++;
			}
		}
		ty->has[ti->kind]++;
	}
}

const char *an_s(const struct tpp_event *ev, const struct an_tinfo *ti, int role, char *buf,
		 size_t len)
{
	int i = ti->f[role];
	if (i < 0 || !len) {
		if (len)
			buf[0] = 0;
		return buf;
	}
	size_t n = ev->v[i].s.len;
	if (!ev->v[i].s.p)
		n = 0;
	if (n >= len)
		n = len - 1;
	memcpy(buf, ev->v[i].s.p, n);
	buf[n] = 0;
	/* Kernel char[] fields come NUL-padded. */
	buf[strnlen(buf, n)] = 0;
	return buf;
}

void an_want_roles(const struct an_types *ty, uint32_t *want, const int *roles, size_t n)
{
	for (size_t id = 0; id < TPP_MAX_TYPES; id++)
		for (size_t k = 0; k < n; k++)
			if (ty->t[id].f[roles[k]] >= 0)
				want[id] |= 1u << ty->t[id].f[roles[k]];
}

void an_want_kind(const struct an_types *ty, uint32_t *want, int kind)
{
	for (size_t id = 0; id < TPP_MAX_TYPES; id++)
		if (ty->t[id].kind == kind)
			want[id] = UINT32_MAX;
}

void an_want_pairing(const struct an_types *ty, uint32_t *want)
{
	/* an_pair_feed: calls, unwinding, and the switches and exits that
	 * close frames or charge off-CPU time */
	static const int r[] = {R_ADDR, R_RET, R_DEPTH, R_WHY, R_SP, R_RA, R_PREV_PID, R_NEXT_PID, R_PID};
	an_want_roles(ty, want, r, sizeof(r) / sizeof(r[0]));
	for (size_t id = 0; id < TPP_MAX_TYPES; id++) {
		const struct an_tinfo *ti = &ty->t[id];
		for (int i = 0; i < ti->nargs; i++)
			want[id] |= 1u << (ti->f[R_ARG0] + i);
	}
}

void an_want_sched(const struct an_types *ty, uint32_t *want, int comms)
{
	/* an_sched_feed */
	static const int r[] = {R_PREV_PID, R_NEXT_PID, R_PREV_STATE, R_PID, R_RUNTIME};
	static const int c[] = {R_PREV_COMM, R_NEXT_COMM, R_COMM};
	an_want_roles(ty, want, r, sizeof(r) / sizeof(r[0]));
	if (comms)
		an_want_roles(ty, want, c, sizeof(c) / sizeof(c[0]));
}
