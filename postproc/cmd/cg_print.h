/* cg_print — a call graph's paths as text, shared by `callgraph` and
 * `export`: the names from a thread's root to a node, and folded stacks
 * (flamegraph.pl's input: "main;a;b SELF_NS" per line). Names go through
 * esc.h. Nothing allocates beyond the call; errors are negative errno. */
#ifndef TPP_CG_PRINT_H
#define TPP_CG_PRINT_H
#include <stdio.h>
#include "an_cg.h"

/* The names from the root to node into buf, escaped by esc.h: a JSON array
 * of strings (json set), or text joined by sep. -ENOSPC if buf is short. */
int cg_path(const struct an_cg *cg, uint32_t node, char *buf, size_t len, char sep, int json);
/* One line per path with self time, to f; with under set (a function id),
 * only the paths through it. 0, -ENOMEM, or -EIO when f failed. */
int cg_folded(FILE *f, const struct an_cg *cg, uint32_t under);
/* --root=thread|none (callgraph, export): 1, 0, or -1 when unknown. */
int cg_parse_root(const char *arg);
#endif
