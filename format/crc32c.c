/* CRC-32C (Castagnoli), as used by iSCSI/ext4/btrfs: the SSE4.2 instruction
 * when the CPU has it, a slicing-by-8 table otherwise. Same results either
 * way; the table path is what a second reader on another arch would write. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "buf.h"

static uint32_t tab[8][256];
static int tab_ready;

static void tab_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			tab[t][i] = (tab[t - 1][i] >> 8) ^ tab[0][tab[t - 1][i] & 0xff];
	__atomic_store_n(&tab_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc_sw(uint32_t crc, const uint8_t *p, size_t n)
{
	if (!__atomic_load_n(&tab_ready, __ATOMIC_ACQUIRE))
		tab_init();
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= crc;
		crc = tab[7][w & 0xff] ^ tab[6][(w >> 8) & 0xff] ^ tab[5][(w >> 16) & 0xff] ^
		      tab[4][(w >> 24) & 0xff] ^ tab[3][(w >> 32) & 0xff] ^ tab[2][(w >> 40) & 0xff] ^
		      tab[1][(w >> 48) & 0xff] ^ tab[0][w >> 56];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = (crc >> 8) ^ tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t n)
{
	uint64_t c = crc;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		n -= 8;
	}
	crc = (uint32_t)c;
	while (n--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}
#endif

#if defined(__x86_64__) && __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
/* glibc's own record of the CPU, read when it started the process.
 * __builtin_cpu_supports made libgcc ask the CPU again before main, a
 * dozen cpuid instructions, and each traps to the hypervisor in a virtual
 * machine: 11 us apiece measured here, a sixtieth of latency --sched. */
#define HAVE_SSE42() CPU_FEATURE_ACTIVE(SSE4_2)
#elif defined(__x86_64__)
#define HAVE_SSE42() __builtin_cpu_supports("sse4.2")
#endif

uint32_t tpp_crc32c(uint32_t crc, const void *data, size_t len)
{
	crc = ~crc;
#if defined(__x86_64__)
	if (HAVE_SSE42())
		return ~crc_hw(crc, data, len);
#endif
	return ~crc_sw(crc, data, len);
}
