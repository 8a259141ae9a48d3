/* exec without fork: the first image calls before_exec, the second after_exec. */
#include <string.h>
#include <unistd.h>
static volatile int v;
void before_exec(void) { v++; }
void after_exec(void) { v--; }
int main(int argc, char **argv)
{
	if (argc > 1) {
		after_exec();
		return 0;
	}
	before_exec();
	execl("/proc/self/exe", argv[0], "again", (char *)NULL);
	return 1;
}
