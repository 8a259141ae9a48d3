// The standard library's templates compiled into the program (instrumented
// too): a vector filled and sorted with a lambda.
#include <algorithm>
#include <cstdio>
#include <vector>
int score(int x) { return (x * 7) % 11; }
int main()
{
	std::vector<int> v;
	for (int i = 0; i < 6; i++)
		v.push_back(score(i));
	std::sort(v.begin(), v.end(), [](int a, int b) { return a > b; });
	std::printf("%d %d\n", v.front(), v.back());
	return 0;
}
