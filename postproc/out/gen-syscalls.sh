#!/bin/sh
# gen-syscalls.sh [HEADER]: the C table of x86-64 syscall names that
# fieldfmt.c reads, from the kernel's own list (<asm/unistd_64.h>, Debian's
# linux-libc-dev); an empty table when there is no header.
echo "/* made by postproc/out/gen-syscalls.sh from ${1:-no header} */"
echo '#include "fieldfmt.h"'
echo "const char *const ff_syscalls_x86_64[] = {"
# only an x86-64 list: read 0, write 1, open 2 (another arch's header numbers
# its calls otherwise, and its names would be printed for x86-64 numbers)
if [ -n "${1:-}" ] && [ -r "$1" ] && grep -q "^#define __NR_read 0$" "$1" && grep -q "^#define __NR_write 1$" "$1" &&
	grep -q "^#define __NR_open 2$" "$1"; then
	awk '/^#define __NR_[a-z0-9_]+ [0-9]+$/ { printf "\t[%d] = \"%s\",\n", $3, substr($2, 6) }' "$1"
else
	echo "	0,"
fi
echo "};"
echo "const unsigned ff_nsyscalls_x86_64 = sizeof(ff_syscalls_x86_64) / sizeof(ff_syscalls_x86_64[0]);"
