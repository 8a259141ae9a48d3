/* Call pairing (an_pair), the one place calls are paired: hand-built call
 * trees whose every duration, depth and flag is known by construction,
 * fed as the compiled-in runtime writes them (func_entry/func_exit by
 * address) and as uprobes do (entries and returns told apart by the stack
 * pointer): nesting, self time, a longjmp over frames, a return without
 * its entry, calls left open at the end, a uprobe return that was lost. */
#include <string.h>

#include "tpp_test.h"
#include "../../postproc/analysis/an_pair.h"

enum { T_FENTRY = 1, T_FEXIT, T_UENTRY, T_URET };

struct rec {
	uint64_t addr, entry, exit, dur, self;
	uint32_t depth, flags;
};
struct log {
	struct rec r[64];
	int n, orphans;
};

static void on_exit_(void *ctx, struct an_thread *th, const struct an_call *c, const struct tpp_event *ev)
{
	(void)ev;
	struct log *l = ctx;
	if (l->n < 64)
		l->r[l->n++] = (struct rec){th->st[th->depth - 1].addr, c->entry_ts, c->exit_ts, c->dur,
					    c->self, c->depth, c->flags};
}

static void on_orphan(void *ctx, struct an_thread *th, uint32_t func, const struct tpp_event *ev)
{
	(void)th, (void)func, (void)ev;
	((struct log *)ctx)->orphans++;
}

static const struct an_pair_ops ops = {NULL, on_exit_, on_orphan};

/* The classification an_types_init would make of a file with the four
 * types: v[0] is the address (runtime) or the stack pointer (uprobes). */
static void types(struct an_types *ty)
{
	memset(ty, 0, sizeof(*ty));
	for (int t = 0; t < TPP_MAX_TYPES; t++)
		memset(ty->t[t].f, -1, sizeof(ty->t[t].f));
	ty->t[T_FENTRY].kind = AN_FENTRY;
	ty->t[T_FEXIT].kind = AN_FEXIT;
	ty->t[T_FENTRY].f[R_ADDR] = ty->t[T_FEXIT].f[R_ADDR] = 0;
	ty->t[T_UENTRY].kind = AN_UENTRY;
	ty->t[T_URET].kind = AN_URET;
	ty->t[T_UENTRY].f[R_SP] = ty->t[T_URET].f[R_SP] = 0;
	ty->has[AN_FENTRY] = ty->has[AN_FEXIT] = ty->has[AN_UENTRY] = ty->has[AN_URET] = 1;
}

static struct an_types ty;

static void feed(struct an_pair *p, int type, uint64_t ts, uint64_t v0)
{
	struct tpp_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.ts = ts;
	ev.cpu = -1;
	ev.tid = 42;
	ev.type = (uint16_t)type;
	ev.nvals = 1;
	ev.v[0].u = v0;
	int err = 0;
	an_pair_feed(p, &ev, &err);
	CHECK(err == 0, "feed: %d", err);
}

static struct an_pair *open_pair(struct an_syms **sy, struct log *l)
{
	struct an_pair *p = NULL;
	memset(l, 0, sizeof(*l));
	CHECK(an_syms_open(sy, NULL) == 0, "syms");
	CHECK(an_pair_open(&p, &ty, *sy, NULL, &ops, l) == 0, "open");
	return p;
}

static void close_pair(struct an_pair *p, struct an_syms *sy)
{
	an_pair_close(p);
	an_syms_close(sy);
}

/* The call of addr in the log, or NULL. */
static const struct rec *call(const struct log *l, uint64_t addr)
{
	for (int i = 0; i < l->n; i++)
		if (l->r[i].addr == addr)
			return &l->r[i];
	return NULL;
}

#define A 0xa0
#define B 0xb0
#define C 0xc0
#define M 0x10

