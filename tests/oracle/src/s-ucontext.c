/* makecontext/swapcontext: main and a coroutine take turns on two stacks. */
#include <stdio.h>
#include <ucontext.h>
static ucontext_t main_ctx, co_ctx;
static volatile int v;
void leaf(void) { v++; }
void co_body(void)
{
	for (int i = 0; i < 3; i++) {
		leaf();
		swapcontext(&co_ctx, &main_ctx);
	}
}
void resume(void) { swapcontext(&main_ctx, &co_ctx); }
int main(void)
{
	static char stack[64 * 1024];
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof(stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_body, 0);
	for (int i = 0; i < 4; i++)
		resume();
	leaf();
	printf("%d\n", v);
	return 0;
}
