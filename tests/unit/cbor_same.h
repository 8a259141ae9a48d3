/* cbor_same — whether a libcbor item and a cbor_tree node are the same
 * item (kinds, values, bytes, counts, definite or not: floats and simple
 * values only by place, meta.c reads none), and whether they give every
 * lookup meta.c makes the same answer, on them and on each item below. The
 * libcbor side is meta.c's lookups as they were before cbor_tree. */
#ifndef TPP_CBOR_SAME_H
#define TPP_CBOR_SAME_H
#include <cbor.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbor_tree.h"

/* ------------------------------------------------ meta.c's lookups, on libcbor */
static cbor_item_t *ref_map_get(cbor_item_t *m, const char *key)
{
	if (!m || !cbor_isa_map(m) || !cbor_map_is_definite(m))
		return NULL;
	size_t n = cbor_map_size(m), kl = strlen(key);
	struct cbor_pair *p = cbor_map_handle(m);
	for (size_t i = 0; i < n; i++) {
		cbor_item_t *k = p[i].key;
		if (cbor_isa_string(k) && cbor_string_is_definite(k) && cbor_string_length(k) == kl &&
		    !memcmp(cbor_string_handle(k), key, kl))
			return p[i].value;
	}
	return NULL;
}

static int64_t ref_int(cbor_item_t *it, int *ok)
{
	if (it && cbor_isa_uint(it))
		return (int64_t)cbor_get_int(it);
	if (it && cbor_isa_negint(it))
		return -1 - (int64_t)cbor_get_int(it);
	*ok = 0;
	return 0;
}

static int ref_is_text(cbor_item_t *it) { return it && cbor_isa_string(it) && cbor_string_is_definite(it); }

