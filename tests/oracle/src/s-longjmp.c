/* longjmp out of deep3, three frames down, back to main; later calls are
 * main's own. */
#include <setjmp.h>
#include <stdio.h>
static jmp_buf jb;
static volatile int n;
void deep3(void) { longjmp(jb, 1); }
void deep2(void) { deep3(); n++; }
void deep1(void) { deep2(); n++; }
void later(void) { n++; }
int main(void)
{
	if (setjmp(jb) == 0)
		deep1();
	later();
	later();
	printf("%d\n", n);
	return 0;
}
