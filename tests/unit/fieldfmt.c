/* ff_text against readings whose text is known from the kernel's own
 * printing: task states as sched_switch's print fmt spells them (R, S, D,
 * R+, several bits joined by '|'), dev_t as MAJOR:MINOR with the kernel's
 * 20-bit minor, x86-64 syscall numbers, errno names for -errno, hex; a
 * value the table does not know gives no reading (the number stands). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tpp_test.h"
#include "../../postproc/out/fieldfmt.h"

static const char *text(enum ff_kind k, uint64_t v)
{
	static char buf[64];
	memset(buf, '#', sizeof(buf));
	size_t n = ff_text(buf, 24, k, v);
	if (!n)
		return "(none)";
	if (buf[n] != 0)
		return "(not terminated)";
	return buf;
}

#define IS(got, want) CHECK(!strcmp((got), (want)), "got [%s], want [%s]", (got), (want))

int main(void)
{
	IS(text(FF_TASK_STATE, 0), "R");
	IS(text(FF_TASK_STATE, 1), "S");
	IS(text(FF_TASK_STATE, 2), "D");
	IS(text(FF_TASK_STATE, 0x100), "R+");
	IS(text(FF_TASK_STATE, 0x81), "S|I");
	IS(text(FF_TASK_STATE, 0x200), "(none)");
	IS(text(FF_DEV, 8u << 20 | 16), "8:16");
	IS(text(FF_DEV, 254u << 20), "254:0");
	IS(text(FF_DEV, 0), "0:0");
	IS(text(FF_DEV, UINT64_MAX), "4294967295:1048575");
	IS(text(FF_SYSCALL, 0), "read");
	IS(text(FF_SYSCALL, 59), "execve");
	IS(text(FF_SYSCALL, 100000), "(none)");
	IS(text(FF_ERRNO, (uint64_t)-11), "EAGAIN");
	IS(text(FF_ERRNO, (uint64_t)-2), "ENOENT");
	IS(text(FF_ERRNO, 5), "(none)");
	IS(text(FF_HEX, 0), "0x0");
	IS(text(FF_HEX, 0xffff888003a1b200ull), "0xffff888003a1b200");
	IS(text(FF_HEX, UINT64_MAX), "0xffffffffffffffff");
	IS(text(FF_NONE, 7), "(none)");
	char small[8];
	CHECK(ff_text(small, sizeof(small), FF_DEV, 1) == 0, "a buffer under 24 bytes gets no reading");
	TEST_DONE();
}
