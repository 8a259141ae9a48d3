/* tpp-gen — writes a synthetic trace of a realistic event mix, of any size:
 * function entry/exit (per-thread streams, nested calls of a looping
 * program), scheduler, block-IO and network events (per-CPU streams), with
 * the same type names and fields the recorder writes. Deterministic for a
 * given seed, so tests and benchmarks can rely on exact counts.
 *
 *   tpp-gen -o FILE [-n EVENTS] [--mix func,sched,block,net] [--cpus N]
 *           [--threads N] [--seed S] [--abandon] [--chunk-events N]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tpp_format.h"

enum { T_ENTRY = 1, T_EXIT, T_SWITCH, T_WAKEUP, T_INSERT, T_ISSUE, T_COMPLETE, T_XMIT, T_RECV };

static uint64_t rng_state;
static uint64_t rnd(void)
{
	/* xorshift64*: fast, deterministic, good enough for workloads */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}
static uint64_t jitter(uint64_t base, uint64_t spread) { return base + rnd() % (spread + 1); }

#define NFUNCS 24
#define TEXT_BASE 0x555555554000ull
static const char *fnames[NFUNCS] = {
	"main", "parse_args", "run", "loop_once", "read_input", "decode", "checksum", "hash_update",
	"lookup", "insert", "compare", "alloc_node", "free_node", "emit", "format_line", "write_out",
	"flush", "lock", "unlock", "sleep_ms", "compute", "step", "reduce", "finish"};

static struct tpp_writer *open_w; /* closed on failure: the file ends as a writer's would */

static int die(const char *what, int e)
{
	fprintf(stderr, "tpp-gen: %s: %s\n", what, tpp_strerror(e));
	if (open_w)
		tpp_w_close(open_w);
	return 1;
}

struct fstate { /* one thread's simulated program */
	uint32_t stream;
	int32_t tid;
	uint64_t ts;
	int depth;
	int stack[64];
	uint64_t step;
};

