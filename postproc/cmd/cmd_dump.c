/* tracepp dump — every event with its named fields, in file order or, with
 * --sorted, in global time order. Text, one JSON object per line, or CSV. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "an_dwarf.h"
#include "an_syms.h"
#include "an_lost.h"
#include "an_run.h"
#include "cli.h"
#include "commands.h"
#include "esc.h"
#include "out_fast.h"
#include "fieldfmt.h"
#include "script.h"
#include "wallclock.h"

/* What dump needs to know about each type, worked out once. */
struct tinfo {
	int ready, selected;
	size_t namelen;
	uint8_t is_addr[TPP_MAX_FIELDS]; /* symbolize this field; 2: a probe's own function */
	uint8_t clash[TPP_MAX_FIELDS];   /* JSON key would repeat one of issue 2's keys */
	uint8_t own_ts_ns, own_func;     /* the type has a field of that name: no "ts_ns"/"func" beside */
	uint8_t ff[TPP_MAX_FIELDS];      /* enum ff_kind: how people read it */
	const struct tpp_pfield *pf[TPP_MAX_FIELDS]; /* else the kernel's flag/symbol table */
	char jkey[TPP_MAX_FIELDS][TPP_NAME_MAX + 8];
	char tname[TPP_NAME_MAX * 4 + 4]; /* " name:" for text, control bytes escaped */
	size_t tnlen;
	char tkey[TPP_MAX_FIELDS][TPP_NAME_MAX + 4]; /* " name=" for text */
	uint16_t tklen[TPP_MAX_FIELDS];
	struct ff_call sc;               /* a sys_enter's fields (fieldfmt.h) */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tracepp dump [--sorted] [--format=text|json|csv] [--time-range=FROM,TO] [--type=NAME[,NAME..]]\n"
		   "                    [--tid=TID[,TID]] [--comm=NAME[,NAME]] [--where=FILTER] [--srcline]\n"
		   "                    [--clock=mono|wall] FILE\n"
		   "  --where    only events the filter passes, in the kernel's filter syntax (tracerec --filter):\n"
		   "             'prev_state == 1 && prev_comm ~ \"bash*\"'\n"
		   "  --srcline  add FILE:LINE of addresses, from local binaries with the recorded build-id\n"
		   "  --clock=wall  times on the wall clock, UTC (ISO-8601 with ns; JSON adds wall_ns beside ts,\n"
		   "                CSV a wall_ns column)\n"
		   "  -h, --help this text\n");
}

static int is_addr_field(const char *n)
{
	return !strcmp(n, "addr") || !strcmp(n, "__probe_ip") || !strcmp(n, "ip") || !strcmp(n, "call_site") ||
	       !strcmp(n, "func");
}

