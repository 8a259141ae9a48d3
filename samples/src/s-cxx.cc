/* C++ names: a namespace, a class, a template and an operator, no library
 * code (so every recorded function is one of these). Names are compared
 * as uftrace prints them by default: qualified, without template
 * arguments or parameters.
 * expect: main=1 middle=1 app::W::operator+=1 app::work=1 app::W::run=3 app::twice=3 */
#include <cstdio>

namespace app {
template <typename T> T twice(T x) { return x * 2; }
struct W {
	int k;
	int run(int a) const { return twice(a) + k; }
	W operator+(const W &o) const { return W{k + o.k}; }
};
int work(const W &w, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += w.run(i);
	return s;
}
} // namespace app

int middle(int x)
{
	app::W a{1}, b{2};
	app::W c = a + b;
	return app::work(c, x);
}

int main()
{
	std::printf("%d\n", middle(3));
	return 0;
}
