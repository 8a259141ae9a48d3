#!/bin/sh
# gen-syscalls.sh [HEADER]: the C table of x86-64 syscall names that
# fieldfmt.c reads, from the kernel's own list (<asm/unistd_64.h>, Debian's
# linux-libc-dev); an empty table when there is no header.
echo "/* made by postproc/out/gen-syscalls.sh from ${1:-no header} */"
echo "const char *const ff_syscalls_x86_64[] = {"
if [ -n "${1:-}" ] && [ -r "$1" ]; then
	awk '/^#define __NR_[a-z0-9_]+ [0-9]+$/ { printf "\t[%d] = \"%s\",\n", $3, substr($2, 6) }' "$1"
else
	echo "	0,"
fi
echo "};"
echo "const unsigned ff_nsyscalls_x86_64 = sizeof(ff_syscalls_x86_64) / sizeof(ff_syscalls_x86_64[0]);"