static void nested(void)
{
	/* main(10..100) { a(20..60) { b(30..50) } c(70..90) } */
	struct an_syms *sy;
	struct log l;
	struct an_pair *p = open_pair(&sy, &l);
	feed(p, T_FENTRY, 10, M);
	feed(p, T_FENTRY, 20, A);
	feed(p, T_FENTRY, 30, B);
	feed(p, T_FEXIT, 50, B);
	feed(p, T_FEXIT, 60, A);
	feed(p, T_FENTRY, 70, C);
	feed(p, T_FEXIT, 90, C);
	feed(p, T_FEXIT, 100, M);
	an_pair_finish(p);
	CHECK(l.n == 4, "%d calls", l.n);
	const struct rec *m = call(&l, M), *a = call(&l, A), *b = call(&l, B), *c = call(&l, C);
	CHECK(m && a && b && c, "every call closed");
	if (m && a && b && c) {
		CHECK(b->dur == 20 && b->self == 20 && b->depth == 2 && !b->flags, "b %llu %llu %u", (unsigned long long)b->dur, (unsigned long long)b->self, b->depth);
		CHECK(a->dur == 40 && a->self == 20 && a->depth == 1 && !a->flags, "a %llu %llu", (unsigned long long)a->dur, (unsigned long long)a->self);
		CHECK(c->dur == 20 && c->depth == 1, "c");
		CHECK(m->dur == 90 && m->self == 30 && m->depth == 0 && !m->flags, "main %llu %llu", (unsigned long long)m->dur, (unsigned long long)m->self);
		CHECK(l.r[0].addr == B && l.r[3].addr == M, "closed innermost first");
	}
	struct an_pair_stats st;
	an_pair_stats(p, &st);
	CHECK(st.entries == 4 && st.returns == 4 && st.calls == 4 && !st.orphans && !st.noret && !st.unwound,
	      "stats %llu %llu %llu", (unsigned long long)st.entries, (unsigned long long)st.returns, (unsigned long long)st.calls);
	close_pair(p, sy);
}

static void longjmp_orphan_noret(void)
{
	/* a(10) { b(20) { c(30) ...longjmp back into a... } } a returns at 60:
	 * c and b are left unwound at 60, a paired. Then a return of B with
	 * nothing open (its entry before the recording): an orphan. Then C
	 * entered at 80 and never returned: closed at its last event. */
	struct an_syms *sy;
	struct log l;
	struct an_pair *p = open_pair(&sy, &l);
	feed(p, T_FENTRY, 10, A);
	feed(p, T_FENTRY, 20, B);
	feed(p, T_FENTRY, 30, C);
	feed(p, T_FEXIT, 60, A);
	feed(p, T_FEXIT, 70, B);
	feed(p, T_FENTRY, 80, C);
	an_pair_finish(p);
	CHECK(l.n == 4, "%d calls", l.n);
	if (l.n == 4) {
		CHECK(l.r[0].addr == C && l.r[0].flags == AN_CALL_UNWOUND && l.r[0].exit == 60, "c unwound");
		CHECK(l.r[1].addr == B && l.r[1].flags == AN_CALL_UNWOUND && l.r[1].dur == 40, "b unwound");
		CHECK(l.r[2].addr == A && l.r[2].flags == 0 && l.r[2].dur == 50, "a paired");
		CHECK(l.r[3].addr == C && l.r[3].flags == AN_CALL_NORET && l.r[3].entry == 80, "c left open");
	}
	CHECK(l.orphans == 1, "%d orphans", l.orphans);
	struct an_pair_stats st;
	an_pair_stats(p, &st);
	CHECK(st.orphans == 1 && st.noret == 1 && st.unwound == 2, "stats");
	close_pair(p, sy);
}

static void uprobes(void)
{
	/* uprobes carry the stack pointer: an entry at sp, its return at sp + 8
	 * (the return address popped). f at 0x1000 calls g at 0xf00 (returns),
	 * then h at 0xf00 whose return was lost, then k at 0xf00: h was left
	 * (a frame entered at the new entry's own sp has returned), f returns. */
	struct an_syms *sy;
	struct log l;
	struct an_pair *p = open_pair(&sy, &l);
	feed(p, T_UENTRY, 100, 0x1000);
	feed(p, T_UENTRY, 110, 0xf00);
	feed(p, T_URET, 130, 0xf08);
	feed(p, T_UENTRY, 140, 0xf00);
	feed(p, T_UENTRY, 160, 0xf00);
	feed(p, T_URET, 170, 0xf08);
	feed(p, T_URET, 200, 0x1008);
	an_pair_finish(p);
	CHECK(l.n == 4, "%d calls", l.n);
	if (l.n == 4) {
		CHECK(l.r[0].entry == 110 && l.r[0].dur == 20 && !l.r[0].flags && l.r[0].depth == 1, "g");
		CHECK(l.r[1].entry == 140 && l.r[1].flags == AN_CALL_UNWOUND, "h left: flags %u", l.r[1].flags);
		CHECK(l.r[2].entry == 160 && l.r[2].dur == 10 && !l.r[2].flags, "k");
		CHECK(l.r[3].entry == 100 && l.r[3].dur == 100 && !l.r[3].flags && l.r[3].depth == 0, "f");
	}
	CHECK(l.orphans == 0, "%d orphans", l.orphans);
	close_pair(p, sy);
}

int main(void)
{
	types(&ty);
	nested();
	longjmp_orphan_noret();
	uprobes();
	TEST_DONE();
}
