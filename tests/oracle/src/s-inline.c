/* Functions the compiler inlines: -finstrument-functions still reports
 * them, -pg does not. */
#include <stdio.h>
static volatile int v;
static inline __attribute__((always_inline)) int sq(int x) { return x * x; }
static inline int add(int a, int b) { return a + b; }
int calc(int x) { return add(sq(x), sq(x + 1)); }
int main(void) { for (int i = 0; i < 3; i++) v += calc(i); printf("%d\n", v); return 0; }
