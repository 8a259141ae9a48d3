// A rethrow: caught and thrown again one level up, then caught in main.
#include <cstdio>
static volatile int v;
void leaf() { v++; }
void deepest() { leaf(); throw 42; }
void relay()
{
	try {
		deepest();
	} catch (int) {
		leaf();
		throw;
	}
}
void top()
{
	try {
		relay();
	} catch (int e) {
		v += e;
	}
	leaf();
}
int main() { top(); top(); std::printf("%d\n", v); return 0; }
