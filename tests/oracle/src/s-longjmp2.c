/* setjmp in a nested function, longjmp from different depths, repeatedly. */
#include <setjmp.h>
#include <stdio.h>
static jmp_buf jb;
static volatile int n;
void jump(int i) { longjmp(jb, i); }
void down(int d, int i) { if (d == 0) jump(i); else down(d - 1, i); n++; }
void after(void) { n++; }
void catcher(int i)
{
	if (setjmp(jb) == 0)
		down(i, i + 1);
	after();
}
int main(void)
{
	for (int i = 0; i < 4; i++)
		catcher(i);
	printf("%d\n", n);
	return 0;
}
