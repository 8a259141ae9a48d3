/* A variadic function and its va_list helper. */
#include <stdarg.h>
#include <stdio.h>
long vsum(int n, va_list ap) { long s = 0; while (n--) s += va_arg(ap, int); return s; }
long sum(int n, ...) { va_list ap; va_start(ap, n); long s = vsum(n, ap); va_end(ap); return s; }
int main(void) { printf("%ld\n", sum(3, 1, 2, 3) + sum(5, 1, 1, 1, 1, 1)); return 0; }
