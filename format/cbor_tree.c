/* cbor_tree — see cbor_tree.h for the contract. libcbor built a malloc'd
 * item per CBOR item, counted the code points of every string and freed it
 * all again, which was most of the cost of opening a trace; here one pass
 * writes a node per item into an array kept from one chunk to the next. */
#include <stdlib.h>
#include <string.h>

#include "cbor_tree.h"
#include "utf8.h"

/* libcbor 0.8's limit on open items (CBOR_MAX_STACK_SIZE): a deeper input
 * is one it rejects, and so one this rejects. */
#define CT_MAX_OPEN 2048

struct ct_frame {
	uint64_t left; /* definite: items still due, keys and values both;
			* indefinite map: 1 while a value is due */
	uint32_t node;
};

/* The initial bytes libcbor 0.8 calls malformed: reserved additional
 * information, indefinite integers and tags, and the direct tag numbers and
 * simple values it has no name for. */
static int reserved(uint8_t ib)
{
	unsigned mj = ib >> 5, ai = ib & 31;
	if (ai >= 28)
		return ai != 31 || mj == CB_UINT || mj == CB_NEGINT || mj == CB_TAG;
	if (mj == CB_TAG)
		return ai >= 6 && ai <= 20;
	if (mj == CB_SIMPLE)
		return ai < 20 || ai == 24;
	return 0;
}

static inline struct ct_node *new_node(struct ct_tree *t, unsigned major, uint64_t v)
{
	if (t->nn == t->cap) {
		size_t nc = t->cap * 2;
		struct ct_node *n = realloc(t->n, nc * sizeof(*n));
		if (!n)
			return NULL;
		t->n = n;
		t->cap = nc;
	}
	struct ct_node *n = &t->n[t->nn++];
	*n = (struct ct_node){.v = v, .skip = 1, .major = (uint8_t)major};
	return n;
}

/* Opens the node just made; `left` as in struct ct_frame. */
static int open_item(struct ct_tree *t, size_t *depth, uint64_t left)
{
	if (*depth == CT_MAX_OPEN)
		return -1;
	t->open[(*depth)++] = (struct ct_frame){left, (uint32_t)(t->nn - 1)};
	return 0;
}

/* An item is complete: it counts in the item open around it, which it may
 * complete in turn. -1 inside an indefinite string, which holds only
 * chunks. */
static inline int complete(struct ct_tree *t, size_t *depth)
{
	while (*depth) {
		struct ct_frame *f = &t->open[*depth - 1];
		struct ct_node *c = &t->n[f->node];
		if (c->major == CB_ARRAY || c->major == CB_MAP) {
			if (c->indef) {
				if (c->major == CB_ARRAY || !(f->left ^= 1))
					c->v++;
				return 0;
			}
			if (--f->left)
				return 0;
		} else if (c->major != CB_TAG) {
			return -1;
		}
		c->skip = (uint32_t)(t->nn - f->node);
		--*depth;
	}
	return 0;
}

/* A break ends the indefinite item open, unless a map's value is due. */
static int end_indef(struct ct_tree *t, size_t *depth)
{
	if (!*depth)
		return -1;
	struct ct_frame *f = &t->open[*depth - 1];
	struct ct_node *c = &t->n[f->node];
	if (!c->indef || (c->major == CB_MAP && f->left))
		return -1;
	c->skip = (uint32_t)(t->nn - f->node);
	--*depth;
	return complete(t, depth);
}

/* Decodes the head at *pp and what it brings: a string's bytes, a new node,
 * the items it opens or completes. */
