/* meta — the file header and the metadata records, decoded with cbor_tree.
 * Unknown keys and unknown record kinds are skipped (a newer minor version
 * may add them); a known key with the wrong CBOR type makes the record, or
 * the header, invalid. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbor_tree.h"
#include "layout.h"
#include "reader_internal.h"

static void free_type(struct tpp_type *t)
{
	free(t->name);
	free(t->system);
	free(t->print_fmt);
	for (unsigned i = 0; t->fields && i < t->nfields; i++)
		free((char *)t->fields[i].name);
	free(t->fields);
}

static int add_type(struct tpp_reader *r, const struct ct_node *m)
{
	int ok = 1;
	int64_t id = ct_int(ct_map_get(m, "id"), &ok);
	const struct ct_node *fl = ct_map_get(m, "fields");
	if (!ok || id < 0 || id >= TPP_MAX_TYPES || !ct_is(fl, CB_ARRAY) || fl->v > TPP_MAX_FIELDS)
		return -TPP_EBADFILE;
	if (r->type_by_id[id])
		return 0; /* first definition wins: ids are never redefined */
	struct tpp_type t = {0};
	t.id = (uint16_t)id;
	t.name = ct_strdup(ct_map_get(m, "name"));
	t.system = ct_strdup(ct_map_get(m, "system"));
	t.nfields = (uint16_t)fl->v;
	t.fields = calloc(t.nfields ? t.nfields : 1, sizeof(*t.fields));
	if (!t.name || !t.fields) {
		free_type(&t);
		return -TPP_EBADFILE;
	}
	if (!t.system)
		t.system = strdup("");
	/* optional (1.2): absent or not a string, the type reads as before */
	t.print_fmt = ct_strdup(ct_map_get(m, "print_fmt"));
	const struct ct_node *f = fl + 1;
	for (unsigned i = 0; i < t.nfields; i++, f = ct_next(f)) {
		char *ty = NULL;
		if (ct_is(f, CB_ARRAY) && f->v == 2) {
			t.fields[i].name = ct_strdup(f + 1);
			ty = ct_strdup(ct_next(f + 1));
		}
		if (!t.fields[i].name || !ty) {
			free(ty);
			free_type(&t);
			return -TPP_EBADFILE;
		}
		static const char *const tn[] = {"u64", "s64", "str", "bytes"};
		/* an unknown field type from a newer writer decodes as bytes */
		t.fields[i].type = TPP_F_BYTES;
		for (int k = 0; k < 4; k++)
			if (!strcmp(ty, tn[k]))
				t.fields[i].type = (enum tpp_ftype)k;
		free(ty);
	}
	if (r->info.ntypes == r->types_cap) {
		size_t nc = r->types_cap ? r->types_cap * 2 : 64;
		struct tpp_type *n = realloc(r->info.types, nc * sizeof(*n));
		if (!n) {
			free_type(&t);
			return -ENOMEM;
		}
		r->info.types = n;
		r->types_cap = nc;
	}
	r->info.types[r->info.ntypes++] = t;
	for (uint32_t i = 0; i < r->info.ntypes; i++)
		r->type_by_id[r->info.types[i].id] = &r->info.types[i];
	return 0;
}

