/* Uneven nesting: siblings of different depths under one parent. */
#include <stdio.h>
static volatile int v;
void leaf(void) { v++; }
void two(void) { leaf(); leaf(); }
void three(void) { two(); leaf(); }
void four(void) { three(); two(); }
int main(void) { four(); three(); leaf(); printf("%d\n", v); return 0; }
