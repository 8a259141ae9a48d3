/* fork three calls down: the child returns through the frames it inherited
 * (spawn, level2, level1) before main returns. */
#include <sys/wait.h>
#include <unistd.h>
static volatile int v;
void leaf(void) { v++; }
int spawn(void) { pid_t p = fork(); if (p == 0) { leaf(); return 1; } waitpid(p, NULL, 0); return 0; }
int level2(void) { int c = spawn(); leaf(); return c; }
int level1(void) { return level2(); }
int main(void) { int c = level1(); leaf(); return c ? 0 : 0; }
