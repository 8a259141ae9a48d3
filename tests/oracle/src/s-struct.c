/* Structs passed and returned by value, in registers and in memory. */
#include <stdio.h>
struct small { int a, b; };
struct big { long x[6]; };
struct small mk_small(int a) { struct small s = {a, a * 2}; return s; }
struct big mk_big(long x) { struct big b; for (int i = 0; i < 6; i++) b.x[i] = x + i; return b; }
long use(struct small s, struct big b) { return s.a + s.b + b.x[0] + b.x[5]; }
int main(void) { printf("%ld\n", use(mk_small(3), mk_big(10))); return 0; }
