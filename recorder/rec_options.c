#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rec_options.h"

const char rec_usage[] =
	"usage: tracerec record [OPTIONS] [-- CMD ARGS...]\n"
	"  -e, --event EVENTS  sched, block, net, syscalls, SUBSYS, SUBSYS:NAME; comma-separated,\n"
	"                   repeatable ('tracerec list' names them)\n"
	"  --filter EXPR    kernel filter for the events of the preceding -e\n"
	"  -a, --all-cpus   system-wide (also with -- CMD: for as long as CMD runs)\n"
	"  -p, --pid PID[,PID...]  these processes and their future children\n"
	"  -C, --cpu CPUS   only these CPUs (e.g. 0,2-3)\n"
	"  -d, --duration SECONDS  stop after this long\n"
	"  -o, --output FILE  output file (default trace.tpp), created 0600: an existing FILE is\n"
	"                   replaced only if it is a regular file of yours\n"
	"  --group GROUP    make the file 0640 and owned by GROUP (readable by its members)\n"
	"  -b, --buffer-size SIZE  buffer memory per CPU; a bare number is KB, as trace-cmd's -b\n"
	"                   (K/M/G suffixes too): each CPU's kernel ring buffer (default: the\n"
	"                   kernel's), and SIZE x CPUs for the one pool every thread of a -pg /\n"
	"                   -finstrument-functions command writes into (default 32M per CPU, at\n"
	"                   least 1M in all): its shared memory never exceeds it, whatever the\n"
	"                   number of threads; a thread that finds it full waits for room (see\n"
	"                   --blocking-timeout), then its events are counted as lost\n"
	"  --blocking-timeout MS  how long a traced thread that finds the pool full may wait\n"
	"                   for the recorder to give room back before it drops events\n"
	"                   (default 100; 0: never wait, drop and count at once); a thread\n"
	"                   waits 100 times that in all at most, then drops and counts\n"
	"  --max-size SIZE  stop before the file exceeds SIZE (K, M, G suffixes)\n"
	"  --flight SIZE|Ns flight recorder: keep only the last SIZE of buffer and/or\n"
	"                   N seconds; written out on SIGUSR1 and at exit\n"
	"  -q, --quiet      no summary line\n"
	"  -h, --help       this text\n"
	"  --count-fired    count every tracepoint's hits (~0.1 us per event) to report\n"
	"                   per type what the kernel fired but did not store; by default\n"
	"                   only context switches are counted, the truth for sched_switch\n"
	"function tracing (with -- CMD; a program built with -pg or -finstrument-functions\n"
	"is traced whole through libtpprt.so, any other through uprobes):\n"
	"  -F, --func GLOB  only these functions and what they call (repeatable)\n"
	"  -N, --notrace GLOB  not these functions, nor what they call (repeatable)\n"
	"  -D, --depth N    only N levels of calls\n"
	"  --min-duration NS  only calls lasting at least NS nanoseconds\n"
	"  -u, --uprobe BIN:GLOB  uprobes on the functions of BIN (a path; lib names too)\n"
	"                   matching GLOB, entry and return (repeatable)\n"
	"  -A, --argument FUNC:ARGS  record FUNC's arguments: ARGS is a comma-separated list\n"
	"                   of parameter names (from the binary's DWARF: typed, strings as\n"
	"                   text; -pg return values too) or, for uprobes, kernel fetch\n"
	"                   args: %di %si %dx %cx %r8 %r9 (the x86-64 argument registers),\n"
	"                   +8(%di), +0(%si):string, len=%dx:u32 (named, typed)\n"
	"  -k, --kprobe GLOB  kprobes on the kernel functions matching GLOB (where the\n"
	"                   kernel has kprobes)\n"
	"  --no-func        no compiled-in function tracing of CMD (its kernel events only)\n"
	"  --max-probes N   at most N uprobes (default 1000)\n";

static int fail(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* "64M", "512K", "1G", "1000" (bytes). 0 on error. */
static uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return 0;
	uint64_t mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	return *end ? 0 : (uint64_t)(v * (double)mul);
}

