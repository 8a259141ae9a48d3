/* sc_int — the insides of the script engine (script.h), shared by the
 * files of postproc/script/ and by nothing else.
 *
 * The pipeline: sc_lex/sc_parse turn program text into an AST; sc_probe
 * matches each attach point to the file's event types, making one site per
 * (probe, event type); sc_code compiles each site's predicate and body into
 * register bytecode over the event's decoded columns; sc_run feeds the file
 * through sc_vm; sc_map keeps the maps, sc_print prints them the way
 * bpftrace does, sc_fmt formats printf and time.
 *
 * Values are 64-bit words: integers, or the address of an interned string
 * (struct sc_str), so that equal strings are equal words and a map key of
 * strings hashes and compares like one of numbers.
 */
#ifndef TPP_SC_INT_H
#define TPP_SC_INT_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "script.h"
#include "tpp_decode.h"

/* ------------------------------------------------------------ memory */
/* Bump allocation for what lives as long as the program (AST, names). */
struct sc_arena {
	struct sc_blk *head;
};
void *sc_alloc(struct sc_arena *a, size_t n); /* zeroed; NULL on -ENOMEM */
char *sc_strndup(struct sc_arena *a, const char *s, size_t n);
void sc_arena_free(struct sc_arena *a);

/* ----------------------------------------------------------- strings */
struct sc_str {
	uint32_t len, hash;
	char s[]; /* len bytes and a NUL */
};
/* Interned strings: one copy per distinct byte string, never moved or
 * freed before the table, so that any thread may read a handle it was
 * given while another interns. */
struct sc_strtab;
int sc_strtab_new(struct sc_strtab **t);
void sc_strtab_free(struct sc_strtab *t);
/* The handle of s[0..len): NULL on -ENOMEM. Thread-safe. */
const struct sc_str *sc_intern(struct sc_strtab *t, const char *s, size_t len);
/* The same cut at the first NUL, as the kernel's char arrays are read. */
const struct sc_str *sc_intern_c(struct sc_strtab *t, const char *s, size_t len);
static inline uint64_t sc_sv(const struct sc_str *s) { return (uint64_t)(uintptr_t)s; }
static inline const struct sc_str *sc_vs(uint64_t v) { return (const struct sc_str *)(uintptr_t)v; }

/* ------------------------------------------------------------- lexer */
struct sc_pos {
	uint32_t line, col;
};
enum sc_tk {
	TK_EOF, TK_IDENT, TK_INT, TK_STR, TK_MAPV /* @name */, TK_VAR /* $name */, TK_PUNCT,
};
/* Operators and punctuation: the ASCII character for one-character
 * tokens, these for the rest. */
enum sc_op2 {
	P_ARROW = 256, P_EQ, P_NE, P_LE, P_GE, P_AND, P_OR, P_SHL, P_SHR, P_INC, P_DEC,
	P_ADDEQ, P_SUBEQ, P_MULEQ, P_DIVEQ, P_MODEQ, P_ANDEQ, P_OREQ, P_XOREQ, P_SHLEQ, P_SHREQ,
};
struct sc_tok {
	int kind, op;
	const char *p; /* the token's text in the source */
	uint32_t len;
	uint64_t ival;
	char *sval; /* TK_STR: the literal with escapes decoded (arena) */
	uint32_t slen;
	struct sc_pos pos;
};
struct sc_lex {
	const char *src, *p, *end;
	struct sc_pos pos;
	struct sc_arena *arena;
	char *err;
	size_t errlen;
	int failed;
};
void sc_lex_init(struct sc_lex *L, const char *src, size_t len, struct sc_arena *a, char *err, size_t errlen);
/* The next token; on a bad one, TK_EOF with L->failed and the message set. */
struct sc_tok sc_lex_next(struct sc_lex *L);
/* An attach point: the text up to white space, ',', '{' or a predicate's
 * '/' (a uprobe's binary may hold '/'). Empty at the end. */
