/* func_int — what the function-tracing files of the recorder share among
 * themselves (not part of the contract with cmd_record: that is func.h).
 * Errors: negative errno; messages go to the caller's buffer. Nothing prints.
 */
#ifndef TPP_REC_FUNC_INT_H
#define TPP_REC_FUNC_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "func.h"

#define FUNC_ERR_MAX 512

/* snprintf for messages and paths where cutting a long path short is the
 * intended outcome (returns what snprintf returns). */
int func_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- clock: runtime timestamps to CLOCK_MONOTONIC ---------------------- */
/* ns = mono0 + (tsc - tsc0) * mult >> 32 when tsc; else already ns. */
struct func_clock {
	int tsc;
	uint64_t tsc0, mono0, mult;
};
static inline uint64_t func_to_mono(const struct func_clock *c, uint64_t ts)
{
	if (!c->tsc)
		return ts;
	if (ts >= c->tsc0)
		return c->mono0 + (uint64_t)(((unsigned __int128)(ts - c->tsc0) * c->mult) >> 32);
	return c->mono0 - (uint64_t)(((unsigned __int128)(c->tsc0 - ts) * c->mult) >> 32);
}

/* ---- the runtime's pool (func_pool.c) --------------------------------- */
struct func_pool;
struct tpp_rt_hdr;
/* Where drained records go: the writer, the runtime's event types, and
 * callbacks for what the session keeps (entry addresses, maps text, pids). */
struct func_args;
struct func_sink {
	struct tpp_writer *w;
	uint32_t *next_stream;
	uint16_t t_entry, t_exit, t_unwind, t_thread_exit, t_resume;
	const struct func_clock *clk;
	void *arg;
	void (*note)(void *arg, int32_t pid, uint64_t addr);           /* an entry address, once per (pid, addr) mostly */
	void (*maps)(void *arg, int32_t pid, const char *text, size_t len); /* a process's maps text */
	void (*new_pid)(void *arg, int32_t pid);                        /* a thread of pid was seen */
	const struct func_args *args; /* -A on the executable's functions (func_args.h), or NULL */
};
struct func_pool_stats {
	uint64_t budget, shm_peak, chunk_bytes; /* bytes; shm_peak: pages of the pool that existed, at most */
	uint64_t threads, events, lost, lost_no_slot;
	uint64_t waits, waited_ns; /* writers' waits for room, and their time in all */
	uint64_t wait_capped;      /* threads that reached the cap on waiting in all */
	uint64_t data_lost;        /* -A values dropped for want of room (not events) */
	uint64_t damaged;          /* values read back out of range: the program wrote over the pool */
	uint64_t args_refused;     /* processes where -A found process_vm_readv refused */
	int32_t args_refused_pid;  /* the first of them */
};
/* A pool of budget bytes (at least 1 MiB); the header's layout is filled,
 * its clock and filters are the caller's, then func_pool_publish. */
int func_pool_new(struct func_pool **p, uint64_t budget, char *err, size_t errlen);
struct tpp_rt_hdr *func_pool_hdr(struct func_pool *p);
void func_pool_publish(struct func_pool *p);
/* "TPP_RT_FD=FD:INODE" for the command's environment (caller frees). */
int func_pool_env(const struct func_pool *p, char **out);
/* In the forked child before exec: lets the command inherit the pool. */
void func_pool_child(const struct func_pool *p);
/* Moves every published record into the sink; final: also ends threads
 * that are gone. Never blocks. */
int func_pool_drain(struct func_pool *p, const struct func_sink *k, int final);
/* The last drain and the losses of threads that found no descriptor. */
int func_pool_finish(struct func_pool *p, const struct func_sink *k);
void func_pool_stats(const struct func_pool *p, struct func_pool_stats *s);
void func_pool_free(struct func_pool *p);

/* ---- ELF facts (func_elf.c) ------------------------------------------- */
struct func_elfsym {
	uint64_t addr, size; /* st_value, st_size */
	char *name;
};
/* The function symbols of an ELF file (.symtab, else .dynsym), sorted by
 * address, aliases at one address collapsed to one name (globals first).
 * Caller frees with func_elf_syms_free. Returns count or negative errno. */
long func_elf_syms(const char *path, struct func_elfsym **out, char *err, size_t errlen);
void func_elf_syms_free(struct func_elfsym *s, size_t n);
/* Build-id (NT_GNU_BUILD_ID) into id (64 bytes); returns its length, 0 if none. */
int func_elf_build_id(const char *path, uint8_t id[64]);
/* Flags: 1 = calls mcount/__fentry__ (-pg), 2 = __cyg_profile_func_enter (-fi). */
int func_elf_instrumented(const char *path);
/* File offset of link-time address addr (for uprobes), or negative errno. */
int64_t func_elf_file_offset(const char *path, uint64_t addr);
/* 1 if the file is an ELF object at all. */
int func_elf_is_elf(const char *path);

