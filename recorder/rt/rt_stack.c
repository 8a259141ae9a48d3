/* The per-thread shadow stack: what was entered and not yet left. It decides
 * what is recorded (filters, depth, minimum duration) and turns frames that
 * were skipped (longjmp, exceptions) into unwind records instead of exits
 * that never happened. */
#include <link.h>
#include <sys/stat.h>

#include "rt_int.h"

#pragma GCC target("general-regs-only") /* hooks must not clobber the traced code's SSE registers */

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
	if (!h->nfilter || stat("/proc/self/exe", &st) || st.st_dev != h->exe_dev || st.st_ino != h->exe_ino)
		return;
	dl_iterate_phdr(main_bias, &rt_bias);
	rt_filt = (const struct tpp_rt_filter *)((const char *)h + h->filter_off);
	rt_nfilt = h->nfilter > TPP_RT_FILTER_MAX ? TPP_RT_FILTER_MAX : h->nfilter;
}

static uint32_t filter_flags(uint64_t addr)
{
	uint64_t a = addr - rt_bias;
	uint32_t lo = 0, hi = rt_nfilt;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (a < rt_filt[mid].lo)
			hi = mid;
		else if (a >= rt_filt[mid].hi)
			lo = mid + 1;
		else
			return rt_filt[mid].kind == 2 ? RT_F_HIDE : RT_F_ONLY;
	}
	return 0;
}

static inline int emit(struct rt_thread *t, uint64_t ts, uint64_t addr, unsigned kind)
{
	struct tpp_rt_slot *s = t->slot;
	uint64_t h = s->head;
	if (h - t->tail_cache > t->mask) {
		t->tail_cache = __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE);
		if (h - t->tail_cache > t->mask) {
			s->lost++;
			return 0;
		}
	}
	if (__builtin_expect(!(h & (RT_POP_RECS - 1)), 0))
		rt_populate(t, h);
	struct tpp_rt_rec *r = &t->recs[h & t->mask];
	r->ts = ts;
	r->word = (addr & TPP_RT_ADDR_MASK) | ((uint64_t)kind << TPP_RT_KIND_SHIFT);
	__atomic_store_n(&s->head, h + 1, __ATOMIC_RELEASE);
	return 1;
}

/* With a minimum duration, entries wait until their call proves long enough;
 * a long call proves its callers long too, so their entries go out first,
 * oldest first, keeping the stream in time order. */
static void emit_pending(struct rt_thread *t, int upto)
{
	int i = upto;
	while (i > 0 && (t->stack[i - 1].flags & (RT_F_WANT | RT_F_EMITTED)) == RT_F_WANT)
		i--;
	for (; i <= upto; i++) {
		struct rt_frame *f = &t->stack[i];
		if ((f->flags & (RT_F_WANT | RT_F_EMITTED)) == RT_F_WANT && emit(t, f->ts, f->addr, TPP_RT_ENTRY))
			f->flags |= RT_F_EMITTED;
	}
}

void rt_pop_emit(struct rt_thread *t, uint64_t ts, int kind)
{
	struct rt_frame *f = &t->stack[--t->depth];
	if (f->flags & RT_F_ONLY)
		t->only_depth--;
	if (t->busy > 1)
		return; /* inside a hook interrupted by a signal: bookkeeping only */
	if (kind == TPP_RT_EXIT && (f->flags & (RT_F_WANT | RT_F_EMITTED)) == RT_F_WANT &&
	    ts - f->ts >= rt_hdr->min_ticks)
		emit_pending(t, t->depth);
	if (f->flags & RT_F_EMITTED)
		emit(t, ts, f->addr, (unsigned)kind);
}

int rt_push(struct rt_thread *t, uint64_t addr, uintptr_t sp, uintptr_t ret, uint64_t ts)
{
	/* Frames at or below the new one are dead: a longjmp or an exception
	 * left them without returning. */
	while (t->depth && t->stack[t->depth - 1].sp <= sp)
		rt_pop_emit(t, ts, TPP_RT_UNWIND);
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
		if (!h->min_ticks && emit(t, ts, addr, TPP_RT_ENTRY))
			fl |= RT_F_EMITTED;
	}
	f->flags = fl;
	return 1;
}