static void prep(struct tinfo *ti, const struct tpp_type *t, const char *types, const char *arch,
		 const struct tpp_names *nm)
{
	ti->ready = 1;
	ti->namelen = strlen(t->name);
	struct ofast tmp;
	of_init(&tmp, -1);
	of_ch(&tmp, ' ');
	of_text(&tmp, t->name, ti->namelen < TPP_NAME_MAX ? ti->namelen : TPP_NAME_MAX);
	of_ch(&tmp, ':');
	memcpy(ti->tname, tmp.buf, tmp.len);
	ti->tnlen = tmp.len;
	ti->selected = 1;
	if (types) {
		ti->selected = 0;
		for (const char *p = types; *p;) {
			size_t n = strcspn(p, ",");
			if ((n == ti->namelen && !memcmp(p, t->name, n)))
				ti->selected = 1;
			p += n + (p[n] == ',');
		}
	}
	/* issue 2's keys: a field so named is written field_NAME. ts_ns and
	 * func came later: a type's own field of that name keeps its name (the
	 * fields by name came first) and the line does without the other. */
	static const char *const common[] = {"ts", "cpu", "tid", "type", "task", "sym"};
	ti->own_ts_ns = ti->own_func = 0;
	ff_call_fields(&ti->sc, arch, t);
	for (unsigned i = 0; i < t->nfields; i++) {
		ti->is_addr[i] = t->fields[i].type == TPP_F_U64 && is_addr_field(t->fields[i].name);
		int num = t->fields[i].type == TPP_F_U64 || t->fields[i].type == TPP_F_S64;
		ti->ff[i] = num && !ti->is_addr[i] ? (uint8_t)ff_kind(arch, t->name, t->fields[i].name) : FF_NONE;
		ti->pf[i] = num && !ti->is_addr[i] && !ti->ff[i] ? tpp_names_pfield(nm, t->id, i) : NULL;
		/* the function a probe fired in: named by the probe when the
		 * task's maps are not in the file */
		if (t->fields[i].type == TPP_F_U64 &&
		    (!strcmp(t->fields[i].name, "__probe_ip") || !strcmp(t->fields[i].name, "__probe_func")))
			ti->is_addr[i] = 2;
		/* " name=", the name in its text form (esc.h), cut to what fits */
		size_t used, kl = 1;
		ti->tkey[i][0] = ' ';
		kl += esc_text(ti->tkey[i] + 1, sizeof(ti->tkey[i]) - 2, t->fields[i].name,
			       strlen(t->fields[i].name), &used);
		ti->tkey[i][kl++] = '=';
		ti->tklen[i] = (uint16_t)kl;
		int clash = 0;
		for (size_t k = 0; k < sizeof(common) / sizeof(common[0]); k++)
			clash |= !strcmp(t->fields[i].name, common[k]);
		ti->clash[i] = (uint8_t)clash;
		ti->own_ts_ns |= !strcmp(t->fields[i].name, "ts_ns");
		ti->own_func |= !strcmp(t->fields[i].name, "func");
		/* the JSON key, escaped (esc.h) and cut to what fits at a whole
		 * character, so it stays a valid string */
		char *j = ti->jkey[i];
		size_t jl = 0;
		j[jl++] = '"';
		if (clash) {
			memcpy(j + jl, "field_", 6);
			jl += 6;
		}
		jl += esc_json(j + jl, sizeof(ti->jkey[i]) - jl - 2, t->fields[i].name, strlen(t->fields[i].name),
			       &used);
		j[jl++] = '"';
		j[jl] = 0;
	}
}

/* What every line of a dump needs besides its event. */
struct dump {
	struct ofast *o;
	struct tpp_names *nm;
	struct an_dwarf *dw; /* --srcline, else NULL */
	int32_t pid;         /* the event's process, -1 until looked up */
	const struct tpp_clock *wall; /* --clock=wall, else NULL */
	struct of_wallc wc;
};

/* A time of the text form: seconds.ns of CLOCK_MONOTONIC, or with
 * --clock=wall ISO-8601 UTC (of_wall). */
static void text_ts(struct dump *d, uint64_t ts)
{
	if (d->wall)
		of_wall(d->o, &d->wc, tpp_clock_wall(d->wall, ts, NULL));
	else
		of_ts(d->o, ts);
}

/* JSON's "ts" stays the monotonic ns (the key's meaning); --clock=wall
 * adds "wall_ns" beside it. */
static void json_ts(struct dump *d, uint64_t ts)
{
	struct ofast *o = d->o;
	of_mem(o, "{\"ts\": ", 7);
	of_u64(o, ts);
	if (d->wall) {
		of_mem(o, ", \"wall_ns\": ", 13);
		of_i64(o, tpp_clock_wall(d->wall, ts, NULL));
	}
}

static int32_t ev_pid(struct dump *d, const struct tpp_event *ev)
{
	if (d->pid < 0)
		d->pid = tpp_names_pid(d->nm, ev->tid);
	return d->pid;
}

/* A CSV line's first cells: ts_ns[,wall_ns],cpu,tid, */
static void csv_head(struct dump *d, uint64_t ts, int cpu, int32_t tid)
{
	struct ofast *o = d->o;
	of_u64(o, ts);
	if (d->wall) {
		of_ch(o, ',');
		of_i64(o, tpp_clock_wall(d->wall, ts, NULL));
	}
	of_ch(o, ',');
	of_i64(o, cpu);
	of_ch(o, ',');
	of_i64(o, tid);
	of_ch(o, ',');
}

