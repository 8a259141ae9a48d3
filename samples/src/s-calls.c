/* Call-heavy: loop() calls leaf() N times (argv[1], default 1000); the
 * workload of the function-tracing benchmarks.
 * expect: main=1 loop=1 leaf=1000 */
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

void leaf(long i) { sink += i; }

void loop(long n)
{
	for (long i = 0; i < n; i++)
		leaf(i);
}

int main(int argc, char **argv)
{
	loop(argc > 1 ? atol(argv[1]) : 1000);
	printf("%ld\n", sink);
	return 0;
}