static int step(struct ct_tree *t, const uint8_t **pp, const uint8_t *end, size_t *depth)
{
	if (reserved(**pp))
		return CT_EMALFORMED;
	unsigned mj = **pp >> 5;
	uint64_t v;
	struct ct_node *n;
	if ((**pp & 31) == 31) { /* a break, or an indefinite string, array or map */
		++*pp;
		if (mj == CB_SIMPLE)
			return end_indef(t, depth) ? CT_ESYNTAX : CT_OK;
		if (!(n = new_node(t, mj, 0)))
			return CT_ENOMEM;
		n->indef = 1;
		return open_item(t, depth, 0) ? CT_ENOMEM : CT_OK;
	}
	if (cbor_get_head(pp, end, &mj, &v))
		return CT_ETRUNC;
	if (mj == CB_BYTES || mj == CB_TEXT) {
		const uint8_t *s = *pp;
		if (v > (uint64_t)(end - s))
			return CT_ETRUNC;
		*pp += v;
		unsigned as = mj;
		if (mj == CB_TEXT && !utf8_valid(s, v)) {
			if (!t->text_as_bytes)
				return CT_ESYNTAX;
			as = CB_BYTES; /* an old writer's bytes, kept as they are */
		}
		if (*depth && t->n[t->open[*depth - 1].node].major == mj)
			return CT_OK; /* a chunk of the indefinite string open: no node */
		if (!(n = new_node(t, as, v)))
			return CT_ENOMEM;
		n->p = s;
		return complete(t, depth) ? CT_ESYNTAX : CT_OK;
	}
	/* libcbor allocates an array's pointers (a map's pairs of them) for
	 * the count up front; glibc refuses any size past PTRDIFF_MAX */
	if ((mj == CB_ARRAY && v > PTRDIFF_MAX / sizeof(void *)) || (mj == CB_MAP && v > PTRDIFF_MAX / (2 * sizeof(void *))))
		return CT_ENOMEM;
	if (!(n = new_node(t, mj, v)))
		return CT_ENOMEM;
	if (mj == CB_TAG || ((mj == CB_ARRAY || mj == CB_MAP) && v))
		return open_item(t, depth, mj == CB_TAG ? 1 : mj == CB_MAP ? 2 * v : v) ? CT_ENOMEM : CT_OK;
	return complete(t, depth) ? CT_ESYNTAX : CT_OK;
}

int ct_parse(struct ct_tree *t, const uint8_t *buf, size_t len, size_t *errpos)
{
	const uint8_t *p = buf, *end = buf + len, *h;
	size_t depth = 0;
	int e;
	t->nn = 0;
	*errpos = 0;
	if (!len)
		return CT_ENODATA;
	if (len >= UINT32_MAX) /* node indexes are 32-bit */
		return CT_ENOMEM;
	if (!t->open && !(t->open = malloc(CT_MAX_OPEN * sizeof(*t->open))))
		return CT_ENOMEM;
	/* metadata runs about 6 bytes an item: one allocation, mostly; the
	 * pages of the nodes not needed are never touched */
	if (t->cap < len / 4 + 16) {
		free(t->n);
		t->cap = len / 4 + 16;
		if (!(t->n = malloc(t->cap * sizeof(*t->n)))) {
			t->cap = 0;
			return CT_ENOMEM;
		}
	}
	do {
		h = p;
		e = p == end ? CT_ETRUNC : step(t, &p, end, &depth);
	} while (!e && depth);
	if (e)
		/* libcbor names the head where the input stops being CBOR, and the
		 * end of the one where it stops making sense */
		*errpos = (size_t)((e == CT_ETRUNC || e == CT_EMALFORMED ? h : p) - buf);
	return e;
}

void ct_free(struct ct_tree *t)
{
	free(t->n);
	free(t->open);
	memset(t, 0, sizeof(*t));
}

const struct ct_node *ct_map_get(const struct ct_node *m, const char *key)
{
	if (!ct_is(m, CB_MAP) || m->indef)
		return NULL;
	size_t kl = strlen(key);
	const struct ct_node *k = m + 1;
	for (uint64_t i = 0; i < m->v; i++) {
		const struct ct_node *val = ct_next(k);
		if (ct_is_text(k) && k->v == kl && !memcmp(k->p, key, kl))
			return val;
		k = ct_next(val);
	}
	return NULL;
}

int64_t ct_int(const struct ct_node *n, int *ok)
{
	if (ct_is(n, CB_UINT))
		return (int64_t)n->v;
	if (ct_is(n, CB_NEGINT))
		return -1 - (int64_t)n->v;
	if (ok)
		*ok = 0;
	return 0;
}

/* A definite text or byte string: what a string of the file's may be. */
static int ct_is_str(const struct ct_node *n)
{
	return n && (n->major == CB_TEXT || n->major == CB_BYTES) && !n->indef;
}

char *ct_strdup(const struct ct_node *n)
{
	if (!ct_is_str(n))
		return NULL;
	char *s = malloc(n->v + 1);
	if (!s)
		return NULL;
	memcpy(s, n->p, n->v);
	s[n->v] = 0;
	return s;
}

void ct_strcpy(const struct ct_node *n, char *dst, size_t cap)
{
	dst[0] = 0;
	if (!ct_is_str(n))
		return;
	size_t k = n->v < cap ? n->v : cap - 1;
	memcpy(dst, n->p, k);
	dst[k] = 0;
}
