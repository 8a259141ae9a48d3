/* exit() from a nested call: atexit handlers run, frames never return. */
#include <stdio.h>
#include <stdlib.h>
static volatile int v;
void leaf(void) { v++; }
void at_end(void) { leaf(); }
void bail(void) { leaf(); exit(0); }
void work(void) { bail(); leaf(); }
int main(void) { atexit(at_end); work(); return 1; }
