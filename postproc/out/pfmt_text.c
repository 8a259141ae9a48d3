/* pfmt_text — a value as the kernel's print format names it: ff_pf_text
 * (fieldfmt.h). Apart from fieldfmt.c so that it links without the syscall
 * tables. */
#include <stdio.h>
#include <string.h>
#include "fieldfmt.h"

static int put(char *buf, size_t len, size_t *n, const char *s)
{
	size_t l = strlen(s);
	if (*n + l >= len)
		return -1;
	memcpy(buf + *n, s, l + 1);
	*n += l;
	return 0;
}

/* The kernel's trace_print_flags_seq and trace_print_symbols_seq, read. */
size_t ff_pf_text(char *buf, size_t len, const struct tpp_pfield *f, uint64_t v)
{
	size_t n = 0;
	char hex[24];
	if (!f || !len)
		return 0;
	buf[0] = 0;
	if (!f->flags) {
		for (uint32_t i = 0; i < f->n; i++)
			if (f->ent[i].val == v)
				return put(buf, len, &n, f->pool + f->ent[i].name) ? 0 : n;
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)v);
		return put(buf, len, &n, hex) ? 0 : n;
	}
	if (!v)
		return f->zero && !put(buf, len, &n, f->zero) ? n : 0;
	int first = 1;
	for (uint32_t i = 0; i < f->n && v; i++) {
		uint64_t m = f->ent[i].val;
		if ((v & m) != m)
			continue;
		v &= ~m;
		if ((!first && put(buf, len, &n, f->delim)) || put(buf, len, &n, f->pool + f->ent[i].name))
			return 0;
		first = 0;
	}
	if (v) {
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)v);
		if ((!first && put(buf, len, &n, f->delim)) || put(buf, len, &n, hex))
			return 0;
	}
	return n;
}
