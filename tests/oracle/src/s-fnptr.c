/* Calls through a table of function pointers and a static function. */
#include <stdio.h>
static volatile int v;
static void op_add(int x) { v += x; }
static void op_sub(int x) { v -= x; }
static void op_mul(int x) { v *= x; }
static void (*const ops[])(int) = {op_add, op_sub, op_mul, op_add};
static void run(int i) { ops[i % 4](i); }
int main(void) { for (int i = 1; i < 9; i++) run(i); printf("%d\n", v); return 0; }
