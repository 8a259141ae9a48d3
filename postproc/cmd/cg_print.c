#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cg_print.h"
#include "esc.h"
#include "an_syms.h"
#include "an_cg.h"

int cg_path(const struct an_cg *cg, uint32_t node, char *buf, size_t len, char sep, int json)
{
	uint32_t chain[512];
	int n = 0;
	for (uint32_t x = node; x && n < 512; x = cg->nodes[x].parent)
		chain[n++] = x;
	size_t o = 0;
	if (json)
		buf[o++] = '[';
	for (int i = n - 1; i >= 0; i--) {
		const char *name = an_func_name(cg->syms, cg->nodes[chain[i]].func);
		size_t nl = strlen(name);
		if (len - o < ESC_MIN_ROOM + 4)
			return -ENOSPC;
		if (i != n - 1)
			buf[o++] = json ? ',' : sep;
		if (json)
			buf[o++] = '"';
		while (nl) {
			if (len - o < ESC_MIN_ROOM + 3)
				return -ENOSPC;
			size_t used, k = (json ? esc_json : esc_text)(buf + o, len - o - 3, name, nl, &used);
			o += k;
			name += used;
			nl -= used;
		}
		if (json)
			buf[o++] = '"';
	}
	if (json)
		buf[o++] = ']';
	buf[o] = 0;
	return 0;
}

int cg_folded(FILE *f, const struct an_cg *cg, uint32_t under)
{
	char *path = malloc(1 << 16);
	if (!path)
		return -ENOMEM;
	for (size_t i = 1; i < cg->nnodes; i++) {
		if (!cg->nodes[i].self_ns)
			continue;
		if (under != UINT32_MAX) {
			uint32_t x = (uint32_t)i;
			while (x && cg->nodes[x].func != under)
				x = cg->nodes[x].parent;
			if (!x)
				continue;
		}
		if (cg_path(cg, (uint32_t)i, path, 1 << 16, ';', 0))
			continue;
		fprintf(f, "%s %llu\n", path, (unsigned long long)cg->nodes[i].self_ns);
	}
	free(path);
	return ferror(f) ? -EIO : 0;
}

int cg_parse_root(const char *arg)
{
	return !strcmp(arg, "thread") ? 1 : !strcmp(arg, "none") ? 0 : -1;
}
