// A C++ exception thrown two calls down, caught in run; after() is called
// after the catch and belongs to run, not to thrower.
#include <cstdio>
#include <stdexcept>
static volatile int v;
void leaf() { v++; }
void thrower(int i) { leaf(); if (i) throw std::runtime_error("x"); }
void middle(int i) { thrower(i); leaf(); }
void after() { v++; }
void run(int i)
{
	try {
		middle(i);
	} catch (const std::exception &) {
		after();
	}
	leaf();
}
int main() { run(1); run(0); run(1); std::printf("%d\n", v); return 0; }
