/* Recursion: fib(12) makes 465 calls of fib, nested up to 12 deep. */
#include <stdio.h>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(void) { printf("%d\n", fib(12)); return 0; }
