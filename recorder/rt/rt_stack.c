/* The per-thread shadow stack: what was entered and not yet left. It decides
 * what is recorded (filters, depth, minimum duration) and turns frames that
 * were skipped (longjmp, exceptions, tail calls) into unwind records, with
 * the reason, instead of exits that never happened. */
#include <link.h>
#include <sys/stat.h>

#include "rt_int.h"


int rt_plain;
static const struct tpp_rt_filter *rt_filt;
static uint32_t rt_nfilt;
static uint64_t rt_bias;

static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1; /* the first object is the main program */
}

void rt_filters_init(void)
{
	struct tpp_rt_hdr *h = rt_hdr;
	struct stat st;
	rt_plain = !h->max_depth && !h->min_ticks && rt_clock_tsc;
	if ((!h->nfilter && !h->nargspec) || stat("/proc/self/exe", &st) || st.st_dev != h->exe_dev ||
	    st.st_ino != h->exe_ino)
		return;
	dl_iterate_phdr(main_bias, &rt_bias);
	rt_filt = (const struct tpp_rt_filter *)((const char *)h + h->filter_off);
	rt_nfilt = h->nfilter > TPP_RT_FILTER_MAX ? TPP_RT_FILTER_MAX : h->nfilter;
	if (rt_nfilt)
		rt_plain = 0;
	rt_args_init(rt_bias);
}

long rt_range_find(const void *tab, size_t stride, uint32_t n, uint64_t a)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const uint64_t *r = (const uint64_t *)((const char *)tab + (size_t)mid * stride);
		if (a < r[0])
			hi = mid;
		else if (a >= r[1])
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

static uint32_t filter_flags(uint64_t addr)
{
	long i = rt_range_find(rt_filt, sizeof(*rt_filt), rt_nfilt, addr - rt_bias);
	return i < 0 ? 0 : rt_filt[i].kind == 2 ? RT_F_HIDE : RT_F_ONLY;
}

void rt_set_limit(struct rt_thread *t)
{
	t->limit = t->dead || !rt_plain || !t->chunk ? 0 : t->cap;
}

/* Counted where the thread's stream will show it: in the next chunk's
 * header, or in the descriptor at its end. */
void rt_count_lost(struct rt_thread *t, uint64_t ts, int cut)
{
	struct tpp_rt_thread *d = t->slot;
	if (t->dead || !d)
		return;
	t->pend_cut |= (uint32_t)cut;
	if (!t->pend_lost++)
		t->pend_from = ts;
	d->lost_from = t->pend_from;
	d->lost_to = ts;
	__atomic_store_n(&d->lost, d->lost + 1, __ATOMIC_RELEASE);
}

int rt_emit_slow(struct rt_thread *t, uint64_t ts, uint64_t word)
{
	if (t->dead || !t->slot)
		return 0;
	if (!t->chunk || t->head >= t->cap) {
		if (!rt_sse_call(rt_next_chunk, t)) {
			if ((unsigned)(word >> TPP_RT_KIND_SHIFT) == TPP_RT_DATA) {
				/* an -A value is not an event: counted apart */
				t->pend_cut = 1;
				__atomic_fetch_add(&rt_hdr->data_lost, 1, __ATOMIC_RELAXED);
			} else {
				rt_count_lost(t, ts, 1);
			}
			return 0;
		}
	}
	uint64_t h = t->head;
	struct tpp_rt_rec *r = &t->recs[h];
	r->ts = ts;
	r->word = word;
	t->head = h + 1;
	__atomic_store_n(t->used, h + 1, __ATOMIC_RELEASE);
	return 1;
}

/* With a minimum duration, entries wait until their call proves long enough;
 * a long call proves its callers long too, so their entries go out first,
 * oldest first, keeping the stream in time order. */
static int entry_pending(uint32_t fl)
{
	return (fl & (RT_F_WANT | RT_F_EMITTED | RT_F_LOST)) == RT_F_WANT;
}
/* After an attempt to write f's entry. */
static void entry_written(struct rt_frame *f, int ok)
{
	f->flags |= ok ? RT_F_EMITTED : RT_F_LOST;
}

static void emit_pending(struct rt_thread *t, int upto)
{
	int i = upto;
	while (i > 0 && (entry_pending(t->stack[i - 1].flags) || (t->stack[i - 1].flags & RT_F_LOST)))
		i--;
	for (; i <= upto; i++) {
		struct rt_frame *f = &t->stack[i];
		if (entry_pending(f->flags))
			entry_written(f, rt_emit(t, f->ts, f->addr, TPP_RT_ENTRY));
	}
}