/* A lost-event marker, in the flow where the events went missing: text
 * "TS [CPU] LOST N events of cpu C (until TS2)", JSON {"type": "lost"}. */
static void lost_line(struct dump *d, int fmt, const struct tpp_reader *r, const struct tpp_lost *x)
{
	struct ofast *o = d->o;
	const struct tpp_stream_info *si = tpp_r_stream_by_id(r, x->stream);
	int cpu = si && si->kind == TPP_S_CPU ? si->cpu : -1;
	int32_t tid = si && si->kind == TPP_S_THREAD ? si->tid : -1;
	if (fmt == OUT_TEXT) {
		text_ts(d, x->from_ts);
		if (cpu >= 0) {
			of_mem(o, " [", 2);
			of_u64w(o, (uint64_t)cpu, 3);
			of_mem(o, "] ", 2);
		} else {
			of_mem(o, " [---] ", 7);
		}
		of_str(o, "LOST ");
		of_u64(o, x->count);
		of_str(o, " events of ");
		if (tid >= 0) {
			of_str(o, "thread ");
			of_i64(o, tid);
		} else {
			of_str(o, "cpu ");
			of_i64(o, cpu);
		}
		if (x->to_ts > x->from_ts) {
			of_str(o, " (until ");
			text_ts(d, x->to_ts);
			of_ch(o, ')');
		}
		of_ch(o, '\n');
		return;
	}
	if (fmt == OUT_CSV) {
		csv_head(d, x->from_ts, cpu, tid);
		of_str(o, ",,lost,\"{\"\"lost\"\": ");
		of_u64(o, x->count);
		of_str(o, ", \"\"to\"\": ");
		of_u64(o, x->to_ts);
		of_str(o, "}\",");
		of_str(o, d->dw ? ",\n" : "\n");
		return;
	}
	json_ts(d, x->from_ts);
	of_mem(o, ", \"ts_ns\": ", 11);
	of_u64(o, x->from_ts);
	of_mem(o, ", \"cpu\": ", 9);
	of_i64(o, cpu);
	of_mem(o, ", \"tid\": ", 9);
	of_i64(o, tid);
	of_str(o, ", \"type\": \"lost\", \"lost\": ");
	of_u64(o, x->count);
	of_str(o, ", \"to\": ");
	of_u64(o, x->to_ts);
	of_str(o, "}\n");
}

/* A field of no number or string type: its bytes in hex. */
static void hex_bytes(struct ofast *o, const union tpp_val *v)
{
	for (uint32_t k = 0; k < v->s.len; k++) {
		unsigned char b = (unsigned char)v->s.p[k];
		of_ch(o, "0123456789abcdef"[b >> 4]);
		of_ch(o, "0123456789abcdef"[b & 15]);
	}
}

/* An address field in text: hex, <symbol+off>, and " at FILE:LINE". */
static void text_addr(struct dump *d, const struct tpp_event *ev, const struct tinfo *t, unsigned i)
{
	struct ofast *o = d->o;
	of_hex(o, ev->v[i].u);
	int32_t pid = ev_pid(d, ev);
	uint64_t off;
	const char *s = tpp_names_sym(d->nm, pid, ev->v[i].u, &off);
	if (!s && t->is_addr[i] == 2)
		s = tpp_names_probe(d->nm, ev->type);
	char dm[TPP_NAME_MAX + 32];
	if (s)
		s = an_demangle(s, dm, sizeof(dm));
	if (s) {
		of_mem(o, " <", 2);
		of_text(o, s, strlen(s));
		if (off) {
			of_ch(o, '+');
			of_hex(o, off);
		}
		of_ch(o, '>');
	}
	const char *sl = d->dw ? an_dwarf_srcline(d->dw, pid, ev->v[i].u) : NULL;
	if (sl) {
		of_mem(o, " at ", 4);
		of_text(o, sl, strlen(sl));
	}
}