int parse_header(struct tpp_reader *r, const uint8_t *p, size_t n)
{
	struct ct_tree t = {.text_as_bytes = 1};
	size_t pos;
	int e = 0;
	if (ct_parse(&t, p, n, &pos) || !ct_is(t.n, CB_MAP)) {
		e = rfail(r, -TPP_EBADFILE, FILE_HDR_FIXED + pos, "header is not a valid CBOR map");
		goto out;
	}
	const struct ct_node *h = t.n;
	struct tpp_file_info *in = &r->info;
	in->producer = ct_strdup(ct_map_get(h, "producer"));
	in->producer_version = ct_strdup(ct_map_get(h, "producer_version"));
	in->hostname = ct_strdup(ct_map_get(h, "hostname"));
	in->kernel = ct_strdup(ct_map_get(h, "kernel"));
	in->arch = ct_strdup(ct_map_get(h, "arch"));
	in->clock = ct_strdup(ct_map_get(h, "clock"));
	in->ncpus = (int32_t)ct_int(ct_map_get(h, "ncpus"), NULL);
	in->wall_offset_ns = ct_int(ct_map_get(h, "wall_offset_ns"), NULL);
	/* newer writers say when (mono) the offset was taken and its error */
	int okm = 1, oke = 1;
	r->hdr_clock.offset_ns = in->wall_offset_ns;
	r->hdr_clock.mono_ns = (uint64_t)ct_int(ct_map_get(h, "wall_offset_mono_ns"), &okm);
	r->hdr_clock.err_ns = ct_int(ct_map_get(h, "wall_offset_err_ns"), &oke);
	if (!okm)
		r->hdr_clock.mono_ns = 0;
	if (!oke || r->hdr_clock.err_ns < 0)
		r->hdr_clock.err_ns = -1;
	const struct ct_node *cl = ct_map_get(h, "cmdline");
	if (ct_is(cl, CB_ARRAY)) {
		size_t k = cl->v;
		in->argv = calloc(k + 1, sizeof(char *));
		const struct ct_node *a = cl + 1;
		for (size_t i = 0; in->argv && i < k; i++, a = ct_next(a)) {
			char *s = ct_strdup(a);
			if (s)
				in->argv[in->argc++] = s;
		}
	}
	const struct ct_node *ty = ct_map_get(h, "types");
	if (!ct_is(ty, CB_ARRAY)) {
		e = rfail(r, -TPP_EBADFILE, FILE_HDR_FIXED, "header has no event schema");
		goto out;
	}
	const struct ct_node *m = ty + 1;
	for (size_t i = 0; i < ty->v; i++, m = ct_next(m))
		if ((e = add_type(r, m))) {
			rfail(r, e, FILE_HDR_FIXED, "event type %zu of the schema is invalid", i);
			goto out;
		}
out:
	ct_free(&t);
	return e;
}

/* Appends one element to one of meta's arrays (k indexes r->caps). */
static void *grow(struct tpp_reader *r, void **arr, size_t *n, size_t k, size_t elem)
{
	if (*n == r->caps[k]) {
		size_t nc = r->caps[k] ? r->caps[k] * 2 : 64;
		void *a = realloc(*arr, nc * elem);
		if (!a)
			return NULL;
		*arr = a;
		r->caps[k] = nc;
	}
	void *e = (char *)*arr + (*n)++ * elem;
	memset(e, 0, elem);
	return e;
}

static void copy_bid(const struct ct_node *it, uint8_t *dst, uint32_t *len)
{
	*len = 0;
	if (ct_is(it, CB_BYTES) && !it->indef && it->v <= 64) {
		*len = (uint32_t)it->v;
		memcpy(dst, it->p, *len);
	}
}

