/* an_cg — the call graph: per function calls, total, self, min, max time, and
 * the call tree by path, built on the one pairing (an_pair). Lifecycle:
 * an_cg_build* fills it, an_cg_free releases it (even after an error); the
 * an_syms passed in is not owned and must outlive it.
 * Errors: negative errno values (-ENOMEM, -EINVAL) or tpp_format.h codes;
 * nothing here prints.
 */
#ifndef TPP_AN_CG_H
#define TPP_AN_CG_H
#include <stdint.h>
#include <stddef.h>
#include "hmap.h"
#include "an_pair.h"
#include "an_run.h"
#include "an_syms.h"

struct an_func_stat {
	uint64_t calls, total_ns, self_ns, max_ns, min_ns, noret, orphans;
};
/* A call-tree node: the path from a thread's outermost frame. */
struct an_cg_node {
	uint32_t parent, func; /* node 0 is the root (func unused) */
	uint32_t nested;       /* func is also on the path above: a recursive call */
	uint64_t calls, total_ns, self_ns;
};
struct an_cg {
	struct an_syms *syms;       /* not owned */
	struct an_func_stat *fs;    /* indexed by function id */
	size_t nfs;
	struct an_cg_node *nodes;
	size_t nnodes, capnodes;
	struct hmap child;          /* (parent, func) -> node */
	struct an_pair_stats ps;
	struct an_run_stats run;
};
/* Builds the whole call graph of the file (runs the loop over r, in time
 * order), for the threads and time range of f (NULL: everything). cg is
 * initialised here; release it with an_cg_free even on error. */
int an_cg_build(struct an_cg *cg, struct tpp_reader *r, const struct tpp_names *names,
		struct an_syms *syms, const struct an_filter *f);
/* The same with thread_roots set: each thread's calls under two nodes of
 * its own, "comm-pid" then "tid" (names in syms, no calls), so that threads
 * do not merge (folded stacks comm-pid;tid;main;...). */
int an_cg_build_roots(struct an_cg *cg, struct tpp_reader *r, const struct tpp_names *names,
		      struct an_syms *syms, const struct an_filter *f, int thread_roots);
void an_cg_free(struct an_cg *cg);
#endif
