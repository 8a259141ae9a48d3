/* Arguments and return values as probes see them: greet() gets a string and
 * an int and returns an int that is negative for n <= 0; the open() of
 * /etc/hostname returns the descriptor the program prints (the kernel's
 * truth for the recorded return value).
 * expect: greet=2 main=1 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int greet(const char *who, int n)
{
	return n > 0 ? n * 2 : -1;
}

int main(void)
{
	int fd = open("/etc/hostname", O_RDONLY);
	printf("fd=%d greet=%d,%d\n", fd, greet("world", 21), greet("nobody", -5));
	close(fd);
	return 0;
}
