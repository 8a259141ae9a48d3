/* Recursion: fib(10) makes 177 calls of fib.
 * expect: main=1 fib=177 */
#include <stdio.h>

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main(void)
{
	printf("%d\n", fib(10));
	return 0;
}
