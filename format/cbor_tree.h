/* cbor_tree — the reader's decoder of one CBOR item (the file header, a
 * metadata chunk) into a flat array of nodes, and the lookups meta.c makes
 * in it. Private to format/.
 *
 * Contract:
 *  - ct_parse() decodes the first item of buf[0, len) and ignores what
 *    follows it. It accepts and rejects exactly the inputs libcbor 0.8's
 *    cbor_load() does, and fails at the same position (*errpos): the start of
 *    a truncated or reserved head, the end of the head whose item breaks
 *    the nesting rules, len when the input ends inside an open item. That
 *    includes libcbor's quirks: strict UTF-8 in text strings (unless
 *    text_as_bytes), the simple
 *    values and direct tags 6..20 it has no name for are malformed, and
 *    more than 2048 open items is a memory error. One difference: libcbor
 *    allocates every definite array or map for its count up front, and
 *    fails where malloc does. Here a count costs nothing: only one whose
 *    size glibc refuses outright (past PTRDIFF_MAX) fails; below that the
 *    allocation is taken as made, and the input runs out instead. Where
 *    libcbor leaves the position unset (empty input), it is 0 here.
 *    tests/unit/cbor_tree.c holds the two to this.
 *  - It never reads outside buf and never allocates from a size read from
 *    it: nodes <= heads <= len (inputs of 4 GiB and more are refused).
 *  - Node 0 is the item. Every node is followed by its subtree: an array's
 *    items, a map's keys and values alternately, a tag's item. Indefinite
 *    strings have no chunk nodes; only definite ones carry their bytes,
 *    which point into buf (keep buf while the tree is used).
 *  - A tree is reused across ct_parse() calls; ct_free() releases it. */
#ifndef TPP_CBOR_TREE_H
#define TPP_CBOR_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* The failures, as libcbor 0.8 tells them apart (CBOR_ERR_*). */
enum ct_err { CT_OK, CT_ETRUNC, CT_ENODATA, CT_EMALFORMED, CT_ENOMEM, CT_ESYNTAX };

struct ct_node {
	uint64_t v;       /* integer, tag number, string length, array items or map pairs,
			   * float bits or simple value */
	const uint8_t *p; /* a definite string's bytes; NULL otherwise */
	uint32_t skip;    /* nodes in this subtree, itself included */
	uint8_t major;    /* CB_UINT .. CB_SIMPLE */
	uint8_t indef;    /* indefinite length (string, array, map) */
};

struct ct_tree {
	struct ct_node *n;
	size_t nn, cap;
	struct ct_frame *open; /* the items still open while parsing */
	/* 1: a definite text string that is not valid UTF-8 (written by a
	 * format 1.0 writer from kernel bytes) is a byte string node instead of
	 * an error; 0 (the default) is libcbor's strictness */
	int text_as_bytes;
};

int ct_parse(struct ct_tree *t, const uint8_t *buf, size_t len, size_t *errpos);
void ct_free(struct ct_tree *t);

static inline const struct ct_node *ct_next(const struct ct_node *n) { return n + n->skip; }
static inline int ct_is(const struct ct_node *n, unsigned major) { return n && n->major == major; }
static inline int ct_is_text(const struct ct_node *n) { return ct_is(n, CB_TEXT) && !n->indef; }

/* The value of text key `key` in a definite map (the first if repeated);
 * NULL if absent or m is not a definite map. */
const struct ct_node *ct_map_get(const struct ct_node *m, const char *key);
/* Integer of either sign; 0 with *ok = 0 (when ok) if n is not one. */
int64_t ct_int(const struct ct_node *n, int *ok);
/* A definite text or byte string (specs/format.md "Strings": the file's
 * strings may be either), malloc'd and NUL-terminated; NULL otherwise. */
char *ct_strdup(const struct ct_node *n);
/* At most cap-1 bytes of a definite text or byte string into dst,
 * NUL-terminated; "" otherwise. */
void ct_strcpy(const struct ct_node *n, char *dst, size_t cap);

#endif
