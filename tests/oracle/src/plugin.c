/* The library s-dlopen and s-dlopen2 load and unload at run time, and
 * s-lib links against. */
static volatile int v;
void plugin_leaf(void) { v++; }
int plugin_work(int n) { for (int i = 0; i < n; i++) plugin_leaf(); return v; }
