/* A generator on its own stack yields from two calls down; the coroutine
 * ends through uc_link. */
#include <stdio.h>
#include <ucontext.h>
static ucontext_t caller, gen;
static int value, done;
void yield(int x) { value = x; swapcontext(&gen, &caller); }
void produce(int i) { yield(i * i); }
void generator(void) { for (int i = 1; i <= 3; i++) produce(i); done = 1; }
int next(void) { swapcontext(&caller, &gen); return done ? -1 : value; }
void consume(int x) { printf("%d\n", x); }
int main(void)
{
	static char stack[64 * 1024];
	getcontext(&gen);
	gen.uc_stack.ss_sp = stack;
	gen.uc_stack.ss_size = sizeof(stack);
	gen.uc_link = &caller;
	makecontext(&gen, generator, 0);
	for (int x; (x = next()) >= 0;)
		consume(x);
	return 0;
}
