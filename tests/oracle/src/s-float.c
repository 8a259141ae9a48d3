/* Floating-point arguments and results, SSE and x87 (long double). */
#include <stdio.h>
double half(double x) { return x / 2; }
float mixf(int i, float f, double d) { return (float)(i + f + d); }
long double ld(long double x) { return x * 3; }
int main(void) { printf("%.2f %.2f %.2Lf\n", half(5), mixf(1, 2.5f, 3.25), ld(1.5L)); return 0; }
