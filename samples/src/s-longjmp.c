/* longjmp out of nested calls: outer() sets a jump point, calls
 * mid -> inner -> deep, and deep jumps back; 3 rounds. mid, inner and deep
 * never return.
 * expect: main=1 outer=3 mid=3 inner=3 deep=3 after=3
 * exits: main=1 outer=3 mid=0 inner=0 deep=0 after=3 */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf jb;
static volatile int n;

void deep(int i) { longjmp(jb, i + 1); }
void inner(int i) { deep(i); n++; }
void mid(int i) { inner(i); n++; }
void after(int i) { n += i; }

void outer(int i)
{
	if (setjmp(jb) == 0)
		mid(i);
	after(i);
}

int main(void)
{
	for (int i = 0; i < 3; i++)
		outer(i);
	printf("%d\n", n);
	return 0;
}