static void text_line(struct dump *d, const struct tpp_event *ev, const struct tinfo *t, const char *comm,
		      size_t comm_len)
{
	struct ofast *o = d->o;
	text_ts(d, ev->ts);
	if (ev->cpu >= 0) {
		of_mem(o, " [", 2);
		of_u64w(o, (uint64_t)ev->cpu, 3);
		of_mem(o, "] ", 2);
	} else {
		of_mem(o, " [---] ", 7);
	}
	if (comm)
		of_text(o, comm, comm_len);
	else
		of_ch(o, '?');
	of_ch(o, '-');
	of_i64(o, ev->tid);
	of_mem(o, t->tname, t->tnlen);
	/* a system call reads as one: "id=0 read(fd=3, buf=0x..., count=4096)" */
	char call[320];
	size_t cn = ff_call_text(&t->sc, ev, call, sizeof(call));
	for (unsigned i = 0; i < ev->nvals; i++) {
		const struct tpp_field_def *fd = &ev->t->fields[i];
		if (cn && (int)i == t->sc.args) {
			of_ch(o, ' ');
			of_mem(o, call, cn);
			continue;
		}
		of_mem(o, t->tkey[i], t->tklen[i]);
		char rd[512];
		size_t rn = t->ff[i] && !(cn && (int)i == t->sc.id) ? ff_text(rd, sizeof(rd), t->ff[i], ev->v[i].u) : 0;
		if (t->pf[i])
			rn = ff_pf_text(rd, sizeof(rd), t->pf[i], ev->v[i].u);
		if (rn && !ff_beside(t->ff[i])) {
			of_mem(o, rd, rn);
			continue;
		}
		switch (fd->type) {
		case TPP_F_U64:
			if (t->is_addr[i])
				text_addr(d, ev, t, i);
			else
				of_u64(o, ev->v[i].u);
			break;
		case TPP_F_S64: of_i64(o, ev->v[i].i); break;
		case TPP_F_STR: of_text(o, ev->v[i].s.p, ev->v[i].s.len); break;
		default: hex_bytes(o, &ev->v[i]);
		}
		if (rn) {
			of_ch(o, '(');
			of_mem(o, rd, rn);
			of_ch(o, ')');
		}
	}
	of_ch(o, '\n');
}

/* JSON text, as it is in a JSON line or with its quotes doubled inside
 * a CSV line's quoted "fields" cell. */
static inline void jput(struct ofast *o, int csv, const char *s, size_t n)
{
	if (csv)
		of_csv_dq(o, s, n);
	else
		of_mem(o, s, n);
}
static inline void jstr(struct ofast *o, int csv, const char *s, size_t n)
{
	if (csv)
		of_csv_json_str(o, s, n);
	else
		of_json_str(o, s, n);
}

/* The event's fields as JSON members (", key: value" each; FIELD_str
 * readings beside the raw numbers); *sym and *sl get the first address
 * field's symbol and source line. */
static void json_fields(struct dump *d, const struct tpp_event *ev, const struct tinfo *t, int csv, int first,
			const char **sym, const char **sl)
{
	struct ofast *o = d->o;
	for (unsigned i = 0; i < ev->nvals; i++) {
		const struct tpp_field_def *fd = &ev->t->fields[i];
		/* CSV's fields cell is the event's own object: no common key to
		 * clash with, the name as it is (as export --table events) */
		const char *key = t->jkey[i];
		size_t kl = strlen(key);
		if (csv && t->clash[i]) {
			key += 7; /* past '"field_' */
			kl -= 7;
		}
		if (!first || i)
			of_mem(o, ", ", 2);
		if (key != t->jkey[i])
			jput(o, csv, "\"", 1);
		jput(o, csv, key, kl);
		of_mem(o, ": ", 2);
		switch (fd->type) {
		case TPP_F_U64:
			of_u64(o, ev->v[i].u);
			if (t->is_addr[i] && !*sym) {
				int32_t pid = ev_pid(d, ev);
				*sym = tpp_names_sym(d->nm, pid, ev->v[i].u, NULL);
				if (!*sym && t->is_addr[i] == 2)
					*sym = tpp_names_probe(d->nm, ev->type);
				*sl = d->dw ? an_dwarf_srcline(d->dw, pid, ev->v[i].u) : NULL;
			}
			break;
		case TPP_F_S64: of_i64(o, ev->v[i].i); break;
		case TPP_F_STR: jstr(o, csv, ev->v[i].s.p, ev->v[i].s.len); break;
		default:
			jput(o, csv, "\"", 1);
			hex_bytes(o, &ev->v[i]);
			jput(o, csv, "\"", 1);
		}
		/* the raw number stays; how people read it comes beside it, as
		 * FIELD_str */
		char rd[512];
		size_t rn = t->ff[i] ? ff_text(rd, sizeof(rd), t->ff[i], ev->v[i].u) : 0;
		if (t->pf[i])
			rn = ff_pf_text(rd, sizeof(rd), t->pf[i], ev->v[i].u);
		if ((int)i == t->sc.args) /* the call, "read(fd=3, ...)", beside the raw words */
			rn = ff_call_text(&t->sc, ev, rd, sizeof(rd));
		if (rn) {
			of_mem(o, ", ", 2);
			if (key != t->jkey[i])
				jput(o, csv, "\"", 1);
			jput(o, csv, key, kl - 1);
			jput(o, csv, "_str\": ", 7);
			jstr(o, csv, rd, rn);
		}
	}
}