static void grave_add(struct rt_thread *t, uintptr_t sp, uintptr_t ret)
{
	if (!t->grave)
		return;
	t->grave[t->ngrave++ % RT_GRAVE] = (struct rt_grave){sp, ret};
}

uintptr_t rt_grave_find(struct rt_thread *t, uintptr_t sp)
{
	if (!t->grave)
		return 0;
	uint32_t n = t->ngrave < RT_GRAVE ? t->ngrave : RT_GRAVE;
	for (uint32_t k = 1; k <= n; k++) {
		struct rt_grave *g = &t->grave[(t->ngrave - k) % RT_GRAVE];
		if (g->sp == sp)
			return g->ret;
	}
	return 0;
}

void rt_pop_emit(struct rt_thread *t, uint64_t ts, int kind, unsigned why)
{
	struct rt_frame *f = &t->stack[--t->depth];
	if (f->flags & RT_F_ONLY)
		t->only_depth--;
	if (kind == TPP_RT_UNWIND && (f->flags & RT_F_HIJACKED))
		grave_add(t, f->sp, f->ret);
	if (t->nested)
		return; /* inside a hook interrupted by a signal: bookkeeping only */
	if (kind == TPP_RT_EXIT && entry_pending(f->flags) && ts - f->ts >= rt_hdr->min_ticks)
		emit_pending(t, t->depth);
	if (f->flags & RT_F_EMITTED) {
		if (kind == TPP_RT_EXIT && (f->flags >> RT_F_SPEC_SHIFT) && t->ret_rax)
			rt_args_exit(t, (int)(f->flags >> RT_F_SPEC_SHIFT) - 1, *t->ret_rax);
		rt_emit(t, ts, f->addr | (uint64_t)why << TPP_RT_WHY_SHIFT, (unsigned)kind);
	} else if (f->flags & RT_F_LOST) {
		rt_count_lost(t, ts, 0);
	}
}

void rt_unwind_below(struct rt_thread *t, uintptr_t sp, uint64_t ts, unsigned why)
{
	while (t->depth && t->stack[t->depth - 1].sp < sp)
		rt_pop_emit(t, ts, TPP_RT_UNWIND, why);
}

void rt_announce_inherited(struct rt_thread *t)
{
	t->inherit = 0;
	for (int i = 0; i < t->depth; i++) {
		struct rt_frame *f = &t->stack[i];
		if ((f->flags & RT_F_EMITTED) &&
		    !rt_emit(t, t->fork_ts, f->addr | (uint64_t)TPP_RT_WHY_INHERIT << TPP_RT_WHY_SHIFT, TPP_RT_ENTRY))
			f->flags = (f->flags & ~(uint32_t)RT_F_EMITTED) | RT_F_LOST;
	}
}

long rt_ready(void *v)
{
	struct rt_thread *t = v;
	if (!t->slot && !(rt_hdr && rt_claim(t)))
		return 0;
	if (t->inherit)
		rt_announce_inherited(t);
	return 1;
}

/* Frames the new one replaces are popped by the caller, which knows how
 * its hook family orders stack pointers. */
int rt_push(struct rt_thread *t, uint64_t addr, uintptr_t sp, uintptr_t ret, uint64_t ts, const uint64_t *gpr,
	    uintptr_t cfa)
{
	if (t->depth >= RT_STACK_MAX)
		return 0;
	struct rt_frame *f = &t->stack[t->depth++];
	uint32_t fl = rt_nfilt ? filter_flags(addr) : 0;
	f->addr = addr;
	f->sp = sp;
	f->ret = ret;
	f->ts = ts;
	if (fl & RT_F_ONLY)
		t->only_depth++;
	const struct tpp_rt_hdr *h = rt_hdr;
	if (!(fl & RT_F_HIDE) && (!h->has_only || t->only_depth > 0 || !rt_nfilt) &&
	    (!h->max_depth || t->depth <= h->max_depth)) {
		fl |= RT_F_WANT;
		/* -A: values first, then the entry they belong to; with a
		 * minimum duration entries wait, and their values are not kept */
		int spec = rt_nargspec && !h->min_ticks ? rt_args_find(addr) : -1;
		if (spec >= 0) {
			rt_args_entry(t, spec, gpr, cfa);
			fl |= (uint32_t)(spec + 1) << RT_F_SPEC_SHIFT;
		}
		if (!h->min_ticks)
			fl |= rt_emit(t, ts, addr, TPP_RT_ENTRY) ? RT_F_EMITTED : RT_F_LOST;
	}
	f->flags = fl;
	return 1;
}
