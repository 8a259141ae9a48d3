/* The simplest tree: main -> a -> b -> c. */
#include <unistd.h>
int c(void) { return getpid() % 100000; }
int b(void) { return c() + 1; }
int a(void) { return b() - 1; }
int main(void) { return a() > 100000; }
