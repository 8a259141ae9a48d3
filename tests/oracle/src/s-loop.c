/* One function called many times from a loop, another every tenth time. */
#include <stdio.h>
static volatile int sink;
void tick(int i) { sink += i; }
void tock(int i) { sink -= i; }
int main(void)
{
	for (int i = 0; i < 200; i++) {
		tick(i);
		if (i % 10 == 0)
			tock(i);
	}
	printf("%d\n", sink);
	return 0;
}
