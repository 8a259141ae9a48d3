/* Tail calls: at -O2 tail_a jumps to tail_b and tail_b to tail_c. */
#include <stdio.h>
static volatile int v;
__attribute__((noinline)) int tail_c(int x) { v += x; return x * 3; }
__attribute__((noinline)) int tail_b(int x) { v++; return tail_c(x + 1); }
__attribute__((noinline)) int tail_a(int x) { v++; return tail_b(x * 2); }
int main(void) { int r = tail_a(1) + tail_a(2); printf("%d %d\n", r, v); return 0; }
