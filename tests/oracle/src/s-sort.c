/* An instrumented comparator called back from libc's qsort. */
#include <stdio.h>
#include <stdlib.h>
int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
void sort(int *a, size_t n) { qsort(a, n, sizeof(*a), cmp); }
int main(void)
{
	int a[] = {5, 3, 9, 1, 7, 2, 8};
	sort(a, 7);
	printf("%d %d\n", a[0], a[6]);
	return 0;
}
