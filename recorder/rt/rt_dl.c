/* Libraries loaded at run time: their mappings go to tracerec as soon as
 * dlopen returns, and again before dlclose unmaps them, so that their
 * functions have names even when they are gone before the process ends.
 *
 * dlopen looks at its return address to find the calling object, whose
 * RUNPATH it searches for a bare file name. A wrapper would make that us,
 * so a bare name goes straight to the real dlopen (a jump, the program's
 * return address in place) and the library is copied at dlclose or exit;
 * a name with a slash is not searched for, and is copied at once. */
#include <dlfcn.h>
#include <stdlib.h>

#include "rt_int.h"

static void *(*real_dlopen)(const char *, int);
static int (*real_dlclose)(void *);

__attribute__((constructor(102))) static void dl_init(void)
{
	real_dlopen = (__typeof__(real_dlopen))dlsym(RTLD_NEXT, "dlopen");
	real_dlclose = (__typeof__(real_dlclose))dlsym(RTLD_NEXT, "dlclose");
}

static void *dlopen_path(const char *file, int mode)
{
	void *h = real_dlopen(file, mode);
	if (h && rt_hdr)
		rt_maps_refresh();
	return h;
}

/* Where dlopen continues: the real one, or dlopen_path for a path. */
RT_HIDDEN void *rt_dl_route(const char *file)
{
	if (!real_dlopen)
		dl_init();
	if (!real_dlopen)
		abort();
	for (const char *c = file; c && *c; c++)
		if (*c == '/')
			return (void *)dlopen_path;
	return (void *)real_dlopen;
}

/* The file and mode registers survive rt_dl_route for the jump. */
__asm__(".text\n"
	".globl dlopen\n"
	".type dlopen, @function\n"
	"dlopen:\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"
	"	call rt_dl_route\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	jmp *%rax\n"
	".size dlopen, .-dlopen\n");

RT_EXPORT int dlclose(void *h)
{
	if (!real_dlclose)
		dl_init();
	if (!real_dlclose)
		abort();
	if (rt_hdr)
		rt_maps_refresh();
	return real_dlclose(h);
}
