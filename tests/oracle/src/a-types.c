/* Arguments and return values of many types, for -A on compiled-in builds
 * (t-func-corners.sh): integers of each size and sign, chars, strings,
 * floating point, bool, a pointer, void. Not an oracle program (a-, not s-). */
#include <stdbool.h>
#include <stdio.h>
#define KEEP __attribute__((noinline, noipa))
static volatile long sink;
KEEP int ints(int a, long b, unsigned u, short s) { sink = a + b + u + s; return a - 1; }
KEEP char chars(char c, unsigned char uc) { sink = c + uc; return (char)(c + 1); }
KEEP const char *strs(const char *s, const char *t) { sink = s[0] + t[0]; return t; }
KEEP double fp(double d, float f, int i) { return d * f + i; }
KEEP void nothing(bool b, volatile long *p) { *p = b; }
int main(void)
{
	volatile int five = 5;
	int r = ints(-five, 1L << 40, 4000000000u, (short)-3);
	char c = chars('z', 200);
	const char *s = strs("hello", "world");
	double d = fp(1.5, 2.0f, 3);
	nothing(true, &sink);
	printf("%d %c %s %g\n", r, c, s, d);
	return 0;
}
