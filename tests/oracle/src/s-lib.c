/* Calls into a traced shared library linked at build time. */
#include <stdio.h>
int plugin_work(int n);
void caller(void) { plugin_work(2); }
int main(void) { caller(); printf("%d\n", plugin_work(1)); return 0; }
