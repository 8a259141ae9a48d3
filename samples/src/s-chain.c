/* A call chain: main -> a -> b -> c, each called once.
 * expect: main=1 a=1 b=1 c=1 */
#include <stdio.h>

int c(int x) { return x + 1; }
int b(int x) { return c(x) * 2; }
int a(int x) { return b(x) + 3; }

int main(void)
{
	printf("%d\n", a(1));
	return 0;
}