struct sc_tok sc_lex_attach(struct sc_lex *L);
void sc_lex_skip_space(struct sc_lex *L);
/* "LINE:COL: message" into L's error buffer (first error wins). */
void sc_errat(char *err, size_t errlen, struct sc_pos pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* --------------------------------------------------------------- AST */
enum sc_nk {
	E_INT, E_STR, E_BUILTIN, E_FIELD, E_ARG, E_MAP, E_VAR, E_SELF, E_CALL, E_UN, E_BIN, E_TERN,
	E_CAST, E_ASSIGN, E_INCDEC,
	S_EXPR, S_IF, S_BLOCK, S_UNROLL, S_WHILE, S_RETURN, S_BREAK, S_CONTINUE,
};
enum sc_builtin {
	B_NSECS, B_ELAPSED, B_CPU, B_PID, B_TID, B_COMM, B_FUNC, B_PROBE, B_RETVAL,
	B_UNAVAILABLE, /* names bpftrace knows that a file cannot answer */
};
struct sc_node {
	uint8_t kind;
	uint8_t post;     /* E_INCDEC: x++ rather than ++x */
	uint8_t filter;   /* E_FIELD of a --where expression: may name a builtin */
	int16_t op;       /* operator, builtin, cast width (negative: signed) */
	struct sc_pos pos;
	int64_t ival;     /* E_INT; E_ARG: the index */
	const char *name; /* E_FIELD, E_MAP ("@x"), E_VAR ("$x"), E_SELF, E_CALL; E_STR bytes */
	uint32_t nlen;
	struct sc_node *a, *b, *c;
	struct sc_node **kids; /* call arguments, map keys, block statements */
	uint32_t nkids;
	uint8_t keyed;    /* E_MAP written with [] */
};
struct sc_probe {
	struct sc_tok *aps; /* attach points as written */
	uint32_t naps;
	struct sc_node *pred, *body;
	struct sc_pos pos;
};
struct sc_ast {
	struct sc_probe *probes;
	uint32_t nprobes;
};
/* Parses a program. 0, or -EINVAL with "LINE:COL: message" in err. */
int sc_parse(struct sc_ast *ast, const char *src, size_t len, struct sc_arena *a, char *err, size_t errlen);
/* Parses a kernel filter expression (tracefs events/.../filter syntax). */
int sc_parse_filter(struct sc_node **expr, const char *src, size_t len, struct sc_arena *a, char *err,
		    size_t errlen);

/* ------------------------------------------------------------- types */
enum sc_ty { TY_NONE, TY_INT, TY_STR, TY_TS };
struct sc_type {
	uint8_t t;
	uint8_t sign; /* TY_INT: signed */
	uint16_t aux; /* TY_TS: the strftime format's index */
};

/* -------------------------------------------------------------- maps */
enum sc_mkind {
	MK_NONE, MK_INT, MK_STR, MK_TS, MK_COUNT, MK_SUM, MK_AVG, MK_MIN, MK_MAX, MK_STATS, MK_HIST, MK_LHIST,
};
#define SC_MAX_KEYS 8
#define SC_HIST_BUCKETS 66 /* <0, 0, 1, then [2^k, 2^(k+1)) up to 2^63 */
/* A hash table from a key of nkw words to a value of vw words, both kept
 * in one array of entries in insertion order. */
struct sc_map {
	uint32_t nkw, vw, ew; /* ew = nkw + vw */
	uint64_t *ents;
	uint32_t n, ecap;
	uint32_t *slot; /* 0: empty, SC_TOMB: deleted, else entry index + 1 */
	uint32_t mask, tombs;
	const uint64_t *init; /* vw words a new entry starts with (NULL: zeros) */
};
#define SC_TOMB UINT32_MAX
int sc_map_init(struct sc_map *m, uint32_t nkw, uint32_t vw, const uint64_t *init);
void sc_map_free(struct sc_map *m);
static inline uint64_t sc_hash_words(const uint64_t *k, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (uint32_t i = 0; i < n; i++) {
		h ^= k[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}
/* The value words of key, or NULL. */
uint64_t *sc_map_get(const struct sc_map *m, const uint64_t *key);
/* The value words of key, inserted (from init) when absent; NULL on
 * -ENOMEM. Pointers into the map are valid until the next insertion. */
uint64_t *sc_map_put(struct sc_map *m, const uint64_t *key);
int sc_map_del(struct sc_map *m, const uint64_t *key);
static inline uint64_t *sc_map_ent(const struct sc_map *m, uint32_t i);
/* sc_map_put with the common case inline: a key of one word or none,
 * already present. */
static inline uint64_t *sc_map_put_fast(struct sc_map *m, const uint64_t *key)
{
	if (m->nkw == 1) {
		uint64_t h = sc_hash_words(key, 1);
		uint32_t s = m->slot[(uint32_t)h & m->mask];
		if (s && s != SC_TOMB) {
			uint64_t *e = sc_map_ent(m, s - 1);
			if (e[0] == key[0])
				return e + 1;
		}
	} else if (!m->nkw && m->n) {
		return m->ents;
	}
	return sc_map_put(m, key);
}
void sc_map_clear(struct sc_map *m);
static inline uint64_t *sc_map_ent(const struct sc_map *m, uint32_t i) { return m->ents + (size_t)i * m->ew; }

/* A map of the program: what it holds, settled by compiling. */
struct sc_mapdef {
	const char *name; /* "@x", "@" */
	uint8_t kind, vsign, nkeys, keyed;
	struct sc_type keys[SC_MAX_KEYS];
	struct sc_type vty;        /* MK_INT/STR/TS: the value's type */
	int64_t lmin, lmax, lstep; /* MK_LHIST */
	struct sc_pos at;          /* where its kind was set */
	struct sc_map m;
	uint64_t init[2];
};
uint32_t sc_mk_words(const struct sc_mapdef *d);

/* ---------------------------------------------------------- bytecode */
enum sc_opc {
	OP_RET, OP_RETV, OP_IMM, OP_CONST, OP_MOV, OP_FIELD, OP_FIELDS,
	OP_TS, OP_ELAPSED, OP_TID, OP_PID, OP_CPU, OP_COMM, OP_FUNC, OP_PROBE,
	OP_ADD, OP_SUB, OP_MUL, OP_DIVU, OP_DIVS, OP_MODU, OP_MODS, OP_AND, OP_OR, OP_XOR, OP_SHL, OP_SHRU,
	OP_SHRS, OP_NEG, OP_BNOT, OP_LNOT, OP_EQ, OP_NE, OP_LTU, OP_LTS, OP_LEU, OP_LES, OP_SEXT, OP_ZEXT,
	OP_JMP, OP_JZ, OP_JNZ, OP_LOOP,
	OP_MGET, OP_MSET, OP_MADD, OP_MDEL, OP_COUNT, OP_SUM, OP_AVG, OP_MIN, OP_MAX, OP_STATS, OP_HIST,
	OP_LHIST, OP_SGET, OP_SSET,
	OP_PRINTF, OP_PRINTM, OP_PRINTV, OP_CLEAR, OP_ZERO, OP_EXIT, OP_TIME, OP_STRFTIME,
	OP_STRN, OP_STRNCMP, OP_GLOB, OP_USYM, OP_NTOP, OP_SPEC, OP_SPECULATE, OP_COMMIT, OP_DISCARD,
	OP_NOPS
};
/* One instruction: registers a, b, c and an immediate x (constant index,
 * map, jump target, count...). */
struct sc_ins {
	uint8_t op, a, b, c;
	uint32_t x;
};
struct sc_code {
	struct sc_ins *ins;
	uint32_t n, cap;
	uint16_t nregs;
};
#define SC_MAX_REGS 255

/* A printf format, split once when compiled. */
struct sc_fspec {
	uint32_t off, len;  /* literal text before the conversion: fmt[off..off+len) */
	char conv;          /* 0: none (the tail), else d i u x X o c s p */
	char lenmod;        /* 0, 'h' (16), 'H' (8), 'l' (64) */
	char spec[24];      /* the conversion as C's printf takes it, length modifier rewritten */
};
struct sc_fmt {
	const char *text;
	uint32_t len;
	struct sc_fspec *f;
	uint32_t nf;
	struct sc_type *arg; /* the arguments' types, one per conversion */
};

/* ------------------------------------------------------------- sites */
enum sc_skind { SK_BEGIN, SK_END, SK_INTERVAL, SK_TP, SK_UPROBE, SK_URETPROBE, SK_FILTER };
/* One probe of the program on one event type of the file. */
struct sc_site {
	struct sc_probe *p;
	uint32_t ap;       /* attach point of p */
	uint8_t kind;
	uint8_t dyn;       /* the function is matched per event (uprobes) */
	uint8_t recorded;  /* a uprobe event type of tracerec -u: one function */
	uint16_t type;     /* event type id (SK_TP, SK_U*, SK_FILTER) */
	const struct tpp_type *t;
	const char *probe; /* the probe's name as bpftrace prints it */
	const char *bin, *fn; /* uprobe patterns */
	uint64_t every;    /* SK_INTERVAL: the period in ns */
	int addr_f;        /* field with the function's address, -1 */
	int ret_f;         /* retval's field, -1 */
	int narg;
	int8_t arg_f[16];  /* arg0..: fields */
	uint64_t probe_sv; /* the probe's name, interned */
	uint64_t func_sv;  /* the function's name when fixed, else 0 */
	uint64_t last_func, last_probe; /* dyn: the probe's name for the last function */
	struct sc_code code;
	/* A body that is one aggregation of a field (or of nothing) into a
	 * map keyed by a field or by nothing, with no predicate: the run loop
	 * does it in place of the VM. op: OP_COUNT, OP_SUM, OP_HIST, 0 none. */
	struct {
		uint8_t op;
		int8_t key, val; /* column slots, -1: none */
		uint32_t map;
	} fast;
	uint64_t fired;
	uint32_t index;    /* in the program's site list */
};

/* ----------------------------------------------------- the program */
struct sc_tinfo {        /* per event type of the file */
	uint32_t want;        /* fields the sites read */
	int8_t slot[TPP_MAX_FIELDS]; /* field -> column slot, -1 */
	int8_t field[TPP_MAX_FIELDS]; /* slot -> field */
	uint8_t conv[TPP_MAX_FIELDS]; /* per slot, for rows: 0 number, 1 text, 2 bytes */
	uint8_t nslots, rows_only;  /* rows_only: a field a scan cannot hand out */
	struct sc_site **sites;
	uint32_t nsites;
	uint8_t dyn, recorded;
	int8_t addr_slot;    /* dyn: the slot with the function's address */
};
struct sc_prog {
	struct sc_arena arena;
	struct sc_ast ast;
	struct tpp_reader *r;
	const struct tpp_names *names;
	struct sc_strtab *strs;
	struct sc_site **sites;
	uint32_t nsites, scap;
	struct sc_mapdef *maps;
	uint32_t nmaps, mcap;
	struct {
		const char *name;
		struct sc_type ty;
		struct sc_pos at;
	} *selfs;
	uint32_t nselfs, selfcap;
	uint64_t *pool;
	uint32_t npool, poolcap;
	struct sc_fmt *fmts;
	uint32_t nfmts, fmtcap;
	struct sc_tinfo *ti; /* TPP_MAX_TYPES entries, allocated */
	int json;
	const char *src_name;
	int infer;           /* first compile pass: learn map and variable types */
	int uses_comm;
	char err[512];
	int failed;
	/* warnings found while compiling, printed by the command */
	char warn[8][320];
	int nwarn;
};
int sc_pool_add(struct sc_prog *P, uint64_t v);
const struct sc_str *sc_pstr(struct sc_prog *P, const char *s, size_t len); /* interned */
void sc_fail(struct sc_prog *P, struct sc_pos pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void sc_warn(struct sc_prog *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Sites of every attach point (sc_probe.c). 0 or -EINVAL (message set). */
int sc_probes_resolve(struct sc_prog *P);
/* The fields of the file's types that name a function's address, its
 * arguments and its return value (uprobes and compiled-in functions). */
void sc_probe_fields(struct sc_prog *P, struct sc_site *s);
/* Whether a uprobe's BIN as written names the object at path. */
int sc_bin_match(const char *bin, const char *path);
/* Compiles every site, twice: once to learn, once for good (sc_code.c). */
int sc_compile_sites(struct sc_prog *P);
/* Compiles a filter expression for every type (sc_code.c). */
int sc_compile_filter(struct sc_prog *P, struct sc_node *expr);
/* Parses a printf format against its arguments' types; the format's index
 * or -1 (message set). */
int sc_fmt_compile(struct sc_prog *P, struct sc_pos pos, const char *text, uint32_t len, const struct sc_type *args,
		   uint32_t nargs);

/* ----------------------------------------------------- run time */
struct sc_buf {
	char *p;
	size_t len, cap;
};
int sc_buf_put(struct sc_buf *b, const char *s, size_t n);

/* A thread as the program sees it. */
struct sc_thr {
	int32_t tid, pid;
	uint32_t rec, nrec, cur; /* its task records in sc_rt.recs */
	uint64_t from, until;    /* cur holds for ts in [from, until) */
	uint64_t comm;           /* handle of the name at cur */
	uint64_t *self;          /* self-> variables, NULL until one is set */
};
struct sc_task {
	int32_t tid, pid;
	uint64_t ts;
	const char *comm;
	uint64_t sv; /* interned comm, 0 until asked */
};

/* The event a site runs on: its fields are col[slot][i]. */
struct sc_ctx {
	uint64_t ts;
	int32_t tid, cpu;
	const uint64_t *const *col;
	uint32_t i;
	uint16_t type;
	const struct sc_site *site;
	struct sc_thr *thr;
	uint64_t func, probe; /* dynamic sites: the function and probe names */
};

#define SC_SPEC_MAX 4096
struct sc_rt {
	struct sc_prog *P;
	struct sc_buf out;    /* stdout, flushed as it fills */
	int fd, out_err;
	struct sc_buf *sink;  /* where output goes now: &out, a speculation, or NULL (dropped) */
	struct {
		struct sc_buf b;
		int live;
	} *spec;
	uint32_t nspec, *spec_free, nfree;
	uint64_t spec_dropped, spec_full;
	struct sc_map threads; /* tid -> struct sc_thr * */
	struct sc_task *recs;
	size_t nrecs;
	struct sc_map funcs;   /* (type, pid, addr) -> site mask, function */
	struct sc_uid {        /* per recorded uprobe type: its one function, once placed */
		uint64_t mask, func;
		int placed, warned;
	} *uid;
	int64_t wall_off;
	uint64_t t0, t_end;    /* the trace's first and last event */
	int stop;              /* exit() was called */
	int err;               /* a run-time error (message in errmsg) */
	char errmsg[256];
	struct ofast *json;    /* scratch for JSON strings */
	struct sc_buf line, msg; /* scratch for a printf's text and its JSON message */
	struct sc_thr nobody;  /* the task of BEGIN, END and intervals */
	uint64_t loop_budget;
};
/* Runs code for one event: 0, 1 after exit(), <0 on a run-time error;
 * OP_RETV's value goes to *ret when not NULL. */
int sc_exec(struct sc_rt *rt, const struct sc_code *code, struct sc_ctx *ctx, uint64_t *ret);
struct sc_thr *sc_thread(struct sc_rt *rt, int32_t tid);
uint64_t sc_comm_at(struct sc_rt *rt, struct sc_thr *t, uint64_t ts);
int sc_rt_init(struct sc_rt *rt, struct sc_prog *P, int fd);
void sc_rt_free(struct sc_rt *rt);
void sc_out_flush(struct sc_rt *rt);
/* Output (to rt->sink). */
void sc_emit(struct sc_rt *rt, const char *s, size_t n);
void sc_emitf(struct sc_rt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* JSON: a message {"type": TYPE, "data": "TEXT"} */
void sc_emit_json_msg(struct sc_rt *rt, const char *type, const char *s, size_t n);
void sc_json_str(struct sc_rt *rt, struct sc_buf *b, const char *s, size_t n);
/* printf with format f over args (sc_fmt.c) into b. */
int sc_format(struct sc_rt *rt, struct sc_buf *b, const struct sc_fmt *f, const uint64_t *args);
/* A value as text, the way print() and map printing show it. */
void sc_value_text(struct sc_rt *rt, struct sc_buf *b, struct sc_type ty, uint64_t v);
int sc_strftime(struct sc_rt *rt, struct sc_buf *b, const char *fmt, size_t flen, uint64_t ns);
/* Prints a map as bpftrace does (sc_print.c): top entries (0: all), values
 * divided by div. */
void sc_print_map(struct sc_rt *rt, struct sc_mapdef *d, uint64_t top, uint64_t div);
void sc_print_all(struct sc_rt *rt);
/* Which of a dynamic type's sites the event reaches (bit k: ti->sites[k]),
 * its function's name in ctx->func; resolved once per address. */
uint64_t sc_resolve(struct sc_rt *rt, struct sc_ctx *ctx, const struct sc_tinfo *ti);
/* A dynamic site's probe name for the function in ctx->func. */
uint64_t sc_site_probe(struct sc_rt *rt, struct sc_site *s, uint64_t func);
#include "out_fast.h"
#endif
