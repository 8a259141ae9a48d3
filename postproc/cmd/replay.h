/* replay — the private contract between tracepp replay's two halves:
 * cmd_replay.c follows the flow (which calls, returns and kernel events
 * make a line, and when); replay_text.c writes the lines to r->o as text,
 * JSON or CSV, without printf.
 *
 * rp_text_init() once, before any line. A line goes out either through
 * r->emit (any struct line; the caller counts it in r->nlines, which JSON
 * and CSV read to begin their output) or, for a call line with nothing but
 * its name, through rp_text_call / text_call_ready, which count it
 * themselves and return -1 when it must take r->emit instead. The text
 * columns keep r->ts_pre and each thread's label current on their own.
 * rp_text_free() releases what was cached for the lines. text_call_ready
 * and what it uses are inline here: the hot return path must call nothing.
 */
#ifndef TPP_REPLAY_H
#define TPP_REPLAY_H
#include <stdint.h>
#include <string.h>
#include "an_cli.h"
#include "out_fast.h"
#include "an_types.h"
#include "an_syms.h"
#include "an_pair.h"
#include "an_lost.h"

/* The first three index struct rp's ftail pieces. */
enum lkind { L_ENTRY, L_EXIT, L_LEAF, L_EVENT, L_ORPHAN, L_SCHED_IN, L_LOST };

struct line {
	enum lkind kind;
	uint64_t ts, dur;
	int has_dur;
	int32_t cpu, tid;
	const char *comm;
	uint32_t depth;
	const char *name;
	size_t name_len;
	struct an_thread *th;
	const struct an_frame *f; /* args */
	int has_ret, ret_signed;
	uint64_t ret;
	const char *ret_text; /* the return value as text (vals.h), when typed */
	size_t ret_text_len;
	uint32_t flags;
	const struct tpp_event *ev;
	uint64_t lost; /* L_LOST: events lost from ts for dur */
};

struct rp {
	struct acli *c;
	struct ofast *o;
	const struct an_types *ty;
	struct an_syms *syms;
	struct an_pair *pair;
	struct an_pair_hot *hot; /* pair's, for feed's inline common cases */
	const char *func;   /* --func */
	uint32_t func_id;   /* resolved lazily by name */
	uint32_t max_depth; /* 0 = all */
	uint64_t min_dur;
	int no_kernel, fmt;
	int want_wall;      /* --clock=wall */
	uint64_t nlines;
	void (*emit)(struct rp *r, const struct line *l);
	int err;
	/* Uprobe entries' arguments as text ("path=\"/etc\", flags=0"), kept
	 * from the event until the call's line is printed: a frame's node is
	 * its slot + 1. Slots are reused, so steady state allocates nothing. */
	struct utext {
		char *s;
		size_t len, cap;
		uint32_t next_free;
	} *ut;
	size_t nut, caput;
	uint32_t ut_free; /* slot + 1, 0 = none */
	/* The file's lost records, each printed where its stream's events
	 * went missing (L_LOST lines, of lost_th: no task of its own). */
	struct an_lost lq;
	struct an_thread lost_th;
	struct an_dwarf *dw; /* --srcline */
	int want_srcline;
	const struct an_thread *w_th; /* wanted(): last thread asked, its answer */
	int w_val;
	/* w_th when it is wanted and lines are plain: on_exit_'s fast way */
	const struct an_thread *plain_th;
	int fast_text;      /* text without --srcline: call lines from ftail */
	int plain;          /* fast_text, and no --func, --depth, --min-duration */
	int named;          /* compiled-in entries carry named arguments (-A) */
	/* The line prefix "S.mmmuuu" of the last timestamp printed: lines come
	 * tens of ns apart, so most share it and only the ns digits change. */
	uint64_t t0;        /* the first event's time: lines show time since */
	const struct tpp_clock *wall; /* --clock=wall: lines show wall-clock UTC */
	uint64_t ts_us;
	uint64_t ts_base;   /* t0 + ts_us * 1000: where ts_us begins, event time */
	uint32_t ts_pre_len;
	char ts_pre[32];
	/* Per function id: the ends of its call lines (leaf, entry and exit
	 * forms) rendered once, padded so they are copied in 16-byte pieces. */
	struct ftail {
		char *s[3];  /* by enum lkind: L_ENTRY, L_EXIT, L_LEAF */
		uint32_t len[3];
	} *ft;
	size_t nft;
};

/* ---- the lines (replay_text.c) */

void rp_text_init(void);
void rp_text_free(struct rp *r);
/* "S.mmmuuu" of us microseconds (seconds unpadded) into r->ts_pre. */
void rp_ts_prefix(struct rp *r, uint64_t us);
/* The "CPU comm-tid" columns of th's lines, into th->label. */
void rp_label(struct an_thread *th, int32_t cpu);
/* A call line with nothing but the function's name (no arguments, return
 * value or flags): most lines of a replay, written from fixed-size pieces.
 * 0, or -1 when it must take the general way. */