int main(int argc, char **argv)
{
	const char *out = NULL, *mix = "func,sched,block,net";
	uint64_t n = 1000000, seed = 1, start_s = 0;
	int cpus = 4, threads = 4, abandon = 0;
	uint32_t chunk_events = 0;
	static const struct option lo[] = {{"mix", 1, 0, 'm'},   {"cpus", 1, 0, 'c'},   {"threads", 1, 0, 't'},
					   {"seed", 1, 0, 's'},  {"abandon", 0, 0, 'a'}, {"chunk-events", 1, 0, 'k'},
					   {"start-s", 1, 0, 'S'},
					   {"help", 0, 0, 'h'},  {0, 0, 0, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "o:n:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 'm': mix = optarg; break;
		case 'c': cpus = atoi(optarg); break;
		case 't': threads = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'a': abandon = 1; break;
		case 'k': chunk_events = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'S': start_s = strtoull(optarg, NULL, 0); break;
		case 'h':
			printf("usage: tpp-gen -o FILE [-n EVENTS] [--mix func,sched,block,net] [--cpus N] [--threads N] "
			       "[--seed S] [--abandon] [--chunk-events N] [--start-s S]\n"
			       "  --start-s S: the events start S s after now (files of disjoint windows)\n");
			return 0;
		default: return 2;
		}
	}
	if (!out || cpus < 1 || cpus > 256 || threads < 1 || threads > 1024) {
		fprintf(stderr, "tpp-gen: need -o FILE, 1..256 cpus, 1..1024 threads\n");
		return 2;
	}
	int want_func = !!strstr(mix, "func"), want_sched = !!strstr(mix, "sched"),
	    want_block = !!strstr(mix, "block"), want_net = !!strstr(mix, "net");
	int nkinds = want_func + want_sched + want_block + want_net;
	if (!nkinds) {
		fprintf(stderr, "tpp-gen: --mix names none of func, sched, block, net\n");
		return 2;
	}
	rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
	struct tpp_w_opts wo = {.sz = sizeof(wo), .argc = argc, .argv = argv, .producer = "tpp-gen",
				.chunk_events = chunk_events};
	struct tpp_writer *w;
	int e = tpp_w_open(&w, out, &wo);
	if (e)
		return die(out, e);
	open_w = w;
	static const struct tpp_field_def f_func[] = {{"addr", TPP_F_U64}};
	static const struct tpp_field_def f_switch[] = {
		{"prev_comm", TPP_F_STR}, {"prev_pid", TPP_F_S64}, {"prev_prio", TPP_F_S64}, {"prev_state", TPP_F_S64},
		{"next_comm", TPP_F_STR}, {"next_pid", TPP_F_S64}, {"next_prio", TPP_F_S64}};
	static const struct tpp_field_def f_wakeup[] = {
		{"comm", TPP_F_STR}, {"pid", TPP_F_S64}, {"prio", TPP_F_S64}, {"target_cpu", TPP_F_S64}};
	static const struct tpp_field_def f_block[] = {{"dev", TPP_F_U64}, {"sector", TPP_F_U64},
						       {"nr_sector", TPP_F_U64}, {"rwbs", TPP_F_STR}};
	static const struct tpp_field_def f_net[] = {{"skbaddr", TPP_F_U64}, {"len", TPP_F_U64}, {"name", TPP_F_STR}};
	const struct tpp_type_def types[] = {
		{T_ENTRY, "func_entry", "tracepp", 1, f_func},      {T_EXIT, "func_exit", "tracepp", 1, f_func},
		{T_SWITCH, "sched_switch", "sched", 7, f_switch},   {T_WAKEUP, "sched_wakeup", "sched", 4, f_wakeup},
		{T_INSERT, "block_rq_insert", "block", 4, f_block}, {T_ISSUE, "block_rq_issue", "block", 4, f_block},
		{T_COMPLETE, "block_rq_complete", "block", 4, f_block},
		{T_XMIT, "net_dev_xmit", "net", 3, f_net},          {T_RECV, "netif_receive_skb", "net", 3, f_net}};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if ((e = tpp_w_add_type(w, &types[i])))
			return die("add type", e);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t t0 = ((uint64_t)now.tv_sec + start_s) * 1000000000ull;
	const int32_t pid = 4242;
	/* tasks: the traced program's threads plus some other processes */
	static const char *others[] = {"kworker/0:1", "sshd", "postgres", "nginx", "systemd-journal", "rcu_sched"};
	char comm[32];
	for (int t = 0; t < threads; t++) {
		snprintf(comm, sizeof(comm), t ? "gen-app:%d" : "gen-app", t);
		tpp_w_task(w, t0, pid, pid + t, comm);
	}
	for (int i = 0; i < 6; i++)
		tpp_w_task(w, t0, 100 + i, 100 + i, others[i]);
	tpp_w_task(w, t0, 0, 0, "swapper");
	for (int cpu = 0; cpu < cpus; cpu++)
		tpp_w_stream(w, (uint32_t)cpu, TPP_S_CPU, cpu, -1, -1);
	struct fstate *fs = calloc((size_t)threads, sizeof(*fs));
	for (int t = 0; t < threads; t++) {
		fs[t].stream = 1000u + (uint32_t)t;
		fs[t].tid = pid + t;
		fs[t].ts = t0 + (uint64_t)t * 1000;
		tpp_w_stream(w, fs[t].stream, TPP_S_THREAD, -1, pid, fs[t].tid);
	}
	/* the program's symbols, so tracepp can name functions offline */
	static const uint8_t bid[20] = {0x7d, 0x1c, 0x3a, 0x42, 0x99, 0x01, 0x02, 0x03, 0x04, 0x05,
					0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
	struct tpp_sym syms[NFUNCS];
	for (int i = 0; i < NFUNCS; i++)
		syms[i] = (struct tpp_sym){0x1100 + (uint64_t)i * 0x80, 0x70, fnames[i]};
	tpp_w_mmap(w, t0, pid, TEXT_BASE + 0x1000, TEXT_BASE + 0x3000, 0x1000, "/usr/bin/gen-app", bid, sizeof(bid));
	tpp_w_symtab(w, bid, sizeof(bid), "/usr/bin/gen-app", NFUNCS, syms);

	uint64_t cpu_ts[256];
	int32_t cur[256];
	for (int i = 0; i < cpus; i++) {
		cpu_ts[i] = t0 + (uint64_t)i * 777;
		cur[i] = 0;
	}
	uint64_t sector = 123456, skb = 0xffff888100000000ull;
	union tpp_val v[8];
	uint64_t made = 0;
	int kind = 0;
	while (made < n) {
		kind = (kind + 1) % 4;
		if (kind == 0 && want_func) {
			/* 64 events of one thread: a loop over a fixed call pattern */
			struct fstate *f = &fs[rnd() % (uint64_t)threads];
			for (int k = 0; k < 64 && made < n; k++, made++) {
				f->ts += jitter(40, 60);
				int enter = f->depth == 0 || (f->depth < 6 && ((f->step * 7 + (uint64_t)f->depth) % 5 < 3));
				if (f->depth >= 63)
					enter = 0;
				if (enter) {
					int fn = f->depth ? (int)((f->step + (uint64_t)f->depth * 3) % (NFUNCS - 1)) + 1 : 0;
					f->stack[f->depth++] = fn;
					v[0].u = TEXT_BASE + syms[fn].addr;
					e = tpp_w_event(w, f->stream, T_ENTRY, f->ts, f->tid, v);
				} else {
					int fn = f->stack[--f->depth];
					v[0].u = TEXT_BASE + syms[fn].addr;
					e = tpp_w_event(w, f->stream, T_EXIT, f->ts, f->tid, v);
				}
				f->step++;
				if (e)
					return die("event", e);
			}
			continue;
		}
		int cpu = (int)(rnd() % (uint64_t)cpus);
		if (kind == 1 && want_sched) {
			for (int k = 0; k < 16 && made < n; k++, made += 2) {
				int32_t next = (rnd() % 3 == 0) ? 0 : (rnd() % 2 ? pid + (int32_t)(rnd() % (uint64_t)threads)
										   : 100 + (int32_t)(rnd() % 6));
				cpu_ts[cpu] += jitter(2000, 8000);
				v[0].s.p = "gen-app";
				v[0].s.len = 7;
				v[1].i = next;
				v[2].i = 120;
				v[3].i = 0;
				v[4].s.p = v[0].s.p;
				v[4].s.len = v[0].s.len;
				v[5].i = next;
				v[6].i = 120;
				if ((e = tpp_w_event(w, (uint32_t)cpu, T_WAKEUP, cpu_ts[cpu], cur[cpu], v + 4)))
					return die("event", e);
				cpu_ts[cpu] += jitter(500, 3000);
				v[3].i = rnd() % 2;
				v[1].i = cur[cpu];
				v[0].s.p = cur[cpu] == 0 ? "swapper/0" : (cur[cpu] < 4000 ? "worker" : "gen-app");
				v[0].s.len = (uint32_t)strlen(v[0].s.p);
				v[4].s.p = next == 0 ? "swapper/0" : (next < 4000 ? "worker" : "gen-app");
				v[4].s.len = (uint32_t)strlen(v[4].s.p);
				if ((e = tpp_w_event(w, (uint32_t)cpu, T_SWITCH, cpu_ts[cpu], cur[cpu], v)))
					return die("event", e);
				cur[cpu] = next;
			}
		} else if (kind == 2 && want_block) {
			for (int k = 0; k < 8 && made < n; k++, made += 3) {
				v[0].u = (8u << 20) | 16; /* 8:16 */
				v[1].u = sector;
				v[2].u = 8;
				v[3].s.p = k & 1 ? "W" : "R";
				v[3].s.len = 1;
				sector += 8 + (rnd() % 4 ? 0 : rnd() % 100000);
				cpu_ts[cpu] += jitter(3000, 5000);
				if ((e = tpp_w_event(w, (uint32_t)cpu, T_INSERT, cpu_ts[cpu], cur[cpu], v)))
					return die("event", e);
				cpu_ts[cpu] += jitter(1000, 2000);
				if ((e = tpp_w_event(w, (uint32_t)cpu, T_ISSUE, cpu_ts[cpu], cur[cpu], v)))
					return die("event", e);
				cpu_ts[cpu] += jitter(50000, 150000);
				if ((e = tpp_w_event(w, (uint32_t)cpu, T_COMPLETE, cpu_ts[cpu], 0, v)))
					return die("event", e);
			}
		} else if (kind == 3 && want_net) {
			for (int k = 0; k < 16 && made < n; k++, made += 2) {
				skb += 0x100 * (1 + rnd() % 8);
				v[0].u = skb;
				v[1].u = 66 + rnd() % 1400;
				v[2].s.p = "lo";
				v[2].s.len = 2;
				cpu_ts[cpu] += jitter(4000, 6000);
				if ((e = tpp_w_event(w, (uint32_t)cpu, T_XMIT, cpu_ts[cpu], cur[cpu], v)))
					return die("event", e);
				cpu_ts[cpu] += jitter(1000, 2000);
				if ((e = tpp_w_event(w, (uint32_t)cpu, T_RECV, cpu_ts[cpu], cur[cpu], v)))
					return die("event", e);
			}
		}
	}
	free(fs);
	if (abandon) {
		/* as if killed: whatever was flushed stays, no trailer */
		tpp_w_flush(w);
		tpp_w_abandon(w);
		open_w = NULL;
		return 0;
	}
	struct tpp_w_stats st;
	if ((e = tpp_w_flush(w)))
		return die(out, e);
	tpp_w_stats(w, &st);
	open_w = NULL;
	if ((e = tpp_w_close(w)))
		return die(out, e);
	fprintf(stderr, "tpp-gen: %llu events, %llu chunks, %llu bytes\n", (unsigned long long)st.events,
		(unsigned long long)st.chunks, (unsigned long long)st.file_bytes);
	return 0;
}
