/* sc_vm — the bytecode interpreter: registers in a local array, one
 * indirect jump per instruction (GNU computed goto), fields read straight
 * from the decoder's column arrays. */
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sc_int.h"

/* A while loop may turn this many times per probe firing: an endless one
 * would otherwise hang the analysis (the kernel's verifier keeps bpftrace
 * from running one at all). */
#define LOOP_MAX (1u << 24)

static int fail(struct sc_rt *rt, int e, const char *msg)
{
	if (!rt->err) {
		rt->err = e;
		snprintf(rt->errmsg, sizeof(rt->errmsg), "%s", msg);
	}
	return e;
}

static inline uint64_t *put(struct sc_rt *rt, struct sc_mapdef *d, const uint64_t *key)
{
	uint64_t *v = sc_map_put_fast(&d->m, key);
	if (!v)
		fail(rt, -ENOMEM, "out of memory for map entries");
	return v;
}

static uint64_t mvalue(const struct sc_mapdef *d, const uint64_t *v)
{
	if (!v)
		return 0;
	if (d->kind == MK_AVG)
		return v[0] ? (uint64_t)((int64_t)v[1] / (int64_t)v[0]) : 0;
	return v[0];
}

static void emit_text(struct sc_rt *rt, const char *type, const char *s, size_t n)
{
	if (rt->P->json)
		sc_emit_json_msg(rt, type, s, n);
	else
		sc_emit(rt, s, n);
}

static uint64_t intern(struct sc_rt *rt, const char *s, size_t n)
{
	const struct sc_str *x = sc_intern(rt->P->strs, s, n);
	if (!x)
		fail(rt, -ENOMEM, "out of memory for strings");
	return sc_sv(x);
}

static uint64_t ntop(struct sc_rt *rt, uint64_t v, int is_str)
{
	unsigned char a[16];
	size_t n = 4;
	if (is_str) {
		const struct sc_str *s = sc_vs(v);
		n = s->len;
		if (n == 4 || n == 16)
			memcpy(a, s->s, n);
	} else {
		uint32_t x = (uint32_t)v;
		memcpy(a, &x, 4);
	}
	char t[64];
	if (n == 4 || n == 16)
		inet_ntop(n == 4 ? AF_INET : AF_INET6, a, t, sizeof(t));
	else
		snprintf(t, sizeof(t), "?");
	return intern(rt, t, strlen(t));
}

static uint64_t usym(struct sc_rt *rt, struct sc_thr *t, uint64_t addr)
{
	uint64_t off;
	const char *s = rt->P->names ? tpp_names_sym(rt->P->names, t->pid, addr, &off) : NULL;
	char hex[24];
	if (!s) {
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
		s = hex;
	}
	return intern(rt, s, strlen(s));
}

static int spec_new(struct sc_rt *rt, uint64_t *id)
{
	if (!rt->spec && !(rt->spec = calloc(SC_SPEC_MAX, sizeof(*rt->spec))))
		return fail(rt, -ENOMEM, "out of memory for speculations");
	if (rt->nfree) {
		*id = rt->spec_free[--rt->nfree] + 1;
	} else if (rt->nspec < SC_SPEC_MAX) {
		*id = ++rt->nspec;
	} else {
		rt->spec_full++;
		*id = 0;
		return 0;
	}
	rt->spec[*id - 1].live = 1;
	rt->spec[*id - 1].b.len = 0;
	return 0;
}

static int spec_live(const struct sc_rt *rt, uint64_t id) { return id && id <= rt->nspec && rt->spec[id - 1].live; }

static void spec_end(struct sc_rt *rt, uint64_t id, int commit)
{
	if (!spec_live(rt, id))
		return;
	struct sc_buf *b = &rt->spec[id - 1].b;
	if (commit && b->len) {
		struct sc_buf *save = rt->sink;
		rt->sink = &rt->out;
		sc_emit(rt, b->p, b->len);
		rt->sink = save == b ? &rt->out : save;
	} else if (rt->sink == b) {
		rt->sink = NULL;
	}
	b->len = 0;
	rt->spec[id - 1].live = 0;
	if (!rt->spec_free && !(rt->spec_free = malloc(SC_SPEC_MAX * sizeof(*rt->spec_free))))
		return;
	rt->spec_free[rt->nfree++] = (uint32_t)(id - 1);
}

static struct sc_thr *thr(struct sc_rt *rt, struct sc_ctx *c)
{
	if (!c->thr)
		c->thr = sc_thread(rt, c->tid);
	return c->thr;
}