static int parse_cpus(struct rec_opts *o, const char *s)
{
	const char *p = s;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;
		if (end == p || a < 0 || a >= 1024)
			return -1;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a || b >= 1024)
				return -1;
		}
		for (long c = a; c <= b; c++)
			o->cpumask[c / 64] |= 1ull << (c % 64);
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	o->have_cpus = 1;
	return 0;
}

static int push_str(const char ***arr, size_t *n, const char *s)
{
	const char **na = realloc(*arr, (*n + 1) * sizeof(*na));
	if (!na)
		return -1;
	na[(*n)++] = s;
	*arr = na;
	return 0;
}

static int parse_pids(struct rec_opts *o, const char *s)
{
	const char *p = s;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v <= 0 || v > 0x7fffffff || (*end && *end != ','))
			return -1;
		int32_t *np = realloc(o->pids, (size_t)(o->npids + 1) * sizeof(*np));
		if (!np)
			return -1;
		o->pids = np;
		o->pids[o->npids++] = (int32_t)v;
		p = *end ? end + 1 : end;
	}
	return o->npids ? 0 : -1;
}

enum { O_FILTER = 256, O_MAXSIZE, O_FLIGHT, O_MINDUR, O_NOFUNC, O_MAXPROBES, O_HELP, O_GROUP, O_COUNTFIRED, O_BLOCKTO };

/* -b: "1410" (KB, as trace-cmd's -b), "64M", "512K", "1G"; 0 on error. */
static uint64_t parse_buffer(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return 0;
	if (!*end)
		return v << 10;
	return parse_size(s);
}

