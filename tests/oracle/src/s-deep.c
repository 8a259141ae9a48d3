/* Recursion 1000 frames deep, then back up (uftrace keeps 1024 frames). */
#include <stdio.h>
static volatile int v;
int down(int n) { if (n == 0) return v; int r = down(n - 1); v++; return r + 1; }
int main(void) { printf("%d\n", down(1000)); return 0; }
