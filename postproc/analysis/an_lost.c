/* Lost-event markers: the file's lost records (metadata), put back in the
 * flow of events where they happened, for dump and replay to print inline,
 * as uftrace prints "LOST n records" in its replay. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "an_lost.h"

static int cmp_lost(const void *a, const void *b)
{
	const struct tpp_lost *x = *(const struct tpp_lost *const *)a, *y = *(const struct tpp_lost *const *)b;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return x->from_ts < y->from_ts ? -1 : x->from_ts > y->from_ts;
}

int an_lost_open(struct an_lost *l, const struct tpp_reader *r, uint64_t from_ts, uint64_t to_ts)
{
	memset(l, 0, sizeof(*l));
	const struct tpp_meta *m = tpp_r_meta(r);
	if (!m || !m->nlost)
		return 0;
	l->v = malloc(m->nlost * sizeof(*l->v));
	if (!l->v)
		return -ENOMEM;
	for (size_t i = 0; i < m->nlost; i++) {
		const struct tpp_lost *x = &m->lost[i];
		/* a count with no time (threads that found no buffer) has no
		 * place in the flow: the closing warning counts it */
		if (!x->count || (!x->from_ts && !x->to_ts) || x->stream == UINT32_MAX)
			continue;
		if ((to_ts && x->from_ts > to_ts) || (from_ts && x->to_ts < from_ts))
			continue;
		l->v[l->n++] = x;
	}
	qsort(l->v, l->n, sizeof(*l->v), cmp_lost);
	/* each stream's run of records, and a cursor in it */
	if (l->n && !(l->s = calloc(l->n, sizeof(*l->s))))
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		if (!l->ns || l->s[l->ns - 1].stream != l->v[i]->stream)
			l->s[l->ns++] = (struct an_lost_stream){l->v[i]->stream, i, i};
		l->s[l->ns - 1].end = i + 1;
	}
	return 0;
}

void an_lost_close(struct an_lost *l)
{
	free(l->v);
	free(l->s);
	memset(l, 0, sizeof(*l));
}

const struct tpp_lost *an_lost_before(struct an_lost *l, uint32_t stream, uint64_t ts)
{
	if (!l->ns)
		return NULL;
	struct an_lost_stream *st = &l->s[l->last];
	if (st->stream != stream) {
		size_t i = 0;
		while (i < l->ns && l->s[i].stream != stream)
			i++;
		if (i == l->ns)
			return NULL;
		l->last = i;
		st = &l->s[i];
	}
	if (st->pos == st->end || l->v[st->pos]->from_ts > ts)
		return NULL;
	return l->v[st->pos++];
}

const struct tpp_lost *an_lost_rest(struct an_lost *l)
{
	for (size_t i = 0; i < l->ns; i++)
		if (l->s[i].pos < l->s[i].end)
			return l->v[l->s[i].pos++];
	return NULL;
}
