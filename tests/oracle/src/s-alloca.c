/* A variable-length array and alloca move the stack pointer inside a frame. */
#include <alloca.h>
#include <stdio.h>
#include <string.h>
int fill(char *p, int n) { memset(p, 'x', (size_t)n); return p[n - 1]; }
int vla(int n) { char buf[n]; return fill(buf, n); }
int dyn(int n) { char *p = alloca((size_t)n); return fill(p, n) + vla(n / 2); }
int main(void) { int s = 0; for (int i = 1; i <= 4; i++) s += dyn(i * 100); printf("%d\n", s); return 0; }
