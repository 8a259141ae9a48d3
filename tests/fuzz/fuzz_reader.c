/* libFuzzer target for the reader and decoders: any byte string is opened
 * as a trace file and decoded in full, in both orders and by column scans
 * (`make fuzz`). */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../unit/decode_all.h"
#include "../unit/scan_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("tpp-fuzz", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	long dmg;
	decode_all(path, 0, &dmg);
	decode_all(path, 1, &dmg);
	scan_all(path, &dmg);
	return 0;
}
