/* Mutual recursion: is_even and is_odd call each other down to zero. */
#include <stdio.h>
int is_odd(unsigned n);
int is_even(unsigned n) { return n == 0 ? 1 : is_odd(n - 1); }
int is_odd(unsigned n) { return n == 0 ? 0 : is_even(n - 1); }
int main(void) { printf("%d %d\n", is_even(10), is_odd(7)); return 0; }
