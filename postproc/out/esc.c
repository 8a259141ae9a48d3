/* esc — the stdio side of esc.h: the escapers run into a stack buffer. */
#include <stdlib.h>

#include "esc.h"

static void put(FILE *f, esc_fn fn, const char *s, size_t n)
{
	char b[512];
	while (n) {
		size_t used, k = fn(b, sizeof(b), s, n, &used);
		fwrite(b, 1, k, f);
		s += used;
		n -= used;
	}
}

void esc_json_put(FILE *f, const char *s, size_t n)
{
	putc('"', f);
	put(f, esc_json, s, n);
	putc('"', f);
}

void esc_csv_put(FILE *f, const char *s, size_t n)
{
	int q = esc_csv_quoted(s, n);
	if (q)
		putc('"', f);
	put(f, esc_csv, s, n);
	if (q)
		putc('"', f);
}

void esc_text_put(FILE *f, const char *s, size_t n)
{
	put(f, esc_text, s, n);
}

char *esc_text_dup(const char *s, size_t n)
{
	char *d = malloc(4 * n + 1);
	if (!d)
		return NULL;
	size_t used, k = n ? esc_text(d, 4 * n + 1, s, n, &used) : 0;
	d[k] = 0;
	return d;
}