/* ------------------------------------------------------------- descriptions */
static void put(struct buf *b, const char *fmt, ...)
{
	char s[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	buf_put(b, s, (size_t)n);
}

/* A string: its kind ('b' or 't'), then "_" if indefinite, or its bytes. */
static void put_bytes(struct buf *b, char kind, int indef, const uint8_t *p, size_t n)
{
	if (indef) {
		put(b, "%c_", kind);
		return;
	}
	put(b, "%c%zu:", kind, n);
	buf_put(b, p, n);
}

static void desc_cbor(struct buf *b, cbor_item_t *it)
{
	switch (cbor_typeof(it)) {
	case CBOR_TYPE_UINT:
		put(b, "u%llu", (unsigned long long)cbor_get_int(it));
		break;
	case CBOR_TYPE_NEGINT:
		put(b, "n%llu", (unsigned long long)cbor_get_int(it));
		break;
	case CBOR_TYPE_BYTESTRING:
		put_bytes(b, 'b', cbor_bytestring_is_indefinite(it), cbor_bytestring_handle(it),
			  cbor_bytestring_length(it));
		break;
	case CBOR_TYPE_STRING:
		put_bytes(b, 't', cbor_string_is_indefinite(it), cbor_string_handle(it), cbor_string_length(it));
		break;
	case CBOR_TYPE_ARRAY:
		put(b, cbor_array_is_definite(it) ? "[" : "[_");
		for (size_t i = 0; i < cbor_array_size(it); i++) {
			desc_cbor(b, cbor_array_handle(it)[i]);
			put(b, ",");
		}
		put(b, "]");
		break;
	case CBOR_TYPE_MAP:
		put(b, cbor_map_is_definite(it) ? "{" : "{_");
		for (size_t i = 0; i < cbor_map_size(it); i++) {
			desc_cbor(b, cbor_map_handle(it)[i].key);
			put(b, ":");
			desc_cbor(b, cbor_map_handle(it)[i].value);
			put(b, ",");
		}
		put(b, "}");
		break;
	case CBOR_TYPE_TAG: {
		cbor_item_t *x = cbor_tag_item(it);
		put(b, "#%llu(", (unsigned long long)cbor_tag_value(it));
		desc_cbor(b, x);
		put(b, ")");
		cbor_decref(&x);
		break;
	}
	case CBOR_TYPE_FLOAT_CTRL: /* meta.c reads none: only its place matters */
		put(b, "x");
		break;
	}
}

static int bad_skips;

static const struct ct_node *desc_ct(struct buf *b, const struct ct_node *n)
{
	const struct ct_node *c = n + 1;
	switch (n->major) {
	case CB_UINT:
		put(b, "u%llu", (unsigned long long)n->v);
		break;
	case CB_NEGINT:
		put(b, "n%llu", (unsigned long long)n->v);
		break;
	case CB_BYTES:
	case CB_TEXT:
		put_bytes(b, n->major == CB_BYTES ? 'b' : 't', n->indef, n->p, n->v);
		break;
	case CB_ARRAY:
	case CB_MAP:
		put(b, n->major == CB_ARRAY ? "[" : "{");
		if (n->indef)
			put(b, "_");
		for (uint64_t i = 0; i < n->v; i++) {
			c = desc_ct(b, c);
			if (n->major == CB_MAP) {
				put(b, ":");
				c = desc_ct(b, c);
			}
			put(b, ",");
		}
		put(b, n->major == CB_ARRAY ? "]" : "}");
		break;
	case CB_TAG:
		put(b, "#%llu(", (unsigned long long)n->v);
		c = desc_ct(b, c);
		put(b, ")");
		break;
	default:
		put(b, "x");
	}
	bad_skips += c != ct_next(n);
	return ct_next(n);
}

static int same_item(cbor_item_t *it, const struct ct_node *n)
{
	struct buf a = {0}, b = {0};
	desc_cbor(&a, it);
	desc_ct(&b, n);
	int same = !a.oom && !b.oom && a.len == b.len && !memcmp(a.data, b.data, a.len);
	buf_free(&a);
	buf_free(&b);
	return same;
}

/* ------------------------------------------------------ meta.c's lookups agree */
static const char *const meta_keys[] = {
	"producer", "producer_version", "hostname", "kernel", "arch", "clock", "ncpus", "wall_offset_ns",
	"cmdline", "types", "id", "fields", "name", "system", "kind", "cpu", "pid", "tid", "k", "type", "ts",
	"comm", "start", "end", "pgoff", "path", "build_id", "syms", "stream", "count", "from", "to", "kv", "",
};

static int same_lookup(cbor_item_t *m, const struct ct_node *n, const char *key)
{
	cbor_item_t *a = ref_map_get(m, key);
	const struct ct_node *b = ct_map_get(n, key);
	return a ? b && same_item(a, b) : !b;
}

/* Every lookup meta.c makes, on it and on each item below it. */
static int same_answers(cbor_item_t *it, const struct ct_node *n)
{
	int ok1 = 1, ok2 = 1, same = ref_int(it, &ok1) == ct_int(n, &ok2) && ok1 == ok2;
	/* strings, text or bytes (format 1.1): meta.c copies whole ones, and
	 * cuts others to a buffer */
	const unsigned char *sh = NULL;
	size_t sl = 0;
	int is_str = 0;
	if (ref_is_text(it)) {
		is_str = 1;
		sh = cbor_string_handle(it);
		sl = cbor_string_length(it);
	} else if (cbor_isa_bytestring(it) && cbor_bytestring_is_definite(it)) {
		is_str = 1;
		sh = cbor_bytestring_handle(it);
		sl = cbor_bytestring_length(it);
	}
	char *s = ct_strdup(n);
	same &= is_str ? s && (!sl || !memcmp(s, sh, sl)) && !s[sl] : !s;
	free(s);
	for (size_t cap = 1; cap <= 16; cap += 5) {
		char d[16];
		memset(d, 'x', sizeof(d));
		ct_strcpy(n, d, cap);
		size_t k = sl < cap ? sl : cap - 1;
		same &= !d[k] && (!k || !memcmp(d, sh, k));
	}
	/* build ids: a definite byte string's bytes */
	same &= (cbor_isa_bytestring(it) && cbor_bytestring_is_definite(it)) ==
		(ct_is(n, CB_BYTES) && !n->indef);
	if (cbor_isa_map(it)) {
		for (size_t i = 0; i < sizeof(meta_keys) / sizeof(*meta_keys); i++)
			same &= same_lookup(it, n, meta_keys[i]);
		const struct ct_node *c = n + 1;
		for (size_t i = 0; i < cbor_map_size(it); i++) {
			cbor_item_t *k = cbor_map_handle(it)[i].key;
			if (ref_is_text(k) && cbor_string_length(k) < 64) {
				char key[64];
				memcpy(key, cbor_string_handle(k), cbor_string_length(k));
				key[cbor_string_length(k)] = 0;
				same &= same_lookup(it, n, key);
			}
			same &= same_answers(k, c);
			c = ct_next(c);
			same &= same_answers(cbor_map_handle(it)[i].value, c);
			c = ct_next(c);
		}
	} else if (cbor_isa_array(it)) {
		const struct ct_node *c = n + 1;
		for (size_t i = 0; i < cbor_array_size(it); i++, c = ct_next(c))
			same &= same_answers(cbor_array_handle(it)[i], c);
	} else if (cbor_isa_tag(it)) {
		cbor_item_t *x = cbor_tag_item(it);
		same &= same_answers(x, n + 1);
		cbor_decref(&x);
	}
	return same;
}

#endif