static int cmp_sym(const void *a, const void *b)
{
	const struct tpp_sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int add_stream(struct tpp_reader *r, const struct ct_node *m)
{
	int ok = 1;
	struct tpp_stream_info s;
	s.id = (uint32_t)ct_int(ct_map_get(m, "id"), &ok);
	char kind[16];
	ct_strcpy(ct_map_get(m, "kind"), kind, sizeof(kind));
	s.kind = !strcmp(kind, "thread") ? TPP_S_THREAD : TPP_S_CPU;
	s.cpu = (int32_t)ct_int(ct_map_get(m, "cpu"), &ok);
	s.pid = (int32_t)ct_int(ct_map_get(m, "pid"), &ok);
	s.tid = (int32_t)ct_int(ct_map_get(m, "tid"), &ok);
	if (!ok)
		return -1;
	if (tpp_r_stream_by_id(r, s.id))
		return 0;
	if (r->nstreams == r->streams_cap) {
		size_t nc = r->streams_cap ? r->streams_cap * 2 : 64;
		struct tpp_stream_info *n = realloc(r->streams, nc * sizeof(*n));
		if (!n)
			return -1;
		r->streams = n;
		r->streams_cap = nc;
	}
	/* keep sorted by id for binary search */
	size_t i = r->nstreams;
	while (i > 0 && r->streams[i - 1].id > s.id) {
		r->streams[i] = r->streams[i - 1];
		i--;
	}
	r->streams[i] = s;
	r->nstreams++;
	return 0;
}

static int add_record(struct tpp_reader *r, const struct ct_node *m)
{
	char k[16];
	ct_strcpy(ct_map_get(m, "k"), k, sizeof(k));
	struct tpp_meta *me = &r->meta;
	int ok = 1;
	if (!strcmp(k, "stream"))
		return add_stream(r, m);
	if (!strcmp(k, "type"))
		return add_type(r, ct_map_get(m, "type"));
	if (!strcmp(k, "task")) {
		struct tpp_task *t = grow(r, (void **)&me->tasks, &me->ntasks, 0, sizeof(*t));
		if (!t)
			return -ENOMEM;
		t->ts = (uint64_t)ct_int(ct_map_get(m, "ts"), &ok);
		t->pid = (int32_t)ct_int(ct_map_get(m, "pid"), &ok);
		t->tid = (int32_t)ct_int(ct_map_get(m, "tid"), &ok);
		ct_strcpy(ct_map_get(m, "comm"), t->comm, sizeof(t->comm));
		if (!ok)
			me->ntasks--;
		return ok ? 0 : -1;
	}
	if (!strcmp(k, "mmap")) {
		struct tpp_mmap *mm = grow(r, (void **)&me->mmaps, &me->nmmaps, 1, sizeof(*mm));
		if (!mm)
			return -ENOMEM;
		mm->ts = (uint64_t)ct_int(ct_map_get(m, "ts"), &ok);
		mm->pid = (int32_t)ct_int(ct_map_get(m, "pid"), &ok);
		mm->start = (uint64_t)ct_int(ct_map_get(m, "start"), &ok);
		mm->end = (uint64_t)ct_int(ct_map_get(m, "end"), &ok);
		mm->pgoff = (uint64_t)ct_int(ct_map_get(m, "pgoff"), &ok);
		mm->path = ct_strdup(ct_map_get(m, "path"));
		copy_bid(ct_map_get(m, "build_id"), mm->build_id, &mm->bid_len);
		if (!ok || !mm->path || mm->end < mm->start) {
			free(mm->path);
			me->nmmaps--;
			return -1;
		}
		return 0;
	}
	if (!strcmp(k, "symtab")) {
		const struct ct_node *sy = ct_map_get(m, "syms");
		if (!ct_is(sy, CB_ARRAY))
			return -1;
		struct tpp_symtab *st = NULL;
		uint8_t bid[64];
		uint32_t bl;
		copy_bid(ct_map_get(m, "build_id"), bid, &bl);
		char *path = ct_strdup(ct_map_get(m, "path"));
		if (!path)
			return -1;
		/* a table split over several records continues the same object */
		for (size_t i = 0; i < me->nsymtabs; i++)
			if (me->symtabs[i].bid_len == bl && !memcmp(me->symtabs[i].build_id, bid, bl) &&
			    !strcmp(me->symtabs[i].path, path))
				st = &me->symtabs[i];
		if (!st) {
			st = grow(r, (void **)&me->symtabs, &me->nsymtabs, 2, sizeof(*st));
			if (!st) {
				free(path);
				return -ENOMEM;
			}
			memcpy(st->build_id, bid, bl);
			st->bid_len = bl;
			st->path = path;
		} else {
			free(path);
		}
		size_t n = sy->v;
		struct tpp_sym *ns = realloc(st->syms, (st->nsyms + n + 1) * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		st->syms = ns;
		const struct ct_node *e = sy + 1;
		for (size_t i = 0; i < n; i++, e = ct_next(e)) {
			if (!ct_is(e, CB_ARRAY) || e->v != 3)
				continue;
			int ok2 = 1;
			struct tpp_sym s;
			const struct ct_node *addr = e + 1, *size = ct_next(addr);
			s.addr = (uint64_t)ct_int(addr, &ok2);
			s.size = (uint64_t)ct_int(size, &ok2);
			s.name = ct_strdup(ct_next(size));
			if (!ok2 || !s.name) {
				free((char *)s.name);
				continue;
			}
			st->syms[st->nsyms++] = s;
		}
		qsort(st->syms, st->nsyms, sizeof(*st->syms), cmp_sym);
		return 0;
	}
	if (!strcmp(k, "lost")) {
		struct tpp_lost *l = grow(r, (void **)&me->lost, &me->nlost, 3, sizeof(*l));
		if (!l)
			return -ENOMEM;
		l->stream = (uint32_t)ct_int(ct_map_get(m, "stream"), &ok);
		l->count = (uint64_t)ct_int(ct_map_get(m, "count"), &ok);
		l->from_ts = (uint64_t)ct_int(ct_map_get(m, "from"), &ok);
		l->to_ts = (uint64_t)ct_int(ct_map_get(m, "to"), &ok);
		if (!ok) {
			me->nlost--;
			return -1;
		}
		me->lost_total += l->count;
		return 0;
	}
	if (!strcmp(k, "clock")) {
		struct tpp_clock_sample cs;
		cs.mono_ns = (uint64_t)ct_int(ct_map_get(m, "mono"), &ok);
		cs.offset_ns = ct_int(ct_map_get(m, "offset"), &ok);
		cs.err_ns = ct_int(ct_map_get(m, "err"), &ok);
		if (!ok || !cs.mono_ns || cs.err_ns < 0)
			return -1;
		return tpp_clock_add(&r->clock, &cs);
	}
	if (!strcmp(k, "note")) {
		const struct ct_node *kv = ct_map_get(m, "kv");
		if (!ct_is(kv, CB_MAP))
			return -1;
		struct tpp_note *no = grow(r, (void **)&me->notes, &me->nnotes, 4, sizeof(*no));
		if (!no)
			return -ENOMEM;
		no->kind = ct_strdup(ct_map_get(m, "kind"));
		size_t n = kv->v;
		no->keys = calloc(n + 1, sizeof(char *));
		no->vals = calloc(n + 1, sizeof(char *));
		const struct ct_node *key = kv + 1;
		for (size_t i = 0; no->keys && no->vals && i < n; i++, key = ct_next(ct_next(key))) {
			char *a = ct_strdup(key), *b = ct_strdup(ct_next(key));
			if (a && b) {
				no->keys[no->n] = a;
				no->vals[no->n++] = b;
			} else {
				free(a);
				free(b);
			}
		}
		return 0;
	}
	return 0; /* unknown kind: a newer writer's; skipped */
}

int load_meta(struct tpp_reader *r)
{
	uint8_t *raw = NULL;
	size_t cap = 0;
	struct ct_tree t = {.text_as_bytes = 1}; /* its nodes serve every chunk */
	for (size_t i = 0; i < r->nchunks; i++) {
		const struct tpp_chunk *c = &r->chunks[i];
		if (c->kind != TPP_C_META)
			continue;
		long n = tpp_r_payload(r, c, &raw, &cap);
		if (n < 0) {
			if (n == -ENOMEM)
				break;
			/* a damaged metadata chunk costs names, not the trace */
			r->info.damaged_chunks++;
			if (!r->first_damage_msg[0])
				snprintf(r->first_damage_msg, sizeof(r->first_damage_msg), "%s", r->msg);
			r->msg[0] = 0;
			continue;
		}
		size_t pos;
		if (ct_parse(&t, raw, (size_t)n, &pos) || !ct_is(t.n, CB_ARRAY) || t.n->indef) {
			r->info.damaged_chunks++;
			if (!r->first_damage_msg[0])
				snprintf(r->first_damage_msg, sizeof(r->first_damage_msg),
					 "%s: offset %llu: metadata is not valid CBOR", r->path,
					 (unsigned long long)c->offset);
			continue;
		}
		const struct ct_node *rec = t.n + 1;
		for (size_t k = 0; k < t.n->v; k++, rec = ct_next(rec))
			add_record(r, rec);
	}
	ct_free(&t);
	free(raw);
	/* the time base: the header's sample joins the records when it says
	 * when it was taken; alone (an older file) it is the only one */
	if (r->hdr_clock.mono_ns || (!r->clock.n && r->hdr_clock.offset_ns))
		tpp_clock_add(&r->clock, &r->hdr_clock);
	tpp_clock_done(&r->clock);
	return 0;
}

void free_header(struct tpp_reader *r)
{
	struct tpp_file_info *in = &r->info;
	free(in->producer);
	free(in->producer_version);
	free(in->hostname);
	free(in->kernel);
	free(in->arch);
	free(in->clock);
	for (int i = 0; i < in->argc; i++)
		free(in->argv[i]);
	free(in->argv);
	for (uint32_t i = 0; i < in->ntypes; i++)
		free_type(&in->types[i]);
	free(in->types);
}

void free_meta(struct tpp_reader *r)
{
	tpp_clock_free(&r->clock);
	struct tpp_meta *m = &r->meta;
	free(m->tasks);
	for (size_t i = 0; i < m->nmmaps; i++)
		free(m->mmaps[i].path);
	free(m->mmaps);
	for (size_t i = 0; i < m->nsymtabs; i++) {
		for (size_t k = 0; k < m->symtabs[i].nsyms; k++)
			free((char *)m->symtabs[i].syms[k].name);
		free(m->symtabs[i].syms);
		free(m->symtabs[i].path);
	}
	free(m->symtabs);
	free(m->lost);
	for (size_t i = 0; i < m->nnotes; i++) {
		for (size_t k = 0; k < m->notes[i].n; k++) {
			free(m->notes[i].keys[k]);
			free(m->notes[i].vals[k]);
		}
		free(m->notes[i].keys);
		free(m->notes[i].vals);
		free(m->notes[i].kind);
	}
	free(m->notes);
}
