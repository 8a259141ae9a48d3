/* decode_all — open a file and decode every event and every name, as a
 * reader of untrusted input would; shared by the robustness tests and the
 * fuzz target. Returns events decoded, or -1 if the file did not open. */
#ifndef TPP_DECODE_ALL_H
#define TPP_DECODE_ALL_H
#include "tpp_decode.h"

static inline long decode_all(const char *path, int sorted, long *damaged)
{
	struct tpp_reader *r;
	char msg[256];
	*damaged = 0;
	if (tpp_r_open(&r, path, msg, sizeof(msg)))
		return -1;
	struct tpp_names *n = NULL;
	tpp_names_open(&n, r);
	struct tpp_iter *it;
	struct tpp_iter_opts o = {.sz = sizeof(o), .sorted = sorted};
	long count = 0;
	if (!tpp_iter_open(&it, r, &o)) {
		const struct tpp_event *ev;
		int e;
		volatile uint64_t sink = 0;
		while ((e = tpp_iter_next(it, &ev)) != 0) {
			if (e < 0) {
				(*damaged)++;
				continue;
			}
			count++;
			for (unsigned i = 0; i < ev->nvals; i++)
				sink += ev->t->fields[i].type >= TPP_F_STR ? (uint64_t)ev->v[i].s.len : ev->v[i].u;
			if (n && ev->tid >= 0) {
				const char *c = tpp_names_comm(n, ev->tid);
				sink += c ? (uint64_t)c[0] : 0;
				if (ev->nvals && ev->t->fields[0].type == TPP_F_U64)
					sink += tpp_names_sym(n, tpp_names_pid(n, ev->tid), ev->v[0].u, NULL) != NULL;
			}
		}
		(void)sink;
		tpp_iter_close(it);
	}
	*damaged += (long)tpp_r_info(r)->damaged_chunks;
	tpp_names_close(n);
	tpp_r_close(r);
	return count;
}
#endif
