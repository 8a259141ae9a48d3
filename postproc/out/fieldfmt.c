/* fieldfmt — see fieldfmt.h. */
#include <stdio.h>
#include <string.h>
#include "fieldfmt.h"

static int is(const char *type, const char *name)
{
	const char *colon = strchr(type, ':');
	return !strcmp(colon ? colon + 1 : type, name);
}

static int prefixed(const char *type, const char *prefix)
{
	const char *colon = strchr(type, ':');
	return !strncmp(colon ? colon + 1 : type, prefix, strlen(prefix));
}

static int suffixed(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

enum ff_kind ff_kind(const char *arch, const char *type, const char *field)
{
	if (!type || !field)
		return FF_NONE;
	if (is(type, "sched_switch") && !strcmp(field, "prev_state"))
		return FF_TASK_STATE;
	if (prefixed(type, "block_") && !strcmp(field, "dev"))
		return FF_DEV;
	int raw_sys = is(type, "sys_enter") || is(type, "sys_exit");
	if ((raw_sys && !strcmp(field, "id")) || !strcmp(field, "__syscall_nr"))
		return arch && !strcmp(arch, "x86_64") ? FF_SYSCALL : FF_NONE;
	if ((is(type, "sys_exit") || prefixed(type, "sys_exit_")) && !strcmp(field, "ret"))
		return FF_ERRNO;
	if (suffixed(field, "addr") || !strcmp(field, "skb") || !strcmp(field, "ptr"))
		return FF_HEX;
	return FF_NONE;
}

/* The kernel's TASK_REPORT bits in sched_switch's prev_state (4.14 on):
 * its print format's letters, "R" for none, "+" for TASK_REPORT_MAX (a task
 * preempted while runnable). */
static size_t task_state(char *buf, size_t len, uint64_t v)
{
	static const char letters[] = "SDTtXZPI";
	size_t n = 0;
	for (unsigned b = 0; b < 8 && n + 3 < len; b++)
		if (v & (1u << b)) {
			if (n)
				buf[n++] = '|';
			buf[n++] = letters[b];
		}
	if (!n)
		buf[n++] = 'R';
	if (v & 0x100)
		buf[n++] = '+';
	buf[n] = 0;
	return (v >> 9) ? 0 : n; /* bits past the known ones: the number says more */
}

size_t ff_text(char *buf, size_t len, enum ff_kind k, uint64_t v)
{
	int n = 0;
	if (len < 24)
		return 0;
	switch (k) {
	case FF_TASK_STATE:
		return task_state(buf, len, v);
	case FF_DEV:
		/* the kernel's own dev_t: major << 20 | minor */
		n = snprintf(buf, len, "%u:%u", (unsigned)(v >> 20), (unsigned)(v & 0xfffff));
		break;
	case FF_SYSCALL:
		if (v >= ff_nsyscalls_x86_64 || !ff_syscalls_x86_64[v])
			return 0;
		n = snprintf(buf, len, "%s", ff_syscalls_x86_64[v]);
		break;
	case FF_ERRNO: {
		int64_t r = (int64_t)v;
		const char *e = r < 0 && r >= -4095 ? strerrorname_np((int)-r) : NULL;
		if (!e)
			return 0;
		n = snprintf(buf, len, "%s", e);
		break;
	}
	case FF_HEX:
		n = snprintf(buf, len, "0x%llx", (unsigned long long)v);
		break;
	default:
		return 0;
	}
	return n > 0 && (size_t)n < len ? (size_t)n : 0;
}
