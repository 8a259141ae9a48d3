/* A C++ exception: run() calls thrower -> deeper, which throws; run()
 * catches it; 3 rounds. deeper and thrower never return.
 * expect: main=1 run=3 thrower=3 deeper=3 */
#include <cstdio>

static volatile int n;

extern "C" void deeper(int i)
{
	if (i >= 0)
		throw i;
	n++;
}
extern "C" void thrower(int i) { deeper(i); n++; }
extern "C" void run(int i)
{
	try {
		thrower(i);
	} catch (int e) {
		n += e;
	}
}

int main()
{
	for (int i = 0; i < 3; i++)
		run(i);
	std::printf("%d\n", n);
	return 0;
}