/* "ts" and "sym" are issue 2's keys; "ts_ns" and "func" say the same in
 * the words every command uses (postproc/README.md, "Output fields"). The
 * task's name stays "task": "comm" and "pid" are sched_wakeup's and
 * sched_process_*'s own fields here (issue 2: the fields by name). */
static void json_line(struct dump *d, const struct tpp_event *ev, const struct tinfo *t, const char *comm,
		      size_t comm_len)
{
	struct ofast *o = d->o;
	json_ts(d, ev->ts);
	if (!t->own_ts_ns) {
		of_mem(o, ", \"ts_ns\": ", 11);
		of_u64(o, ev->ts);
	}
	of_mem(o, ", \"cpu\": ", 9);
	of_i64(o, ev->cpu);
	of_mem(o, ", \"tid\": ", 9);
	of_i64(o, ev->tid);
	if (comm) {
		of_mem(o, ", \"task\": ", 10);
		of_json_str(o, comm, comm_len);
	}
	of_mem(o, ", \"type\": ", 10);
	of_json_str(o, ev->t->name, t->namelen);
	const char *sym = NULL, *sl = NULL;
	json_fields(d, ev, t, 0, 0, &sym, &sl);
	char dm[TPP_NAME_MAX + 32];
	if (sym) {
		sym = an_demangle(sym, dm, sizeof(dm));
		size_t n = strlen(sym);
		of_mem(o, ", \"sym\": ", 9);
		of_json_str(o, sym, n);
		if (!t->own_func) {
			of_mem(o, ", \"func\": ", 10);
			of_json_str(o, sym, n);
		}
	}
	if (sl) {
		of_mem(o, ", \"srcline\": ", 13);
		of_json_str(o, sl, strlen(sl));
	}
	of_mem(o, "}\n", 2);
}

/* CSV: one header for every event (csv_header), the event's own fields
 * as one JSON object in the "fields" cell (as export --table events). */
static void csv_header(struct dump *d, int srcline)
{
	of_str(d->o, d->wall ? "ts_ns,wall_ns,cpu,tid,pid,comm,type,fields,func" : "ts_ns,cpu,tid,pid,comm,type,fields,func");
	of_str(d->o, srcline ? ",srcline\n" : "\n");
}

static void csv_line(struct dump *d, const struct tpp_event *ev, const struct tinfo *t, const char *comm,
		     size_t comm_len)
{
	struct ofast *o = d->o;
	csv_head(d, ev->ts, ev->cpu, ev->tid);
	int32_t pid = ev->tid > 0 ? ev_pid(d, ev) : -1;
	if (pid > 0)
		of_i64(o, pid);
	of_ch(o, ',');
	if (comm)
		of_csv(o, comm, comm_len);
	of_ch(o, ',');
	of_csv(o, ev->t->name, t->namelen);
	of_mem(o, ",\"{", 3);
	const char *sym = NULL, *sl = NULL;
	json_fields(d, ev, t, 1, 1, &sym, &sl);
	of_mem(o, "}\",", 3);
	char dm[TPP_NAME_MAX + 32];
	if (sym) {
		sym = an_demangle(sym, dm, sizeof(dm));
		of_csv(o, sym, strlen(sym));
	}
	if (d->dw) {
		of_ch(o, ',');
		if (sl)
			of_csv(o, sl, strlen(sl));
	}
	of_ch(o, '\n');
}