/* ---- signatures (func_dwarf.c) ---------------------------------------- */
/* How a value is fetched and printed: integer, char ('z'), bool, pointer
 * (hex), C string, floating point; FV_OTHER (a struct) cannot be. */
enum func_vclass { FV_VOID, FV_SINT, FV_UINT, FV_CHAR, FV_BOOL, FV_PTR, FV_STR, FV_F32, FV_F64, FV_OTHER };
#define FUNC_SIG_MAX 16
struct func_param {
	char name[64];
	enum func_vclass vc;
	int size;       /* bytes */
	int sse;        /* passed in an SSE register (float, double) */
	int reg;        /* index among its class's registers (rdi.. or xmm0..), -1: on the stack or unknown */
	int artificial; /* "this" */
	int in_frame;   /* kept at fbreg from the CFA (an unoptimised build's frame slot) */
	int32_t fbreg;
};
struct func_sig {
	enum func_vclass ret; /* FV_VOID: returns nothing */
	int ret_size;
	size_t nparams;
	struct func_param p[FUNC_SIG_MAX];
};
struct func_dwarf;
/* Indexes the function definitions of an ELF object's DWARF. *d is set
 * even on error (-ENOENT: no debug info) and must be closed. */
int func_dwarf_open(struct func_dwarf **d, const char *path);
void func_dwarf_close(struct func_dwarf *d);
/* The signature of func (its symbol name: linkage name for C++), or
 * -ENOENT when d has no definition of it. */
int func_dwarf_sig(struct func_dwarf *d, const char *func, struct func_sig *sig);
/* "s32", "u8", "char", "bool", "ptr", "str", "f64", "void": the type codes of
 * the file's probe notes (specs/format.md). */
const char *func_vclass_code(enum func_vclass vc, int size);

/* ---- probes (func_probe.c) -------------------------------------------- */
struct func_probes;
int func_probes_create(struct func_probes **pp, const struct func_opts *o, char *err, size_t errlen);
void func_probes_names(struct func_probes *p, const char *const **names, size_t *n);
/* The ELF files probes were placed in (resolved paths, owned by p): their
 * symbol tables belong in the file even though no runtime address marks them. */
void func_probes_paths(struct func_probes *p, const char *const **paths, size_t *n);
/* Writes one "probe" note per event made (event, func, object, offset,
 * kind): a reader names a probe's calls from it, whichever task made them
 * and whether or not that task's maps were caught. p may be NULL. */
int func_probes_note(struct func_probes *p, struct tpp_writer *w);
/* Deletes every probe definition made; async-signal-safe (open/write/close). */
void func_probes_remove(struct func_probes *p);
void func_probes_free(struct func_probes *p);

/* ---- maps and symbols (func_maps.c) ----------------------------------- */
struct func_maps;
struct func_maps *func_maps_new(void);
void func_maps_free(struct func_maps *m);
/* Adds the executable, file-backed lines of a /proc/PID/maps text for pid
 * (merged with what was known for pid: an exec adds a second layout). */
void func_maps_add_text(struct func_maps *m, int32_t pid, const char *text, size_t len);
/* Reads /proc/PID/maps now if the process still exists; 0 or -errno. */
int func_maps_read_proc(struct func_maps *m, int32_t pid);
int func_maps_has(const struct func_maps *m, int32_t pid);
/* child was forked by parent: a child with no maps of its own gets parent's
 * (its address space began as a copy), now if parent's are known, else at
 * func_maps_inherit (before marking addresses, at the end). */
void func_maps_fork(struct func_maps *m, int32_t parent, int32_t child);
void func_maps_inherit(struct func_maps *m);
/* A recorded address of pid: the ELF it falls in will get a symbol table.
 * 1 if a known mapping holds it, else 0 (mark again once maps are known). */
int func_maps_mark(struct func_maps *m, int32_t pid, uint64_t addr);
/* Marks every mapping of path, in every process, as recorded. */
void func_maps_mark_path(struct func_maps *m, const char *path);
/* Writes mmap records for every process, symtabs for every marked object;
 * each only once: called again, it writes only what is new since. */
int func_maps_write(struct func_maps *m, struct tpp_writer *w, uint64_t ts);

#endif
