/* Floating-point arguments and results through instrumented calls: all
 * eight SSE argument registers, a mix with general ones, a variadic call
 * (%al counts the vector registers) and an x87 long double result. The -pg
 * hooks save only general registers, so this proves they never touch the
 * SSE ones: the printed result must be the untraced build's, bit for bit.
 * expect: main=1 sum8=1000 mix=1000 vsum=1000 half=1000 */
#include <stdarg.h>
#include <stdio.h>

double sum8(double a, double b, double c, double d, double e, double f, double g, double h)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

double mix(int i, double x, long l, float y)
{
	return i * x - (double)l / y;
}

double vsum(int n, ...)
{
	va_list ap;
	double s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, double) * (i + 1);
	va_end(ap);
	return s;
}

long double half(long double x)
{
	return x / 2;
}

int main(void)
{
	double acc = 0;
	long double lacc = 0;
	for (int i = 0; i < 1000; i++) {
		double x = i * 0.37;
		acc += sum8(x, x + 0.1, x + 0.2, x + 0.3, x + 0.4, x + 0.5, x + 0.6, x + 0.7);
		acc += mix(i, x * 1.5, i * 3L, (float)(i + 1) * 0.25f);
		acc += vsum(4, x, x * 2, x * 3, x * 4);
		lacc += half((long double)x * 3);
	}
	printf("%.17g %.21Lg\n", acc, lacc);
	return 0;
}