int sc_exec(struct sc_rt *rt, const struct sc_code *code, struct sc_ctx *ctx, uint64_t *ret)
{
	static const void *const L[OP_NOPS] = {
		[OP_RET] = &&op_ret, [OP_RETV] = &&op_retv, [OP_IMM] = &&op_imm, [OP_CONST] = &&op_const,
		[OP_MOV] = &&op_mov, [OP_FIELD] = &&op_field, [OP_FIELDS] = &&op_field, [OP_TS] = &&op_ts,
		[OP_ELAPSED] = &&op_elapsed, [OP_TID] = &&op_tid, [OP_PID] = &&op_pid, [OP_CPU] = &&op_cpu,
		[OP_COMM] = &&op_comm, [OP_FUNC] = &&op_func, [OP_PROBE] = &&op_probe, [OP_ADD] = &&op_add,
		[OP_SUB] = &&op_sub, [OP_MUL] = &&op_mul, [OP_DIVU] = &&op_divu, [OP_DIVS] = &&op_divs,
		[OP_MODU] = &&op_modu, [OP_MODS] = &&op_mods, [OP_AND] = &&op_and, [OP_OR] = &&op_or,
		[OP_XOR] = &&op_xor, [OP_SHL] = &&op_shl, [OP_SHRU] = &&op_shru, [OP_SHRS] = &&op_shrs,
		[OP_NEG] = &&op_neg, [OP_BNOT] = &&op_bnot, [OP_LNOT] = &&op_lnot, [OP_EQ] = &&op_eq, [OP_NE] = &&op_ne,
		[OP_LTU] = &&op_ltu, [OP_LTS] = &&op_lts, [OP_LEU] = &&op_leu, [OP_LES] = &&op_les,
		[OP_SEXT] = &&op_sext, [OP_ZEXT] = &&op_zext, [OP_JMP] = &&op_jmp, [OP_JZ] = &&op_jz,
		[OP_JNZ] = &&op_jnz, [OP_LOOP] = &&op_jmp, [OP_MGET] = &&op_mget, [OP_MSET] = &&op_mset,
		[OP_MADD] = &&op_madd, [OP_MDEL] = &&op_mdel, [OP_COUNT] = &&op_count, [OP_SUM] = &&op_sum,
		[OP_AVG] = &&op_avg, [OP_MIN] = &&op_min, [OP_MAX] = &&op_max, [OP_STATS] = &&op_avg,
		[OP_HIST] = &&op_hist, [OP_LHIST] = &&op_lhist, [OP_SGET] = &&op_sget, [OP_SSET] = &&op_sset,
		[OP_PRINTF] = &&op_printf, [OP_PRINTM] = &&op_printm, [OP_PRINTV] = &&op_printv,
		[OP_CLEAR] = &&op_clear, [OP_ZERO] = &&op_zero, [OP_EXIT] = &&op_exit, [OP_TIME] = &&op_time,
		[OP_STRFTIME] = &&op_ret, [OP_STRN] = &&op_strn, [OP_STRNCMP] = &&op_strncmp, [OP_GLOB] = &&op_glob,
		[OP_USYM] = &&op_usym, [OP_NTOP] = &&op_ntop, [OP_SPEC] = &&op_spec, [OP_SPECULATE] = &&op_speculate,
		[OP_COMMIT] = &&op_commit, [OP_DISCARD] = &&op_discard,
	};
	uint64_t r[SC_MAX_REGS + 1];
	const struct sc_ins *const I = code->ins;
	const struct sc_ins *pc = I;
	struct sc_prog *const P = rt->P;
	const uint64_t *const pool = P->pool;
	uint32_t back = 0;
	uint64_t *v;
	struct sc_mapdef *d;
	rt->sink = &rt->out;
#define NEXT                        \
	do {                        \
		pc++;               \
		goto *L[pc->op];    \
	} while (0)
#define JUMP(t)                     \
	do {                        \
		pc = I + (t);       \
		goto *L[pc->op];    \
	} while (0)
#define A r[pc->a]
#define B r[pc->b]
#define C r[pc->c]
	goto *L[pc->op];
op_ret:
	return rt->err ? rt->err : rt->stop;
op_retv:
	if (ret)
		*ret = A;
	return rt->err ? rt->err : 0;
op_imm:
	A = (uint64_t)(int64_t)(int32_t)pc->x;
	NEXT;
op_const:
	A = pool[pc->x];
	NEXT;
op_mov:
	A = B;
	NEXT;
op_field:
	A = ctx->col[pc->b][ctx->i];
	NEXT;
op_ts:
	A = ctx->ts;
	NEXT;
op_elapsed:
	A = ctx->ts - rt->t0;
	NEXT;
op_tid:
	A = (uint64_t)(int64_t)ctx->tid;
	NEXT;
op_pid:
	A = (uint64_t)(int64_t)thr(rt, ctx)->pid;
	NEXT;
op_cpu:
	A = (uint64_t)(int64_t)ctx->cpu;
	NEXT;
op_comm:
	A = sc_comm_at(rt, thr(rt, ctx), ctx->ts);
	NEXT;
op_func:
	A = ctx->func;
	NEXT;
op_probe:
	A = ctx->probe;
	NEXT;
op_add:
	A = B + C;
	NEXT;
op_sub:
	A = B - C;
	NEXT;
op_mul:
	A = B * C;
	NEXT;
op_divu:
	A = C ? B / C : 0;
	NEXT;
op_divs:
	A = !C ? 0 : (int64_t)C == -1 ? (uint64_t)0 - B : (uint64_t)((int64_t)B / (int64_t)C);
	NEXT;
op_modu:
	A = C ? B % C : 0;
	NEXT;
op_mods:
	A = !C || (int64_t)C == -1 ? 0 : (uint64_t)((int64_t)B % (int64_t)C);
	NEXT;
op_and:
	A = B & C;
	NEXT;
op_or:
	A = B | C;
	NEXT;
op_xor:
	A = B ^ C;
	NEXT;
op_shl:
	A = B << (C & 63);
	NEXT;
op_shru:
	A = B >> (C & 63);
	NEXT;
op_shrs:
	A = (uint64_t)((int64_t)B >> (C & 63));
	NEXT;
op_neg:
	A = (uint64_t)0 - B;
	NEXT;
op_bnot:
	A = ~B;
	NEXT;
op_lnot:
	A = !B;
	NEXT;
op_eq:
	A = B == C;
	NEXT;
op_ne:
	A = B != C;
	NEXT;
op_ltu:
	A = B < C;
	NEXT;
op_lts:
	A = (int64_t)B < (int64_t)C;
	NEXT;
op_leu:
	A = B <= C;
	NEXT;
op_les:
	A = (int64_t)B <= (int64_t)C;
	NEXT;
op_sext:
	A = (uint64_t)((int64_t)(B << (64 - pc->x)) >> (64 - pc->x));
	NEXT;
op_zext:
	A = B & ((1ull << pc->x) - 1);
	NEXT;
op_jmp:
	if (pc->x <= (uint32_t)(pc - I) && ++back > LOOP_MAX)
		return fail(rt, -ELOOP, "a while loop turned 16777216 times in one probe firing: stopped");
	JUMP(pc->x);
op_jz:
	if (!A)
		JUMP(pc->x);
	NEXT;
op_jnz:
	if (A)
		JUMP(pc->x);
	NEXT;
op_mget:
	d = &P->maps[pc->x];
	A = mvalue(d, sc_map_get(&d->m, &B));
	NEXT;
op_mset:
	d = &P->maps[pc->x];
	if (!(v = put(rt, d, &B)))
		return rt->err;
	v[0] = A;
	NEXT;
op_madd:
	d = &P->maps[pc->x];
	if (!(v = put(rt, d, &B)))
		return rt->err;
	v[0] += C;
	A = v[0];
	NEXT;
op_mdel:
	d = &P->maps[pc->x];
	sc_map_del(&d->m, &B);
	NEXT;
op_count:
	d = &P->maps[pc->x];
	if (!(v = put(rt, d, &B)))
		return rt->err;
	v[0]++;
	NEXT;
op_sum:
	d = &P->maps[pc->x];
	if (!(v = put(rt, d, &B)))
		return rt->err;
	v[0] += A;
	NEXT;
op_avg: /* and stats: a count and a total */
	d = &P->maps[pc->x];
	if (!(v = put(rt, d, &B)))
		return rt->err;
	v[0]++;
	v[1] += A;
	NEXT;
op_min:
	d = &P->maps[pc->x];
	if (!(v = put(rt, d, &B)))
		return rt->err;
	if ((int64_t)A < (int64_t)v[0])
		v[0] = A;
	NEXT;
op_max:
	d = &P->maps[pc->x];
	if (!(v = put(rt, d, &B)))
		return rt->err;
	if ((int64_t)A > (int64_t)v[0])
		v[0] = A;
	NEXT;
op_hist:
	d = &P->maps[pc->x];
	if (!(v = put(rt, d, &B)))
		return rt->err;
	v[(int64_t)A < 0 ? 0 : !A ? 1 : 2 + 63 - __builtin_clzll(A)]++;
	NEXT;
op_lhist: {
	d = &P->maps[pc->x];
	if (!(v = put(rt, d, &B)))
		return rt->err;
	int64_t x = (int64_t)A;
	uint64_t nb = (uint64_t)((d->lmax - d->lmin) / d->lstep);
	v[x < d->lmin ? 0 : x >= d->lmax ? nb + 1 : 1 + (uint64_t)((x - d->lmin) / d->lstep)]++;
	NEXT;
}
op_sget: {
	struct sc_thr *t = thr(rt, ctx);
	A = t->self ? t->self[pc->x] : 0;
	NEXT;
}
op_sset: {
	struct sc_thr *t = thr(rt, ctx);
	if (!t->self && !(t->self = calloc(P->nselfs, sizeof(*t->self))))
		return fail(rt, -ENOMEM, "out of memory for self-> variables");
	t->self[pc->x] = A;
	NEXT;
}
op_printf: {
	struct sc_buf *b = &rt->line;
	b->len = 0;
	if (sc_format(rt, b, &P->fmts[pc->x], &B))
		return fail(rt, -ENOMEM, "out of memory formatting printf");
	emit_text(rt, "printf", b->p ? b->p : "", b->len);
	NEXT;
}
op_printm:
	sc_print_map(rt, &P->maps[pc->x], B, C);
	NEXT;
op_printv: {
	struct sc_buf b = {0};
	struct sc_type t = {(uint8_t)(pc->x & 0xff), (uint8_t)(pc->x >> 8 & 0xff), (uint16_t)(pc->x >> 16)};
	sc_value_text(rt, &b, t, A);
	if (P->json) {
		struct sc_buf j = {0};
		sc_buf_put(&j, "{\"type\": \"value\", \"data\": ", 26);
		if (t.t == TY_INT)
			sc_buf_put(&j, b.p ? b.p : "", b.len);
		else
			sc_json_str(rt, &j, b.p ? b.p : "", b.len);
		sc_buf_put(&j, "}\n", 2);
		sc_emit(rt, j.p, j.len);
		free(j.p);
	} else {
		sc_buf_put(&b, "\n", 1);
		sc_emit(rt, b.p, b.len);
	}
	free(b.p);
	NEXT;
}
op_clear:
	sc_map_clear(&P->maps[pc->x].m);
	NEXT;
op_zero: {
	struct sc_map *m = &P->maps[pc->x].m;
	for (uint32_t i = 0; i < m->n; i++) {
		uint64_t *e = sc_map_ent(m, i) + m->nkw;
		if (m->init)
			memcpy(e, m->init, m->vw * sizeof(*e));
		else
			memset(e, 0, m->vw * sizeof(*e));
	}
	NEXT;
}
op_exit:
	rt->stop = 1;
	NEXT;
op_time: {
	struct sc_buf b = {0};
	const struct sc_str *f = sc_vs(pool[pc->x]);
	sc_strftime(rt, &b, f->s, f->len, ctx->ts);
	emit_text(rt, "time", b.p ? b.p : "", b.len);
	free(b.p);
	NEXT;
}
op_strn: {
	const struct sc_str *s = sc_vs(B);
	A = s->len > pc->x ? intern(rt, s->s, pc->x) : B;
	NEXT;
}
op_strncmp:
	A = strncmp(sc_vs(B)->s, sc_vs(C)->s, pc->x) != 0;
	NEXT;
op_glob:
	A = !fnmatch(sc_vs(pool[pc->x])->s, sc_vs(B)->s, 0);
	NEXT;
op_usym:
	A = usym(rt, thr(rt, ctx), B);
	NEXT;
op_ntop:
	A = ntop(rt, B, (int)pc->x);
	NEXT;
op_spec:
	if (spec_new(rt, &A))
		return rt->err;
	NEXT;
op_speculate:
	rt->sink = spec_live(rt, A) ? &rt->spec[A - 1].b : NULL;
	NEXT;
op_commit:
	spec_end(rt, A, 1);
	NEXT;
op_discard:
	spec_end(rt, A, 0);
	NEXT;
#undef NEXT
#undef JUMP
#undef A
#undef B
#undef C
}