int rp_text_call(struct rp *r, struct an_thread *th, const struct an_frame *f,
		 enum lkind kind, uint64_t ts, uint64_t dur, uint32_t depth);
/* The r->emit of each --format. */
void rp_text_line(struct rp *r, const struct line *l);
void rp_json_line(struct rp *r, const struct line *l);
/* The marks of an unmatched call (enum an_call_flags) as JSON members, each
 * after a comma: ,"noret":true ... — the names replay's JSON and export's
 * Chrome args share. With first set, the first member comes without its
 * comma (it opens an object). Returns how many were written. */
#define RP_CALL_MARKS (AN_CALL_NORET | AN_CALL_UNWOUND | AN_CALL_EXCEPTION | AN_CALL_SUSPENDED | AN_CALL_TAIL | AN_CALL_RESUMED)
int rp_json_marks(struct ofast *o, uint32_t flags, int first);
void rp_csv_line(struct rp *r, const struct line *l);

/* ---- inline, for text_call_ready */

/* Three decimal digits per lookup, [3] = how many are significant: the
 * timestamp and duration columns are most of the text written, and chains
 * of divisions by 10 showed in profiles. Filled by rp_text_init(). */
extern char rp_d3[1000][4];
/* Durations under 1 us, the most common, as their column and " | ". */
extern char rp_dur_ns[1000][16];
/* Indents and padding are copied from it in fixed-size pieces. */
static const char spaces[32] = "                                ";

/* The duration column, 11 wide, right-aligned, into p; returns the end. */
char *rp_put_dur_col(char *p, uint64_t ns, int has);

/* The duration column and the " | " after it; returns the end. */
static inline char *put_dur(char *p, uint64_t ns, int has)
{
	if (has && ns < 1000) {
		memcpy(p, rp_dur_ns[ns], 16);
		return p + 14;
	}
	p = rp_put_dur_col(p, ns, has);
	memcpy(p, " | ", 3);
	return p + 3;
}

/* Room text_prefix needs: timestamp 32, label 40, duration 32 (+16 in colour), indent 512
 * and the 32 one indent piece may write past it. */
#define PREFIX_ROOM (32 + 40 + 32 + 16 + 512 + 32) /* 16: a duration's colour */

/* The columns of a text line and its indent at p (with PREFIX_ROOM bytes
 * of room), with r->ts_pre and th's label up to date for the line's time
 * (ns3 its nanoseconds past r->ts_base) and CPU; returns the end. */
static inline __attribute__((always_inline)) char *
text_cols(const struct rp *r, char *p, const struct an_thread *th, uint64_t ns3,
	  uint64_t dur, int has_dur, uint32_t depth)
{
	/* "S.NNNNNNNNN ": the prefix to the microsecond, then three digits */
	memcpy(p, r->ts_pre, sizeof(r->ts_pre));
	p += r->ts_pre_len;
	memcpy(p, rp_d3[ns3], 4);
	p[3] = ' ';
	p += 4;
	memcpy(p, th->label, sizeof(th->label));
	p += th->label_len;
	p = put_dur(p, dur, has_dur);
	uint32_t ind = 2 * (depth < 256 ? depth : 256);
	/* the first piece unconditionally: most lines are less deep */
	memcpy(p, spaces, 32);
	for (uint32_t k = 32; k < ind; k += 32)
		memcpy(p + k, spaces, 32);
	return p + ind;
}

/* rp_text_call for the line of a return of r->plain_th (its label rendered)
 * when nothing has to be rendered or flushed first and the duration is
 * under 1 us: it calls nothing, so its caller saves no registers. 0, or -1
 * when rp_text_call must do it. */
static inline __attribute__((always_inline)) int
text_call_ready(struct rp *r, const struct an_thread *th, const struct an_frame *f,
		enum lkind kind, uint64_t ts, uint64_t dur, uint32_t depth)
{
	uint32_t id = f->func;
	uint64_t ns3 = ts - r->ts_base; /* modulo 2^64, like ts - t0 */
	if (id >= r->nft || !r->ft[id].s[0] || ns3 >= 1000 || dur >= 1000 ||
	    th->cpu != th->label_cpu)
		return -1;
	const struct ftail *t = &r->ft[id];
	struct ofast *o = r->o;
	uint32_t n = t->len[kind];
	if (o->len + PREFIX_ROOM + n + 16 > sizeof(o->buf))
		return -1;
	char *p = text_cols(r, o->buf + o->len, th, ns3, dur, 1, depth);
	const char *s = t->s[kind];
	/* the first piece unconditionally: n is 3 or more */
	memcpy(p, s, 16);
	for (uint32_t k = 16; k < n; k += 16)
		memcpy(p + k, s + k, 16);
	o->len = (size_t)(p + n - o->buf);
	r->nlines++;
	return 0;
}

#endif
