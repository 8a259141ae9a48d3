/* decode_all — open a file and decode every event and every name, as a
 * reader of untrusted input would; shared by the robustness tests and the
 * fuzz target. Returns events decoded, or -1 if the file did not open. */
#ifndef TPP_DECODE_ALL_H
#define TPP_DECODE_ALL_H
#include "tpp_decode.h"

/* Reads what an analysis would: every value, and both ends of every string
 * (so a dangling pointer shows under ASan). */
static inline uint64_t touch_event(const struct tpp_event *ev, const struct tpp_names *n)
{
	uint64_t sink = 0;
	for (unsigned i = 0; i < ev->nvals; i++) {
		const union tpp_val *v = &ev->v[i];
		if (ev->t->fields[i].type < TPP_F_STR)
			sink += v->u;
		else if (v->s.p && v->s.len)
			sink += (uint64_t)v->s.len + (unsigned char)v->s.p[0] + (unsigned char)v->s.p[v->s.len - 1];
	}
	if (n && ev->tid >= 0) {
		const char *c = tpp_names_comm(n, ev->tid);
		sink += c ? (uint64_t)c[0] : 0;
		if (ev->nvals && ev->t->fields[0].type == TPP_F_U64)
			sink += tpp_names_sym(n, tpp_names_pid(n, ev->tid), ev->v[0].u, NULL) != NULL;
	}
	return sink;
}

/* File order goes event by event; sorted order the way the analyses read:
 * runs (tpp_iter_run) of a projection (every other field of every type). */
static inline long decode_all(const char *path, int sorted, long *damaged)
{
	static uint32_t half[TPP_MAX_TYPES];
	for (size_t i = 0; i < TPP_MAX_TYPES; i++)
		half[i] = 0x55555555u;
	struct tpp_reader *r;
	char msg[256];
	*damaged = 0;
	if (tpp_r_open(&r, path, msg, sizeof(msg)))
		return -1;
	struct tpp_names *n = NULL;
	tpp_names_open(&n, r);
	struct tpp_iter *it;
	struct tpp_iter_opts o = {.sz = sizeof(o), .sorted = sorted, .want = sorted ? half : NULL};
	long count = 0;
	if (!tpp_iter_open(&it, r, &o)) {
		const struct tpp_event *ev;
		int e;
		size_t stride = 0;
		volatile uint64_t sink = 0;
		while ((e = sorted ? tpp_iter_run(it, &ev, &stride) : tpp_iter_next(it, &ev)) != 0) {
			if (e < 0) {
				(*damaged)++;
				continue;
			}
			for (int k = 0; k < e; k++) {
				count++;
				sink += touch_event(ev, n);
				ev = (const struct tpp_event *)(const void *)((const char *)ev + stride);
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
