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

/* ---- probes (func_probe.c) -------------------------------------------- */
struct func_probes;
int func_probes_create(struct func_probes **pp, const struct func_opts *o, char *err, size_t errlen);
void func_probes_names(struct func_probes *p, const char *const **names, size_t *n);
/* The ELF files probes were placed in (resolved paths, owned by p): their
 * symbol tables belong in the file even though no runtime address marks them. */
void func_probes_paths(struct func_probes *p, const char *const **paths, size_t *n);
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
/* A recorded address of pid: the ELF it falls in will get a symbol table. */
void func_maps_mark(struct func_maps *m, int32_t pid, uint64_t addr);
/* Marks every mapping of path, in every process, as recorded. */
void func_maps_mark_path(struct func_maps *m, const char *path);
/* Writes mmap records for every process, symtabs for every marked object. */
int func_maps_write(struct func_maps *m, struct tpp_writer *w, uint64_t ts);

#endif
