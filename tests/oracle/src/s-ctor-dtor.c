/* Constructors and destructors run outside main. */
#include <stdio.h>
static volatile int v;
void leaf(void) { v++; }
__attribute__((constructor)) void setup(void) { leaf(); }
__attribute__((destructor)) void teardown(void) { leaf(); }
int main(void) { leaf(); printf("%d\n", v); return 0; }
