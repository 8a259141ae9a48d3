/* rec_options — the command line of `tracerec record`, parsed and checked
 * before anything touches the kernel. Errors: rec_parse returns -1 after
 * writing one message to msg; 1 for --help. Nothing prints.
 * Ownership: strings point into argv; arrays are heap, freed by rec_opts_free.
 */
#ifndef TPP_REC_OPTIONS_H
#define TPP_REC_OPTIONS_H

#include <stdint.h>
#include "func.h"

struct rec_opts {
	const char **ev_specs;   /* -e, in order; filters[i] applies to ev_specs[i] */
	const char **filters;
	int nev;
	int all;                 /* -a */
	int32_t *pids;           /* -p */
	int npids;
	uint64_t cpumask[16];    /* -C: up to 1024 CPUs */
	int have_cpus;
	double duration;         /* -d, 0 = until the command ends or a signal */
	const char *out;         /* -o */
	int group;               /* --group: the file 0640, of group gid */
	uint32_t gid;
	unsigned buffer_kb;      /* -b, per CPU; 0 = the instance's default (fo.pool_per_cpu has it too) */
	uint64_t max_bytes;      /* --max-size */
	uint64_t flight_bytes;   /* --flight NM: total kernel buffer kept */
	double flight_secs;      /* --flight Ns: age cut at write-out */
	int flight;
	int quiet;
	int count_fired;         /* --count-fired: a perf counter per tracepoint */
	struct func_opts fo;
	char **cmd;              /* after "--" */
};

int rec_parse(struct rec_opts *o, int argc, char **argv, char *msg, size_t msglen);
void rec_opts_free(struct rec_opts *o);
extern const char rec_usage[];

#endif
