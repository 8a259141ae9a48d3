// Constructors, destructors, virtual calls and a member template.
#include <cstdio>
struct Shape {
	virtual ~Shape() {}
	virtual int area() const = 0;
};
struct Sq : Shape {
	int s;
	explicit Sq(int s_) : s(s_) {}
	int area() const override { return s * s; }
};
struct Rect : Shape {
	int w, h;
	Rect(int w_, int h_) : w(w_), h(h_) {}
	int area() const override { return w * h; }
};
template <typename T> T twice(T x) { return x + x; }
int total(const Shape *const *v, int n) { int t = 0; for (int i = 0; i < n; i++) t += v[i]->area(); return t; }
int main()
{
	Sq a(3);
	Rect b(2, 5);
	const Shape *v[] = {&a, &b};
	std::printf("%d %ld\n", twice(total(v, 2)), twice(4L));
	return 0;
}