int rec_parse(struct rec_opts *o, int argc, char **argv, char *msg, size_t len)
{
	static const struct option lo[] = {
		{"filter", required_argument, NULL, O_FILTER},
		{"max-size", required_argument, NULL, O_MAXSIZE},
		{"flight", required_argument, NULL, O_FLIGHT},
		{"min-duration", required_argument, NULL, O_MINDUR},
		{"no-func", no_argument, NULL, O_NOFUNC},
		{"max-probes", required_argument, NULL, O_MAXPROBES},
		{"buffer-size", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, O_HELP},
		{"group", required_argument, NULL, O_GROUP},
		{"count-fired", no_argument, NULL, O_COUNTFIRED},
		{"blocking-timeout", required_argument, NULL, O_BLOCKTO},
		/* a long name for every short option, as perf and uftrace spell them */
		{"event", required_argument, NULL, 'e'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"pid", required_argument, NULL, 'p'},
		{"cpu", required_argument, NULL, 'C'},
		{"duration", required_argument, NULL, 'd'},
		{"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'},
		{"func", required_argument, NULL, 'F'},
		{"notrace", required_argument, NULL, 'N'},
		{"depth", required_argument, NULL, 'D'},
		{"uprobe", required_argument, NULL, 'u'},
		{"argument", required_argument, NULL, 'A'},
		{"kprobe", required_argument, NULL, 'k'},
		{NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof(*o));
	o->out = "trace.tpp";
	o->fo.max_probes = 1000;
	size_t nspec = 0, nfilt = 0;
	optind = 1;
	opterr = 0;
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "+e:ap:C:d:o:b:qF:N:D:u:A:k:h", lo, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (push_str(&o->ev_specs, &nspec, optarg) || push_str(&o->filters, &nfilt, NULL))
				return fail(msg, len, "out of memory");
			break;
		case O_FILTER:
			if (!nspec)
				return fail(msg, len, "--filter must follow the -e it applies to");
			o->filters[nspec - 1] = optarg;
			break;
		case 'a':
			o->all = 1;
			break;
		case 'p':
			if (parse_pids(o, optarg))
				return fail(msg, len, "bad pid list '%s'", optarg);
			break;
		case 'C':
			if (parse_cpus(o, optarg))
				return fail(msg, len, "bad CPU list '%s' (e.g. 0,2-3)", optarg);
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || end == optarg || o->duration <= 0)
				return fail(msg, len, "bad duration '%s' (seconds)", optarg);
			break;
		case 'o':
			o->out = optarg;
			break;
		case O_GROUP: {
			struct group *g = getgrnam(optarg);
			unsigned long v = g ? g->gr_gid : strtoul(optarg, &end, 10);
			if (!g && (*end || end == optarg || v > UINT32_MAX))
				return fail(msg, len, "unknown group '%s'", optarg);
			o->group = 1;
			o->gid = (uint32_t)v;
			break;
		}
		case 'b': {
			uint64_t v = parse_buffer(optarg);
			if (v < (8u << 10) || v > (16ull << 30))
				return fail(msg, len, "bad buffer size '%s' (per CPU: KB, or with K/M/G; 8K..16G)",
					    optarg);
			o->buffer_kb = (unsigned)(v >> 10);
			o->fo.pool_per_cpu = v;
			break;
		}
		case 'q':
			o->quiet = 1;
			break;
		case O_COUNTFIRED:
			o->count_fired = 1;
			break;
		case O_BLOCKTO:
			o->fo.wait_ms = strtoull(optarg, &end, 10);
			if (*end || end == optarg || o->fo.wait_ms > 60000)
				return fail(msg, len, "bad --blocking-timeout '%s' (ms, 0..60000)", optarg);
			o->fo.wait_set = 1;
			break;
		case O_MAXSIZE:
			if (!(o->max_bytes = parse_size(optarg)))
				return fail(msg, len, "bad size '%s' (e.g. 100M)", optarg);
			break;
		case O_FLIGHT: {
			size_t l = strlen(optarg);
			o->flight = 1;
			if (l && optarg[l - 1] == 's') {
				o->flight_secs = strtod(optarg, &end);
				if (end != optarg + l - 1 || o->flight_secs <= 0)
					return fail(msg, len, "bad flight window '%s' (e.g. 64M or 30s)", optarg);
			} else if (!(o->flight_bytes = parse_size(optarg))) {
				return fail(msg, len, "bad flight window '%s' (e.g. 64M or 30s)", optarg);
			}
			break;
		}
		case 'F':
			if (push_str(&o->fo.filter, &o->fo.nfilter, optarg))
				return fail(msg, len, "out of memory");
			break;
		case 'N':
			if (push_str(&o->fo.notrace, &o->fo.nnotrace, optarg))
				return fail(msg, len, "out of memory");
			break;
		case 'D':
			o->fo.max_depth = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || o->fo.max_depth < 0)
				return fail(msg, len, "bad depth '%s'", optarg);
			break;
		case O_MINDUR:
			o->fo.min_ns = strtoull(optarg, &end, 10);
			if (*end || end == optarg)
				return fail(msg, len, "bad --min-duration '%s' (ns)", optarg);
			break;
		case 'u':
			if (push_str(&o->fo.uprobes, &o->fo.nuprobes, optarg))
				return fail(msg, len, "out of memory");
			break;
		case 'A':
			if (push_str(&o->fo.args, &o->fo.nargs, optarg))
				return fail(msg, len, "out of memory");
			break;
		case 'k':
			if (push_str(&o->fo.kprobes, &o->fo.nkprobes, optarg))
				return fail(msg, len, "out of memory");
			break;
		case O_NOFUNC:
			o->fo.no_func = 1;
			break;
		case O_MAXPROBES:
			o->fo.max_probes = (unsigned)strtoul(optarg, &end, 10);
			if (*end || end == optarg)
				return fail(msg, len, "bad --max-probes '%s'", optarg);
			break;
		case 'h':
		case O_HELP:
			return 1;
		case '?':
		default:
			if (optopt && optopt < 256)
				return fail(msg, len, "unknown or incomplete option '-%c' (see --help)", optopt);
			return fail(msg, len, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	o->nev = (int)nspec;
	if (optind < argc)
		o->cmd = argv + optind;
	if (!o->all && !o->npids && !o->cmd && !o->have_cpus)
		return fail(msg, len, "nothing to record: give -a, -p PID, -C CPUS or -- CMD");
	if (o->npids && o->cmd)
		return fail(msg, len, "-p and a command cannot be combined");
	if (!o->nev && !o->cmd)
		return fail(msg, len, "no events: give -e (e.g. -e sched)");
	return 0;
}

void rec_opts_free(struct rec_opts *o)
{
	free(o->ev_specs);
	free(o->filters);
	free(o->pids);
	free(o->fo.filter);
	free(o->fo.notrace);
	free(o->fo.uprobes);
	free(o->fo.args);
	free(o->fo.kprobes);
	memset(o, 0, sizeof(*o));
}
