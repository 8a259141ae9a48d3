// An exception whose object has a destructor, and locals destroyed during
// unwinding calling traced functions.
#include <cstdio>
static volatile int v;
void leaf() { v++; }
struct Guard {
	Guard() { leaf(); }
	~Guard() { leaf(); }
};
struct Oops {
	int code;
	~Oops() { leaf(); }
};
void fail() { Guard g; throw Oops{7}; }
void guarded() { Guard g; fail(); }
void after() { leaf(); }
int main()
{
	for (int i = 0; i < 2; i++) {
		try {
			guarded();
		} catch (const Oops &o) {
			v += o.code;
		}
		after();
	}
	std::printf("%d\n", v);
	return 0;
}
