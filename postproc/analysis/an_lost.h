/* an_lost — the file's lost-event records in time order per stream, for a
 * printer to show inline. Lifecycle: an_lost_open .. an_lost_close; the
 * reader must outlive it (pointers into its metadata).
 * Errors: negative errno values (-ENOMEM, -EINVAL) or tpp_format.h codes;
 * nothing here prints.
 */
#ifndef TPP_AN_LOST_H
#define TPP_AN_LOST_H
#include <stdint.h>
#include <stddef.h>
#include "tpp_decode.h"

/* The file's lost records with a time, per stream in time order, for a
 * printer to show inline: before an event of stream s at ts, each record
 * of s from before ts (an_lost_before, until NULL), at the end the rest.
 * Pointers into the reader's metadata; open fills l (-ENOMEM). */
struct an_lost_stream {
	uint32_t stream;
	size_t pos, end; /* its records are v[pos..end) */
};
struct an_lost {
	const struct tpp_lost **v;
	size_t n;
	struct an_lost_stream *s;
	size_t ns, last;
};
int an_lost_open(struct an_lost *l, const struct tpp_reader *r, uint64_t from_ts, uint64_t to_ts);
const struct tpp_lost *an_lost_before(struct an_lost *l, uint32_t stream, uint64_t ts);
const struct tpp_lost *an_lost_rest(struct an_lost *l);
void an_lost_close(struct an_lost *l);
#endif
