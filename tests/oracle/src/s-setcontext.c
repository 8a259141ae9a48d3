/* getcontext/setcontext as a retry loop: setcontext from two calls down
 * resumes main where getcontext returned, like longjmp. */
#include <stdio.h>
#include <ucontext.h>
static ucontext_t again;
static volatile int tries;
void retry(void) { setcontext(&again); }
void attempt(void) { if (++tries < 3) retry(); }
void done(void) { tries += 10; }
int main(void)
{
	getcontext(&again);
	attempt();
	done();
	printf("%d\n", tries);
	return 0;
}
