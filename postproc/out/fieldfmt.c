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

/* Decimal and hex digits written by hand: dump and replay ask for a reading
 * of every block and packet event, and snprintf was a sixth of dump's time. */
static size_t put_dec(char *p, uint64_t v)
{
	char t[20];
	size_t n = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	for (size_t i = 0; i < n; i++)
		p[i] = t[n - 1 - i];
	return n;
}

static size_t put_hex(char *p, uint64_t v)
{
	char t[16];
	size_t n = 0;
	do
		t[n++] = "0123456789abcdef"[v & 15];
	while ((v >>= 4));
	p[0] = '0';
	p[1] = 'x';
	for (size_t i = 0; i < n; i++)
		p[2 + i] = t[n - 1 - i];
	return n + 2;
}

/* s and its NUL when it fits in len */
static size_t put_str(char *buf, size_t len, const char *s)
{
	size_t n = strlen(s);
	if (n >= len)
		return 0;
	memcpy(buf, s, n + 1);
	return n;
}

size_t ff_text(char *buf, size_t len, enum ff_kind k, uint64_t v)
{
	if (len < 24)
		return 0;
	switch (k) {
	case FF_TASK_STATE:
		return task_state(buf, len, v);
	case FF_DEV: {
		/* the kernel's own dev_t: major << 20 | minor (24 bytes hold both) */
		size_t n = put_dec(buf, (uint32_t)(v >> 20));
		buf[n++] = ':';
		n += put_dec(buf + n, v & 0xfffff);
		buf[n] = 0;
		return n;
	}
	case FF_SYSCALL:
		if (v >= ff_nsyscalls_x86_64 || !ff_syscalls_x86_64[v])
			return 0;
		return put_str(buf, len, ff_syscalls_x86_64[v]);
	case FF_ERRNO: {
		int64_t r = (int64_t)v;
		const char *e = r < 0 && r >= -4095 ? strerrorname_np((int)-r) : NULL;
		return e ? put_str(buf, len, e) : 0;
	}
	case FF_HEX: {
		size_t n = put_hex(buf, v);
		buf[n] = 0;
		return n;
	}
	default:
		return 0;
	}
}