static void event_line(struct dump *d, int fmt, const struct tpp_event *ev, const struct tinfo *t,
		       const char *comm, size_t comm_len)
{
	if (fmt == OUT_TEXT)
		text_line(d, ev, t, comm, comm_len);
	else if (fmt == OUT_JSON)
		json_line(d, ev, t, comm, comm_len);
	else
		csv_line(d, ev, t, comm, comm_len);
}

struct dump_opts {
	int fmt, sorted, srcline, wall;
	const char *range, *types, *where, *comm;
	size_t ntids;
	int32_t tids[64];
};

static int tid_in(const struct dump_opts *a, int32_t tid)
{
	for (size_t i = 0; i < a->ntids; i++)
		if (a->tids[i] == tid)
			return 1;
	return 0;
}

/* --tid=TID[,TID]: 0, or 2 after a usage line */
static int parse_tids(struct dump_opts *a, const char *arg)
{
	for (const char *p = arg;;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || (*end && *end != ',') || v < 0 || v > INT32_MAX) {
			fprintf(stderr, "tracepp dump: --tid: '%s' is not a list of thread ids\n", arg);
			return 2;
		}
		if (a->ntids == sizeof(a->tids) / sizeof(a->tids[0])) {
			fprintf(stderr, "tracepp dump: --tid: more than %zu threads\n", a->ntids);
			return 2;
		}
		a->tids[a->ntids++] = (int32_t)v;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* -1 to go on, else the exit status. */
static int dump_args(int argc, char **argv, struct dump_opts *a)
{
	static const struct option lo[] = {{"format", 1, 0, 'f'}, {"sorted", 0, 0, 's'}, {"time-range", 1, 0, 'r'},
					   {"type", 1, 0, 't'},   {"tid", 1, 0, 'T'},    {"help", 0, 0, 'h'},
					   {"srcline", 0, 0, 'l'}, {"where", 1, 0, 'w'}, {"clock", 1, 0, 'k'},
					   {"comm", 1, 0, 'c'},   {0, 0, 0, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'f':
			if ((a->fmt = cli_format("dump", optarg, 1u << OUT_TEXT | 1u << OUT_JSON | 1u << OUT_CSV)) < 0)
				return 2;
			break;
		case 's': a->sorted = 1; break;
		case 'r': a->range = optarg; break;
		case 't': a->types = optarg; break;
		case 'T':
			if (parse_tids(a, optarg))
				return 2;
			break;
		case 'c': a->comm = optarg; break;
		case 'l': a->srcline = 1; break;
		case 'w': a->where = optarg; break;
		case 'k':
			if ((a->wall = wallclock_parse("dump", optarg)) < 0)
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	return -1;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_opts a = {.fmt = OUT_TEXT};
	int rc = dump_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	int fmt = a.fmt;
	struct tpp_reader *r = cli_open("dump", argv[optind]);
	if (!r)
		return 1;
	struct tpp_iter_opts io = {.sz = sizeof(io), .sorted = a.sorted};
	if (a.range && cli_time_range("dump", a.range, r, &io.from_ts, &io.to_ts)) {
		tpp_r_close(r);
		return 2;
	}
	struct tpp_names *nm = NULL;
	struct tpp_iter *it = NULL;
	struct tinfo *ti = calloc(TPP_MAX_TYPES, sizeof(*ti));
	struct ofast *o = malloc(sizeof(*o));
	struct an_lost lq;
	if (!ti || !o || tpp_names_open(&nm, r) || tpp_iter_open(&it, r, &io) ||
	    an_lost_open(&lq, r, io.from_ts, io.to_ts)) {
		fprintf(stderr, "tracepp dump: out of memory\n");
		return 1;
	}
	struct tps_filter *flt = NULL;
	char ferr[512];
	if (a.where && tps_filter_new(&flt, a.where, r, nm, ferr, sizeof(ferr))) {
		fprintf(stderr, "tracepp dump: --where: %s\n", ferr);
		tpp_iter_close(it);
		tpp_names_close(nm);
		tpp_r_close(r);
		free(ti);
		free(o);
		return 2;
	}
	/* libdw is opened only when asked: it reads every matching binary */
	struct an_dwarf *dw = NULL;
	if (a.srcline && an_dwarf_open(&dw, r, NULL)) {
		fprintf(stderr, "tracepp dump: out of memory\n");
		return 1;
	}
	of_init(o, STDOUT_FILENO);
	struct dump d = {o, nm, dw, -1, a.wall ? tpp_r_clock(r) : NULL, {0}};
	if (a.wall)
		wallclock_note("dump", argv[optind], r);
	if (fmt == OUT_CSV)
		csv_header(&d, a.srcline);
	rc = 0;
	const struct tpp_event *ev;
	int e;
	int64_t last_tid = INT64_MIN;
	uint64_t ndamaged = 0;
	char damage[700] = "";
	const char *last_comm = NULL;
	size_t last_comm_len = 0;
	struct an_progress prog;
	an_progress_start(&prog, r, 1);
	uint64_t seen = 0, shown = 0;
	while ((e = tpp_iter_next(it, &ev)) != 0) {
		if (e < 0) {
			if (!ndamaged++)
				snprintf(damage, sizeof(damage), "%s", tpp_iter_error(it));
			continue;
		}
		an_progress(&prog, ++seen);
		const struct tpp_lost *lx;
		while ((lx = an_lost_before(&lq, ev->stream, ev->ts)))
			lost_line(&d, fmt, r, lx);
		if (!ev->t || (a.ntids && !tid_in(&a, ev->tid)))
			continue;
		struct tinfo *t = &ti[ev->type];
		if (!t->ready)
			prep(t, ev->t, a.types, tpp_r_info(r)->arch, nm);
		if (!t->selected || (flt && !tps_filter_match(flt, ev)))
			continue;
		/* consecutive events mostly share a task: look its name up once */
		if (ev->tid != last_tid) {
			last_tid = ev->tid;
			last_comm = ev->tid >= 0 ? tpp_names_comm(nm, ev->tid) : NULL;
			last_comm_len = last_comm ? strlen(last_comm) : 0;
		}
		if (a.comm && (!last_comm || !an_comm_match(a.comm, last_comm)))
			continue;
		d.pid = -1;
		event_line(&d, fmt, ev, t, last_comm, last_comm_len);
		shown++;
		if (o->err)
			break;
	}
	an_progress_end(&prog);
	for (const struct tpp_lost *lx; (lx = an_lost_rest(&lq));)
		lost_line(&d, fmt, r, lx);
	an_lost_close(&lq);
	if (of_flush(o)) {
		fprintf(stderr, "tracepp dump: writing output: %s\n", strerror(-o->err));
		rc = 1;
	}
	uint64_t at_open = tpp_r_info(r)->damaged_chunks;
	cli_warn_damaged("dump", ndamaged + at_open, ndamaged ? damage : tpp_r_error(r));
	/* as perf script and uftrace replay: no event is no error, but said */
	if (!shown && !o->err && (a.ntids || a.comm || a.types || flt || a.range)) {
		char fl[512] = "", tids[96];
		cli_tids_text(tids, sizeof(tids), a.tids, a.ntids);
		const char *const name[] = {"tid", "comm", "type", "where", "time-range"};
		const char *const val[] = {a.ntids ? tids : NULL, a.comm, a.types, a.where, a.range};
		for (size_t i = 0; i < 5; i++)
			if (val[i])
				cli_filter_add(fl, sizeof(fl), name[i], val[i]);
		cli_no_match("dump", argv[optind], fl);
	}
	tpp_iter_close(it);
	tps_filter_free(flt);
	an_dwarf_close(dw);
	tpp_names_close(nm);
	tpp_r_close(r);
	free(ti);
	free(o);
	return rc;
}
