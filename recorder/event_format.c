/* Hand-parsed rather than through libtraceevent: we need only names,
 * offsets, sizes and signedness of the few events recorded, and parsing
 * their format files directly avoids loading the whole events tree (2000+
 * formats) that tep-based loading reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "event_format.h"

static int num_after(const char *line, const char *key, long *out)
{
	const char *p = strstr(line, key);
	if (!p)
		return -1;
	char *end;
	*out = strtol(p + strlen(key), &end, 10);
	return end == p + strlen(key) ? -1 : 0;
}

static int is_ident(char c)
{
	return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

/* "field:unsigned long args[6];" → decl "unsigned long args[6]" */
static int parse_field(const char *line, struct ef_event *ev)
{
	const char *p = strstr(line, "field:");
	const char *semi = p ? strchr(p, ';') : NULL;
	long off, size, sgn = 0;
	if (!p || !semi || num_after(line, "offset:", &off) || num_after(line, "size:", &size))
		return -EINVAL;
	num_after(line, "signed:", &sgn);
	p += 6;
	char decl[256];
	size_t dl = (size_t)(semi - p);
	if (dl >= sizeof(decl) || off < 0 || size <= 0 || off > 65535 || size > 65535)
		return -EINVAL;
	memcpy(decl, p, dl);
	decl[dl] = 0;
	int is_loc = strstr(decl, "__data_loc") != NULL, is_rel = strstr(decl, "__rel_loc") != NULL;
	char *br = strchr(decl, '[');
	/* the name is the last identifier before any array brackets */
	char *end = br && !is_loc && !is_rel ? br : decl + strlen(decl);
	if (is_loc || is_rel) {
		/* "__data_loc char[] name": the name follows the "[]" */
		end = decl + strlen(decl);
	}
	while (end > decl && end[-1] == ' ')
		end--;
	char *start = end;
	while (start > decl && is_ident(start[-1]))
		start--;
	if (start == end || (size_t)(end - start) >= sizeof(ev->f[0].name))
		return -EINVAL;
	char name[64];
	memcpy(name, start, (size_t)(end - start));
	name[end - start] = 0;
	if (!strncmp(name, "common_", 7)) {
		if (!strcmp(name, "common_pid"))
			ev->pid_off = (int)off;
		return 0;
	}
	if (ev->nfields >= TPP_MAX_FIELDS)
		return -E2BIG;
	struct ef_field *f = &ev->f[ev->nfields++];
	memset(f, 0, sizeof(*f));
	strcpy(f->name, name);
	f->offset = (uint16_t)off;
	f->size = (uint16_t)size;
	f->is_signed = sgn != 0;
	*start = 0; /* decl now holds the type part only */
	int is_char = strstr(decl, "char") != NULL;
	if (is_loc || is_rel) {
		f->kind = is_char ? EF_LOC_STR : EF_LOC_BYTES;
		f->rel = is_rel;
		f->ftype = is_char ? TPP_F_STR : TPP_F_BYTES;
	} else if (br) {
		f->kind = is_char ? EF_CHARS : EF_BYTES;
		f->ftype = is_char ? TPP_F_STR : TPP_F_BYTES;
	} else if (size == 1 || size == 2 || size == 4 || size == 8) {
		f->kind = EF_INT;
		f->ftype = f->is_signed ? TPP_F_S64 : TPP_F_U64;
	} else {
		f->kind = EF_BYTES;
		f->ftype = TPP_F_BYTES;
	}
	return 0;
}

int ef_parse(const char *text, struct ef_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->pid_off = -1;
	ev->id = -1;
	int in_fields = 0;
	const char *pf = NULL;
	size_t pflen = 0;
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		if (!strncmp(l, "print fmt: ", 11)) {
			/* taken from the text, not the cut line: a flag table runs to KiBs */
			pf = l + 11;
			pflen = len - 11;
			break;
		}
		char line[512];
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, l, len);
		line[len] = 0;
		l = nl ? nl + 1 : NULL;
		if (!strncmp(line, "name: ", 6)) {
			snprintf(ev->name, sizeof(ev->name), "%.*s", (int)sizeof(ev->name) - 1, line + 6);
		} else if (!strncmp(line, "ID: ", 4)) {
			ev->id = atoi(line + 4);
		} else if (!strncmp(line, "format:", 7)) {
			in_fields = 1;
		} else if (in_fields && strstr(line, "field:")) {
			int err = parse_field(line, ev);
			if (err)
				return err;
		}
	}
	if (ev->id < 0 || !ev->name[0] || !in_fields)
		return -EINVAL;
	if (pf && pflen && !(ev->print_fmt = strndup(pf, pflen)))
		return -ENOMEM;
	return 0;
}

void ef_release(struct ef_event *ev)
{
	free(ev->print_fmt);
	ev->print_fmt = NULL;
}

int ef_load(const char *events_dir, const char *system, const char *name, struct ef_event *ev)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s/%s/format", events_dir, system, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char *buf = malloc(EF_FILE_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	size_t n = 0;
	ssize_t r = 0;
	while (n < EF_FILE_MAX - 1 && (r = read(fd, buf + n, EF_FILE_MAX - 1 - n)) > 0)
		n += (size_t)r;
	int rerr = r < 0 ? -errno : 0;
	close(fd);
	if (rerr) {
		free(buf);
		return rerr;
	}
	buf[n] = 0;
	/* a print format cut by the cap would read wrong: drop it, keep the fields */
	char *pf = strstr(buf, "\nprint fmt: ");
	if (pf && n == EF_FILE_MAX - 1 && !memchr(pf + 1, '\n', (size_t)(buf + n - pf - 1)))
		pf[1] = 0;
	int err = ef_parse(buf, ev);
	free(buf);
	if (!err)
		snprintf(ev->system, sizeof(ev->system), "%s", system);
	return err;
}
