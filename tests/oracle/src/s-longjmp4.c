/* Nested jump buffers: an inner _setjmp/_longjmp pair inside an outer one. */
#include <setjmp.h>
#include <stdio.h>
static jmp_buf outer_jb, inner_jb;
static volatile int n;
void leaf(void) { n++; }
void throw_inner(void) { _longjmp(inner_jb, 1); }
void throw_outer(void) { longjmp(outer_jb, 1); }
void inner(void)
{
	if (_setjmp(inner_jb) == 0)
		throw_inner();
	leaf();
	throw_outer();
}
void outer(void)
{
	if (setjmp(outer_jb) == 0)
		inner();
	leaf();
}
int main(void) { outer(); outer(); printf("%d\n", n); return 0; }
